# appearanced — build, run, test, install.
#   make run    set up (system packages), build release, run the daemon in the foreground
#   make test   set up (system packages the tests use), build, run every test
#   make install [PREFIX=/usr/local] [DESTDIR=]   build release, install binaries, user units, man pages,
#               shell completions, the example config and palette; `make uninstall` removes exactly those files
#   make install-files BIN_DIR=DIR   the install step alone, with binaries already built in DIR
#   make deb    build the Debian package (debian/) into DEB_DIR (default: here) and check it with lintian
SHELL := /bin/bash
PREFIX ?= /usr/local
# `PREFIX=~/.local` reaches make unexpanded from shells that do not expand ~ after = (zsh).
override PREFIX := $(patsubst ~/%,$(HOME)/%,$(PREFIX))
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
# The user manager searches /usr/lib/systemd/user and /usr/local/lib/systemd/user, but for a per-user
# install only ~/.local/share/systemd/user (not ~/.local/lib/...): see `systemd-analyze --user unit-paths`.
USERUNITDIR ?= $(if $(filter $(HOME)/.local,$(PREFIX)),$(PREFIX)/share/systemd/user,$(PREFIX)/lib/systemd/user)
# Where install-files takes the binaries from; empty means the release build's directory.
BIN_DIR ?=
SWIFT ?= swift
SCDOC ?= scdoc
RELEASE_FLAGS := -c release --static-swift-stdlib

# Debian/Ubuntu packages. Building needs libdbus's headers; the tests start a real dbus-daemon, the real
# xdg-desktop-portal with its GTK backend on a GTK broadway display, and python3-dbus for the fake portal;
# python3 and socat run the examples; the package test builds, checks and installs the .deb;
# golang-github-burntsushi-toml-dev ships the toml-test corpus the TOML reader is checked against
# (Tests/AppearanceFormatsTests/TOMLCorpusTests.swift; Go sources only, no dependencies).
# The integrations are tested against their programs (Tests/EndToEndTests/Integration*Tests.swift): neovim, vim,
# tmux, emacs-nox (the largest, about 160 MB installed), kitty's and foot's config readers, python3-yaml.
# The notice before an automatic change is shown by a real notification server, dunst, on an Xvfb display
# (Tests/EndToEndTests/NoticeDunstTests.swift).
BUILD_PKGS := libdbus-1-dev pkg-config
RUN_PKGS := $(BUILD_PKGS) dbus-bin
# `make deb` (and the package test): debian/control's Build-Depends (the Swift toolchain is not a Debian
# package), dpkg-buildpackage, and lintian.
DEB_PKGS := $(BUILD_PKGS) scdoc debhelper dpkg-dev lintian
TEST_PKGS := $(BUILD_PKGS) dbus-daemon dbus-bin xdg-desktop-portal xdg-desktop-portal-gtk libgtk-3-bin \
	gsettings-desktop-schemas dconf-service dconf-cli libglib2.0-bin python3 python3-dbus python3-gi \
	util-linux procps systemd scdoc man-db socat xdg-desktop-portal-dev gir1.2-adw-1 gir1.2-gtk-4.0 libgtk-4-bin python3-venv zsh fish golang-github-burntsushi-toml-dev tzdata geoclue-2.0 \
	neovim vim tmux emacs-nox kitty foot python3-yaml dunst xvfb upower iio-sensor-proxy \
	$(DEB_PKGS)

.PHONY: all build run test deps-run deps-test deps-man man install install-strip install-files install-hint uninstall clean
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
	sock=$${APPEARANCED_SOCKET:-$${XDG_RUNTIME_DIR:-/run/user/$$(id -u)}/appearanced/socket}; \
	echo "Running $$bin/appearanced (Ctrl-C stops it; in another terminal: $$bin/appearancectl --socket $$sock get)"; \
	APPEARANCED_INTEGRATIONS_DIR=$(CURDIR)/integrations exec $$bin/appearanced

# Every import must be a declared dependency of its target (Package.swift is the map), and only the POSIX layer
# (and the libdbus wrapper) imports the C library: scripts/check-imports.py. `make test` also builds with SwiftPM's
# own check as an error (IMPORT_CHECK), which accepts transitive dependencies; the script does not.
IMPORT_CHECK := --explicit-target-dependency-import-check error
# The bash, zsh and fish completions, generated from appearancectl's option table into out/completions/ (install
# writes them from the binary it installs: docs/decisions.md).
.PHONY: completions
completions:
	$(SWIFT) build --product appearancectl
	mkdir -p out/completions
	for shell in bash zsh fish; do \
		case $$shell in bash) f=appearancectl.bash ;; zsh) f=_appearancectl ;; fish) f=appearancectl.fish ;; esac; \
		"$$($(SWIFT) build --show-bin-path)/appearancectl" completions $$shell > out/completions/$$f; \
	done

