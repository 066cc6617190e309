#!/usr/bin/python3
"""`set` throughput (docs/benchmarks.md, "Fan-out and durable sets at the floor"): CLIENTS connections each send `set` (dark and light
alternately) and wait for each reply, while 1,000 subscribers listen, on a release appearanced with no bus
(bench/probe.c `setload` and `hold`). With --baseline-bin-dir, a second build runs in alternating rounds of the
same run, so the two figures share the machine's load.

Every acknowledged `set` must be durable: after each round the daemon is killed with SIGKILL and the override
in its state file must be the one `get` answered just before. Beside it, in the same rounds, the peer: one writer
making atomic durable writes of a state file of the same size in the same kind of folder on the same disk (write a
temporary file, fsync, rename over, fsync the folder), as fast as it can; the ratio is the daemon's acknowledged
`set`s per second over the peer's writes per second. --count-saves runs one more round of each build under
`perf stat` (fsyncs and sends): how many `set`s a save covers, how many times a save's change is told to each
subscriber. Writes set_throughput.json to --out.
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Daemon, Hold, arguments, build_probe, builds, write_json  # noqa: E402


# The size of the daemon's state.json after a `set` with no apps ({"override":"dark"} and a newline).
STATE_BYTES = 20


def one_round(bin_dir, probe, clients, seconds, subscribers, counts=None):
    """`set`s per second; with `counts` (a dict), also the daemon's saves and sends, counted by `perf stat`."""
    d = Daemon(bin_dir)
    try:
        hold = Hold(d, probe, subscribers)
        stat = None
        if counts is not None:
            stat = subprocess.Popen(["perf", "stat", "-x,", "-o", d.root + "/perf-stat", "-e",
                                     "syscalls:sys_enter_fsync,syscalls:sys_enter_sendto", "-p", str(d.p.pid)])
            time.sleep(0.5)  # perf attached
        try:
            r = subprocess.run([probe, "setload", d.socket, str(clients), str(seconds)], env=d.env,
                               capture_output=True, text=True, timeout=seconds + 60)
            if r.returncode != 0:
                raise SystemExit(f"setload failed: {r.stderr}")
            total, secs = r.stdout.strip().split(",")
        finally:
            if stat:
                stat.send_signal(signal.SIGINT)
                stat.wait(timeout=60)
            hold.close()
        if stat:
            # Two fsyncs a save (the file, its folder); one send a subscriber told, besides the replies.
            n = {line.split(",")[2]: int(line.split(",")[0]) for line in open(d.root + "/perf-stat")
                 if line[:1].isdigit()}
            saves = n["syscalls:sys_enter_fsync"] / 2
            counts.setdefault("sets_a_save", []).append(int(total) / saves)
            counts.setdefault("notified_a_save", []).append((n["syscalls:sys_enter_sendto"] - int(total)) / subscribers / saves)
        answered = subprocess.run([bin_dir + "/appearancectl", "get", "--json"], env=d.env, capture_output=True,
                                  text=True, timeout=10).stdout
        d.p.send_signal(signal.SIGKILL)
        d.p.wait(timeout=10)
        with open(os.path.join(d.root, "state", "appearanced", "state.json")) as f:
            saved = json.load(f)["override"]
        override = json.loads(answered)["override"]
        if saved != override:
            raise SystemExit(f"not durable: get said override {override}, the state file after SIGKILL {saved}")
        return int(total) / float(secs)
    finally:
        d.close()


def atomic_writes(seconds, size):
    """Atomic durable writes per second of one writer, `size` bytes each, in a fresh folder beside the daemons'."""
    d = tempfile.mkdtemp(prefix="appearanced-bench-peer-")
    data = b"x" * max(size - 1, 0) + b"\n"
    folder = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        n, start = 0, time.monotonic()
        while time.monotonic() - start < seconds:
            fd = os.open(d + "/state.json.tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.write(fd, data)
            os.fsync(fd)
            os.close(fd)
            os.rename(d + "/state.json.tmp", d + "/state.json")
            os.fsync(folder)
            n += 1
        return n / (time.monotonic() - start)
    finally:
        os.close(folder)
        subprocess.run(["rm", "-rf", d], timeout=60)


def main():
    ap = arguments(baseline="another build, measured in alternating rounds")
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--count-saves", action="store_true",
                    help="one more round of each build under `perf stat`: sets a save, subscribers told a save")
    a = ap.parse_args()
    probe = build_probe("set")
    bins = builds(a.bin_dir, baseline=a.baseline_bin_dir)
    rates = {label: [] for label in bins}
    peer = []
    try:
        for _ in range(a.rounds):
            for label, bin_dir in bins.items():
                rates[label].append(one_round(bin_dir, probe, a.clients, a.seconds, 1000))
            peer.append(atomic_writes(a.seconds, STATE_BYTES))
        counts = {label: {} for label in bins} if a.count_saves else {}
        for label, c in counts.items():
            one_round(bins[label], probe, a.clients, a.seconds, 1000, c)
    finally:
        os.unlink(probe)
    result = {"clients": a.clients, "subscribers": 1000, "seconds": a.seconds, "rounds": a.rounds,
              "durable_after_sigkill": True,
              "per_second": {label: {"median": statistics.median(r), "rounds": r} for label, r in rates.items()},
              "peer_atomic_writes_per_second": {"median": statistics.median(peer), "rounds": peer},
              "ratio_to_peer": {label: statistics.median(r) / statistics.median(peer) for label, r in rates.items()},
              "counted_under_perf": counts}
    write_json(a.out, "set_throughput", result, indent=1, echo=False)
    print(f"peer: one writer's atomic durable writes of {STATE_BYTES} bytes: median {statistics.median(peer):.0f}/s "
          f"(rounds: {', '.join(f'{x:.0f}' for x in peer)})")
    for label, r in rates.items():
        print(f"set from {a.clients} clients, 1,000 subscribers, {label}: median {statistics.median(r):.0f} "
              f"requests/s (rounds: {', '.join(f'{x:.0f}' for x in r)}); durable after SIGKILL; "
              f"{result['ratio_to_peer'][label]:.2f}x the peer")
    for label, c in counts.items():
        print(f"{label}, one round under perf stat: {c['sets_a_save'][0]:.1f} sets a save, every subscriber told "
              f"{c['notified_a_save'][0]:.2f} times a save")


if __name__ == "__main__":
    main()
