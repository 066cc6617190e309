# appearanced — build, run, test, install.
#   make run    set up (system packages), build release, run the daemon in the foreground
#   make test   set up (system packages the tests use), build, run every test
SHELL := /bin/bash
PREFIX ?= /usr/local
SWIFT ?= swift
RELEASE_FLAGS := -c release --static-swift-stdlib

# Debian/Ubuntu packages. Building needs libdbus's headers; the tests start a real dbus-daemon, the real
# xdg-desktop-portal with its GTK backend on a GTK broadway display, and python3-dbus for the fake portal.
BUILD_PKGS := libdbus-1-dev pkg-config
RUN_PKGS := $(BUILD_PKGS) dbus-bin
TEST_PKGS := $(BUILD_PKGS) dbus-daemon dbus-bin xdg-desktop-portal xdg-desktop-portal-gtk libgtk-3-bin \
	gsettings-desktop-schemas dconf-service dconf-cli libglib2.0-bin python3 python3-dbus python3-gi \
	util-linux procps systemd

.PHONY: all build run test deps-run deps-test clean
all: build

# Installs what is missing with apt when root; otherwise prints the exact command and stops.
define ensure_packages
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "Installing:" $$missing; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
		else \
			echo "Missing system packages. Run:"; echo "  sudo apt-get install --no-install-recommends" $$missing; exit 1; \
		fi; \
	fi
endef

deps-run:
	$(call ensure_packages,$(RUN_PKGS))

deps-test:
	$(call ensure_packages,$(TEST_PKGS))

build: deps-run
	$(SWIFT) build $(RELEASE_FLAGS)

run: build
	@bin=$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path); \
	if [ -z "$$DBUS_SESSION_BUS_ADDRESS" ] && [ ! -S "$${XDG_RUNTIME_DIR:-/nonexistent}/bus" ]; then \
		echo "No session bus: appearanced runs as its own source (the mode is the override or the default)."; \
	fi; \
	echo "Running $$bin/appearanced (Ctrl-C stops it; in another terminal: $$bin/appearancectl get)"; \
	exec $$bin/appearanced

test: deps-test
	$(SWIFT) build --build-tests
	APPEARANCED_BIN_DIR=$$($(SWIFT) build --show-bin-path) $(SWIFT) test

clean:
	rm -rf .build

# Benchmarks (bench/, docs/benchmarks.md): the real portal stack on a private bus, a release build, peers side by
# side. `make bench` writes bench/results/ (the figures docs/benchmarks.md quotes); `make bench-quick` is a short
# run into bench/results/quick/. Neither is part of `make test`, and no test asserts on these numbers.
BENCH_PKGS := $(TEST_PKGS) gcc libc6-dev librsvg2-bin linux-perf valgrind
.PHONY: bench bench-quick deps-bench
deps-bench:
	$(call ensure_packages,$(BENCH_PKGS))

bench: deps-bench
	$(SWIFT) build $(RELEASE_FLAGS)
	/usr/bin/python3 bench/bench.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out bench/results
	rsvg-convert -o bench/results/fanout.png bench/results/fanout.svg

bench-quick: deps-bench
	$(SWIFT) build $(RELEASE_FLAGS)
	/usr/bin/python3 bench/bench.py --quick --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out bench/results/quick
	rsvg-convert -o bench/results/quick/fanout.png bench/results/quick/fanout.svg
