#!/usr/bin/python3
"""Fan-out against dbus-daemon and against the floor (docs/benchmarks.md, "Fan-out against its floor").

In one run, in alternating repetitions: a release appearanced with no bus (its own source) and N subscribers,
told of a `set` (probe `sock … set`, stamped before the request is written); a private dbus-daemon relaying
one signal to N libdbus connections with a match rule each (probe `dbus`, stamped before the emitter's send);
and the floor, one process writing a line of the daemon's notification size to N socket pairs with one send(2)
each (probe `floor`, stamped before the pipe byte that starts it), and where liburing is installed the same
floor with the N sends submitted in one io_uring_enter (`floor uring`). The same epoll loop receives them all,
so the figure is the last of N told. The daemon's folders are on a tmpfs: a `set` is answered after its save,
and the figure is the fan-out, not the disk's fsync (bench/set_throughput.py measures that). With
--baseline-bin-dir a second build takes its turn in each repetition. Prints each ratio; writes fanout.json to
--out.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
from hostile import Daemon, build_probe  # noqa: E402


def lasts(rows):
    return [int(x["last"]) - int(x["t0"]) for x in rows if int(x["last"]) >= 0]


def notification_bytes(d):
    """The size of the daemon's `changed` line to a plain subscriber, read off a real one."""
    s = d.connect()
    s.settimeout(10)
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"subscribe"}\n')
    f = s.makefile("rb")
    f.readline()
    mode = json.loads(subprocess.run([d.bin_dir + "/appearancectl", "get", "--json"], env=d.env,
                                           capture_output=True, text=True, timeout=10).stdout)["mode"]
    subprocess.run([d.bin_dir + "/appearancectl", "set", "light" if mode == "dark" else "dark"], env=d.env,
                         check=True, capture_output=True, timeout=10)
    n = len(f.readline())
    subprocess.run([d.bin_dir + "/appearancectl", "set", "system"], env=d.env, check=True, capture_output=True,
                         timeout=10)
    s.close()
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--baseline-bin-dir", help="another build, in turn with this one in each repetition")
    ap.add_argument("--subscribers", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=60, help="rounds per tool and repetition")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    shm = bench.tmpfs_dir()
    if shm:
        tempfile.tempdir = shm
    probe = build_probe("fanout")
    uring = probe + "-uring"
    if subprocess.run(["cc", "-O2", "-DPROBE_URING", "-o", uring, os.path.join(HERE, "probe.c")]
                      + subprocess.run(["pkg-config", "--cflags", "--libs", "dbus-1"], capture_output=True, text=True,
                                       check=True).stdout.split() + ["-luring"], capture_output=True).returncode != 0:
        bench.log("no liburing: the io_uring floor is left out")
        uring = None
    builds = {"this build": os.path.abspath(a.bin_dir)}
    if a.baseline_bin_dir:
        builds["build before"] = os.path.abspath(a.baseline_bin_dir)
    n, k = a.subscribers, a.rounds
    samples = {label: [] for label in list(builds) + ["dbus-daemon", "floor"] + (["floor, io_uring"] if uring else [])}
    root = tempfile.mkdtemp(prefix="appearanced-bench-fanout-")
    conf = os.path.join(root, "bus.conf")
    with open(conf, "w") as f:
        f.write(bench.FANOUT_BUS_CONF)
    bus = subprocess.Popen(["/usr/bin/dbus-daemon", f"--config-file={conf}", "--nofork", "--nopidfile",
                                  "--print-address=1"], stdout=subprocess.PIPE, text=True)
    address = bus.stdout.readline().strip()
    size = None
    try:
        for rep in range(a.reps):
            order = list(builds.items())
            if rep % 2:
                order.reverse()
            for label, bin_dir in order:
                d = Daemon(bin_dir)
                try:
                    size = size or notification_bytes(d)
                    r = subprocess.run([probe, "sock", d.socket, str(n), str(k), "set"], env=d.env,
                                             capture_output=True, text=True, timeout=600)
                finally:
                    d.close()
                if r.returncode != 0:
                    raise SystemExit(f"{label}: {r.stderr}")
                samples[label] += lasts(csv.DictReader(r.stdout.splitlines()))
            peers = [("dbus-daemon", [probe, "dbus", address, str(n), str(k)]),
                     ("floor", [probe, "floor", str(n), str(k), str(size)])]
            if uring:
                peers.append(("floor, io_uring", [uring, "floor", str(n), str(k), str(size), "uring"]))
            for label, argv in peers:
                r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
                if r.returncode != 0:
                    raise SystemExit(f"{label}: {r.stderr}")
                samples[label] += lasts(csv.DictReader(r.stdout.splitlines()))
            bench.log(f"repetition {rep + 1} of {a.reps} done")
    finally:
        bus.terminate()
        bus.wait(timeout=10)
        os.unlink(probe)
        if uring:
            os.unlink(uring)
        subprocess.run(["rm", "-rf", root], timeout=60)
    R = {"subscribers": n, "notification_bytes": size, "load": open("/proc/loadavg").read().split()[:3],
         "last": {label: {"n": len(s), "p50": bench.median(s), "p99": bench.pct(s, 99)} for label, s in samples.items()}}
    d50 = R["last"]["dbus-daemon"]["p50"]
    for label, s in R["last"].items():
        s["x_dbus_daemon"] = s["p50"] / d50
        print(f"{label}: last of {n} told p50 {s['p50'] / 1e6:.2f} ms, p99 {s['p99'] / 1e6:.2f} ms; "
              f"{s['x_dbus_daemon']:.2f}x dbus-daemon")
    with open(os.path.join(a.out, "fanout.json"), "w") as f:
        json.dump(R, f, indent=1)


if __name__ == "__main__":
    main()
