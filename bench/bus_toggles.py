#!/usr/bin/python3
"""appearanced's resident memory through and after a flood of D-Bus toggles (docs/benchmarks.md, "RSS after a
flood of D-Bus toggles"), optionally beside other builds in the same run.

For each build in turn, repeated --reps times so that the builds alternate: a fresh release daemon in a sandbox
of its own (XDG_RUNTIME_DIR, XDG_STATE_HOME and XDG_CONFIG_HOME in a temporary directory, no portal, no
desktop to follow) on a private session bus with the session bus's own limit on pending replies (session.conf:
50,000 a connection). bench/probe.c's `bustoggle` keeps --window Toggle({}) calls to the D-Bus service
outstanding on one connection (a new one for each answer) until the next of --marks toggles is answered, each
leg bounded by --seconds. At every mark, and --idle seconds after the last one, the daemon's VmRSS and VmHWM
(/proc/PID/status) and smaps_rollup's Anonymous and Private_Dirty; the first mark, 0, is the fresh daemon
idle (1 s after it answers). With --trim-after, once more after a malloc_trim(0) called in the daemon through
gdb (what a trim after the flood would give). --env runs a build's daemon with a variable set (glibc's
malloc tunables, say), and one build may be listed under several labels. Each figure is the median over the
repetitions.

    python3 bench/bus_toggles.py --bin-dir DIR [--baseline-bin-dir DIR] [--also LABEL=DIR ...]
        [--env LABEL=NAME=VALUE ...] [--reps 3] [--window 10000] [--marks 0,10000,50000,100000,240000] --out DIR
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import (Daemon, arguments, build_probe, builds, in_turn, load, logger, median, medians,  # noqa: E402
                   now, on_sigterm_exit, rss, smaps_rollup, write_report)

log = logger("bus_toggles")


def memory(pid):
    """KiB: VmRSS and VmHWM, and smaps_rollup's Anonymous and Private_Dirty."""
    m = smaps_rollup(pid)
    return {**rss(pid), "Private_Dirty": m["Private_Dirty"], "Anonymous": m["Anonymous"]}


def trim(pid):
    """malloc_trim(0) in the daemon, through gdb: what a trim after the flood would give back."""
    r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "call (int)malloc_trim(0)"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise SystemExit(f"gdb could not call malloc_trim in {pid}: {r.stderr.strip()[-300:]}")


def run(bin_dir, probe, marks, window, seconds, idle, extra_env, trim_after):
    # A private session bus with the session bus's limit on pending replies (session.conf: 50,000 a connection).
    s = Daemon(bin_dir, bus=True, prefix="apd-toggles-", bus_limits=(("max_replies_per_connection", 50000),),
               start=False)
    try:
        s.start(env=extra_env)
        time.sleep(1)
        points, done, answered, errors, busy = {}, 0, 0, 0, 0.0
        for m in marks:
            if m > done:
                r = subprocess.run([probe, "bustoggle", s.address, str(m - done), str(window), str(seconds)],
                                   capture_output=True, text=True, timeout=seconds + 60)
                a, e, t = r.stdout.strip().split(",")
                answered, errors, busy = answered + int(a), errors + int(e), busy + float(t)
                if int(a) + int(e) < m - done:
                    log(f"{bin_dir}: only {a} of {m - done} toggles answered within {seconds} s; {r.stderr.strip()}")
                done = m
                time.sleep(0.5)  # the last answers' work (the change log's appends) done
            points[str(m)] = memory(s.p.pid)
        time.sleep(idle)
        points["after"] = memory(s.p.pid)
        if trim_after:
            trim(s.p.pid)
            points["trimmed"] = memory(s.p.pid)
        return {"points": points, "answered": answered, "errors": errors, "toggles_per_s": round(answered / busy) if busy else None}
    finally:
        s.close()


def main():
    ap = arguments(baseline="another build, measured in turn with this one (as 'baseline')", also=True)
    ap.add_argument("--env", action="append", default=[], metavar="LABEL=NAME=VALUE",
                    help="the daemon of build LABEL runs with NAME=VALUE (e.g. GLIBC_TUNABLES=glibc.malloc.arena_max=1); "
                         "a build may be listed under two labels to run it both ways")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--window", type=int, default=10000, help="Toggle calls outstanding at once (at most 50,000)")
    ap.add_argument("--marks", default="0,10000,50000,100000,240000", help="toggles answered at each measurement")
    ap.add_argument("--seconds", type=float, default=600, help="bound on each leg between two marks")
    ap.add_argument("--idle", type=float, default=3, help="seconds after the last mark before the last measurement")
    ap.add_argument("--trim-after", action="store_true",
                    help="then call malloc_trim(0) in the daemon (gdb) and measure again ('trimmed')")
    a = ap.parse_args()
    marks = [int(x) for x in a.marks.split(",")]
    if marks != sorted(marks) or marks[0] != 0:
        ap.error("--marks: increasing, from 0")
    bins = builds(a.bin_dir, a.also, a.baseline_bin_dir)
    extra = {b: {} for b in bins}
    for spec in a.env:
        label, _, assignment = spec.partition("=")
        name, _, value = assignment.partition("=")
        if label not in bins or not name:
            ap.error(f"--env {spec}: LABEL=NAME=VALUE, LABEL one of {', '.join(bins)}")
        extra[label][name] = value
    probe = build_probe("toggles")
    R = {"builds": bins, "env": {b: e for b, e in extra.items() if e}, "date": now(), "window": a.window,
         "marks": marks, "idle_s": a.idle, "load_before": load()}
    on_sigterm_exit()
    try:
        R["runs"] = in_turn(bins, a.reps, lambda label, bin_dir: run(bin_dir, probe, marks, a.window, a.seconds,
                                                                     a.idle, extra[label], a.trim_after), log)
    finally:
        os.unlink(probe)
    R["load_after"] = load()
    R["median"] = {b: medians([run["points"] for run in runs])
                   | {"toggles_per_s": median([run["toggles_per_s"] or 0 for run in runs])}
                   for b, runs in R["runs"].items()}
    write_report(a.out, "bus_toggles", R, summary(R))


def summary(R):
    points = [p for p in next(iter(R["median"].values())) if p != "toggles_per_s"]
    name = {p: ("idle" if p == "0" else p if p in ("after", "trimmed") else f"{int(p):,}") for p in points}
    o = [f"{R['date']}, medians of {len(next(iter(R['runs'].values())))} repetitions, builds in turn; "
         f"{R['window']:,} Toggle calls outstanding; 'after': {R['idle_s']:g} s after the last; load {' '.join(R['load_before'])}\n",
         "| build | " + " | ".join(f"VmRSS {name[p]}" for p in points) + " | VmHWM | anonymous after | toggles/s |",
         "|---|" + "---|" * (len(points) + 3)]
    for b, m in R["median"].items():
        o.append(f"| {b} | " + " | ".join(f"{m[p]['VmRSS'] / 1024:.1f} MiB" for p in points)
                 + f" | {m['after']['VmHWM'] / 1024:.1f} MiB | {m['after']['Anonymous'] / 1024:.1f} MiB | {m['toggles_per_s']:,.0f} |")
    o += [""] + [f"- {b}: {R['builds'][b]}" + "".join(f", {k}={v}" for k, v in R["env"].get(b, {}).items()) for b in R["builds"]]
    o.append(f"- load after: {' '.join(R['load_after'])}")
    return "\n".join(o) + "\n"


if __name__ == "__main__":
    main()
