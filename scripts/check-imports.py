#!/usr/bin/python3
"""Package.swift is the map: every module a target imports must be one of its declared dependencies.

Reads the manifest with `swift package dump-package`, then every .swift file of every target, and fails
naming the file, the import and the target when an import is not declared (system modules excepted).
Run by `make test` (SwiftPM 6.3's --explicit-target-dependency-import-check did not report a removed
dependency on Linux here, so the check is the project's own).
"""
import json
import os
import re
import subprocess
import sys

SYSTEM = {"Swift", "Glibc", "Musl", "Dispatch", "Foundation", "FoundationEssentials", "Testing", "XCTest",
          "PackageDescription", "_Concurrency", "Synchronization"}
IMPORT = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|enum|class|protocol|let|var|func|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.M)


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
                    text = f.read()
                for m in IMPORT.finditer(text):
                    module = m.group(1)
                    if module not in SYSTEM and module not in declared:
                        line = text.count("\n", 0, m.start()) + 1
                        problems.append(f"{file}:{line}: imports {module}, which target {t['name']} does not declare in Package.swift")
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"check-imports: every import of {len(manifest['targets'])} targets is a declared dependency")


if __name__ == "__main__":
    main()
