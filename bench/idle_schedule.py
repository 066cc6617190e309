#!/usr/bin/python3
"""Idle cost with a schedule active (docs/benchmarks.md, "Idle with a schedule"): a release appearanced with
`[schedule]` (Berlin's coordinates, fixed times, or `location = "geoclue"` with the project's fake GeoClue on a
private system bus, after its first fix) and no session bus sits for --seconds; the context switches of all
its threads and its CPU ticks over that window are counted, as bench.py does, beside the same daemon without a
schedule. Then start-up: exec to the first answer of `get`, --starts fresh daemons each, with typed
coordinates against `location = "geoclue"` with a cached place (location.json) and no GeoClue on the bus.
Writes idle_schedule.json to --out.
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import Daemon, arguments, idle_delta, private_bus, proc_counters, stop, wait_until, write_json  # noqa: E402

FAKE_GEOCLUE = os.path.join(os.path.dirname(HERE), "Tests/EndToEndTests/Scripts/fake-geoclue.py")


def measure(bin_dir, config, seconds, geoclue=False):
    """The idle daemon's context switches and CPU ticks over `seconds`; with `geoclue`, the fake GeoClue on a
    private system bus (no service files) gives it a first fix first."""
    d = Daemon(bin_dir, prefix="appearanced-bench-idle-", config=config, start=False)
    helpers = []
    try:
        if geoclue:
            bus, d.env["DBUS_SYSTEM_BUS_ADDRESS"] = private_bus(d.root, "system-bus", "system", ())
            fake = subprocess.Popen(["/usr/bin/python3", FAKE_GEOCLUE, d.env["DBUS_SYSTEM_BUS_ADDRESS"]],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            helpers += [fake, bus]
            if fake.stdout.readline().strip() != "ready":
                raise SystemExit("the fake GeoClue did not start")
        d.start()

        def status():
            return subprocess.run([bin_dir + "/appearancectl", "status"], env=d.env, capture_output=True,
                                  text=True).stdout
        if geoclue:
            # The daemon's client must have started before the fix is sent (a fix reaches started clients).
            wait_until(lambda: "waiting for a first fix" in status(), "the daemon did not start a GeoClue client")
            fake.stdin.write("fix 52.52 13.405\n")
            fake.stdin.flush()
            fake.stdout.readline()
            wait_until(lambda: "(geoclue" in status(), "the daemon did not take the fix")
        schedule = next((l.split(":", 1)[1].strip() for l in status().splitlines() if l.startswith("schedule:")), "")
        time.sleep(10)  # idle libdispatch worker threads from start-up time out first
        before = proc_counters(d.p.pid)
        time.sleep(seconds)
        return {**idle_delta(before, proc_counters(d.p.pid)), "seconds": seconds, "schedule": schedule}
    finally:
        d.close()
        stop(*helpers)


def startups(bin_dir, config, runs, cache=None):
    """exec to the first answered `get` (ms) of `runs` fresh daemons with `config`, `cache` as location.json."""
    d = Daemon(bin_dir, prefix="appearanced-bench-start-", config=config, start=False)
    try:
        os.makedirs(d.root + "/state/appearanced", exist_ok=True)
        times = []
        for _ in range(runs):
            if cache:
                with open(d.root + "/state/appearanced/location.json", "w") as f:
                    f.write(cache)
            t0 = time.perf_counter()
            d.start(pause=0.001)
            times.append((time.perf_counter() - t0) * 1000)
            d.stop()
        times.sort()
        return {"runs": runs, "median_ms": round(times[len(times) // 2], 2), "max_ms": round(times[-1], 2)}
    finally:
        d.close()


def main():
    ap = arguments()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--starts", type=int, default=30)
    a = ap.parse_args()
    results = {
        "no schedule": measure(a.bin_dir, "", a.seconds),
        "sun": measure(a.bin_dir, "[schedule]\nlatitude = 52.52\nlongitude = 13.405\n", a.seconds),
        "fixed": measure(a.bin_dir, "[schedule]\nlight-at = \"07:00\"\ndark-at = \"19:00\"\n", a.seconds),
        "geoclue": measure(a.bin_dir, "[schedule]\nlocation = \"geoclue\"\n", a.seconds, geoclue=True),
    }
    # Start-up in two repetitions, the two configurations in turn: the machine's drift falls on both.
    for rep in (1, 2):
        results[f"start-up, typed place, repetition {rep}"] = startups(
            a.bin_dir, "[schedule]\nlatitude = 52.52\nlongitude = 13.405\n", a.starts)
        results[f"start-up, GeoClue's cached place, repetition {rep}"] = startups(
            a.bin_dir, "[schedule]\nlocation = \"geoclue\"\n", a.starts,
            cache='{"latitude":52.52,"longitude":13.40,"time":1795000000}\n')
    write_json(a.out, "idle_schedule", results)


if __name__ == "__main__":
    main()
