# The release build every package ships (make deb, make arch, make rpm): included by debian/rules and by the
# Makefile, so the three packages take the same binaries from one build (docs/decisions.md, "The Arch and RPM
# packages"). Run from the checkout's root.
#   --static-swift-stdlib   the Swift runtime and Foundation linked in: no distribution packages them for us
#   --disable-local-rpath   no $ORIGIN run path (nothing is loaded from next to the binaries)
#   -z now                  bind now: full RELRO, as the distributions' hardening flags give C packages
PACKAGE_SWIFT_FLAGS := -c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker now
# Its own scratch directory, apart from .build: never waits for (or disturbs) `swift test`, and kept between
# runs so a rebuild is incremental (`make clean` removes it). Named for the first package that used it.
PACKAGE_SCRATCH := $(CURDIR)/.build-deb
