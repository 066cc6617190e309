#!/usr/bin/python3
"""Per-app overrides' cost (docs/benchmarks.md, "Per-app overrides"), on a release appearanced with no bus:
- fan-out after a `set` to N subscribers with no app id vs spread over 100 app ids, alternating rounds in one
  run (bench/probe.c, PROBE_APPS);
- `appearancectl get --app ID` vs `appearancectl get`, alternating, whole process.
Writes apps.json to --out.
"""
import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hostile import Daemon, build_probe  # noqa: E402


def pct(s, p):
    s = sorted(s)
    return s[min(len(s) - 1, int(len(s) * p / 100))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    probe = build_probe("apps")
    n = 1000 if a.quick else 10_000
    rounds = 10 if a.quick else 30
    result = {"fanout": {}, "get": {}}
    try:
        for label, apps in (("no app id", None), ("100 app ids", "100")) * 2:
            d = Daemon(a.bin_dir)
            try:
                env = dict(d.env)
                if apps:
                    env["PROBE_APPS"] = apps
                r = subprocess.run([probe, "sock", d.socket, str(n), str(rounds), "set"], env=env, capture_output=True, text=True)
                if r.returncode != 0:
                    raise SystemExit(f"probe failed: {r.stderr}")
                rows = [x for x in csv.DictReader(r.stdout.splitlines()) if int(x["last"]) >= 0]
                result["fanout"].setdefault(label, []).extend((int(x["last"]) - int(x["t0"])) / 1e6 for x in rows)
            finally:
                d.close()
        for label in list(result["fanout"]):
            s = result["fanout"][label]
            result["fanout"][label] = {"rounds": len(s), "p50_ms": statistics.median(s), "p99_ms": pct(s, 99)}
        result["fanout"]["ratio_p50"] = result["fanout"]["100 app ids"]["p50_ms"] / result["fanout"]["no app id"]["p50_ms"]

        d = Daemon(a.bin_dir)
        try:
            subprocess.run([a.bin_dir + "/appearancectl", "set", "dark", "--app", "kitty"], env=d.env, check=True, capture_output=True)
            runs = 200 if a.quick else 1000
            samples = {"get": [], "get --app kitty": []}
            for i in range(runs):
                for label, args in ((("get", ["get"]), ("get --app kitty", ["get", "--app", "kitty"]))[::1 if i % 2 == 0 else -1]):
                    t0 = time.perf_counter()
                    subprocess.run([a.bin_dir + "/appearancectl", *args], env=d.env, stdout=subprocess.DEVNULL, check=True)
                    samples[label].append((time.perf_counter() - t0) * 1000)
            for label, s in samples.items():
                result["get"][label] = {"runs": len(s), "p50_ms": statistics.median(s), "p99_ms": pct(s, 99)}
            result["get"]["ratio_p50"] = result["get"]["get --app kitty"]["p50_ms"] / result["get"]["get"]["p50_ms"]
        finally:
            d.close()
    finally:
        os.unlink(probe)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "apps.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
