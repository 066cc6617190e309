#!/usr/bin/python3
"""Change latency and fan-out after a portal change (docs/benchmarks.md, notes 3 and 7), optionally beside a
baseline build in alternating blocks of the same run, on one real portal stack (bench.py's Stack).

- Added change latency: `probe sock SOCKET 1 ROUNDS portal` (a `gsettings` switch; from a direct libdbus
  listener popping the portal's SettingChanged to the subscriber's complete `changed` line), with the portal
  `Read` round trip alone (`probe readrtt`) measured right after each block, so both share the machine's state.
- Instructions the daemon executes per change (callgrind, zeroed after start-up, dumped after the rounds).
- Fan-out to 10,000 subscribers, a portal change and a `set` in turn on the same subscribers (`probe sock
  ... mixed`), with the daemon's instructions per round of each kind, and (as root, with perf) the CPU time
  of every process inside each round's window, from sched_switch events on CLOCK_MONOTONIC.

Writes change_latency.json and change_latency.md to --out.
"""
import bisect
import collections
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import (Stack, arguments, build_probe, builds, lasts, load, logger, median, now,  # noqa: E402
                   on_sigterm_exit, pct, run_probe, write_report)
import bench  # noqa: E402

log = logger("change_latency")


def without_debug_info(st, bin_dir):
    """A copy of the build without DWARF (valgrind 3.19 cannot read the DWARF 5 of a Swift 6 build; the
    symbols stay), beside the same appearancectl."""
    d = os.path.join(st.root, f"nodebug-{abs(hash(bin_dir))}")
    if not os.path.isdir(d):
        os.makedirs(d)
        subprocess.run(["objcopy", "--strip-debug", bin_dir + "/appearanced", d + "/appearanced"], check=True, timeout=120)
        os.symlink(bin_dir + "/appearancectl", d + "/appearancectl")
    return d


def under_callgrind(st):
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={st.root}/callgrind.out.%p"]


def use(st, bin_dir, wrapper=()):
    """Stack.use (scripts/daemon-order.py calls it by this name)."""
    st.use(bin_dir, wrapper)


def sock(st, probe, n, rounds, trigger):
    """probe `sock` on the stack's daemon: (rows, lost rounds)."""
    return run_probe([probe, "sock", st.socket, n, rounds, trigger], st.env,
                     timeout=120 + 10 * rounds)  # the probe gives each round 5 s


def blocks(total, size, what):
    """The sizes of the blocks in which the builds alternate, the progress logged after each."""
    done = 0
    while done < total:
        k = min(size, total - done)
        yield k
        done += k
        log(f"{what}: {done}/{total} rounds per build")


def readrtt(st, probe, n):
    r = subprocess.run([probe, "readrtt", str(n + 1)], env=st.env, capture_output=True, text=True, check=True,
                       timeout=120 + n)
    return [int(x) for x in r.stdout.split()[1:]]  # the first call (printed as "first,NS") is left out


def start_session(st, probe):
    """The real portal stack on a private bus, the desktop light, the portal and its backend activated."""
    st.start_session()
    readrtt(st, probe, 3)


def bus_side_fd(bus_pid, daemon_pid):
    """dbus-daemon's descriptor for the daemon's connection (`ss -xpn`: the dbus-daemon socket whose peer is one of
    the daemon's), so that its sendmsg on it is the moment a signal arrives in the daemon's socket; None if unseen."""
    out = subprocess.run(["ss", "-xpnH"], capture_output=True, text=True, timeout=30).stdout
    theirs, ours = {}, set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 9:
            continue
        local, peer, users = f[5], f[7], " ".join(f[8:])
        if f"pid={daemon_pid}," in users:
            ours.add(local)
        m = re.search(rf"pid={bus_pid},fd=(\d+)", users)
        if m:
            theirs[peer] = int(m.group(1))
    fds = [fd for peer, fd in theirs.items() if peer in ours]
    return fds[0] if len(fds) == 1 else None


def cpu_ticks():
    """/proc/stat's first line: user, nice, system, idle, iowait, irq, softirq, steal, … (ticks)."""
    return [int(x) for x in open("/proc/stat").readline().split()[1:]]


def stats(samples):
    return bench.stats(samples, (50, 90, 99))


def gsettings_writes(script):
    """The times of the sendmsg calls of `gsettings` processes (their GDBus threads included), from `perf script
    --show-task-events -F pid,time,event`."""
    pids, sends = set(), []
    for line in script.splitlines():
        parts = line.split()
        if "PERF_RECORD_COMM exec: gsettings:" in line:
            pids.add(int(parts[0]))
        elif len(parts) >= 3 and parts[2].endswith("sys_enter_sendmsg:") and parts[0].isdigit():
            sends.append((int(parts[0]), int(round(float(parts[1].rstrip(":")) * 1e9))))
    return sorted(t for pid, t in sends if pid in pids)


