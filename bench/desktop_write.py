#!/usr/bin/python3
"""The cost of one desktop write (docs/benchmarks.md, "The desktop follows"): what appearanced runs when it
drives GNOME's setting, `gsettings set org.gnome.desktop.interface color-scheme prefer-dark|default`, on a
private session bus with the real dconf service, alternating values, whole process; and, where
plasma-workspace is installed, `plasma-apply-colorscheme BreezeDark|BreezeLight` (headless, a private
config directory). Writes desktop_write.json.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import stats, write_json  # noqa: E402


def timed(cmd, values, runs, env):
    """Median and p99 in ms of `cmd + [value]`, alternating `values`, whole process."""
    samples = []
    for i in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd + [values[i % 2]], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples.append((time.perf_counter() - t0) * 1000)
    return stats(samples, n="runs", unit="_ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=200)
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="appearanced-bench-desktop-")
    env = {"PATH": "/usr/bin:/bin", "HOME": root, "XDG_CONFIG_HOME": root + "/config", "XDG_RUNTIME_DIR": root,
           "GSETTINGS_BACKEND": "dconf"}
    os.chmod(root, 0o700)
    bus = subprocess.Popen(["/usr/bin/dbus-daemon", "--session", "--nofork", "--nopidfile",
                            f"--address=unix:path={root}/bus", "--print-address=1"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    env["DBUS_SESSION_BUS_ADDRESS"] = bus.stdout.readline().strip()
    try:
        cmd = ["gsettings", "set", "org.gnome.desktop.interface", "color-scheme"]
        subprocess.run(cmd + ["default"], env=env, check=True)   # dconf-service activated, not measured
        result = timed(cmd, ["prefer-dark", "default"], a.runs, env)
        if os.access("/usr/bin/plasma-apply-colorscheme", os.X_OK):
            kde = dict(env, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_DIRS=root + "/config/kdedefaults:/etc/xdg")
            result["plasma-apply-colorscheme"] = timed(["plasma-apply-colorscheme"], ["BreezeDark", "BreezeLight"],
                                                       a.runs, kde)
    finally:
        bus.terminate()
        bus.wait()
        subprocess.run(["/usr/bin/pkill", "-f", f"DBUS_STARTER_ADDRESS=unix:path={root}/bus"], stderr=subprocess.DEVNULL)
        shutil.rmtree(root, ignore_errors=True)
    write_json(a.out, "desktop_write", result)


if __name__ == "__main__":
    main()
