#!/usr/bin/python3
"""Figures for the bounds against hostile input (docs/reliability.md, "Bounds against hostile input"), on a
release appearanced with no bus:
- half lines: N connections each holding a 65,000-byte unfinished line; the daemon's RSS (VmRSS, VmHWM);
- pipelining: 1,000 connections each sending 1,000 `status` requests without reading; RSS;
- victim: `appearancectl get` p50/p99 while one client streams 64 KiB duplicate-key lines.
Writes hostile.json to --out.
--big-call instead: appearanced as the portal's Settings backend on a private session bus (dbus-daemon with
the standard session config's limits: messages up to 1e9 bytes), one `ReadAll` of --big-mb MB of namespaces
(an `as` of 11-byte strings; or, with --big-signature ay, of bytes: the wrong type) sent to it; reports the daemon's RSS (before, peak, after), the `get` latency while
the call is outstanding, the call's answer, and whether a normal `Read` answers afterwards. Prints the figures
(and writes hostile-big-call.json to --out when given).
"""
import argparse
import json
import os
import resource
import shutil
import socket
import subprocess
import tempfile
import threading
import time


def build_probe(tag):
    """Compiles bench/probe.c into a temporary file (the caller unlinks it) and lifts the open-files soft limit
    to the hard one: crowds of subscribers need descriptors in the daemon and in the probe."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    probe = os.path.join(tempfile.gettempdir(), f"appearanced-probe-{tag}-{os.getpid()}")
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["cc", "-O2", "-o", probe, os.path.join(here, "probe.c")]
                   + subprocess.run(["pkg-config", "--cflags", "--libs", "dbus-1"], capture_output=True, text=True,
                                    check=True).stdout.split(), check=True)
    return probe


def rss(pid):
    out = {}
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(("VmRSS", "VmHWM")):
            out[line.split(":")[0]] = int(line.split()[1])
    return out


def cpu_ms(pid):
    """User and system CPU time of `pid`, in ms."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 // os.sysconf("SC_CLK_TCK")


class Daemon:
    def __init__(self, bin_dir):
        self.bin_dir = bin_dir
        self.root = tempfile.mkdtemp(prefix="appearanced-bench-hostile-")
        for d in ("runtime", "state", "config"):
            os.makedirs(os.path.join(self.root, d), mode=0o700, exist_ok=True)
        self.env = {"PATH": "/usr/bin:/bin", "HOME": self.root, "XDG_RUNTIME_DIR": self.root + "/runtime",
                    "XDG_STATE_HOME": self.root + "/state", "XDG_CONFIG_HOME": self.root + "/config",
                    "DBUS_SESSION_BUS_ADDRESS": f"unix:path={self.root}/no-bus",
                    "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={self.root}/no-bus"}
        self.socket = self.root + "/runtime/appearanced/socket"
        self.p = subprocess.Popen([bin_dir + "/appearanced"], env=self.env, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while self.get() is None:
            if time.time() > deadline:
                raise SystemExit("appearanced did not start")
            time.sleep(0.05)

    def get(self):
        t0 = time.perf_counter()
        r = subprocess.run([self.bin_dir + "/appearancectl", "get"], env=self.env, capture_output=True)
        return (time.perf_counter() - t0) * 1000 if r.returncode == 0 else None

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.socket)
        return s

    def close(self):
        self.p.terminate()
        self.p.wait()
        shutil.rmtree(self.root, ignore_errors=True)


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


