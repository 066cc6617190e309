#!/usr/bin/python3
"""The bytes of the signals appearanced sends for portal changes, compared between builds (docs/benchmarks.md,
"A portal change's instructions"): each build in turn on bench.py's stack (the real portal on a private bus),
started fresh with the desktop light, then `gsettings` switches the desktop dark and light --changes times;
`dbus-monitor --binary` takes every signal from appearanced's two objects. The messages are compared whole,
but for the two header values the bus and the moment decide: the serial and the sender's unique name.
Exits 1 when the builds' signals differ, and prints the first difference.
"""
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the one portal stack: bench.Stack)

PATHS = ("/io/github/appearanced/Appearance1", "/nl/whynothugo/darkman")


def messages(raw):
    """Splits dbus-monitor's binary stream into messages (the wire format's own lengths)."""
    out, i = [], 0
    while i + 16 <= len(raw):
        order = "<" if raw[i:i + 1] == b"l" else ">"
        body_len, _, fields_len = struct.unpack(order + "III", raw[i + 4:i + 16])
        header_len = 16 + fields_len
        header_len += (8 - header_len % 8) % 8
        out.append(raw[i:i + header_len + body_len])
        i += header_len + body_len
    return out


def normalized(m):
    """The message without its serial and without the SENDER header field (code 7, added by the bus):
    (header fields other than the sender, in order, as bytes; the fixed part with serial 0; the body)."""
    order = "<" if m[0:1] == b"l" else ">"
    _, _, fields_len = struct.unpack(order + "III", m[4:16])
    fields, i, end = [], 16, 16 + fields_len
    while i < end:
        i += (8 - i % 8) % 8
        start = i
        code, sig_len = m[i], m[i + 1]
        sig = m[i + 2:i + 2 + sig_len].decode()
        i += 3 + sig_len
        if sig in ("s", "o"):
            i += (4 - i % 4) % 4
            (n,) = struct.unpack(order + "I", m[i:i + 4])
            i += 4 + n + 1
        elif sig == "g":
            i += 1 + m[i] + 1
        elif sig == "u":
            i += (4 - i % 4) % 4 + 4
        else:
            raise SystemExit(f"header field of type {sig!r}")
        if code != 7:
            fields.append(bytes(m[start:i]))
    body_start = end + (8 - end % 8) % 8
    return m[0:8] + b"\0\0\0\0", fields, m[body_start:]


def path_of(m):
    for f in normalized(m)[1]:
        if f[0] == 1:
            (n,) = struct.unpack("<I" if m[0:1] == b"l" else ">I", f[4:8])
            return f[8:8 + n].decode()
    return None


def capture(bin_dir, changes):
    st = bench.Stack(os.path.abspath(bin_dir))
    try:
        st.start_session()
        st.start_daemon()
        dump = open(os.path.join(st.root, "monitor.bin"), "wb")
        rules = [f"type='signal',path='{p}'" for p in PATHS]
        mon = st.spawn(["/usr/bin/dbus-monitor", "--binary", *rules], stdout=dump)
        time.sleep(1)
        mode = "light"
        for _ in range(changes):
            mode = "dark" if mode == "light" else "light"
            st.gsettings("prefer-" + mode)
            bench.wait_until(lambda: st.ctl("get").stdout.strip() == mode,
                             f"{bin_dir}: the daemon did not follow the desktop to {mode}", timeout=10)
            time.sleep(0.3)  # the portal's second signal and the daemon's signals, all of them
        mon.terminate()
        mon.wait()
        dump.close()
        raw = open(os.path.join(st.root, "monitor.bin"), "rb").read()
        return [m for m in messages(raw) if path_of(m) in PATHS]
    finally:
        st.close()


def main():
    ap = bench.arguments(out=None)
    ap.add_argument("--baseline-bin-dir", required=True)
    ap.add_argument("--changes", type=int, default=6)
    a = ap.parse_args()
    got = {label: capture(d, a.changes) for label, d in (("this build", a.bin_dir), ("baseline", a.baseline_bin_dir))}
    for label, ms in got.items():
        print(f"{label}: {len(ms)} signals, {sum(len(m) for m in ms)} bytes")
    this, base = ([normalized(m) for m in got[k]] for k in ("this build", "baseline"))
    if len(this) != len(base):
        print(f"different numbers of signals: {len(this)} against {len(base)}")
        return 1
    for n, (x, y) in enumerate(zip(this, base)):
        if x != y:
            print(f"signal {n} differs:\n  this build {x}\n  baseline   {y}")
            return 1
    print("the same bytes (serial and sender aside)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
