#!/usr/bin/python3
"""What adopting swift-system 1.8.1 for the POSIX layer would cost (docs/decisions.md, "POSIX layer").

Builds appearancectl twice, both release with the static Swift runtime: as shipped (AppearancePosix on the C
library) and from a copy of the tree whose Package.swift adds swift-system and -D SWIFT_SYSTEM (bench/variant.py
swift-system: the layer's descriptor reads, writes and closes through swift-system's FileDescriptor and Errno,
Descriptor.swift's #if branches). Then, against one running daemon: file size (and
stripped size), `appearancectl get` start-to-exit wall time, alternating the two binaries run by run, and
the instructions each `get` executes under callgrind. Writes swift_system.json to --out.

    make bench  (or: python3 bench/swift_system.py --out out/bench [--runs 500])
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import REPO, Daemon, alternate, instructions, write_json  # noqa: E402
import variant  # noqa: E402


def stripped_size(path):
    with tempfile.NamedTemporaryFile() as f:
        subprocess.run(["strip", "-o", f.name, path], check=True)
        return os.path.getsize(f.name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=500)
    a = ap.parse_args()
    plain_dir = variant.swift_build(REPO)  # every product: the shipped daemon serves both clients
    system_dir = variant.build("swift-system", "appearancectl")
    binaries = {"C library (shipped)": plain_dir + "/appearancectl", "swift-system 1.8.1": system_dir + "/appearancectl"}
    result = {"runs": a.runs, "command": "appearancectl get",
              "size_bytes": {k: os.path.getsize(v) for k, v in binaries.items()},
              "stripped_size_bytes": {k: stripped_size(v) for k, v in binaries.items()}}
    d = Daemon(plain_dir)
    try:
        samples = alternate({k: [v, "get"] for k, v in binaries.items()}, a.runs, d.env)
        result["p50_ms"] = {k: round(statistics.median(v), 3) for k, v in samples.items()}
        names = list(binaries)
        result["difference_p50_ms"] = round(result["p50_ms"][names[1]] - result["p50_ms"][names[0]], 3)
        # valgrind 3.19 cannot read these binaries' DWARF 5 debug info: counted on a stripped copy.
        result["instructions"] = {k: instructions([v, "get"], d.env, strip=())[0] for k, v in binaries.items()}
    finally:
        d.close()
    write_json(a.out, "swift_system", result)


if __name__ == "__main__":
    main()