# The functions appearancectl's common commands run, in the order they first run, for the release link
# (Package.swift, docs/decisions.md "How appearancectl is linked"): rewrite it after changing the CLI's path.
.PHONY: cli-order
cli-order:
	$(SWIFT) build $(RELEASE_FLAGS)
	/usr/bin/python3 scripts/cli-order.py "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"
	@# SwiftPM does not see the list as an input of the link: relink by hand.
	rm -f "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/appearancectl"
	$(SWIFT) build $(RELEASE_FLAGS)

# The same for appearanced (scripts/daemon-order.py, on the real portal stack under callgrind): what it keeps
# resident fills fewer pages. Needs the test packages and valgrind.
.PHONY: daemon-order
daemon-order: deps-bench
	$(SWIFT) build $(RELEASE_FLAGS)
	/usr/bin/python3 scripts/daemon-order.py "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"
	rm -f "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/appearanced"
	$(SWIFT) build $(RELEASE_FLAGS)

.PHONY: check-imports
check-imports:
	SWIFT=$(SWIFT) /usr/bin/python3 scripts/check-imports.py

# The astral package (PyPI), the reference the schedule's sunrise and sunset are tested against, in a venv
# of its own inside .build (nothing installed into the system's Python).
ASTRAL_VENV := .build/astral-venv
.PHONY: deps-astral
deps-astral:
	@$(ASTRAL_VENV)/bin/python -c 'import astral' 2>/dev/null || { \
		rm -rf $(ASTRAL_VENV); python3 -m venv $(ASTRAL_VENV) && $(ASTRAL_VENV)/bin/pip install -q astral==3.2; }

