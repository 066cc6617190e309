#!/usr/bin/python3
"""Figures for the bounds against hostile input (docs/reliability.md, "Bounds against hostile input"), on a
release appearanced with no bus:
- half lines: N connections each holding a 65,000-byte unfinished line; the daemon's RSS (VmRSS, VmHWM);
- pipelining: 1,000 connections each sending 1,000 `status` requests without reading; RSS;
- victim: `appearancectl get` p50/p99 while one client streams 64 KiB duplicate-key lines.
Writes hostile.json to --out.
--bus-flood: the same victim's view with appearanced on a private session bus, idle and while a peer keeps 64
Properties.Get calls to its D-Bus service outstanding (bench/probe.c busflood).
--big-call instead: appearanced as the portal's Settings backend on a private session bus (dbus-daemon with
the standard session config's limits: messages up to 1e9 bytes), one `ReadAll` of --big-mb MB of namespaces
(an `as` of 11-byte strings; or, with --big-signature ay, of bytes: the wrong type) sent to it; reports the daemon's RSS (before, peak, after), the `get` latency while
the call is outstanding, the call's answer, and whether a normal `Read` answers afterwards. Prints the figures
(and writes hostile-big-call.json to --out when given).
"""
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import (REPO, Daemon, Subscriber, arguments, build_probe, builds, cpu_ms, load, now,  # noqa: E402
                   raise_nofile, request, rss, set_line, socket_get, stats, wait_until, write_json, write_report)

# --pin: {"daemon": CPUs of appearanced and the victim (this process), "flood": CPUs of the bus and the flooder}.
PIN = None


def crowd(bin_dir, n, payload):
    """n connections each sending `payload` (as much as the socket takes) and never reading; the daemon's RSS."""
    d = Daemon(bin_dir)
    try:
        conns = []
        for _ in range(n):
            c = d.connect()
            c.setblocking(False)
            try:
                c.send(payload)
            except BlockingIOError:
                pass
            conns.append(c)
        time.sleep(2)
        result = {"connections": n, **rss(d.p.pid), "get_still_answers": d.get() is not None}
        for c in conns:
            c.close()
        return result
    finally:
        d.close()


def half_lines(bin_dir, n):
    return crowd(bin_dir, n, b'{"jsonrpc":"2.0","id":1,"method":"get","params":{"pad":"' + b"x" * 64_900)


def pipelining(bin_dir, n):
    return crowd(bin_dir, n, b'{"jsonrpc":"2.0","id":1,"method":"status"}\n' * 1000)


def duplicate_key_line():
    """A 65,000-byte `get` line of duplicate keys."""
    line = '{"jsonrpc":"2.0","id":1,"method":"get","params":{' + '"a":1,' * 10_800 + '"b":2}}'
    return line[:65_000].encode() + b"\n"


def victim(bin_dir, runs):
    d = Daemon(bin_dir)
    stop = threading.Event()
    try:
        line = duplicate_key_line()
        hostile = d.connect()
        hostile.settimeout(1)

        def stream():
            chunk = line * 16
            while not stop.is_set():
                try:
                    hostile.sendall(chunk)
                except OSError:
                    pass
        t = threading.Thread(target=stream, daemon=True)
        t.start()
        time.sleep(0.5)
        samples = [x for x in (d.get() for _ in range(runs)) if x is not None]
        return {"runs": runs, **stats(samples, n="answered", unit="_ms")}
    finally:
        stop.set()
        d.close()


# --- fairness under floods (docs/benchmarks.md, "Fairness and own-share latency") ---

def reading_flood_line():
    """A ~65,000-byte `get` line with 5,900 unknown params (each a distinct key): each line costs the daemon a
    parse of 5,900 members and a -32602 reply."""
    body = "".join(f'"u{i:05d}":1,' for i in range(5_900))
    return ('{"jsonrpc":"2.0","id":1,"method":"get","params":{' + body + '"z":2}}').encode() + b"\n"


def notification_delays(path, sub, sets, seconds=60):
    """`sets` alternating `set`s on fresh connections; per set, the subscriber's notification moment minus the
    moment the `set` reply was complete (ms; negative: the notification came first)."""
    delays, lost = [], 0
    mode = sub.mode or "light"
    deadline = time.time() + seconds
    for _ in range(sets):
        if time.time() > deadline:
            break
        mode = "dark" if mode == "light" else "light"
        count = len(sub.changes) + 1
        t_reply, _ = request(path, set_line(mode))
        note = sub.wait_change(count) if t_reply else None
        if t_reply is None or note is None:
            lost += 1
        else:
            delays.append((note[0] - t_reply) * 1000)
        time.sleep(0.05)
    return delays, lost