def victim(bin_dir, runs):
    d = Daemon(bin_dir)
    stop = threading.Event()
    try:
        pairs = '"a":1,' * 10_800
        line = ('{"jsonrpc":"2.0","id":1,"method":"get","params":{' + pairs + '"b":2}}')[:65_000].encode() + b"\n"
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
        samples = sorted(x for x in (d.get() for _ in range(runs)) if x is not None)
        return {"runs": runs, "answered": len(samples), "p50_ms": samples[len(samples) // 2],
                "p99_ms": samples[min(len(samples) - 1, int(len(samples) * 0.99))]}
    finally:
        stop.set()
        d.close()


BACKEND = "org.freedesktop.impl.portal.desktop.appearanced"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SETTINGS = "org.freedesktop.impl.portal.Settings"


def big_call(bin_dir, megabytes, signature="as", runs_after=20):
    """One ReadAll of `megabytes` MB sent to appearanced's portal backend, an `as` (its own signature) or an `ay`
    (the wrong one); the victim's view meanwhile."""
    import dbus  # Debian's python3-dbus: only this scenario needs it
    here = os.path.dirname(os.path.abspath(__file__))
    root = tempfile.mkdtemp(prefix="appearanced-bench-bigcall-")
    for d in ("runtime", "state", "config", "portals"):
        os.makedirs(os.path.join(root, d), mode=0o700, exist_ok=True)
    shutil.copy(os.path.join(here, "..", "portal", "appearanced.portal"), os.path.join(root, "portals"))
    # The session bus's own limits (session.conf: messages up to 1e9 bytes), without its service directories:
    # nothing is activated (the real portal would be, by the sentry's first read).
    limits = "".join(f'<limit name="{n}">{v}</limit>' for n, v in (
        ("max_incoming_bytes", 1000000000), ("max_outgoing_bytes", 1000000000), ("max_message_size", 1000000000)))
    with open(root + "/bus.conf", "w") as f:
        f.write(f"""<busconfig><type>session</type><listen>unix:path={root}/bus</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
            <allow own="*"/></policy>{limits}</busconfig>""")
    bus = subprocess.Popen(["/usr/bin/dbus-daemon", f"--config-file={root}/bus.conf", "--nofork", "--nopidfile",
                            "--print-address=1"], stdout=subprocess.PIPE, text=True)
    daemon = None
    try:
        address = bus.stdout.readline().strip()
        env = {"PATH": "/usr/bin:/bin", "HOME": root, "XDG_RUNTIME_DIR": root + "/runtime",
               "XDG_STATE_HOME": root + "/state", "XDG_CONFIG_HOME": root + "/config",
               "DBUS_SESSION_BUS_ADDRESS": address, "XDG_CURRENT_DESKTOP": "sway",
               "XDG_DESKTOP_PORTAL_DIR": root + "/portals"}
        daemon = subprocess.Popen([bin_dir + "/appearanced"], env=env, stderr=subprocess.DEVNULL)

        def get():
            t0 = time.perf_counter()
            r = subprocess.run([bin_dir + "/appearancectl", "get"], env=env, capture_output=True, text=True)
            return (time.perf_counter() - t0) * 1000, r.stdout.strip() if r.returncode == 0 else None

        conn = dbus.bus.BusConnection(address)
        deadline = time.time() + 20
        while not conn.name_has_owner(BACKEND) or get()[1] is None:
            if time.time() > deadline:
                raise SystemExit("appearanced did not start serving the portal")
            time.sleep(0.05)

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
        cpu_before = cpu_ms(daemon.pid)
        t = threading.Thread(target=call)
        t.start()
        during, rss_during = [], []
        while t.is_alive():
            ms, mode = get()
            during.append(round(ms, 1))
            rss_during.append(rss(daemon.pid)["VmRSS"])
            time.sleep(0.02)
        t.join()
        time.sleep(1)
        after_gets = sorted(get()[0] for _ in range(runs_after))
        return {"megabytes": megabytes, "signature": signature, "elements": count, "call": answer,
                "daemon_cpu_ms_for_the_call": cpu_ms(daemon.pid) - cpu_before,
                "rss_before_kib": before["VmRSS"], "rss_max_during_kib": max(rss_during, default=None),
                "hwm_kib": rss(daemon.pid)["VmHWM"], "rss_after_1s_kib": rss(daemon.pid)["VmRSS"],
                "get_during_ms": {"samples": len(during), "max": max(during, default=None),
                                  "p50": sorted(during)[len(during) // 2] if during else None},
                "get_after_p50_ms": round(after_gets[len(after_gets) // 2], 2),
                "read_after": read(), "get_after": get()[1], "daemon_running": daemon.poll() is None}
    finally:
        if daemon:
            daemon.terminate()
            daemon.wait()
        bus.terminate()
        bus.wait()
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--out")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--big-call", action="store_true", help="the one-huge-D-Bus-call scenario alone")
    ap.add_argument("--big-mb", type=int, default=60)
    ap.add_argument("--big-signature", choices=("as", "ay"), default="as")
    a = ap.parse_args()
    if a.big_call:
        result = big_call(a.bin_dir, a.big_mb, a.big_signature)
        if a.out:
            os.makedirs(a.out, exist_ok=True)
            with open(os.path.join(a.out, "hostile-big-call.json"), "w") as f:
                json.dump(result, f, indent=2)
        print(json.dumps(result, indent=2))
        return
    if not a.out:
        ap.error("--out is required")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    n_half = min(19_800, hard - 200) if not a.quick else 1000
    result = {
        "half_lines": half_lines(a.bin_dir, n_half),
        "pipelining_status": pipelining(a.bin_dir, 1000 if not a.quick else 100),
        "victim_get_while_streaming": victim(a.bin_dir, 200 if not a.quick else 20),
    }
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "hostile.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
