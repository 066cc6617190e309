#!/usr/bin/python3
"""appearanced's resident memory through and after a flood of D-Bus toggles (docs/benchmarks.md, "RSS after a
flood of D-Bus toggles"), optionally beside other builds in the same run.

For each build in turn, repeated --reps times so that the builds alternate: a fresh release daemon in a sandbox
of its own (XDG_RUNTIME_DIR, XDG_STATE_HOME and XDG_CONFIG_HOME in a temporary directory, no portal, no
desktop to follow) on a private session bus with the session bus's own limit on pending replies (session.conf:
50,000 a connection). bench/probe.c's `bustoggle` keeps --window Toggle({}) calls to the D-Bus face
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
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import median, write_report  # noqa: E402
from hostile import FACE, build_probe, name_owned  # noqa: E402


def log(*a):
    print("bus_toggles:", *a, file=sys.stderr, flush=True)


def memory(pid):
    """KiB: VmRSS and VmHWM, and smaps_rollup's Anonymous and Private_Dirty."""
    out = {}
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(("VmRSS:", "VmHWM:")):
            out[line.split(":")[0]] = int(line.split()[1])
    for line in open(f"/proc/{pid}/smaps_rollup"):
        parts = line.split()
        if parts[0] in ("Anonymous:", "Private_Dirty:"):
            out[parts[0].rstrip(":")] = int(parts[1])
    return out


class Served:
    """A private session bus (the session bus's limit on pending replies, no service activation) and a daemon of
    `bin_dir` on it, sandboxed, serving its D-Bus face."""

    def __init__(self, bin_dir, extra_env=None):
        self.root = tempfile.mkdtemp(prefix="apd-toggles-")
        for d in ("home", "runtime", "state", "config"):
            os.makedirs(os.path.join(self.root, d), mode=0o700)
        with open(self.root + "/bus.conf", "w") as f:
            f.write(f"""<busconfig><type>session</type><listen>unix:path={self.root}/bus</listen><auth>EXTERNAL</auth>
                <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
                <allow own="*"/></policy><limit name="max_replies_per_connection">50000</limit></busconfig>""")
        self.bus = subprocess.Popen(["/usr/bin/dbus-daemon", f"--config-file={self.root}/bus.conf", "--nofork", "--nopidfile",
                                     "--print-address=1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.address = self.bus.stdout.readline().strip()
        self.env = {"PATH": "/usr/bin:/bin", "HOME": self.root + "/home", "XDG_RUNTIME_DIR": self.root + "/runtime",
                    "XDG_STATE_HOME": self.root + "/state", "XDG_CONFIG_HOME": self.root + "/config",
                    "DBUS_SESSION_BUS_ADDRESS": self.address,
                    "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={self.root}/no-bus"}
        self.daemon = subprocess.Popen([bin_dir + "/appearanced"], env={**self.env, **(extra_env or {})}, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while not (self.answers(bin_dir) and name_owned(self.address, FACE)):
            if time.time() > deadline or self.daemon.poll() is not None:
                self.close()
                raise SystemExit(f"{bin_dir}/appearanced did not start on the private bus")
            time.sleep(0.05)

    def answers(self, bin_dir):
        return subprocess.run([bin_dir + "/appearancectl", "get"], env=self.env, capture_output=True).returncode == 0

    def close(self):
        for p in (self.daemon, self.bus):
            if p.poll() is None:
                p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.root, ignore_errors=True)


def trim(pid):
    """malloc_trim(0) in the daemon, through gdb: what a trim after the flood would give back."""
    r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "call (int)malloc_trim(0)"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise SystemExit(f"gdb could not call malloc_trim in {pid}: {r.stderr.strip()[-300:]}")


def run(bin_dir, probe, marks, window, seconds, idle, extra_env, trim_after):
    s = Served(bin_dir, extra_env)
    try:
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
            points[str(m)] = memory(s.daemon.pid)
        time.sleep(idle)
        points["after"] = memory(s.daemon.pid)
        if trim_after:
            trim(s.daemon.pid)
            points["trimmed"] = memory(s.daemon.pid)
        return {"points": points, "answered": answered, "errors": errors, "toggles_per_s": round(answered / busy) if busy else None}
    finally:
        s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--baseline-bin-dir", help="another build, measured in turn with this one (as 'baseline')")
    ap.add_argument("--also", action="append", default=[], metavar="LABEL=DIR", help="more builds, measured in turn")
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
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    marks = [int(x) for x in a.marks.split(",")]
    if marks != sorted(marks) or marks[0] != 0:
        ap.error("--marks: increasing, from 0")
    builds = {"this build": os.path.abspath(a.bin_dir)}
    if a.baseline_bin_dir:
        builds["baseline"] = os.path.abspath(a.baseline_bin_dir)
    for label, _, path in (x.rpartition("=") for x in a.also):
        builds[label] = os.path.abspath(path)
    extra = {b: {} for b in builds}
    for spec in a.env:
        label, _, assignment = spec.partition("=")
        name, _, value = assignment.partition("=")
        if label not in builds or not name:
            ap.error(f"--env {spec}: LABEL=NAME=VALUE, LABEL one of {', '.join(builds)}")
        extra[label][name] = value
    probe = build_probe("toggles")
    R = {"builds": builds, "env": {b: e for b, e in extra.items() if e}, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "window": a.window, "marks": marks,
         "idle_s": a.idle, "load_before": open("/proc/loadavg").read().split()[:3], "runs": {b: [] for b in builds}}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        for rep in range(a.reps):
            for label, bin_dir in builds.items():
                R["runs"][label].append(run(bin_dir, probe, marks, a.window, a.seconds, a.idle, extra[label], a.trim_after))
                log(f"{label}: repetition {rep + 1}: {R['runs'][label][-1]}")
    finally:
        os.unlink(probe)
    R["load_after"] = open("/proc/loadavg").read().split()[:3]
    R["median"] = {b: {p: {k: median([run["points"][p][k] for run in runs]) for k in runs[0]["points"][p]}
                       for p in runs[0]["points"]} | {"toggles_per_s": median([run["toggles_per_s"] or 0 for run in runs])}
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