def percentiles(samples):
    return stats(samples, digits=3, top=True)


class RssSampler:
    """The daemon's VmRSS every 50 ms while it runs (bounded by `seconds`)."""

    def __init__(self, pid, seconds):
        self.pid, self.samples, self.stop = pid, [], threading.Event()
        self.deadline = time.time() + seconds
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop.is_set() and time.time() < self.deadline:
            try:
                self.samples.append(rss(self.pid)["VmRSS"])
            except OSError:
                return
            time.sleep(0.05)

    def close(self):
        self.stop.set()
        self.t.join(2)
        return max(self.samples, default=None)


class Flood:
    """One hostile connection: 'reading' writes `get` lines of ~5,900 unknown params as fast as the socket takes
    them while a second thread drains the replies; 'non-reading' streams duplicate-key lines and never reads.
    Both threads stop by themselves at `seconds` at the latest; close() stops them earlier and closes the
    connection. `sent` counts the bytes the socket took."""

    def __init__(self, path, kind, seconds):
        self.stop = threading.Event()
        self.deadline = time.time() + seconds
        self.sent = self.received = 0
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.s.settimeout(0.5)
        line = reading_flood_line() if kind == "reading" else duplicate_key_line()
        self.line_bytes = len(line)
        self.chunk = line * 4
        self.threads = [threading.Thread(target=self.write, daemon=True)]
        if kind == "reading":
            self.threads.append(threading.Thread(target=self.drain, daemon=True))
        for t in self.threads:
            t.start()

    def live(self):
        return not self.stop.is_set() and time.time() < self.deadline

    def write(self):
        view = memoryview(self.chunk)
        at = 0
        while self.live():
            try:
                n = self.s.send(view[at:])
            except socket.timeout:
                continue
            except OSError:
                return
            self.sent += n
            at = (at + n) % len(view)

    def drain(self):
        while self.live():
            try:
                n = len(self.s.recv(1 << 20))
            except socket.timeout:
                continue
            except OSError:
                return
            if not n:
                return
            self.received += n

    def close(self):
        self.stop.set()
        for t in self.threads:
            t.join(3)
        self.s.close()
        return {"line_bytes": self.line_bytes, "mb_sent": round(self.sent / 1e6, 1),
                "mb_replies_read": round(self.received / 1e6, 1)}


