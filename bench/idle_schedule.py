#!/usr/bin/python3
"""Idle cost with a schedule active (docs/benchmarks.md, "Idle with a schedule"): a release appearanced with
`[schedule]` (Berlin's coordinates, fixed times, or `location = "geoclue"` with the project's fake GeoClue on a
private system bus, after its first fix) and no session bus sits for --seconds; the context switches of all
its threads and its CPU ticks over that window are counted, as bench.py does, beside the same daemon without a
schedule. Then start-up: exec to the first answer of `get`, --starts fresh daemons each, with typed
coordinates against `location = "geoclue"` with a cached place (location.json) and no GeoClue on the bus.
Writes idle_schedule.json to --out.
"""
import argparse
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import idle_delta, proc_counters  # noqa: E402

FAKE_GEOCLUE = os.path.join(os.path.dirname(HERE), "Tests/EndToEndTests/Scripts/fake-geoclue.py")


def environment(root):
    """The daemon's private environment under `root`: no session bus, no system bus."""
    return {"PATH": "/usr/bin:/bin", "HOME": root, "XDG_RUNTIME_DIR": root + "/runtime",
            "XDG_STATE_HOME": root + "/state", "XDG_CONFIG_HOME": root + "/config",
            "DBUS_SESSION_BUS_ADDRESS": f"unix:path={root}/no-bus", "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={root}/no-bus"}


def answering(bin_dir, env, pause):
    """Waits (20 s at most) until `appearancectl get` answers; returns that deadline for the waits after it."""
    deadline = time.time() + 20
    while subprocess.run([bin_dir + "/appearancectl", "get"], env=env, capture_output=True).returncode != 0:
        if time.time() > deadline:
            raise SystemExit("appearanced did not start")
        time.sleep(pause)
    return deadline


def system_bus(root):
    """A private system bus (no service files) and, with `geoclue`, the fake GeoClue on it. Returns the
    processes and the address."""
    with open(root + "/system.conf", "w") as f:
        f.write(f"""<busconfig><type>system</type><listen>unix:path={root}/system-bus</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
            <allow own="*"/></policy></busconfig>""")
    bus = subprocess.Popen(["/usr/bin/dbus-daemon", f"--config-file={root}/system.conf", "--nofork", "--nopidfile",
                            "--print-address=1"], stdout=subprocess.PIPE, text=True)
    # Its address comes at once, or it failed: 10 s at most.
    if not select.select([bus.stdout], [], [], 10)[0]:
        bus.kill()
        raise SystemExit("dbus-daemon printed no address within 10 s")
    return bus, bus.stdout.readline().strip()


def sandbox(prefix, config):
    """A private directory with runtime, state and config folders and `config` as config.toml."""
    root = tempfile.mkdtemp(prefix=prefix)
    for d in ("runtime", "state/appearanced", "config/appearanced"):
        os.makedirs(os.path.join(root, d), mode=0o700, exist_ok=True)
    with open(os.path.join(root, "config/appearanced/config.toml"), "w") as f:
        f.write(config)
    return root


def measure(bin_dir, config, seconds, geoclue=False):
    root = sandbox("appearanced-bench-idle-", config)
    helpers = []
    try:
        env = environment(root)
        fake = None
        if geoclue:
            bus, env["DBUS_SYSTEM_BUS_ADDRESS"] = system_bus(root)
            fake = subprocess.Popen(["/usr/bin/python3", FAKE_GEOCLUE, env["DBUS_SYSTEM_BUS_ADDRESS"]],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            helpers += [fake, bus]
            if fake.stdout.readline().strip() != "ready":
                raise SystemExit("the fake GeoClue did not start")
        d = subprocess.Popen([bin_dir + "/appearanced"], env=env, stderr=subprocess.DEVNULL)
        try:
            deadline = answering(bin_dir, env, 0.05)
            if fake:
                # The daemon's client must have started before the fix is sent (a fix reaches started clients).
                while "waiting for a first fix" not in subprocess.run([bin_dir + "/appearancectl", "status"], env=env,
                                                                      capture_output=True, text=True).stdout:
                    if time.time() > deadline:
                        raise SystemExit("the daemon did not start a GeoClue client")
                    time.sleep(0.05)
                fake.stdin.write("fix 52.52 13.405\n")
                fake.stdin.flush()
                fake.stdout.readline()
                while "(geoclue" not in subprocess.run([bin_dir + "/appearancectl", "status"], env=env,
                                                       capture_output=True, text=True).stdout:
                    if time.time() > deadline:
                        raise SystemExit("the daemon did not take the fix")
                    time.sleep(0.05)
            status = subprocess.run([bin_dir + "/appearancectl", "status"], env=env, capture_output=True, text=True).stdout
            time.sleep(10)  # idle libdispatch worker threads from start-up time out first
            before = proc_counters(d.pid)
            time.sleep(seconds)
            after = proc_counters(d.pid)
            result = idle_delta(before, after)
            result["seconds"] = seconds
            result["schedule"] = next((l.split(":", 1)[1].strip() for l in status.splitlines() if l.startswith("schedule:")), "")
            return result
        finally:
            d.terminate()
            d.wait()
    finally:
        for p in helpers:
            p.terminate()
            p.wait()
        shutil.rmtree(root, ignore_errors=True)


def startups(bin_dir, config, runs, cache=None):
    """exec to the first answered `get` (ms) of `runs` fresh daemons with `config`, `cache` as location.json."""
    root = sandbox("appearanced-bench-start-", config)
    try:
        env = environment(root)
        times = []
        for _ in range(runs):
            if cache:
                with open(root + "/state/appearanced/location.json", "w") as f:
                    f.write(cache)
            t0 = time.perf_counter()
            d = subprocess.Popen([bin_dir + "/appearanced"], env=env, stderr=subprocess.DEVNULL)
            answering(bin_dir, env, 0.001)
            times.append((time.perf_counter() - t0) * 1000)
            d.terminate()
            d.wait()
        times.sort()
        return {"runs": runs, "median_ms": round(times[len(times) // 2], 2), "max_ms": round(times[-1], 2)}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--starts", type=int, default=30)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
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
    with open(os.path.join(a.out, "idle_schedule.json"), "w") as f:
        json.dump(results, f, indent=2)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
