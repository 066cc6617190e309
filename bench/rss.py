#!/usr/bin/python3
"""appearanced's resident memory, optionally beside other builds in the same run (docs/benchmarks.md, "RSS").

On the real portal stack of bench/bench.py (private bus, xdg-desktop-portal with its GTK backend), for each
build in turn, repeated --reps times so that the builds alternate: a fresh daemon idle (1 s after it answers),
then a fresh daemon with 1,000 and one with 10,000 subscribers (the probe's `hold`), then the last one after
they all left. VmRSS and VmHWM from /proc/PID/status; each figure is the median over the repetitions. Also
reports the daemon's threads and, idle, its heap and the rest of its memory (smaps_rollup's anonymous and
file-backed pages), which tell a larger heap from more code touched; and how long a fresh daemon takes from
exec to its first answered `get` (median; the socket asked every 0.2 ms by a Python client). Each repetition
runs a fresh copy of each build's binaries: how much of a file the kernel maps on a fault depends on how its
pages sit in the page cache (large folios), so the same bytes measured 0.3 MiB apart from an old file and from a
fresh copy; fresh copies put every build in the same state (--in-place runs the files where they are, to see that).

    python3 bench/rss.py --bin-dir DIR [--also LABEL=DIR ...] [--reps 3] --out out/bench
"""
import os
import shutil
import subprocess
import tempfile
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import (GET_LINE, Hold, Stack, arguments, build_probe, builds, in_turn, logger, median,  # noqa: E402
                   medians, now, on_sigterm_exit, proc_status, request, rss, smaps_rollup, wait_until, write_report)
from change_latency import start_session  # noqa: E402

COUNTS = (1000, 10000)
log = logger("rss")


def detail(pid):
    """Threads, and the idle daemon's memory split into anonymous (heap, stacks) and file-backed pages."""
    m = smaps_rollup(pid)
    return {"threads": proc_status(pid, "Threads")["Threads"], "rss_kib": m["Rss"], "anonymous_kib": m["Anonymous"],
            "file_kib": m["Rss"] - m["Anonymous"]}


def start(st):
    """A fresh daemon of st.bin_dir. The stack's config turns the desktop following off; a build older than
    that setting refuses the table, and runs with no config instead (it has nothing to turn off)."""
    config = st.root + "/config/appearanced/config.toml"
    with open(config, "w") as f:
        f.write('[desktop]\nfollow = "off"\n')
    try:
        st.use(st.bin_dir)
    except SystemExit as e:
        if 'unknown table "desktop"' not in str(e):
            raise
        st.procs.remove(st.daemon)
        st.daemon = None
        open(config, "w").close()
        st.use(st.bin_dir)


def startup_ms(st, runs):
    """Exec to the first `get` answered, median of `runs` fresh daemons: the socket is asked every 0.2 ms
    (a Python client, no process per attempt)."""
    times = []
    for _ in range(runs):
        st.stop_daemon()
        t0 = time.perf_counter()
        st.daemon = st.spawn([st.bin_dir + "/appearanced"], stderr=subprocess.DEVNULL)
        wait_until(lambda: "result" in (request(st.socket, GET_LINE)[1] or {}), "appearanced did not answer",
                   pause=0.0002)
        times.append((time.perf_counter() - t0) * 1000)
    return median(times)


def measure(st, bin_dir, probe, startup_runs, in_place=False):
    if in_place:
        st.bin_dir = bin_dir
        return measured(st, probe, startup_runs)
    st.bin_dir = tempfile.mkdtemp(dir=st.root, prefix="build-")
    for exe in ("appearanced", "appearancectl"):
        shutil.copy2(os.path.join(bin_dir, exe), st.bin_dir)
    try:
        return measured(st, probe, startup_runs)
    finally:
        st.stop_daemon()
        shutil.rmtree(st.bin_dir)


def measured(st, probe, startup_runs):
    start(st)
    startup = startup_ms(st, startup_runs)
    start(st)
    time.sleep(1)
    r = {"idle": {**rss(st.daemon.pid), **detail(st.daemon.pid)}}
    for n in COUNTS:
        start(st)
        h = Hold(st, probe, n)
        time.sleep(0.5)
        r[f"{n} subscribers"] = {**rss(st.daemon.pid), **detail(st.daemon.pid)}
        h.close()
    time.sleep(0.5)
    r["after (0 subscribers)"] = {**rss(st.daemon.pid), **detail(st.daemon.pid)}
    r["start-up"] = {"exec_to_answering_ms": startup}
    return r


def main():
    ap = arguments(also=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--in-place", action="store_true", help="run each build's files where they are, not fresh copies")
    ap.add_argument("--startup-runs", type=int, default=10, help="fresh daemons timed to their first answer, per repetition")
    a = ap.parse_args()
    bins = builds(a.bin_dir, a.also)
    probe = build_probe("rss")
    R = {"builds": bins, "date": now()}
    st = Stack(a.bin_dir)
    on_sigterm_exit()
    try:
        start_session(st, probe)
        R["runs"] = in_turn(bins, a.reps, lambda _, bin_dir: measure(st, bin_dir, probe, a.startup_runs, a.in_place), log)
    finally:
        st.close()
        os.unlink(probe)
    R["median"] = {b: medians(runs) for b, runs in R["runs"].items()}
    write_report(a.out, "rss", R, summary(R))


def summary(R):
    whats = [w for w in next(iter(R["median"].values())) if w != "start-up"]
    o = [f"{R['date']}, medians of {len(next(iter(R['runs'].values())))} repetitions, builds in turn\n",
         "| build | " + " | ".join(f"VmRSS {w}" for w in whats) + " | idle: anonymous / file-backed | threads idle "
         "| exec to answering |", "|---|" + "---|" * (len(whats) + 3)]
    for b, m in R["median"].items():
        o.append(f"| {b} | " + " | ".join(f"{m[w]['VmRSS'] / 1024:.1f} MiB" for w in whats)
                 + f" | {m['idle']['anonymous_kib'] / 1024:.1f} / {m['idle']['file_kib'] / 1024:.1f} MiB"
                 + f" | {m['idle']['threads']:.0f} | {m['start-up']['exec_to_answering_ms']:.1f} ms |")
    return "\n".join(o) + "\n"


if __name__ == "__main__":
    main()
