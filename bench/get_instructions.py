#!/usr/bin/python3
"""`appearancectl get`'s instructions, counted by callgrind, and its page faults (the kernel's count of minor
faults for one run, median of --fault-runs), for one build or two side by side (docs/benchmarks.md,
docs/decisions.md).

For each build: its appearanced runs with no bus in a private runtime directory (the same path length for
every build: the socket path's length shows in the count), its appearancectl is copied and stripped
(valgrind cannot read the static binary's debug info), and `get` is run under callgrind --runs times. The
counts repeat to within a few hundred instructions; the median is reported.

    /usr/bin/python3 bench/get_instructions.py --bin-dir DIR [--baseline-bin-dir DIR] [--runs 3] [--out DIR]
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Daemon, arguments, instructions, page_faults, write_json  # noqa: E402


def count(bin_dir, runs, fault_runs):
    d = Daemon(bin_dir, prefix="gi-", runtime="run", env={"DBUS_SYSTEM_BUS_ADDRESS": None})
    try:
        ctl = os.path.join(d.root, "appearancectl")
        subprocess.run(["strip", "-o", ctl, os.path.join(bin_dir, "appearancectl")], check=True)
        counts = sorted(instructions([ctl, "get"], d.env)[0] for _ in range(runs))
        return counts, page_faults([ctl, "get"], d.env, fault_runs)
    finally:
        d.close()


def main():
    ap = arguments(out=False, baseline="another build, counted beside this one")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--fault-runs", type=int, default=50)
    a = ap.parse_args()
    results = {"this build": count(a.bin_dir, a.runs, a.fault_runs)}
    if a.baseline_bin_dir:
        results["baseline"] = count(a.baseline_bin_dir, a.runs, a.fault_runs)
    for name, (c, f) in results.items():
        print(f"get_instructions: {name}: median {c[len(c) // 2]:,} instructions (runs: {c}); {f} page faults",
              file=sys.stderr)
    write_json(a.out, "get_instructions", {k: {"runs": v, "median": v[len(v) // 2], "page_faults": pf}
                                           for k, (v, pf) in results.items()}, echo=False)


if __name__ == "__main__":
    main()
