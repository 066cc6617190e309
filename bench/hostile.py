#!/usr/bin/python3
"""Figures for the bounds against hostile input (docs/reliability.md, "Bounds against hostile input"), on a
release appearanced with no bus:
- half lines: N connections each holding a 65,000-byte unfinished line; the daemon's RSS (VmRSS, VmHWM);
- pipelining: 1,000 connections each sending 1,000 `status` requests without reading; RSS;
- victim: `appearancectl get` p50/p99 while one client streams 64 KiB duplicate-key lines.
Writes hostile.json to --out.
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
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