# PackageTests (APPEARANCED_PACKAGE_TEST=1) installs the .deb into /, where the portal tests' buses would find its
# D-Bus service: it may run only because this run is --no-parallel.
# The release build is part of the test: the shipped binaries are built with the optimizer, which has
# crashed on code the debug build compiled (docs/decisions.md).
test: deps-test deps-astral man check-imports
	$(SWIFT) build $(RELEASE_FLAGS) $(IMPORT_CHECK)
	$(SWIFT) build --build-tests $(IMPORT_CHECK)
	@mkdir -p out
	@# The local-time tests again in zones whose clocks change (the machine's own is often UTC, where the
	@# daylight-saving branches of ClockTests never run).
	set -o pipefail; for zone in Europe/Berlin America/Santiago Australia/Lord_Howe; do \
		TZ=$$zone $(SWIFT) test --skip-build --disable-xctest --filter 'ClockTests|DaylightSavingTests' > out/tz-$${zone//\//-}.log 2>&1 \
			|| { cat out/tz-$${zone//\//-}.log; echo "local-time tests failed in $$zone"; exit 1; }; \
	done
	set -o pipefail; APPEARANCED_ASTRAL_PYTHON=$(CURDIR)/$(ASTRAL_VENV)/bin/python APPEARANCED_BIN_DIR=$$($(SWIFT) build --show-bin-path) \
		APPEARANCED_PACKAGE_TEST=1 $(SWIFT) test --skip-build --disable-xctest --no-parallel 2>&1 | tee out/test.log
	$(MAKE) --no-print-directory test-python
	@# Swift Testing's summary counts skipped tests as passed: name them, with their reasons.
	@skipped=$$(grep -E '^.{1,4}Test .* skipped(: ".*"|\.)$$' out/test.log || true); \
	if [ -n "$$skipped" ]; then echo "Skipped (not run here):"; echo "$$skipped" | sed 's/^/  /'; fi; \
	total=$$(sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\} in .* passed.*/\1/p' out/test.log | tail -1); \
	count=$$(printf '%s' "$$skipped" | grep -c . || true); \
	echo "$$((total - count)) passed, 0 failed, $$count skipped"

# The Python client (clients/python, docs/python.md) and its GTK example, tested with pytest against the release
# build, in a venv of its own inside .build: the client goes in with `pip install ./clients/python`, as users
# install it (pip fetches setuptools for the build, and pytest and mypy, from PyPI). The venv sees the system's
# packages for Debian's PyGObject (python3-gi), which the GTK example needs and pip would have to compile.
PYTHON_VENV := .build/python-venv
PYTHON_TEST_PKGS := python3 python3-venv python3-gi gir1.2-gtk-4.0 libgtk-4-bin
.PHONY: test-python
test-python: deps-run
	$(call ensure_packages,$(PYTHON_TEST_PKGS))
	$(SWIFT) build $(RELEASE_FLAGS)
	@$(PYTHON_VENV)/bin/python -c 'import pytest, mypy' 2>/dev/null || { \
		rm -rf $(PYTHON_VENV); /usr/bin/python3 -m venv --system-site-packages $(PYTHON_VENV) \
			&& $(PYTHON_VENV)/bin/pip install -q pytest==9.0.3 mypy==2.4.1; }
	$(PYTHON_VENV)/bin/pip install -q --force-reinstall --no-deps ./clients/python
	cd clients/python && $(CURDIR)/$(PYTHON_VENV)/bin/python -m mypy --cache-dir $(CURDIR)/.build/mypy-cache src tests ../../examples/python/gtk_follow.py
	cd clients/python && APPEARANCED_BIN_DIR=$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) \
		$(CURDIR)/$(PYTHON_VENV)/bin/python -m pytest -q -p no:cacheprovider tests

# Man pages: scdoc sources in man/, built into out/.
MAN_PAGES := out/appearanced.1 out/appearancectl.1 out/appearanced.7

deps-man:
	$(call ensure_packages,scdoc)

man: $(MAN_PAGES)

out/%: man/%.scd
	@command -v $(SCDOC) >/dev/null || $(MAKE) --no-print-directory deps-man
	@mkdir -p out
	$(SCDOC) < $< > $@.tmp && mv $@.tmp $@

# The shipped integrations (docs/integrations.md): every file in integrations/ but the shared library's folder.
INTEGRATIONS := $(filter-out integrations/lib,$(sort $(wildcard integrations/*)))
# What install-files puts where (relative to $(DESTDIR)); uninstall removes exactly this list.
INSTALLED := \
	$(BINDIR)/appearanced \
	$(BINDIR)/appearancectl \
	$(USERUNITDIR)/appearanced.service \
	$(USERUNITDIR)/appearanced.socket \
	$(PREFIX)/share/man/man1/appearanced.1 \
	$(PREFIX)/share/man/man1/appearancectl.1 \
	$(PREFIX)/share/man/man7/appearanced.7 \
	$(PREFIX)/share/bash-completion/completions/appearancectl \
	$(PREFIX)/share/zsh/site-functions/_appearancectl \
	$(PREFIX)/share/fish/vendor_completions.d/appearancectl.fish \
	$(PREFIX)/share/xdg-desktop-portal/portals/appearanced.portal \
	$(PREFIX)/share/dbus-1/services/org.freedesktop.impl.portal.desktop.appearanced.service \
	$(PREFIX)/share/dbus-1/services/io.github.appearanced.Appearance1.service \
	$(PREFIX)/share/dbus-1/interfaces/io.github.appearanced.Appearance1.xml \
	$(PREFIX)/share/applications/appearanced.desktop \
	$(PREFIX)/share/doc/appearanced/appearanced.toml \
	$(PREFIX)/share/doc/appearanced/palette.toml \
	$(PREFIX)/share/doc/appearanced/protocol.md \
	$(PREFIX)/share/appearanced/integrations/lib/common.sh \
	$(PREFIX)/share/appearanced/integrations/lib/files.sh \
	$(addprefix $(PREFIX)/share/appearanced/,$(INTEGRATIONS))

install: build man
	$(MAKE) --no-print-directory install-files
	@$(MAKE) --no-print-directory install-hint

# As install, with the two binaries stripped of their symbols and debug info (GNU's install-strip): smaller,
# and backtraces then name no functions.
install-strip: build man
	$(MAKE) --no-print-directory install-files INSTALL_STRIP=-s
	@$(MAKE) --no-print-directory install-hint

# What to do next: whether BINDIR is on PATH (else how to put it there), and how to start the socket.
install-hint:
	@case ":$$PATH:" in \
	*":$(BINDIR):"*) echo "appearancectl is in $(BINDIR), on your PATH: try 'appearancectl status'" ;; \
	*) echo "$(BINDIR) is not on your PATH: add it (e.g. in ~/.profile: export PATH=\"$(BINDIR):\$$PATH\"), or run $(BINDIR)/appearancectl" ;; \
	esac
	@echo "To start appearanced when first used: systemctl --user daemon-reload && systemctl --user enable --now appearanced.socket"

# Copies already-built binaries (BIN_DIR, default: the release build) without building anything.
install-files: $(MAN_PAGES)
	@bin='$(BIN_DIR)'; [ -n "$$bin" ] || bin=$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path); \
	for exe in appearanced appearancectl; do \
		[ -x "$$bin/$$exe" ] || { echo "$$bin/$$exe is missing: run 'make install' (or 'make build') first"; exit 1; }; \
	done; \
	set -ex; \
	install -Dm755 $(INSTALL_STRIP) "$$bin/appearanced" '$(DESTDIR)$(BINDIR)/appearanced'; \
	install -Dm755 $(INSTALL_STRIP) "$$bin/appearancectl" '$(DESTDIR)$(BINDIR)/appearancectl'; \
	install -d '$(DESTDIR)$(PREFIX)/share/bash-completion/completions' '$(DESTDIR)$(PREFIX)/share/zsh/site-functions' \
		'$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d'; \
	"$$bin/appearancectl" completions bash > '$(DESTDIR)$(PREFIX)/share/bash-completion/completions/appearancectl'; \
	"$$bin/appearancectl" completions zsh > '$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_appearancectl'; \
	"$$bin/appearancectl" completions fish > '$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/appearancectl.fish'; \
	chmod 644 '$(DESTDIR)$(PREFIX)/share/bash-completion/completions/appearancectl' \
		'$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_appearancectl' '$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/appearancectl.fish'
	install -d '$(DESTDIR)$(USERUNITDIR)'
	sed 's|@bindir@|$(BINDIR)|g' systemd/appearanced.service > '$(DESTDIR)$(USERUNITDIR)/appearanced.service'
	chmod 644 '$(DESTDIR)$(USERUNITDIR)/appearanced.service'
	install -m644 systemd/appearanced.socket '$(DESTDIR)$(USERUNITDIR)/appearanced.socket'
	install -Dm644 out/appearanced.1 '$(DESTDIR)$(PREFIX)/share/man/man1/appearanced.1'
	install -Dm644 out/appearancectl.1 '$(DESTDIR)$(PREFIX)/share/man/man1/appearancectl.1'
	install -Dm644 out/appearanced.7 '$(DESTDIR)$(PREFIX)/share/man/man7/appearanced.7'
	install -Dm644 portal/appearanced.portal '$(DESTDIR)$(PREFIX)/share/xdg-desktop-portal/portals/appearanced.portal'
	install -d '$(DESTDIR)$(PREFIX)/share/dbus-1/services'
	sed 's|@bindir@|$(BINDIR)|g' portal/org.freedesktop.impl.portal.desktop.appearanced.service \
		> '$(DESTDIR)$(PREFIX)/share/dbus-1/services/org.freedesktop.impl.portal.desktop.appearanced.service'
	chmod 644 '$(DESTDIR)$(PREFIX)/share/dbus-1/services/org.freedesktop.impl.portal.desktop.appearanced.service'
	sed 's|@bindir@|$(BINDIR)|g' dbus/io.github.appearanced.Appearance1.service \
		> '$(DESTDIR)$(PREFIX)/share/dbus-1/services/io.github.appearanced.Appearance1.service'
	chmod 644 '$(DESTDIR)$(PREFIX)/share/dbus-1/services/io.github.appearanced.Appearance1.service'
	install -Dm644 dbus/io.github.appearanced.Appearance1.xml '$(DESTDIR)$(PREFIX)/share/dbus-1/interfaces/io.github.appearanced.Appearance1.xml'
	@# GeoClue and its agents know the schedule's location client by this file (DesktopId "appearanced").
	install -d '$(DESTDIR)$(PREFIX)/share/applications'
	sed 's|@bindir@|$(BINDIR)|g' data/appearanced.desktop > '$(DESTDIR)$(PREFIX)/share/applications/appearanced.desktop'
	chmod 644 '$(DESTDIR)$(PREFIX)/share/applications/appearanced.desktop'
	install -Dm644 config/appearanced.toml '$(DESTDIR)$(PREFIX)/share/doc/appearanced/appearanced.toml'
	install -Dm644 config/palette.toml '$(DESTDIR)$(PREFIX)/share/doc/appearanced/palette.toml'
	install -Dm644 docs/protocol.md '$(DESTDIR)$(PREFIX)/share/doc/appearanced/protocol.md'
	install -d '$(DESTDIR)$(PREFIX)/share/appearanced/integrations/lib'
	install -m755 $(INTEGRATIONS) '$(DESTDIR)$(PREFIX)/share/appearanced/integrations/'
	install -m644 integrations/lib/common.sh integrations/lib/files.sh '$(DESTDIR)$(PREFIX)/share/appearanced/integrations/lib/'

# Removes the installed files, and share/doc/appearanced once it is empty (the only directory that is ours).
uninstall:
	rm -f $(foreach f,$(INSTALLED),'$(DESTDIR)$(f)')
	rmdir '$(DESTDIR)$(PREFIX)/share/doc/appearanced' 2>/dev/null || true
	@# The folders install created, when nothing else is left in them (deepest first; never PREFIX itself).
	@for f in $(INSTALLED); do d=$$(dirname "$(DESTDIR)$$f"); \
		while [ "$$d" != '$(DESTDIR)$(PREFIX)' ] && [ "$$d" != / ] && { rmdir "$$d" 2>/dev/null || [ ! -e "$$d" ]; }; do d=$$(dirname "$$d"); done; \
	done

clean:
	rm -rf .build .build-deb out

# libFuzzer over everything that reads outside bytes (Fuzz/AppearanceFuzzing). Finds go to
# .build-fuzz/work/crashes/; copy each into Fuzz/corpus/ so the replay test keeps it fixed.
FUZZ_SECONDS ?= 600
FUZZ_RUNS ?= -1
.PHONY: fuzz
fuzz: deps-run
	APPEARANCED_FUZZ=1 $(SWIFT) build -c release --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address \
		--product appearanced-fuzz --scratch-path .build-fuzz
	mkdir -p .build-fuzz/work/corpus .build-fuzz/work/crashes
	cp -n Fuzz/corpus/* .build-fuzz/work/corpus/
	SWIFT_BACKTRACE=enable=no .build-fuzz/release/appearanced-fuzz .build-fuzz/work/corpus \
		-max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -artifact_prefix=.build-fuzz/work/crashes/ -print_final_stats=1

# The reliability scenarios at full size (Tests/EndToEndTests/StressTests.swift, docs/reliability.md), against
# release binaries. Their figures are printed as `figure:` lines and kept in out/stress.log.
.PHONY: stress sanitize
stress: deps-test build
	$(SWIFT) build --build-tests
	mkdir -p out
	set -o pipefail; APPEARANCED_STRESS=full APPEARANCED_BIN_DIR=$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) \
		$(SWIFT) test --filter StressTests 2>&1 | tee out/stress.log

# The whole suite, binaries included, under AddressSanitizer and ThreadSanitizer (own build folders).
sanitize: deps-test
	for s in address thread; do \
		$(SWIFT) build --build-tests --sanitize=$$s --scratch-path .build-$$s && \
		APPEARANCED_SANITIZER=$$s APPEARANCED_TEST_TIMEOUT_SCALE=5 ASAN_OPTIONS=detect_leaks=0 APPEARANCED_BIN_DIR=$$($(SWIFT) build --sanitize=$$s --scratch-path .build-$$s --show-bin-path) \
			$(SWIFT) test --sanitize=$$s --scratch-path .build-$$s --disable-xctest || exit 1; \
	done

# Benchmarks (bench/, docs/benchmarks.md): the real portal stack on a private bus, a release build, peers side by
# side. `make bench` writes its raw output into out/bench/ (ignored: docs/benchmarks.md keeps the figures, each
# with its command); `make bench-quick` is a short run into out/bench/quick/. Neither is part of `make test`, and no test asserts on these numbers.
# BASELINE_BIN_DIR=DIR (another build's release binaries) measures change latency and fan-out beside it.
BASELINE_BIN_DIR ?=
BENCH_PKGS := $(TEST_PKGS) gcc libc6-dev librsvg2-bin linux-perf valgrind liburing-dev
.PHONY: bench bench-quick deps-bench
deps-bench:
	$(call ensure_packages,$(BENCH_PKGS))

bench: deps-bench
	$(SWIFT) build $(RELEASE_FLAGS)
	/usr/bin/python3 bench/bench.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench
	/usr/bin/python3 bench/portal_backend.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench
	/usr/bin/python3 bench/idle_schedule.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench
	/usr/bin/python3 bench/sensors.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench
	/usr/bin/python3 bench/hostile.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench
	/usr/bin/python3 bench/hostile.py --reading-flood --non-reading-flood --chatty-hook --big-call \
		--bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench \
		$(if $(BASELINE_BIN_DIR),--baseline-bin-dir $(BASELINE_BIN_DIR))
	/usr/bin/python3 bench/parsers.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench
	/usr/bin/python3 bench/apps.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench
	/usr/bin/python3 bench/set_throughput.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench \
		$(if $(BASELINE_BIN_DIR),--baseline-bin-dir $(BASELINE_BIN_DIR))
	/usr/bin/python3 bench/fanout.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench \
		$(if $(BASELINE_BIN_DIR),--baseline-bin-dir $(BASELINE_BIN_DIR))
	/usr/bin/python3 bench/rss.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/rss-alone
	/usr/bin/python3 bench/instances.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench \
		$(if $(BASELINE_BIN_DIR),--also before=$(BASELINE_BIN_DIR))
	/usr/bin/python3 bench/bus_toggles.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/bus-toggles-alone \
		$(if $(BASELINE_BIN_DIR),--baseline-bin-dir $(BASELINE_BIN_DIR))
	/usr/bin/python3 bench/change_latency.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench \
		$(if $(BASELINE_BIN_DIR),--baseline-bin-dir $(BASELINE_BIN_DIR))
	/usr/bin/python3 bench/desktop_write.py --out out/bench
	PATH=$(dir $(shell command -v $(SWIFT))):$$PATH /usr/bin/python3 bench/argparser.py --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench
	PATH=$(dir $(shell command -v $(SWIFT))):$$PATH /usr/bin/python3 bench/swift_system.py --out out/bench
	PATH=$(dir $(shell command -v $(SWIFT))):$$PATH /usr/bin/python3 bench/cli_floor.py --out out/bench
	rsvg-convert -o out/bench/fanout.png out/bench/fanout.svg

bench-quick: deps-bench
	$(SWIFT) build $(RELEASE_FLAGS)
	/usr/bin/python3 bench/bench.py --quick --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/quick
	/usr/bin/python3 bench/portal_backend.py --quick --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/quick
	/usr/bin/python3 bench/idle_schedule.py --seconds 10 --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/quick
	/usr/bin/python3 bench/sensors.py --seconds 10 --reps 3 --idle-daemons 1 --rounds 100 --portal-rounds 100 \
		--bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/quick
	/usr/bin/python3 bench/hostile.py --quick --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/quick
	/usr/bin/python3 bench/hostile.py --reading-flood --non-reading-flood --chatty-hook --big-call --big-mb 20 \
		--gets 100 --sets 5 --reps 1 --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/quick
	/usr/bin/python3 bench/parsers.py --runs 5 --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/quick
	/usr/bin/python3 bench/apps.py --quick --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/quick
	/usr/bin/python3 bench/set_throughput.py --seconds 2 --rounds 1 --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/quick
	/usr/bin/python3 bench/rss.py --reps 1 --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/quick
	/usr/bin/python3 bench/bus_toggles.py --reps 1 --marks 0,10000,50000 --bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/quick
	/usr/bin/python3 bench/change_latency.py --rounds 60 --fanout 1000 --fanout-rounds 12 --fanout-reps 1 --callgrind-rounds 5 --fanout-callgrind-rounds 3 --breakdown-rounds 30 \
		--bin-dir $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) --out out/bench/quick
	rsvg-convert -o out/bench/quick/fanout.png out/bench/quick/fanout.svg

# The Debian package (debian/; docs/decisions.md "The Debian package"). `make deb-build` builds it into DEB_DIR
# with dpkg-buildpackage (binary only, unsigned; the Build-Depends are checked, and hold no Swift: debian/rules
# finds swift on PATH or in /opt/swift); `make deb` then runs lintian on it, failing on any error or warning.
DEB_DIR ?= $(CURDIR)
override DEB_DIR := $(abspath $(DEB_DIR))
DEB_NAME = appearanced_$(shell dpkg-parsechangelog -S Version)_$(shell dpkg-architecture -qDEB_HOST_ARCH)
.PHONY: deb deb-build deps-deb
deps-deb:
	$(call ensure_packages,$(DEB_PKGS))

deb-build: deps-deb
	@mkdir -p '$(DEB_DIR)'
	APPEARANCED_DEB_DIR='$(DEB_DIR)' dpkg-buildpackage --build=binary --no-sign \
		--buildinfo-option=-u'$(DEB_DIR)' --buildinfo-file='$(DEB_DIR)/$(DEB_NAME).buildinfo' \
		--changes-option=-u'$(DEB_DIR)' --changes-file='$(DEB_DIR)/$(DEB_NAME).changes'
	@echo "Built $(DEB_DIR)/$(DEB_NAME).deb"

deb: deb-build
	lintian --fail-on error,warning '$(DEB_DIR)/$(DEB_NAME).deb'

# The Arch and RPM packages (packaging/; docs/decisions.md "The Arch and RPM packages"). Both hold what
# `make install-files PREFIX=/usr` installs, from the release build the .deb ships (packaging/release-build.mk, one
# build in .build-deb for all three), and are made from a source tarball of the checkout as it is (every file git
# does not ignore). Neither needs the network. On Debian, pacman's and rpm's databases know nothing of what apt
# installed, so makepkg and rpmbuild check no build dependencies (--nodeps): apt installs them (deps-arch, deps-rpm);
# on Arch and Fedora they check them as usual.
#   make arch   makepkg into ARCH_DIR (default: here), appearanced-VERSION-1-ARCH.pkg.tar.zst. makepkg refuses to
#               run as root: as root (CI), it runs as a system user made for this one build and removed after it
#   make rpm    rpmbuild into RPM_DIR (default: here), appearanced-VERSION-1.ARCH.rpm, then rpmlint: any error fails
include packaging/release-build.mk
ARCH_PKGS := $(BUILD_PKGS) scdoc makepkg pacman-package-manager libarchive-tools fakeroot zstd
# rpmbuild's brp-strip needs file and binutils' strip and objdump.
RPM_PKGS := $(BUILD_PKGS) scdoc rpm rpmlint file binutils
TEST_PKGS += $(ARCH_PKGS) $(RPM_PKGS)
ARCH_DIR ?= $(CURDIR)
override ARCH_DIR := $(abspath $(ARCH_DIR))
RPM_DIR ?= $(CURDIR)
override RPM_DIR := $(abspath $(RPM_DIR))
ARCH_VERSION = $(shell sed -n 's/^pkgver=//p' packaging/arch/PKGBUILD)
RPM_VERSION = $(shell sed -n 's/^Version: *//p' packaging/rpm/appearanced.spec)
RPM_NAME = $(shell rpmspec -q --qf '%{name}-%{version}-%{release}.%{arch}.rpm\n' packaging/rpm/appearanced.spec 2>/dev/null | head -1)
PACKAGE_BIN_DIR = $(shell $(SWIFT) build $(PACKAGE_SWIFT_FLAGS) --scratch-path $(PACKAGE_SCRATCH) --show-bin-path)
.PHONY: arch rpm rpm-build deps-arch deps-rpm package-binaries package-bin-dir package-source

deps-arch:
	$(call ensure_packages,$(ARCH_PKGS))

deps-rpm:
	$(call ensure_packages,$(RPM_PKGS))

# The packages' binaries (as debian/rules builds them), and where they are.
package-binaries:
	$(SWIFT) build $(PACKAGE_SWIFT_FLAGS) --scratch-path $(PACKAGE_SCRATCH)

package-bin-dir:
	@echo '$(PACKAGE_BIN_DIR)'

# SOURCE_DIR/appearanced-VERSION.tar.gz, all in appearanced-VERSION/: the checkout's files (tracked, and new ones
# git does not ignore), as they are on disk.
package-source:
	@[ -n '$(SOURCE_DIR)' ] && [ -n '$(VERSION)' ] || { echo "usage: make package-source SOURCE_DIR=DIR VERSION=V"; exit 1; }
	@git rev-parse --git-dir >/dev/null 2>&1 || { echo "$(CURDIR) is not a git checkout: the packages are made from one"; exit 1; }
	@set -euo pipefail; \
	git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do [ ! -f "$$f" ] || printf '%s\0' "$$f"; done \
		| tar --null --files-from=- --transform='flags=r;s,^,appearanced-$(VERSION)/,' --sort=name \
			--owner=0 --group=0 --numeric-owner -czf '$(SOURCE_DIR)/appearanced-$(VERSION).tar.gz'

# Stops when the binaries report another version than the package's ($(1): the package file, $(2): its version).
define check_binary_version
	@v=$$('$(PACKAGE_BIN_DIR)/appearancectl' --version); [ "$$v" = 'appearancectl $(2)' ] || { \
		echo "the binary says '$$v' but $(1) is at $(2): update its version"; exit 1; }
endef

arch:
	@if command -v dpkg-query >/dev/null; then $(MAKE) --no-print-directory deps-arch; fi
	$(MAKE) --no-print-directory package-binaries man
	$(call check_binary_version,packaging/arch/PKGBUILD,$(ARCH_VERSION))
	@mkdir -p '$(ARCH_DIR)'
	@# Everything makepkg reads is copied into a fresh folder it may write in (a build user could not reach the
	@# checkout, whose parents may be private), and only the package comes back.
	@set -euo pipefail; export PATH="$$PATH:/usr/sbin:/sbin"; \
	work=$$(mktemp -d /tmp/appearanced-arch.XXXXXX); user=; \
	trap 'rm -rf "$$work"; if [ -n "$$user" ]; then userdel "$$user" || echo "could not remove the build user $$user"; fi' EXIT; \
	trap 'exit 1' INT TERM HUP; \
	mkdir "$$work/bin" "$$work/out"; \
	cp packaging/arch/PKGBUILD "$$work/"; \
	cp '$(PACKAGE_BIN_DIR)/appearanced' '$(PACKAGE_BIN_DIR)/appearancectl' "$$work/bin/"; \
	$(MAKE) --no-print-directory package-source SOURCE_DIR="$$work" VERSION='$(ARCH_VERSION)'; \
	nodeps=; \
	if [ ! -d /var/lib/pacman/local ]; then \
		: "Not Arch: pacman knows no installed package, so makepkg checks none (--nodeps; apt installed them), and"; \
		: ".BUILDINFO's list of installed packages comes from an empty database of its own."; \
		nodeps=--nodeps; \
		mkdir -p "$$work/pacman-db/local"; \
		printf '#!/bin/sh\nexec pacman --dbpath "%s/pacman-db" "$$@"\n' "$$work" > "$$work/pacman"; \
		chmod 755 "$$work/pacman"; export PACMAN="$$work/pacman"; \
	fi; \
	as=(); \
	if [ "$$(id -u)" = 0 ]; then \
		user=appearanced-build-$$$$; \
		echo "makepkg does not run as root: building as $$user, a system user made for this build"; \
		useradd --system --user-group --no-create-home --home-dir "$$work" --shell /usr/sbin/nologin "$$user"; \
		chown -R "$$user:" "$$work"; \
		as=(setpriv --reuid="$$user" --regid="$$user" --init-groups); \
	fi; \
	(cd "$$work" && "$${as[@]}" env HOME="$$work" APPEARANCED_BIN_DIR="$$work/bin" PKGEXT=.pkg.tar.zst \
		BUILDDIR="$$work/build" SRCDEST="$$work" PKGDEST="$$work/out" \
		makepkg $$nodeps --noconfirm --nocolor --noprogressbar); \
	for p in "$$work"/out/*.pkg.tar.zst; do install -m644 "$$p" '$(ARCH_DIR)/'; echo "Built $(ARCH_DIR)/$${p##*/}"; done

rpm-build:
	@if command -v dpkg-query >/dev/null; then $(MAKE) --no-print-directory deps-rpm; fi
	$(MAKE) --no-print-directory package-binaries man
	$(call check_binary_version,packaging/rpm/appearanced.spec,$(RPM_VERSION))
	@mkdir -p '$(RPM_DIR)'
	@set -euo pipefail; \
	work=$$(mktemp -d /tmp/appearanced-rpm.XXXXXX); trap 'rm -rf "$$work"' EXIT; trap 'exit 1' INT TERM HUP; \
	mkdir "$$work/SOURCES"; \
	$(MAKE) --no-print-directory package-source SOURCE_DIR="$$work/SOURCES" VERSION='$(RPM_VERSION)'; \
	: "rpm's database knows the system's packages only where rpm is the package manager: elsewhere --nodeps"; \
	nodeps=--nodeps; if rpm -q rpm >/dev/null 2>&1; then nodeps=; fi; \
	brp=(); \
	case "$$(readlink -f /bin/sh)" in */bash) ;; *) \
		: "brp-compress (it gzips the man pages) is bash run as /bin/sh, as on Fedora: elsewhere (Debian's dash) run it with bash."; \
		brp=(--define '__brp_compress bash %{_rpmconfigdir}/brp-compress %{?_prefix}') ;; \
	esac; \
	rpmbuild -bb $$nodeps --define "_topdir $$work" --define 'appearanced_bin_dir $(PACKAGE_BIN_DIR)' "$${brp[@]}" \
		packaging/rpm/appearanced.spec; \
	for p in "$$work"/RPMS/*/*.rpm; do install -m644 "$$p" '$(RPM_DIR)/'; echo "Built $(RPM_DIR)/$${p##*/}"; done

# rpmlint with Fedora's settings (packaging/rpm/rpmlint.toml) and the package's filters (appearanced.rpmlintrc).
rpm: rpm-build
	rpmlint -c packaging/rpm/rpmlint.toml -r packaging/rpm/appearanced.rpmlintrc \
		packaging/rpm/appearanced.spec '$(RPM_DIR)/$(RPM_NAME)'
