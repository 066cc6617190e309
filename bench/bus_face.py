#!/usr/bin/python3
"""appearanced's D-Bus service against the portal (docs/benchmarks.md, "The D-Bus service and the integrations"), on bench.py's stack
(a private session bus, the real xdg-desktop-portal with its GTK backend on a broadway display, appearanced
on the same bus): the command-line tools a script would use, run interleaved in one loop (each round in a
rotated order), exec to exit each:
- `busctl --user get-property` of appearanced's `Mode` beside `busctl --user call` of the portal's `Read`;
- `dbus-send --print-reply` of `Properties.Get(Mode)` beside `dbus-send --print-reply` of the portal's `Read`;
- `appearancectl get`, for scale.
Prints medians and p99 and writes bus_face.json to --out when given.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import BUSCTL_READ, DBUS_SEND_READ, FACE, Stack, arguments, interleaved, load, pct, write_json  # noqa: E402

FACE_PATH = "/io/github/appearanced/Appearance1"


def main():
    ap = arguments(out=False)
    ap.add_argument("--runs", type=int, default=500)
    a = ap.parse_args()
    st = Stack(os.path.abspath(a.bin_dir), desktop="GNOME", portals=("gtk",))
    try:
        st.start_session(light=False)
        st.start_daemon()
        tools = {
            "busctl --user get-property Mode (appearanced)": ["/usr/bin/busctl", "--user", "get-property", FACE,
                                                              FACE_PATH, FACE, "Mode"],
            "busctl --user call Read (portal)": BUSCTL_READ,
            "dbus-send Properties.Get Mode (appearanced)": ["/usr/bin/dbus-send", "--session", "--print-reply",
                                                            f"--dest={FACE}", FACE_PATH,
                                                            "org.freedesktop.DBus.Properties.Get", f"string:{FACE}",
                                                            "string:Mode"],
            "dbus-send Read (portal)": DBUS_SEND_READ,
            "appearancectl get": [st.bin_dir + "/appearancectl", "get"],
        }
        outputs = {}
        for name, argv in tools.items():
            r = subprocess.run(argv, env=st.env, capture_output=True, text=True, timeout=10)
            if r.returncode != 0:
                raise SystemExit(f"{name} failed: {r.stderr}")
            outputs[name] = r.stdout.strip()[:100]
        samples = interleaved(tools, a.runs, st.env)
        result = {"runs": a.runs, "outputs": outputs, "load": load(),
                  "ms": {n: {"median": round(pct(s, 50) / 1e6, 3), "p99": round(pct(s, 99) / 1e6, 3)}
                         for n, s in samples.items()}}
    finally:
        st.close()
    write_json(a.out, "bus_face", result)


if __name__ == "__main__":
    main()
