#!/usr/bin/python3
"""Package.swift is the map: every module a target imports must be one of its declared dependencies, and
syscalls stay in the POSIX layer.

Reads the manifest with `swift package dump-package`, then every .swift file of every target, and fails
naming the file, the import and the target when an import is not declared (system modules excepted), or when
a target outside GLIBC_ALLOWED imports Glibc (or Musl): only AppearancePosix (and AppearanceBus, for libdbus)
make system calls. Run by `make test`, which also builds with SwiftPM's
`--explicit-target-dependency-import-check error`. That check is not enough alone: it accepts any module in
a target's transitive closure (`targetDependencyMap` in .build/debug/description.json), so an arrow that is
used but only reachable through another target passes it; this script compares with the declared arrows.
"""
import json
import os
import re
import subprocess
import sys

SYSTEM = {"Swift", "Glibc", "Musl", "Dispatch", "Foundation", "FoundationEssentials", "Testing", "XCTest",
          "PackageDescription", "_Concurrency", "Synchronization"}
# Targets that may import the C library: the POSIX layer, the libdbus wrapper, AppearanceCore for its math
# (sin, cos, acos in Sun.swift: no system calls), the example app (an app uses its platform), and tests.
GLIBC_ALLOWED = {"AppearancePosix", "AppearanceBus", "AppearanceCore", "appearance-example", "TestSupport"}
IMPORT = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|enum|class|protocol|let|var|func|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.M)


MULTILINE_STRING = re.compile(r'#*"""(?:.|\n)*?"""#*')


def main():
    swift = os.environ.get("SWIFT", "swift")
    manifest = json.loads(subprocess.run([swift, "package", "dump-package"], check=True, capture_output=True, text=True).stdout)
    problems = []
    for t in manifest["targets"]:
        if t["type"] in ("system", "binary", "plugin"):
            continue
        declared = {t["name"]}
        for dep in t["dependencies"]:
            for kind in ("byName", "target", "product"):
                if kind in dep:
                    declared.add(dep[kind][0])
        default = {"test": "Tests", "executable": "Sources", "regular": "Sources"}[t["type"]]
        path = t.get("path") or os.path.join(default, t["name"])
        excluded = [os.path.join(path, e) for e in t.get("exclude", [])]
        for root, _dirs, files in os.walk(path):
            if any(root == e or root.startswith(e + "/") for e in excluded):
                continue
            for name in files:
                if not name.endswith(".swift"):
                    continue
                file = os.path.join(root, name)
                with open(file, encoding="utf-8") as f:
                    # Multi-line string literals are text, not code (a test's Python or shell script may say
                    # `import sys`): blanked, their newlines kept so line numbers stay right.
                    text = MULTILINE_STRING.sub(lambda m: "\n" * m.group(0).count("\n"), f.read())
                for m in IMPORT.finditer(text):
                    module = m.group(1)
                    line = text.count("\n", 0, m.start()) + 1
                    if module not in SYSTEM and module not in declared:
                        problems.append(f"{file}:{line}: imports {module}, which target {t['name']} does not declare in Package.swift")
                    elif module in ("Glibc", "Musl") and t["type"] != "test" and t["name"] not in GLIBC_ALLOWED:
                        problems.append(f"{file}:{line}: imports {module}: target {t['name']} makes no system calls of its own; "
                                        "use AppearancePosix (or add the call there)")
    # SystemPackage is declared only by the copy of the tree bench/swift_system.py builds (bench/variant.py
    # swift-system), which also defines SWIFT_SYSTEM: Descriptor.swift imports it inside #if SWIFT_SYSTEM.
    problems = [p for p in problems if not ("imports SystemPackage, which target AppearancePosix" in p)]
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"check-imports: every import of {len(manifest['targets'])} targets is a declared dependency, "
          f"and only {', '.join(sorted(GLIBC_ALLOWED))} import the C library")


if __name__ == "__main__":
    main()
