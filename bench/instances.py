#!/usr/bin/python3
"""Private memory per instance: N appearanced side by side, as N users' sessions would run them (each with its
own private session bus, no portal, its own runtime, state and config folders), optionally beside other builds
in the same run (docs/benchmarks.md, "Smaller and faster"). --settle seconds (1) after every instance answers
`get`, the mean of smaps_rollup's Private_Clean + Private_Dirty over the instances: what each adds once the
binary's and the libraries' file pages are shared. The builds alternate, --reps times; `sync` first, so that a freshly linked
binary's page cache does not count as dirty.

    python3 bench/instances.py --bin-dir DIR [--also LABEL=DIR ...] [--instances 20] [--reps 3] --out out/bench
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Daemon, arguments, builds, in_turn, logger, median, now, smaps_rollup, write_report  # noqa: E402


def private_kib(pid):
    """smaps_rollup's Private_Clean + Private_Dirty, and its Anonymous, in KiB."""
    m = smaps_rollup(pid)
    return {"private": m["Private_Clean"] + m["Private_Dirty"], "anonymous": m["Anonymous"]}


def anonymous_by_mapping(pid):
    """KiB of anonymous memory by what it belongs to (a file's mappings, or [heap], [stack], the rest), from smaps."""
    out, name = {}, None
    for line in open(f"/proc/{pid}/smaps"):
        fields = line.split()
        if fields and "-" in fields[0] and not fields[0].endswith(":"):
            name = os.path.basename(fields[5]) if len(fields) > 5 else "other anonymous mappings"
        elif fields and fields[0] == "Anonymous:" and int(fields[1]):
            out[name] = out.get(name, 0) + int(fields[1])
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def run(bin_dir, n, settle):
    """Starts n instances of bin_dir's appearanced, each on a private session bus of its own, measures them,
    stops them; the per-instance means."""
    daemons = []
    try:
        for _ in range(n):
            daemons.append(Daemon(bin_dir, bus=True, prefix="appearanced-instances-", runtime="run"))
        time.sleep(settle)
        samples = [private_kib(d.p.pid) for d in daemons]
        mean = {k: sum(s[k] for s in samples) / n for k in samples[0]}
        return {**mean, "first_instance_anonymous_by_mapping": anonymous_by_mapping(daemons[0].p.pid)}
    finally:
        for d in daemons:
            d.close()


def main():
    ap = arguments(also=True)
    ap.add_argument("--instances", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--settle", type=float, default=1, help="seconds after every instance answered, before measuring")
    a = ap.parse_args()
    bins = builds(a.bin_dir, a.also)
    subprocess.run(["sync"], timeout=120)
    runs = in_turn(bins, a.reps, lambda _, bin_dir: run(bin_dir, a.instances, a.settle), logger("instances"))
    R = {"builds": bins, "instances": a.instances, "runs": runs, "date": now(),
         "median": {b: {k: median([r[k] for r in rs]) for k in ("private", "anonymous")} for b, rs in runs.items()}}
    lines = [f"# Private memory per instance ({a.instances} instances, mean, {a.settle:g} s after they answered; "
             f"median of {a.reps} runs)", "",
             "| build | Private_Clean + Private_Dirty | of it anonymous |", "|---|---|---|"]
    for b, m in R["median"].items():
        lines.append(f"| {b} | {m['private']:.0f} KiB | {m['anonymous']:.0f} KiB |")
    for b, rs in runs.items():
        parts = ", ".join(f"{k} {v}" for k, v in rs[-1]["first_instance_anonymous_by_mapping"].items())
        lines.append(f"\n{b}, the first instance of the last run, anonymous KiB by mapping: {parts}")
    write_report(a.out, "instances", R, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