def ratios(own, relay):
    """The daemon's own share over the portal's relay in the same rounds: p50 over p50, p99 over p99."""
    return {"n": len(own), "p50": median(own) / median(relay), "p99": pct(own, 99) / pct(relay, 99)} if relay else None


def callgrind_total(st, pid, action, keep=None):
    """Instructions the daemon (under callgrind) executes during `action()`; the dump is copied to `keep` (a
    path) when given, for callgrind_annotate."""
    subprocess.run(["callgrind_control", "-z", str(pid)], check=True, capture_output=True, timeout=120)
    before = set(glob.glob(st.root + "/callgrind.out.*"))
    action()
    subprocess.run(["callgrind_control", "-d", str(pid)], check=True, capture_output=True, timeout=120)
    dumps = sorted(set(glob.glob(st.root + "/callgrind.out.*")) - before, key=os.path.getmtime)
    if keep:
        os.makedirs(os.path.dirname(keep), exist_ok=True)
        shutil.copyfile(dumps[-1], keep)
    for line in open(dumps[-1]):
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit("no total in " + dumps[-1])


def perf_record(path, *args):
    """`perf record` into `path`, stamped with CLOCK_MONOTONIC like the probe, until perf_stop."""
    return subprocess.Popen(["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", *args, "-o", path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def perf_stop(p):
    p.send_signal(signal.SIGINT)
    p.wait(timeout=120)


def perf_script(path, *args):
    return subprocess.run(["perf", "script", "-i", path, *args], capture_output=True, timeout=600, text=True).stdout


class SchedTrace:
    """sched_switch on every CPU, stamped with CLOCK_MONOTONIC like the probe, for CPU time per process in
    a window. Needs root and perf; `available` says whether it runs."""

    def __init__(self, path):
        self.path = path
        self.p = None
        self.available = os.geteuid() == 0 and shutil.which("perf") is not None

    def start(self):
        if self.available:
            self.p = perf_record(self.path, "-e", "sched:sched_switch,sched:sched_waking", "-a")
            time.sleep(1)
            if self.p.poll() is not None:
                self.available = False

    def stop(self, watched=()):
        """Ends the trace and reads it: CPU intervals by process, and for the threads in `watched` (tids) the
        intervals in which they waited for a CPU: from their wake-up, or from being preempted (switched out
        still runnable), to being switched in."""
        if not self.p:
            return
        perf_stop(self.p)
        # Each event ends the running interval of the task it switches out (the header names it).
        self.intervals = []
        self.waits = []
        last_in = {}
        runnable = {}  # watched tid → since when it waits for a CPU
        running = set()
        out = perf_script(self.path, "-F", "comm,pid,tid,cpu,time,trace")
        for line in out.splitlines():
            if watched:
                woken = re.search(r": comm=.* pid=(\d+) prio=", line)
                if woken and int(woken.group(1)) in watched:
                    tid = int(woken.group(1))
                    if tid not in running:  # a wake-up of a running thread changes nothing
                        runnable.setdefault(tid, int(round(float(line.split(": comm=")[0].split()[-1].rstrip(":")) * 1e9)))
                    continue
                sw = re.search(r"prev_pid=(\d+) .*prev_state=(\S+) ==> .* next_pid=(\d+) ", line)
                if sw:
                    t = int(round(float(line.split(": prev_comm=")[0].split()[-1].rstrip(":")) * 1e9))
                    prev, state, nxt = int(sw.group(1)), sw.group(2), int(sw.group(3))
                    if prev in watched:
                        running.discard(prev)
                        if state.startswith("R"):
                            runnable[prev] = t
                        else:
                            runnable.pop(prev, None)
                    if nxt in watched:
                        running.add(nxt)
                        if nxt in runnable:
                            self.waits.append((runnable.pop(nxt), t))
            head, sep, _ = line.partition(": prev_comm=")
            if not sep:
                continue
            parts = head.split()
            try:
                t = int(round(float(parts[-1].rstrip(":")) * 1e9))
                cpu = int(parts[-2].strip("[]"))
                pid = int(parts[-3].split("/")[0])
            except (ValueError, IndexError):
                continue
            comm = " ".join(parts[:-3])
            if cpu in last_in and pid != 0:
                self.intervals.append((last_in[cpu], t, pid, comm))
            last_in[cpu] = t
        self.intervals.sort()
        self.starts = [i[0] for i in self.intervals]
        self.waits.sort()
        self.wait_starts = [w[0] for w in self.waits]
        os.unlink(self.path)

    def waited(self, spans):
        """ns a watched thread waited for a CPU inside the spans [(a, b), ...]."""
        total = 0
        for a, b in spans:
            i = max(0, bisect.bisect_left(self.wait_starts, a) - 64)
            while i < len(self.waits) and self.waits[i][0] < b:
                s, e = self.waits[i]
                total += max(0, min(e, b) - max(s, a))
                i += 1
        return total

    def usage(self, a, b):
        """CPU ns per (pid, comm) inside [a, b]."""
        u = collections.Counter()
        i = max(0, bisect.bisect_left(self.starts, a) - 64)  # intervals that began before a may reach into it
        while i < len(self.intervals) and self.intervals[i][0] < b:
            s, e, pid, comm = self.intervals[i]
            overlap = min(e, b) - max(s, a)
            if overlap > 0:
                u[(pid, comm)] += overlap
            i += 1
        return u


STEPS = ["t0 → the daemon has read the signal", "→ its Read written", "→ the reply read",
         "→ the subscriber's notification written", "→ the probe has it"]


class SpanProfile:
    """The daemon's CPU samples (perf cpu-clock, with call chains, on CLOCK_MONOTONIC) inside the own share's two
    spans (the signal's arrival → the Read written, the reply read → the notification written), by the
    sampled function and the daemon's own function that led to it: where the daemon's part of a change goes."""

    def __init__(self, path, pid):
        self.path = path
        self.p = perf_record(path, "-e", "cpu-clock", "-F", "20000", "-g", "-p", str(pid))

    def stop(self, spans, into):
        """Adds the samples inside `spans` ({"signal": [(a, b)], "reply": [...]}) to `into` (Counters by span)."""
        perf_stop(self.p)
        out = perf_script(self.path, "-F", "time,ip,sym,dso")
        os.unlink(self.path)
        starts = {k: [a for a, _ in sorted(v)] for k, v in spans.items()}
        ordered = {k: sorted(v) for k, v in spans.items()}
        for block in out.split("\n\n"):
            lines = [x.strip() for x in block.strip().splitlines()]
            if len(lines) < 2:
                continue
            try:
                t = int(round(float(lines[0].split()[0].rstrip(":")) * 1e9))
            except (ValueError, IndexError):
                continue
            frames = [x.split(None, 1)[1] if " " in x else x for x in lines[1:]]
            leaf = re.sub(r"\+0x[0-9a-f]+", "", frames[0]).split(" (")[0]
            dso = frames[0].rsplit("(", 1)[-1].rstrip(")").rsplit("/", 1)[-1]
            own = next((re.sub(r"\+0x[0-9a-f]+", "", f).split(" (")[0] for f in frames
                        if "/appearanced)" in f and not f.startswith(("_dispatch", "swift_", "$sI", "dispatch_"))), "")
            for k in spans:
                i = bisect.bisect_right(starts[k], t) - 1
                if i >= 0 and ordered[k][i][0] <= t <= ordered[k][i][1]:
                    into.setdefault(k, collections.Counter())[(f"{leaf} ({dso})", own)] += 1
                    break


def breakdown(st, probe, rounds, into=None, profile=False):
    """Where the added latency goes, round by round: the daemon's syscalls (perf, syscall tracepoints on
    CLOCK_MONOTONIC like the probe's stamps) between the probe's t0 and its last: the recvmsg that read the
    signal, the sendmsg of the Read, the recvmsg of the reply, the send of the notification. The samples are
    added to `into` (a dict from an earlier block of the same build) when given; `summarize` makes the figures.
    With `profile`, the daemon's CPU samples inside the own share's spans too (`SpanProfile`)."""
    path = os.path.join(st.root, "breakdown.data")
    bus_pid = st.bus_proc.pid
    bus_fd = bus_side_fd(bus_pid, st.daemon.pid)
    sched = SchedTrace(os.path.join(st.root, "breakdown-sched.data"))
    sched.start()
    rec = perf_record(path, "-a", "-e",
                      "syscalls:sys_exit_recvmsg,syscalls:sys_enter_sendmsg,syscalls:sys_enter_sendto")
    prof = SpanProfile(os.path.join(st.root, "profile.data"), st.daemon.pid) if profile else None
    time.sleep(1)
    if rec.poll() is not None:
        return None
    rows, _ = sock(st, probe, 1, rounds, "portal")
    # Which process each pid is (threads are named gdbus, pool-..., and so on), while they all still run.
    names = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                # comm is cut at 15 characters, where the portal and its backend look alike
                names[int(d)] = os.path.basename(open(f"/proc/{d}/cmdline", "rb").read().split(b"\0")[0].decode())
            except (OSError, UnicodeDecodeError):
                pass
    tids = {int(t) for t in os.listdir(f"/proc/{st.daemon.pid}/task")}
    perf_stop(rec)
    sched.stop(watched=tids)
    out = perf_script(path, "-F", "pid,time,event,trace")
    # The portal's own relay starts at the write: `gsettings`' last sendmsg before t0 is its call to dconf's
    # Writer.Change (its only one after the bus's Hello and AddMatch).
    writes = gsettings_writes(perf_script(path, "--show-task-events", "-F", "pid,time,event"))
    os.unlink(path)
    events = []
    for line in out.splitlines():
        parts = line.split()
        try:
            pid, t, name = int(parts[0]), int(round(float(parts[1].rstrip(":")) * 1e9)), parts[2].rstrip(":")
        except (ValueError, IndexError):
            continue
        # The signal's arrival: dbus-daemon writing into the daemon's connection.
        if pid == bus_pid and bus_fd is not None and name.endswith("sys_enter_sendmsg") \
                and re.search(r"fd: 0x0*%x," % bus_fd, line):
            events.append((t, "arrival", None))
            continue
        if pid != st.daemon.pid:
            continue
        ret = None
        if name.endswith("sys_exit_recvmsg"):
            ret = int(line.rsplit("0x", 1)[1], 16) if "0x" in line else None
            if ret is not None and ret >= 1 << 63:
                ret -= 1 << 64  # -EAGAIN
        events.append((t, name.split(":")[-1], ret))
    events.sort()
    times = [e[0] for e in events]
    acc = into if into is not None else {"steps": [[] for _ in STEPS], "whole": [], "own": [], "own_read": [],
                                         "own_arrival": [], "cpu": collections.Counter(), "window": 0, "sched": False,
                                         "relay": [], "own_with_relay": []}
    steps, whole, own, own_read, cpu = acc["steps"], acc["whole"], acc["own"], acc["own_read"], acc["cpu"]
    spans = {"signal": [], "reply": []}
    acc["sched"] = acc["sched"] or sched.available
    for x in rows:
        t0, last = int(x["t0"]), int(x["last"])
        seq = events[bisect.bisect_left(times, t0 - 3_000_000):bisect.bisect_right(times, last)]

        def find(start, name, data=False):
            return next(j for j in range(start, len(seq))
                        if seq[j][1] == name and (not data or (seq[j][2] or 0) > 0))
        try:
            a = find(0, "sys_exit_recvmsg", True)
            b = find(a, "sys_enter_sendmsg")
            c = find(b, "sys_exit_recvmsg", True)
            d = find(c, "sys_enter_sendto")
        except StopIteration:
            continue
        marks = [t0, seq[a][0], seq[b][0], seq[c][0], seq[d][0], last]
        for i in range(len(STEPS)):
            steps[i].append(marks[i + 1] - marks[i])
        # The daemon's own share: from the signal's arrival (t0: the probe's listener popped it; dbus-daemon
        # writes both copies in one dispatch) to the daemon's notification write, without the Read's round trip
        # as the daemon's own syscalls see it (its sendmsg of the Read → its recvmsg of the reply).
        rtt = seq[c][0] - seq[b][0]
        whole.append(last - t0)
        own.append(seq[d][0] - t0 - rtt)
        # xdg-desktop-portal's own relay in the same round: the write (gsettings' Change) → t0 (its SettingChanged
        # popped by the probe's listener, where the daemon's own share starts).
        w = bisect.bisect_left(writes, t0) - 1
        if w >= 0 and t0 - writes[w] < 1_000_000_000:
            acc["relay"].append(t0 - writes[w])
            acc["own_with_relay"].append(own[-1])
        own_read.append(seq[d][0] - seq[a][0] - rtt)
        # The same from the signal's arrival in the daemon's socket (dbus-daemon's sendmsg on its connection),
        # whatever the probe's own wake-up: the definition, exactly.
        arrivals = [e[0] for e in seq[:a] if e[1] == "arrival"]
        if arrivals:
            acc["own_arrival"].append(seq[d][0] - arrivals[-1] - rtt)
            spans["signal"].append((arrivals[-1], seq[b][0]))
            spans["reply"].append((seq[c][0], seq[d][0]))
            if sched.available:
                # The part of it in which the daemon waited for a CPU: woken by the signal but not yet
                # running, or preempted while at work (the machine's share, not the daemon's).
                wait = sched.waited([(arrivals[-1], seq[b][0]), (seq[c][0], seq[d][0])])
                acc.setdefault("cpu_wait", []).append(wait)
                acc.setdefault("own_arrival_running", []).append(seq[d][0] - arrivals[-1] - rtt - wait)
        if sched.available:
            acc["window"] += last - t0
            for (pid, comm), ns in sched.usage(t0, last).items():
                cpu[process_group(pid, comm, st.daemon.pid, names)] += ns
    if prof:
        prof.stop(spans, acc.setdefault("profile", {}))
    return acc


def summarize(acc):
    """The figures of `breakdown`'s samples (all blocks of one build)."""
    steps, whole, own, own_read = acc["steps"], acc["whole"], acc["own"], acc["own_read"]
    n = len(steps[0])
    result = {"rounds": n, "steps": {name: {"p50": median(v), "p90": pct(v, 90)} for name, v in zip(STEPS, steps) if v}}
    if n:
        result["own_share"] = {"whole_path": stats(whole), "own_from_t0": stats(own),
                               "own_from_the_daemons_read_of_the_signal": stats(own_read),
                               "own_from_the_signals_arrival": stats(acc["own_arrival"]),
                               "of_which_waiting_for_a_cpu": stats(acc.get("cpu_wait", [])),
                               "own_from_the_signals_arrival_less_cpu_waits": stats(acc.get("own_arrival_running", [])),
                               "read_rtt_in_the_daemon": stats(steps[2]),
                               "portal_relay": stats(acc["relay"]),
                               "own_from_t0_vs_portal_relay": ratios(acc["own_with_relay"], acc["relay"]),
                               "samples_ns": {"whole": whole, "own": own, "own_read": own_read,
                                              "own_arrival": acc["own_arrival"],
                                              "cpu_wait": acc.get("cpu_wait", []),
                                              "steps": dict(zip(STEPS, steps))}}
    if acc.get("profile"):
        result["profile"] = {}
        for span, counts in acc["profile"].items():
            total = sum(counts.values())
            result["profile"][span] = {"samples": total, "top": [
                {"share": round(v / total, 4), "function": f, "from": own} for (f, own), v in counts.most_common(25)]}
    if acc["sched"] and n:
        # Mean CPU per round inside t0 → last, by process: what the added latency is made of, beside the time
        # in which none of them ran (waiting for another CPU, or a wake-up).
        result["cpu_us_per_round"] = {k: round(v / n / 1e3, 1) for k, v in acc["cpu"].most_common()}
        result["window_us_per_round"] = round(acc["window"] / n / 1e3, 1)
    return result


def process_group(pid, comm, daemon_pid, names):
    """The name a CPU interval is counted under: the daemon, the stack's processes by name, the rest as one."""
    if pid == daemon_pid:
        return "appearanced"
    name = names.get(pid, comm)
    for known in ("xdg-desktop-portal-gtk", "xdg-desktop-portal", "dbus-daemon", "appearanced-probe", "dconf"):
        if name.startswith(known):
            return known
    return "other" if pid else "idle"


def main():
    ap = arguments(baseline="another build, measured in alternating blocks of the same run", also=True)
    ap.add_argument("--rounds", type=int, default=300, help="change-latency rounds per build")
    ap.add_argument("--block", type=int, default=25, help="rounds per block before the builds swap")
    ap.add_argument("--fanout", type=int, default=10000, help="subscribers for the fan-out rounds (0: none)")
    ap.add_argument("--fanout-rounds", type=int, default=30, help="mixed rounds per build and repetition")
    ap.add_argument("--fanout-reps", type=int, default=2, help="repetitions, alternating the builds")
    ap.add_argument("--callgrind-rounds", type=int, default=20, help="changes counted under callgrind (0: none)")
    ap.add_argument("--keep-callgrind", metavar="DIR", help="keep the per-change callgrind dumps there (one a build)")
    ap.add_argument("--breakdown-rounds", type=int, default=100,
                    help="rounds whose added latency is taken apart with perf (0: none)")
    ap.add_argument("--profile-rounds", type=int, default=0,
                    help="rounds per build whose own-share spans are profiled (perf cpu-clock; 0: none)")
    ap.add_argument("--fanout-callgrind-rounds", type=int, default=10,
                    help="fan-out rounds of each kind counted under callgrind (0: none)")
    ap.add_argument("--runtime-on-disk", action="store_true",
                    help="XDG_RUNTIME_DIR under /tmp (as before) instead of a tmpfs as in a login session")
    a = ap.parse_args()
    bins = builds(a.bin_dir, a.also, a.baseline_bin_dir)
    probe = build_probe("latency")
    R = {"builds": bins, "date": now(), "load_before": load(), "lost": {}}
    st = Stack(a.bin_dir, runtime_on_disk=a.runtime_on_disk)
    R["runtime_dir"] = {"path": st.runtime, "fs": subprocess.run(["stat", "-f", "-c", "%T", st.runtime],
                                                                 capture_output=True, text=True, timeout=30).stdout.strip()}
    on_sigterm_exit()
    try:
        start_session(st, probe)

        # --- added change latency and the Read alone, builds alternating in blocks ---
        added = {b: [] for b in bins}
        read = {b: [] for b in bins}
        for k in blocks(a.rounds, a.block, "change latency"):
            for label, bin_dir in bins.items():
                st.use(bin_dir)
                rows, lost = sock(st, probe, 1, k, "portal")
                added[label] += lasts(rows)
                R["lost"].setdefault(f"{label} change latency", []).extend(lost)
                read[label] += readrtt(st, probe, k)
        R["change_added"] = {b: stats(s) for b, s in added.items()}
        R["read_rtt"] = {b: stats(s) for b, s in read.items()}
        R["samples"] = {"change_added_ns": added, "read_rtt_ns": read}

        # --- where the time goes (perf, as root) ---
        if a.breakdown_rounds and os.geteuid() == 0 and shutil.which("perf"):
            # In alternating blocks, like the rounds above: a noisy minute falls on every build alike.
            cpu_before = cpu_ticks()
            acc = {}
            for k in blocks(a.breakdown_rounds, a.block, "breakdown"):
                for label, bin_dir in bins.items():
                    st.use(bin_dir)
                    got = breakdown(st, probe, k, acc.get(label))
                    if got is not None:
                        acc[label] = got
            R["breakdown"] = {label: summarize(v) for label, v in acc.items()}
            # The share of the machine's CPU time its host took (a virtual machine's steal time) meanwhile:
            # a round in which a CPU is taken away shows as the daemon running long.
            after = cpu_ticks()
            # guest and guest_nice (after steal) are counted in user and nice already
            total = sum(after[:8]) - sum(cpu_before[:8])
            R["steal_during_breakdown"] = round((after[7] - cpu_before[7]) / total, 4) if total and len(after) > 7 else None
        if a.profile_rounds and os.geteuid() == 0 and shutil.which("perf"):
            R["profile"] = {}
            for label, bin_dir in bins.items():
                st.use(bin_dir)
                got = breakdown(st, probe, a.profile_rounds, profile=True)
                if got is not None:
                    R["profile"][label] = summarize(got).get("profile", {})
                log(f"profile: {label}")

        # --- instructions per change (callgrind) ---
        if a.callgrind_rounds and shutil.which("valgrind"):
            R["instructions_per_change"] = {}
            for label, bin_dir in bins.items():
                st.use(without_debug_info(st, bin_dir), under_callgrind(st))
                keep = a.keep_callgrind and os.path.join(a.keep_callgrind, "callgrind.out." + label.replace(" ", "-"))
                total = callgrind_total(st, st.daemon.pid, lambda: sock(st, probe, 1, a.callgrind_rounds, "portal"), keep)
                R["instructions_per_change"][label] = total / a.callgrind_rounds
                log(f"{label}: {total / a.callgrind_rounds:,.0f} instructions per change")

        # --- fan-out: a portal change and a `set` in turn, on the same subscribers ---
        if a.fanout:
            sched = SchedTrace(os.path.join(st.root, "sched.data"))
            sched.start()
            runs = []
            for rep in range(a.fanout_reps):
                for label, bin_dir in bins.items():
                    st.use(bin_dir)
                    rows, lost = sock(st, probe, a.fanout, a.fanout_rounds, "mixed")
                    R["lost"].setdefault(f"{label} fan-out", []).extend(lost)
                    runs.append((label, st.daemon.pid, rows))
                    log(f"fan-out {a.fanout}: {label}, repetition {rep + 1}")
            sched.stop()
            R["fanout"] = {"subscribers": a.fanout}
            for label in bins:
                per = {}
                for trigger in ("portal", "set"):
                    rows = [(pid, x) for lb, pid, rr in runs if lb == label for x in rr if x["trigger"] == trigger]
                    last = [int(x["last"]) - int(x["t0"]) for _, x in rows]
                    first = [int(x["first"]) - int(x["t0"]) for _, x in rows]
                    spread = [int(x["last"]) - int(x["first"]) for _, x in rows]
                    per[trigger] = {"last": stats(last), "first": stats(first), "first_to_last": stats(spread)}
                    if sched.available and rows:
                        cpu = collections.Counter()
                        for pid, x in rows:
                            for (p, comm), ns in sched.usage(int(x["t0"]), int(x["last"])).items():
                                cpu["appearanced" if p == pid else comm] += ns
                        per[trigger]["cpu_ms_per_round_in_window"] = {
                            k: round(v / len(rows) / 1e6, 2) for k, v in cpu.most_common(12)}
                R["fanout"][label] = per
            if a.fanout_callgrind_rounds and shutil.which("valgrind"):
                R["fanout_instructions_per_round"] = {}
                k = a.fanout_callgrind_rounds
                for label, bin_dir in bins.items():
                    st.use(without_debug_info(st, bin_dir), under_callgrind(st))
                    counts = {}
                    # Subscribing is counted alone and taken off: what remains is k rounds of each kind.
                    base = callgrind_total(st, st.daemon.pid, lambda: sock(st, probe, a.fanout, 0, "set"))
                    for trigger in ("portal", "set"):
                        counts[trigger] = (callgrind_total(st, st.daemon.pid,
                                                           lambda: sock(st, probe, a.fanout, k, trigger)) - base) / k
                    R["fanout_instructions_per_round"][label] = counts
                    log(f"{label}: fan-out instructions per round {counts}")
    finally:
        st.close()
        os.unlink(probe)
    R["load_after"] = load()
    write_report(a.out, "change_latency", R, summary(R))


def ms(ns):
    return f"{ns / 1e6:.2f} ms"


def summary(R):
    steal = R.get("steal_during_breakdown")
    o = [f"{R['date']}, load {' '.join(R['load_before'])} → {' '.join(R['load_after'])}; XDG_RUNTIME_DIR on "
         f"{R['runtime_dir']['fs']}" + (f"; steal time during the breakdown {steal * 100:.1f} % of the CPUs'" if steal
                                        is not None else "") + "\n",
         "| build | added change latency p50 | p99 | n | Read alone p50 | p99 | instructions per change |",
         "|---|---|---|---|---|---|---|"]
    for b in R["builds"]:
        c, r = R["change_added"][b], R["read_rtt"][b]
        if not c or not r:
            continue
        ins = R.get("instructions_per_change", {}).get(b)
        o.append(f"| {b} | {ms(c['p50'])} | {ms(c['p99'])} | {c['n']} | {ms(r['p50'])} | {ms(r['p99'])} | "
                 + (f"{ins:,.0f}" if ins else "—") + " |")
    bd = {b: v for b, v in R.get("breakdown", {}).items() if v}
    own = {b: v["own_share"] for b, v in bd.items() if "own_share" in v}
    if own:
        o += ["", "| build (breakdown rounds) | whole path p50 | p99 | own share from the probe's t0 p50 | p99 | from the "
              "signal's arrival p50 | p90 | p99 | from its read of the signal p50 | p99 | its Read round trip p50 | p99 |",
              "|---|" + "---|" * 11]
        for b, v in own.items():
            w, s1, s3, s2, r = (v["whole_path"], v["own_from_t0"], v.get("own_from_the_signals_arrival"),
                                v["own_from_the_daemons_read_of_the_signal"], v["read_rtt_in_the_daemon"])
            a3 = (f"**{ms(s3['p50'])}** | {ms(s3['p90'])} | **{ms(s3['p99'])}** (n {s3['n']})" if s3
                  else "— | — | —")
            o.append(f"| {b} ({w['n']}) | {ms(w['p50'])} | {ms(w['p99'])} | {ms(s1['p50'])} | {ms(s1['p99'])} | {a3} | "
                     f"{ms(s2['p50'])} | {ms(s2['p99'])} | {ms(r['p50'])} | {ms(r['p99'])} |")
        relays = {b: v for b, v in own.items() if v.get("own_from_t0_vs_portal_relay")}
        if relays:
            o += ["", "| build | xdg-desktop-portal's own relay (the write → its SettingChanged popped) p50 | p99 | "
                  "the daemon's own share from t0, same rounds, over it: p50 / p50 | p99 / p99 | rounds |",
                  "|---|---|---|---|---|---|"]
            for b, v in relays.items():
                rl, q = v["portal_relay"], v["own_from_t0_vs_portal_relay"]
                o.append(f"| {b} | {ms(rl['p50'])} | {ms(rl['p99'])} | **{q['p50']:.3f}×** | **{q['p99']:.3f}×** | "
                         f"{q['n']} |")
            o.append("\nThe portal's relay: from `gsettings`' call to dconf's Writer.Change (its last sendmsg before "
                     "t0) to the probe's t0, through dconf, the portal's GTK backend and xdg-desktop-portal.")
        o.append("\nOwn share = (the daemon's notification write − the start) − (its recvmsg of the Read's reply − its "
                 "sendmsg of the Read), per round, from perf syscall tracepoints on CLOCK_MONOTONIC like the probe's "
                 "stamps. The start: the probe's t0 (its listener popped the same signal, so its own wake-up counts "
                 "too); the signal's arrival (dbus-daemon's sendmsg on the daemon's connection); the daemon's recvmsg "
                 "of the signal.")
        waits = {b: v for b, v in own.items() if v.get("of_which_waiting_for_a_cpu")}
        if waits:
            o += ["", "| build | from the signal's arrival: waiting for a CPU p50 | p90 | p99 | the rest (running) p50 | "
                  "p90 | p99 | rounds over 0.3 ms | of them with a wait over 0.1 ms |", "|---|" + "---|" * 8]
            for b, v in waits.items():
                wt, run = v["of_which_waiting_for_a_cpu"], v["own_from_the_signals_arrival_less_cpu_waits"]
                arr, cw = v["samples_ns"]["own_arrival"], v["samples_ns"]["cpu_wait"]
                over = [i for i, x in enumerate(arr) if x > 300_000]
                o.append(f"| {b} | {ms(wt['p50'])} | {ms(wt['p90'])} | {ms(wt['p99'])} | {ms(run['p50'])} | "
                         f"{ms(run['p90'])} | {ms(run['p99'])} | {len(over)} of {len(arr)} | "
                         f"{sum(1 for i in over if cw[i] > 100_000)} |")
            o.append("\nWaiting for a CPU: inside the own share's spans (the signal's arrival → the Read written, the "
                     "reply read → the notification written), the time a thread of the daemon was runnable but not "
                     "running: woken and not yet switched in, or switched out while still runnable (perf "
                     "sched_waking and sched_switch on every CPU).")
    if bd:
        o += ["", "| where the added latency goes, p50 (p90) | " + " | ".join(f"{b} ({v['rounds']} rounds)" for b, v in bd.items())
              + " |", "|---|" + "---|" * len(bd)]
        for step in STEPS:
            o.append(f"| {step} | " + " | ".join(
                f"{v['steps'][step]['p50'] / 1e3:.0f} µs ({v['steps'][step]['p90'] / 1e3:.0f})" if step in v["steps"]
                else "—" for v in bd.values()) + " |")
        for b, v in bd.items():
            if "cpu_us_per_round" in v:
                o.append(f"\n{b}: CPU per round inside t0 → last (mean window {v['window_us_per_round']:.0f} µs): "
                         + ", ".join(f"{k} {us:.0f} µs" for k, us in v["cpu_us_per_round"].items()))
    for b, spans in R.get("profile", {}).items():
        for span, v in spans.items():
            o += ["", f"{b}: the daemon's CPU samples inside the own share's "
                  + ("signal's arrival → Read written" if span == "signal" else "reply read → notification written")
                  + f" span ({v['samples']} samples, perf cpu-clock):", "",
                  "| share | function (where) | from the daemon's |", "|---|---|---|"]
            o += [f"| {x['share'] * 100:.1f} % | `{x['function'][:90]}` | `{x['from'][:80]}` |" for x in v["top"][:15]]
    if "fanout" in R:
        n = R["fanout"]["subscribers"]
        o += ["", f"| build | fan-out to {n:,} after | rounds | t0 → last p50 | p99 | t0 → first p50 | first → last p50 | "
              "instructions per round |", "|---|---|---|---|---|---|---|---|"]
        for b in R["builds"]:
            for trigger in ("portal", "set"):
                f = R["fanout"][b][trigger]
                ins = R.get("fanout_instructions_per_round", {}).get(b, {}).get(trigger)
                o.append(f"| {b} | {'a portal change' if trigger == 'portal' else 'a `set`'} | {f['last']['n']} | "
                         f"{ms(f['last']['p50'])} | {ms(f['last']['p99'])} | {ms(f['first']['p50'])} | "
                         f"{ms(f['first_to_last']['p50'])} | " + (f"{ins:,.0f}" if ins else "—") + " |")
            p, s = R["fanout"][b]["portal"]["last"]["p50"], R["fanout"][b]["set"]["last"]["p50"]
            o.append(f"\n{b}: portal / set, p50 to the last subscriber: {p / s:.2f}×")
            for trigger in ("portal", "set"):
                cpu = R["fanout"][b][trigger].get("cpu_ms_per_round_in_window")
                if cpu:
                    o.append(f"- CPU per round inside t0 → last after {trigger}: "
                             + ", ".join(f"{k} {v:.2f} ms" for k, v in cpu.items()))
    lost = {k: len(v) for k, v in R["lost"].items() if v}
    if lost:
        o.append(f"\nRounds lost (no notification within 5 s): {lost}")
    return "\n".join(o) + "\n"


if __name__ == "__main__":
    main()