class BusFlood:
    """A peer flooding appearanced's D-Bus service: bench/probe.c keeps `window` Properties.Get(Mode) calls
    outstanding on one bus connection, a new one for each answer, until `seconds` or close()."""

    def __init__(self, address, seconds, window=64):
        self.probe = build_probe("busflood")
        self.p = subprocess.Popen([self.probe, "busflood", address, str(seconds), str(window)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if PIN:
            os.sched_setaffinity(self.p.pid, PIN["flood"])
        self.t0 = time.time()

    def close(self):
        if self.p.poll() is None:
            self.p.terminate()
        try:
            out, err = self.p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
        os.unlink(self.probe)
        seconds = time.time() - self.t0
        answered = int(out.split(",")[0]) if out.strip() else None
        return {"calls_answered": answered, "calls_per_s": round(answered / seconds) if answered else None,
                "probe_error": err.strip() or None}


CHATTY_HOOK = "#!/bin/sh\necho $$ >> \"$HOME/hook-pids\"\nexec yes appearanced-bench-chatty-hook\n"


def fairness(bin_dir, kind, gets, sets, seconds=30):
    """The victim's view while one kind of hostility runs: `gets` sequential `get`s on fresh connections (ms,
    client side), `sets` `set`s with a subscriber's notification delay after each reply, the daemon's RSS
    before, during (max, sampled every 50 ms) and 1 s after. kind: 'reading', 'non-reading', 'chatty-hook'
    (an `exec yes` hook in hooks.d, run by a `set` before the measurement; every later `set` queues another),
    or 'none' (the same measurement, nothing hostile)."""
    hook = kind == "chatty-hook"
    d = Daemon(bin_dir, hook=CHATTY_HOOK if hook else None, bus=kind.startswith("bus-"), pin=PIN)
    flood = sampler = sub = None
    try:
        time.sleep(0.3)
        before = rss(d.p.pid)["VmRSS"]
        sampler = RssSampler(d.p.pid, 2 * seconds + 10)
        sub = Subscriber(d.socket)
        if kind in ("reading", "non-reading"):
            flood = Flood(d.socket, kind, 2 * seconds + 5)
        elif kind == "bus-flood":
            flood = BusFlood(d.address, 2 * seconds + 5)
        elif hook:
            request(d.socket, set_line("dark"))
            sub.wait_change(1)
        time.sleep(0.5)
        cpu0, t0 = cpu_ms(d.p.pid), time.time()
        deadline = time.time() + seconds
        samples, failed = [], 0
        for _ in range(gets):
            if time.time() > deadline:
                break
            ms = socket_get(d.socket)
            if ms is None:
                failed += 1
            else:
                samples.append(ms)
        # The subscriber's counter starts after what came before (the hook's trigger).
        delays, lost = notification_delays(d.socket, sub, sets, seconds)
        cpu_percent = round((cpu_ms(d.p.pid) - cpu0) / (time.time() - t0) / 10, 1)
        hook_running = hook and os.path.exists(d.root + "/hook-pids")
        during = sampler.close()
        sampler = None
        flood_figures = flood.close() if flood else None
        flood = None
        if hook:
            d.kill_hooks()
        time.sleep(1)
        after = rss(d.p.pid)
        result = {"kind": kind, "get_ms": percentiles(samples), "get_failed": failed,
                  "notification_after_set_reply_ms": percentiles(delays), "notifications_lost": lost,
                  "rss_kib": {"before": before, "max_during": during, "after_1s": after["VmRSS"],
                              "hwm": after["VmHWM"]},
                  "get_after_ms": socket_get(d.socket), "daemon_running": d.p.poll() is None,
                  "daemon_cpu_percent": cpu_percent}
        if flood_figures:
            result["flood"] = flood_figures
        if hook:
            result["hook_started"] = hook_running
        return result
    finally:
        if flood:
            flood.close()
        if sampler:
            sampler.close()
        if sub:
            sub.close()
        d.close()


BACKEND = "org.freedesktop.impl.portal.desktop.appearanced"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SETTINGS = "org.freedesktop.impl.portal.Settings"


def big_call(bin_dir, megabytes, signature="as", runs_after=20):
    """One ReadAll of `megabytes` MB sent to appearanced's portal backend, an `as` (its own signature) or an `ay`
    (the wrong one); the victim's view meanwhile."""
    import dbus  # Debian's python3-dbus: only this scenario needs it
    # On a private bus with the session bus's own limits and no service directories: nothing is activated (the
    # real portal would be, by the sentry's first read); appearanced's .portal is the portal's only backend.
    d = Daemon(bin_dir, bus=True, prefix="appearanced-bench-bigcall-", start=False)
    try:
        os.makedirs(d.root + "/portals")
        shutil.copy(os.path.join(REPO, "portal", "appearanced.portal"), d.root + "/portals")
        env = d.env
        env.update(XDG_CURRENT_DESKTOP="sway", XDG_DESKTOP_PORTAL_DIR=d.root + "/portals")
        d.start()
        daemon, address = d.p, d.address

        def get():
            t0 = time.perf_counter()
            r = subprocess.run([bin_dir + "/appearancectl", "get"], env=env, capture_output=True, text=True)
            return (time.perf_counter() - t0) * 1000, r.stdout.strip() if r.returncode == 0 else None

        conn = dbus.bus.BusConnection(address)
        wait_until(lambda: conn.name_has_owner(BACKEND), "appearanced did not start serving the portal")

        def read():
            try:
                v = conn.call_blocking(BACKEND, PORTAL_PATH, SETTINGS, "Read", "ss",
                                       ("org.freedesktop.appearance", "color-scheme"), timeout=30)
                return int(v)
            except dbus.exceptions.DBusException as e:
                return e.get_dbus_name()

        before = rss(daemon.pid)
        count = megabytes * 1_000_000 // 16  # 4-byte length, 11 bytes, NUL: 16 bytes each on the wire (an array is at most 64 MiB)
        # Built before the clock starts: only the bus's and appearanced's work is in the figures.
        message = dbus.lowlevel.MethodCallMessage(BACKEND, PORTAL_PATH, SETTINGS, "ReadAll")
        if signature == "as":
            message.append(dbus.Array(["org.exampl" + str(i % 10) for i in range(count)], signature="s"), signature="as")
        else:
            count = megabytes * 1_000_000
            message.append(dbus.ByteArray(b"x" * count), signature="ay")
        caller = dbus.bus.BusConnection(address)
        answer = {}

        def call():
            t0 = time.perf_counter()
            try:
                reply = caller.send_message_with_reply_and_block(message, 300)
                answer["reply"] = reply.get_error_name() or "a reply"
                if reply.get_error_name():
                    answer["reply"] += ": " + str(reply.get_args_list()[0])
            except dbus.exceptions.DBusException as e:
                answer["reply"] = f"{e.get_dbus_name()}: {e.get_dbus_message()}"
            answer["seconds"] = round(time.perf_counter() - t0, 3)
        path = d.socket
        sub = Subscriber(path)
        cpu_before = cpu_ms(daemon.pid)
        t = threading.Thread(target=call)
        t.start()
        during, rss_during, delays, lost = [], [], [], 0
        deadline = time.time() + 300
        while t.is_alive() and time.time() < deadline:
            ms, mode = get()
            during.append(round(ms, 1))
            rss_during.append(rss(daemon.pid)["VmRSS"])
            if len(during) % 4 == 0:  # a `set` now and then: the subscriber's delay while the call is outstanding
                got, n = notification_delays(path, sub, 1)
                delays += got
                lost += n
            time.sleep(0.02)
        t.join(310)
        sub.close()
        time.sleep(1)
        after_gets = sorted(get()[0] for _ in range(runs_after))
        return {"megabytes": megabytes, "signature": signature, "elements": count, "call": answer,
                "daemon_cpu_ms_for_the_call": cpu_ms(daemon.pid) - cpu_before,
                "rss_before_kib": before["VmRSS"], "rss_max_during_kib": max(rss_during, default=None),
                "hwm_kib": rss(daemon.pid)["VmHWM"], "rss_after_1s_kib": rss(daemon.pid)["VmRSS"],
                "get_during_ms": percentiles(during),
                "notification_after_set_reply_during_ms": percentiles(delays), "notifications_lost": lost,
                "get_after_p50_ms": round(after_gets[len(after_gets) // 2], 2),
                "read_after": read(), "get_after": get()[1], "daemon_running": daemon.poll() is None}
    finally:
        d.close()


def main():
    ap = arguments(out=False, quick=True, baseline="another build, measured in the same run (alternating)")
    ap.add_argument("--big-call", action="store_true", help="the one-huge-D-Bus-call scenario alone")
    ap.add_argument("--big-mb", type=int, default=60)
    ap.add_argument("--big-signature", choices=("as", "ay"), default="as")
    ap.add_argument("--reading-flood", action="store_true", help="fairness: a flood that reads its replies")
    ap.add_argument("--non-reading-flood", action="store_true", help="fairness: a flood that never reads")
    ap.add_argument("--chatty-hook", action="store_true", help="fairness: a hook printing without end")
    ap.add_argument("--pin", action="store_true",
                    help="appearanced and the victim on the first CPU, the bus and the bus flooder on the others")
    ap.add_argument("--bus-flood", action="store_true",
                    help="fairness: a peer flooding the D-Bus service (and its control: the same daemon on a bus, idle)")
    ap.add_argument("--gets", type=int, default=500, help="victim gets per fairness measurement")
    ap.add_argument("--sets", type=int, default=20, help="sets (subscriber delays) per fairness measurement")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each fairness scenario, builds alternating")
    a = ap.parse_args()
    kinds = [k for k, on in (("reading", a.reading_flood), ("non-reading", a.non_reading_flood),
                             ("chatty-hook", a.chatty_hook)) if on]
    if a.bus_flood:
        kinds += ["bus-idle", "bus-flood"]
    if a.pin:
        # On a machine of two cores, a flood's dbus-daemon takes one whole: pinned, the figures show the
        # daemon's turns (what it owes its clients), not the machine's share of CPU.
        global PIN
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            ap.error("--pin needs two CPUs")
        PIN = {"daemon": {cpus[0]}, "flood": set(cpus[1:])}
        os.sched_setaffinity(0, PIN["daemon"])
    if kinds:
        if not a.out:
            ap.error("--out is required")
        run_fairness(a, kinds)
        return
    if a.big_call:
        return write_json(a.out, "hostile-big-call", big_call(a.bin_dir, a.big_mb, a.big_signature))
    if not a.out:
        ap.error("--out is required")
    _, hard = raise_nofile()
    n_half = min(19_800, hard - 200) if not a.quick else 1000
    result = {
        "half_lines": half_lines(a.bin_dir, n_half),
        "pipelining_status": pipelining(a.bin_dir, 1000 if not a.quick else 100),
        "victim_get_while_streaming": victim(a.bin_dir, 200 if not a.quick else 20),
    }
    write_json(a.out, "hostile", result)


def median_of(values):
    v = sorted(x for x in values if x is not None)
    return round(v[len(v) // 2], 3) if v else None


def run_fairness(a, kinds):
    """Each kind (and a quiet control) `reps` times, the builds alternating inside each repetition; with
    --big-call, the 60 MB call too (this build and the baseline). Writes hostile-fairness.json and .md."""
    raise_nofile()
    bins = builds(a.bin_dir, baseline=a.baseline_bin_dir)
    R = {"date": now(), "builds": bins, "load_before": load(), "gets": a.gets, "sets": a.sets, "reps": a.reps,
         "runs": []}
    for rep in range(a.reps):
        for kind in ["none"] + kinds:
            for label, bin_dir in bins.items():
                r = fairness(bin_dir, kind, a.gets, a.sets)
                r.update(build=label, rep=rep)
                R["runs"].append(r)
                print(f"hostile: rep {rep + 1} {kind} {label}: get {r['get_ms']}, "
                      f"notification {r['notification_after_set_reply_ms']}, rss {r['rss_kib']}",
                      file=sys.stderr, flush=True)
    R["medians"] = {}
    for kind in ["none"] + kinds:
        for label in bins:
            runs = [r for r in R["runs"] if r["kind"] == kind and r["build"] == label]
            m = {f"get_{k}_ms": median_of((r["get_ms"] or {}).get(k) for r in runs) for k in ("p50", "p99", "max")}
            m.update({f"notification_{k}_ms": median_of((r["notification_after_set_reply_ms"] or {}).get(k)
                                                        for r in runs) for k in ("p50", "p99", "max")})
            m.update({f"rss_{k}_kib": median_of(r["rss_kib"][k] for r in runs) for k in ("before", "max_during", "after_1s")})
            m["get_failed"] = sum(r["get_failed"] for r in runs)
            m["notifications_lost"] = sum(r["notifications_lost"] for r in runs)
            m["worst_get_max_ms"] = max(((r["get_ms"] or {}).get("max") or 0) for r in runs)
            R["medians"][f"{kind} / {label}"] = m
    if a.big_call:
        R["big_call"] = {label: big_call(bin_dir, a.big_mb, a.big_signature) for label, bin_dir in bins.items()}
    R["load_after"] = load()
    write_report(a.out, "hostile-fairness", R, fairness_table(R), indent=2)


def fairness_table(R):
    o = [f"{R['date']}, load {' '.join(R['load_before'])} → {' '.join(R['load_after'])}; medians of {R['reps']} "
         f"repetitions ({R['gets']} gets and {R['sets']} sets each)\n",
         "| scenario / build | get p50 | p99 | max (worst) | notification after set reply p50 | p99 | max | "
         "RSS before | max during | after 1 s | failed gets / lost notifications |", "|---|" + "---|" * 10]
    for name, m in R["medians"].items():
        o.append(f"| {name} | {m['get_p50_ms']} ms | {m['get_p99_ms']} ms | {m['get_max_ms']} ms "
                 f"({m['worst_get_max_ms']}) | {m['notification_p50_ms']} ms | {m['notification_p99_ms']} ms | "
                 f"{m['notification_max_ms']} ms | {m['rss_before_kib'] / 1024:.1f} MiB | "
                 f"{m['rss_max_during_kib'] / 1024:.1f} MiB | {m['rss_after_1s_kib'] / 1024:.1f} MiB | "
                 f"{m['get_failed']} / {m['notifications_lost']} |")
    for label, b in R.get("big_call", {}).items():
        g, n = b["get_during_ms"] or {}, b["notification_after_set_reply_during_ms"] or {}
        o.append(f"| {b['megabytes']} MB D-Bus call / {label} (appearancectl get) | {g.get('p50')} ms | "
                 f"{g.get('p99')} ms | {g.get('max')} ms | {n.get('p50')} ms | {n.get('p99')} ms | {n.get('max')} ms | "
                 f"{b['rss_before_kib'] / 1024:.1f} MiB | {(b['rss_max_during_kib'] or 0) / 1024:.1f} MiB | "
                 f"{b['rss_after_1s_kib'] / 1024:.1f} MiB | call: {b['call'].get('reply')} in "
                 f"{b['call'].get('seconds')} s |")
    return "\n".join(o) + "\n"


if __name__ == "__main__":
    main()
