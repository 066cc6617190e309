#!/usr/bin/python3
"""The builds the benchmarks compare against, made from a copy of the tree: Package.swift describes only the
product's build, so a bench that needs another one patches its own copy (docs/benchmarks.md).

A variant's copy is .build-variants/NAME/CHECKOUT/ (ignored by git; CHECKOUT is the tree's directory name):
the tracked and the untracked, not ignored files of the working tree as they are now, with the variant's changes,
and its own .build inside. A file is rewritten only when its content differs, so a second run builds
incrementally.

    python3 bench/variant.py NAME [--product P]   builds variant NAME (release, --static-swift-stdlib) and
                                                 prints its bin directory
    python3 bench/variant.py NAME --copy-only     writes the copy, prints its directory, builds nothing

Variants (VARIANTS below):
  cli-unordered   appearancectl without its symbol order (an empty link/appearancectl.order)
  cli-dynamic     appearancectl linked as before: no linker settings (dynamic glibc, libstdc++ and libm,
                  the default linker, no order)
  daemon-unordered  appearanced without its symbol order (an empty link/appearanced.order)
  swift-system    AppearancePosix's descriptor reads, writes and closes on swift-system 1.8.1
                  (the dependency and -D SWIFT_SYSTEM added to Package.swift; Descriptor.swift's #if branches)
The metadata-accessors build needs no copy: bench/cli_floor.py passes ACCESSORS_FLAGS to `swift build`.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FLAGS = ["-c", "release", "--static-swift-stdlib"]

# Every module compiled with direct type-metadata accessors instead of mangled-name lookups (docs/decisions.md:
# measured, not adopted). Command-line flags: no unsafe flags in Package.swift.
ACCESSORS_FLAGS = ["-Xswiftc", "-Xfrontend", "-Xswiftc", "-disable-concrete-type-metadata-mangled-name-accessors"]

# Appended to the copy's Package.swift: the manifest's own package value, changed after it is made.
DYNAMIC_CLI = """
// bench/variant.py cli-dynamic: appearancectl linked as before (no static executable, no lld, no order).
for target in package.targets where target.name == "appearancectl" { target.linkerSettings = [] }
"""
SWIFT_SYSTEM = """
// bench/variant.py swift-system: the POSIX layer on swift-system (Descriptor.swift's #if SWIFT_SYSTEM).
package.dependencies.append(.package(url: "https://github.com/apple/swift-system", exact: "1.8.1"))
for target in package.targets where target.name == "AppearancePosix" {
    target.dependencies.append(.product(name: "SystemPackage", package: "swift-system"))
    target.swiftSettings = (target.swiftSettings ?? []) + [.define("SWIFT_SYSTEM")]
}
"""


def append(path, text):
    return lambda files: {path: files[path] + text.encode()}


VARIANTS = {
    "cli-unordered": lambda files: {"link/appearancectl.order": b""},
    "cli-dynamic": append("Package.swift", DYNAMIC_CLI),
    "daemon-unordered": lambda files: {"link/appearanced.order": b""},
    "swift-system": append("Package.swift", SWIFT_SYSTEM),
}


def tree_files():
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True, timeout=120).stdout
    return sorted({p for p in out.decode().split("\0") if p and os.path.isfile(os.path.join(ROOT, p))})


def copy(name):
    """Writes .build-variants/NAME/CHECKOUT/ and returns its path."""
    # Named like the checkout: SwiftPM names the root package after its directory, and a copy called
    # swift-system would clash with the dependency of that name.
    dest = os.path.join(ROOT, ".build-variants", name, os.path.basename(ROOT))
    paths = tree_files()
    read = lambda p: open(os.path.join(ROOT, p), "rb").read()  # noqa: E731
    changed = VARIANTS[name]({p: read(p) for p in ("Package.swift",)})
    for p in sorted(set(paths) | set(changed)):
        want = changed[p] if p in changed else read(p)
        target = os.path.join(dest, p)
        try:
            with open(target, "rb") as f:
                if f.read() == want:
                    continue
        except FileNotFoundError:
            os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(want)
        if p not in changed:
            os.chmod(target, os.stat(os.path.join(ROOT, p)).st_mode & 0o777)
    keep = set(paths) | set(changed)
    swiftpm = {".build", ".swiftpm", "Package.resolved"}  # SwiftPM's own, in the copy
    for d, dirs, names in os.walk(dest):
        dirs[:] = [x for x in dirs if not (d == dest and x in swiftpm)]
        for n in names:
            if not (d == dest and n in swiftpm) and os.path.relpath(os.path.join(d, n), dest) not in keep:
                os.remove(os.path.join(d, n))
    return dest


def swift_build(cwd, *extra, timeout=3600):
    """`swift build` in `cwd`, release with the static Swift runtime (and `extra`); returns its bin directory.
    The build's progress goes to stderr: stdout is the bin directory alone (for "$(... variant.py NAME)")."""
    args = ["swift", "build", *FLAGS, *extra]
    subprocess.run(args, cwd=cwd, stdout=sys.stderr, check=True, timeout=timeout)
    return subprocess.run(args + ["--show-bin-path"], cwd=cwd, capture_output=True, text=True, check=True,
                          timeout=600).stdout.strip()


def build(name, product=None, timeout=3600):
    """Builds variant NAME (release, static Swift runtime; one product if given) and returns its bin directory."""
    return swift_build(copy(name), *(["--product", product] if product else []), timeout=timeout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name", choices=sorted(VARIANTS))
    ap.add_argument("--product")
    ap.add_argument("--copy-only", action="store_true")
    a = ap.parse_args()
    print(copy(a.name) if a.copy_only else build(a.name, a.product))


if __name__ == "__main__":
    sys.exit(main())
