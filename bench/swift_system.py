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
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from hostile import Daemon  # noqa: E402
import variant  # noqa: E402


def build():
    # The shipped build makes every product (the daemon serves both clients); the variant only appearancectl.
    args = ["swift", "build", *variant.FLAGS]
    subprocess.run(args, cwd=ROOT, check=True)
    out = subprocess.run(args + ["--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def instructions(argv, env):
    # valgrind 3.19 cannot read the DWARF 5 debug info of these binaries: count on a stripped copy (the same
    # code; symbols are not needed for the total).
    with tempfile.TemporaryDirectory() as d, tempfile.NamedTemporaryFile(suffix=".callgrind") as f:
        exe = os.path.join(d, "appearancectl")
        subprocess.run(["strip", "-o", exe, argv[0]], check=True)
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={f.name}", exe, *argv[1:]], env=env,
                       capture_output=True, check=True)
        total = subprocess.run(["callgrind_annotate", f.name], capture_output=True, text=True).stdout
    for line in total.splitlines():
        if "PROGRAM TOTALS" in line:
            return int(line.split()[0].replace(",", ""))
    return None


def stripped_size(path):
    with tempfile.NamedTemporaryFile() as f:
        subprocess.run(["strip", "-o", f.name, path], check=True)
        return os.path.getsize(f.name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=500)
    a = ap.parse_args()
    plain_dir = build()
    system_dir = variant.build("swift-system", "appearancectl")
    binaries = {"C library (shipped)": plain_dir + "/appearancectl", "swift-system 1.8.1": system_dir + "/appearancectl"}
    result = {"runs": a.runs, "command": "appearancectl get",
              "size_bytes": {k: os.path.getsize(v) for k, v in binaries.items()},
              "stripped_size_bytes": {k: stripped_size(v) for k, v in binaries.items()}}
    d = Daemon(plain_dir)  # the shipped daemon serves both
    try:
        samples = {k: [] for k in binaries}
        names = list(binaries)
        for i in range(a.runs):
            for label in (names if i % 2 == 0 else names[::-1]):
                t0 = time.perf_counter()
                subprocess.run([binaries[label], "get"], env=d.env, stdout=subprocess.DEVNULL, check=True)
                samples[label].append((time.perf_counter() - t0) * 1000)
        result["p50_ms"] = {k: round(statistics.median(v), 3) for k, v in samples.items()}
        result["difference_p50_ms"] = round(result["p50_ms"][names[1]] - result["p50_ms"][names[0]], 3)
        result["instructions"] = {k: instructions([v, "get"], d.env) for k, v in binaries.items()}
    finally:
        d.close()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "swift_system.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
