#!/usr/bin/python3
"""`appearancectl get`'s instructions, counted by callgrind, and its page faults (the kernel's count of minor
faults for one run, median of --fault-runs), for one build or two side by side (docs/benchmarks.md,
docs/decisions.md).

For each build: its appearanced runs with no bus in a private runtime directory (the same path length for
every build: the socket path's length shows in the count), its appearancectl is copied and stripped
(valgrind cannot read the static binary's debug info), and `get` is run under callgrind --runs times. The
counts repeat to within a few hundred instructions; the median is reported.

    /usr/bin/python3 bench/get_instructions.py --bin-dir DIR [--baseline-bin-dir DIR] [--runs 3] [--out DIR]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def faults(argv, env, runs):
    """The minor page faults of one run of argv (wait4's rusage), median of `runs`."""
    out = []
    for _ in range(runs):
        p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        if status != 0:
            raise SystemExit(f"{argv} failed")
        out.append(usage.ru_minflt)
    return sorted(out)[len(out) // 2]


def count(bin_dir, runs, fault_runs):
    root = tempfile.mkdtemp(prefix="gi-")
    try:
        run = os.path.join(root, "run")
        os.makedirs(run, mode=0o700)
        ctl = os.path.join(root, "appearancectl")
        subprocess.run(["strip", "-o", ctl, os.path.join(bin_dir, "appearancectl")], check=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": root, "XDG_RUNTIME_DIR": run, "XDG_STATE_HOME": root + "/state",
               "XDG_CONFIG_HOME": root + "/config", "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + root + "/no-bus"}
        daemon = subprocess.Popen([os.path.join(bin_dir, "appearanced")], env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 20
            while subprocess.run([ctl, "get"], env=env, capture_output=True).returncode != 0:
                if time.time() > deadline or daemon.poll() is not None:
                    raise SystemExit(f"{bin_dir}/appearanced did not answer")
                time.sleep(0.02)
            counts = []
            for _ in range(runs):
                r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", ctl, "get"],
                                   env=env, capture_output=True, text=True, timeout=120)
                m = re.search(r"Collected : (\d+)", r.stderr)
                if not m:
                    raise SystemExit("callgrind gave no count: " + r.stderr[-400:])
                counts.append(int(m.group(1)))
            return sorted(counts), faults([ctl, "get"], env, fault_runs)
        finally:
            daemon.terminate()
            daemon.wait(10)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--baseline-bin-dir")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--fault-runs", type=int, default=50)
    ap.add_argument("--out")
    a = ap.parse_args()
    results = {"this build": count(a.bin_dir, a.runs, a.fault_runs)}
    if a.baseline_bin_dir:
        results["baseline"] = count(a.baseline_bin_dir, a.runs, a.fault_runs)
    for name, (c, f) in results.items():
        print(f"get_instructions: {name}: median {c[len(c) // 2]:,} instructions (runs: {c}); {f} page faults",
              file=sys.stderr)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "get_instructions.json"), "w") as f:
            json.dump({k: {"runs": v, "median": v[len(v) // 2], "page_faults": pf} for k, (v, pf) in results.items()},
                      f, indent=2)


if __name__ == "__main__":
    main()
