#!/usr/bin/python3
"""Fan-out against dbus-daemon and against the floor (docs/benchmarks.md, "Fan-out and durable sets at the floor").

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
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import (FANOUT_LIMITS, Daemon, arguments, build_probe, builds, lasts, load, log, private_bus,  # noqa: E402
                   run_probe, stats, stop, tmpfs_dir, write_json)


def notification_bytes(d):
    """The size of the daemon's `changed` line to a plain subscriber, read off a real one."""
    s = d.connect()
    s.settimeout(10)
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"subscribe"}\n')
    f = s.makefile("rb")
    f.readline()
    ctl = [d.bin_dir + "/appearancectl"]
    mode = json.loads(subprocess.run(ctl + ["get", "--json"], env=d.env, capture_output=True, text=True,
                                     timeout=10).stdout)["mode"]
    subprocess.run(ctl + ["set", "light" if mode == "dark" else "dark"], env=d.env, check=True, capture_output=True,
                   timeout=10)
    n = len(f.readline())
    subprocess.run(ctl + ["set", "system"], env=d.env, check=True, capture_output=True, timeout=10)
    s.close()
    return n


def main():
    ap = arguments(baseline="another build, in turn with this one in each repetition")
    ap.add_argument("--subscribers", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=60, help="rounds per tool and repetition")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    shm = tmpfs_dir()
    if shm:
        tempfile.tempdir = shm
    probe = build_probe("fanout")
    uring = build_probe("fanout-uring", "-DPROBE_URING", "-luring")
    if not uring:
        log("no liburing: the io_uring floor is left out")
    bins = builds(a.bin_dir, baseline=a.baseline_bin_dir, label="build before")
    n, k = a.subscribers, a.rounds
    samples = {label: [] for label in list(bins) + ["dbus-daemon", "floor"] + (["floor, io_uring"] if uring else [])}
    root = tempfile.mkdtemp(prefix="appearanced-bench-fanout-")
    bus, address = private_bus(root, limits=FANOUT_LIMITS)
    size = None
    try:
        for rep in range(a.reps):
            order = list(bins.items())
            if rep % 2:
                order.reverse()
            for label, bin_dir in order:
                d = Daemon(bin_dir)
                try:
                    size = size or notification_bytes(d)
                    rows, _ = run_probe([probe, "sock", d.socket, n, k, "set"], d.env, timeout=600)
                finally:
                    d.close()
                samples[label] += lasts(rows)
            peers = [("dbus-daemon", [probe, "dbus", address, n, k]), ("floor", [probe, "floor", n, k, size])]
            if uring:
                peers.append(("floor, io_uring", [uring, "floor", n, k, size, "uring"]))
            for label, argv in peers:
                samples[label] += lasts(run_probe(argv, timeout=600)[0])
            log(f"repetition {rep + 1} of {a.reps} done")
    finally:
        stop(bus)
        os.unlink(probe)
        if uring:
            os.unlink(uring)
        subprocess.run(["rm", "-rf", root], timeout=60)
    R = {"subscribers": n, "notification_bytes": size, "load": load(),
         "last": {label: stats(s) for label, s in samples.items()}}
    d50 = R["last"]["dbus-daemon"]["p50"]
    for label, s in R["last"].items():
        s["x_dbus_daemon"] = s["p50"] / d50
        print(f"{label}: last of {n} told p50 {s['p50'] / 1e6:.2f} ms, p99 {s['p99'] / 1e6:.2f} ms; "
              f"{s['x_dbus_daemon']:.2f}x dbus-daemon")
    write_json(a.out, "fanout", R, indent=1, echo=False)


if __name__ == "__main__":
    main()
