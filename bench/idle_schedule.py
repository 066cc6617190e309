#!/usr/bin/python3
"""Idle cost with a schedule active (docs/benchmarks.md, "Idle with a schedule"): a release appearanced with
`[schedule]` (Berlin's coordinates, and fixed times) and no session bus sits for --seconds; the context
switches of all its threads and its CPU ticks over that window are counted, as bench.py does, beside the same
daemon without a schedule. Writes idle_schedule.json to --out.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import idle_delta, proc_counters  # noqa: E402


def measure(bin_dir, config, seconds):
    root = tempfile.mkdtemp(prefix="appearanced-bench-idle-")
    try:
        for d in ("runtime", "state", "config/appearanced"):
            os.makedirs(os.path.join(root, d), mode=0o700, exist_ok=True)
        with open(os.path.join(root, "config/appearanced/config.toml"), "w") as f:
            f.write(config)
        env = {"PATH": "/usr/bin:/bin", "HOME": root, "XDG_RUNTIME_DIR": root + "/runtime",
               "XDG_STATE_HOME": root + "/state", "XDG_CONFIG_HOME": root + "/config",
               "DBUS_SESSION_BUS_ADDRESS": f"unix:path={root}/no-bus", "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={root}/no-bus"}
        d = subprocess.Popen([bin_dir + "/appearanced"], env=env, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 20
            while subprocess.run([bin_dir + "/appearancectl", "get"], env=env, capture_output=True).returncode != 0:
                if time.time() > deadline:
                    raise SystemExit("appearanced did not start")
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
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    results = {
        "no schedule": measure(a.bin_dir, "", a.seconds),
        "sun": measure(a.bin_dir, "[schedule]\nlatitude = 52.52\nlongitude = 13.405\n", a.seconds),
        "fixed": measure(a.bin_dir, "[schedule]\nlight-at = \"07:00\"\ndark-at = \"19:00\"\n", a.seconds),
    }
    with open(os.path.join(a.out, "idle_schedule.json"), "w") as f:
        json.dump(results, f, indent=2)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
