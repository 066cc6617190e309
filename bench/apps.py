#!/usr/bin/python3
"""Per-app overrides' cost (docs/benchmarks.md, "Per-app overrides"), on a release appearanced with no bus:
- fan-out after a `set` to N subscribers with no app id vs spread over 100 app ids, alternating rounds in one
  run (bench/probe.c, PROBE_APPS);
- `appearancectl get --app ID` vs `appearancectl get`, alternating, whole process.
Writes apps.json to --out.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Daemon, alternate, arguments, build_probe, lasts, run_probe, stats, write_json  # noqa: E402


def main():
    a = arguments(quick=True).parse_args()
    probe = build_probe("apps")
    n = 1000 if a.quick else 10_000
    rounds = 10 if a.quick else 30
    result = {"fanout": {}, "get": {}}
    try:
        for label, apps in (("no app id", None), ("100 app ids", "100")) * 2:
            d = Daemon(a.bin_dir)
            try:
                env = dict(d.env, **({"PROBE_APPS": apps} if apps else {}))
                rows, _ = run_probe([probe, "sock", d.socket, n, rounds, "set"], env)
                result["fanout"].setdefault(label, []).extend(x / 1e6 for x in lasts(rows))
            finally:
                d.close()
        for label in list(result["fanout"]):
            result["fanout"][label] = stats(result["fanout"][label], n="rounds", unit="_ms")
        result["fanout"]["ratio_p50"] = result["fanout"]["100 app ids"]["p50_ms"] / result["fanout"]["no app id"]["p50_ms"]

        d = Daemon(a.bin_dir)
        try:
            ctl = a.bin_dir + "/appearancectl"
            subprocess.run([ctl, "set", "dark", "--app", "kitty"], env=d.env, check=True, capture_output=True)
            samples = alternate({"get": [ctl, "get"], "get --app kitty": [ctl, "get", "--app", "kitty"]},
                                200 if a.quick else 1000, d.env)
            result["get"] = {label: stats(s, n="runs", unit="_ms") for label, s in samples.items()}
            result["get"]["ratio_p50"] = result["get"]["get --app kitty"]["p50_ms"] / result["get"]["get"]["p50_ms"]
        finally:
            d.close()
    finally:
        os.unlink(probe)
    write_json(a.out, "apps", result)


if __name__ == "__main__":
    main()
