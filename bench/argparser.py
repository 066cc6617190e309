#!/usr/bin/python3
"""swift-argument-parser's start-up cost (docs/decisions.md, "Argument parsing"): `appearancectl get` as
shipped (hand parser) against the same `get` parsed by swift-argument-parser 1.8.2 (bench/argparser), both
release builds with the static Swift runtime, against one running daemon, alternating, whole process; and
their instruction counts with callgrind. Writes argparser.json to --out.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hostile import Daemon  # noqa: E402


def instructions(argv, env):
    out = "/tmp/appearanced-argparser.callgrind"
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv], env=env,
                   capture_output=True, check=True)
    total = subprocess.run(["callgrind_annotate", out], capture_output=True, text=True).stdout
    os.unlink(out)
    for line in total.splitlines():
        if "PROGRAM TOTALS" in line:
            return int(line.split()[0].replace(",", ""))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=1000)
    a = ap.parse_args()
    pkg = os.path.join(HERE, "argparser")
    os.makedirs(os.path.join(pkg, ".build-link"), exist_ok=True)
    link = os.path.join(pkg, ".build-link", "appearanced")
    if not os.path.islink(link):
        os.symlink(os.path.dirname(HERE), link)
    subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib"], cwd=pkg, check=True)
    ap_bin = subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--show-bin-path"], cwd=pkg,
                            capture_output=True, text=True, check=True).stdout.strip() + "/appearancectl-ap"
    hand = a.bin_dir + "/appearancectl"
    d = Daemon(a.bin_dir)
    try:
        samples = {"hand parser": [], "swift-argument-parser": []}
        for i in range(a.runs):
            order = [("hand parser", hand), ("swift-argument-parser", ap_bin)]
            for label, exe in (order if i % 2 == 0 else order[::-1]):
                t0 = time.perf_counter()
                subprocess.run([exe, "get"], env=d.env, stdout=subprocess.DEVNULL, check=True)
                samples[label].append((time.perf_counter() - t0) * 1000)
        result = {k: {"runs": len(v), "p50_ms": statistics.median(v)} for k, v in samples.items()}
        result["difference_p50_ms"] = result["swift-argument-parser"]["p50_ms"] - result["hand parser"]["p50_ms"]
        result["instructions"] = {"hand parser": instructions([hand, "get"], d.env),
                                  "swift-argument-parser": instructions([ap_bin, "get"], d.env)}
    finally:
        d.close()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "argparser.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
