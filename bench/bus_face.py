#!/usr/bin/python3
"""appearanced's D-Bus face against the portal (docs/benchmarks.md, "The D-Bus face"), on bench.py's stack
(a private session bus, the real xdg-desktop-portal with its GTK backend on a broadway display, appearanced
on the same bus): the command-line tools a script would use, run interleaved in one loop (each round in a
rotated order), exec to exit each:
- `busctl --user get-property` of appearanced's `Mode` beside `busctl --user call` of the portal's `Read`;
- `dbus-send --print-reply` of `Properties.Get(Mode)` beside `dbus-send --print-reply` of the portal's `Read`;
- `appearancectl get`, for scale.
Prints medians and p99 and writes bus_face.json to --out when given.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the one portal stack: bench.Stack; spawn_time)

FACE, FACE_PATH, FACE_IFACE = "io.github.appearanced.Appearance1", "/io/github/appearanced/Appearance1", "io.github.appearanced.Appearance1"
PORTAL, PORTAL_PATH = "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop"


def pct(samples, p):
    s = sorted(samples)
    return s[max(0, min(len(s) - 1, int(round(p / 100 * len(s) + 0.5)) - 1))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--out")
    a = ap.parse_args()
    st = bench.Stack(os.path.abspath(a.bin_dir), desktop="GNOME", portals=("gtk",))
    try:
        st.start_broadway()
        _, st.env["DBUS_SESSION_BUS_ADDRESS"] = st.start_bus("bus")
        st.start_daemon()
        tools = {
            "busctl --user get-property Mode (appearanced)": ["/usr/bin/busctl", "--user", "get-property", FACE, FACE_PATH, FACE_IFACE, "Mode"],
            "busctl --user call Read (portal)": ["/usr/bin/busctl", "--user", "call", PORTAL, PORTAL_PATH,
                                                 "org.freedesktop.portal.Settings", "Read", "ss", "org.freedesktop.appearance", "color-scheme"],
            "dbus-send Properties.Get Mode (appearanced)": ["/usr/bin/dbus-send", "--session", "--print-reply", f"--dest={FACE}", FACE_PATH,
                                                            "org.freedesktop.DBus.Properties.Get", f"string:{FACE_IFACE}", "string:Mode"],
            "dbus-send Read (portal)": ["/usr/bin/dbus-send", "--session", "--print-reply", f"--dest={PORTAL}", PORTAL_PATH,
                                        "org.freedesktop.portal.Settings.Read", "string:org.freedesktop.appearance", "string:color-scheme"],
            "appearancectl get": [st.bin_dir + "/appearancectl", "get"],
        }
        outputs = {}
        for name, argv in tools.items():
            r = bench.subprocess.run(argv, env=st.env, capture_output=True, text=True, timeout=10)
            if r.returncode != 0:
                raise SystemExit(f"{name} failed: {r.stderr}")
            outputs[name] = r.stdout.strip()[:100]
        devnull = os.open("/dev/null", os.O_WRONLY)
        names = list(tools)
        samples = {n: [] for n in names}
        for i in range(20 + a.runs):
            for n in names[i % len(names):] + names[:i % len(names)]:
                ns = bench.spawn_time(tools[n][0], tools[n], st.env, devnull)
                if i >= 20:
                    samples[n].append(ns / 1e6)
        result = {"runs": a.runs, "outputs": outputs, "load": open("/proc/loadavg").read().split()[:3],
                  "ms": {n: {"median": round(pct(s, 50), 3), "p99": round(pct(s, 99), 3)} for n, s in samples.items()}}
    finally:
        st.close()
    print(json.dumps(result, indent=2))
    bench.write_json(a.out, "bus_face", result)


if __name__ == "__main__":
    main()
