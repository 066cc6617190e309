#!/usr/bin/python3
"""The portal backend's figures (docs/benchmarks.md, "Portal backend"), with the real xdg-desktop-portal.

1. A portal `Read` of org.freedesktop.appearance color-scheme answered through appearanced (sway-shaped:
   appearanced's .portal only) against the same `Read` answered through xdg-desktop-portal-gtk
   (GNOME-shaped: gtk.portal only). Both stacks run at once and the calls alternate, so both see the same
   machine; the client is one GDBus connection per stack, calls made synchronously one after another.
2. `appearancectl set dark|light` to a libadwaita app's `notify::dark`: the app (in this process, on a GTK 4
   broadway display) starts appearancectl and takes the time from just before the spawn to the signal.

Writes portal_read.csv, adw_latency.csv and portal_backend.json to --out. Run by `make bench`.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import arguments, logger, pct, write_json  # noqa: E402

log = logger("bench (portal backend)")


def Stack(bin_dir, desktop, portals, gtk4=False):
    """bench.py's portal stack for one desktop shape (its .portal files only), with appearanced on it."""
    st = bench.Stack(bin_dir, desktop=desktop, portals=portals)
    st.start_session(light=False, broadway=("/usr/bin/gtk4-broadwayd" if gtk4 else "/usr/bin/broadwayd")
                     if "gtk" in portals or gtk4 else None)
    st.start_daemon()
    return st


def portal_reads(bin_dir, n):
    from gi.repository import Gio, GLib
    sway = Stack(bin_dir, "sway", ["appearanced"])
    gnome = Stack(bin_dir, "GNOME", ["gtk"])
    try:
        conns = {}
        for name, st in (("appearanced", sway), ("gtk", gnome)):
            conns[name] = Gio.DBusConnection.new_for_address_sync(
                st.env["DBUS_SESSION_BUS_ADDRESS"],
                Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)

        def read(c):
            t0 = time.perf_counter_ns()
            r = c.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                            "org.freedesktop.portal.Settings", "Read",
                            GLib.Variant("(ss)", ("org.freedesktop.appearance", "color-scheme")),
                            None, Gio.DBusCallFlags.NONE, 10000, None)
            t1 = time.perf_counter_ns()
            assert r is not None
            return (t1 - t0) / 1e6

        for name in conns:  # cold activation of the portal and the backend is not what is measured
            for _ in range(20):
                read(conns[name])
        rows = []
        for i in range(n):
            order = ["appearanced", "gtk"] if i % 2 == 0 else ["gtk", "appearanced"]
            for name in order:
                rows.append((name, read(conns[name])))
        return rows
    finally:
        sway.close()
        gnome.close()


ADW_PROBE = r"""
import os, subprocess, sys, time, gi
gi.require_version("Adw", "1"); gi.require_version("Gtk", "4.0")
from gi.repository import Adw, GLib
Adw.init()
m = Adw.StyleManager.get_default()
ctl, n = sys.argv[1], int(sys.argv[2])
samples, state = [], {"t0": 0, "want": None, "left": n}
loop = GLib.MainLoop()
def step():
    want = not m.get_dark()
    state["want"], state["t0"] = want, time.perf_counter_ns()
    GLib.spawn_async([ctl, "set", "dark" if want else "light"], flags=GLib.SpawnFlags.STDOUT_TO_DEV_NULL)
    return False
def changed(*_):
    if state["want"] is None or m.get_dark() != state["want"]:
        return
    samples.append((time.perf_counter_ns() - state["t0"]) / 1e6)
    state["want"] = None
    state["left"] -= 1
    if state["left"] == 0:
        loop.quit()
    else:
        GLib.timeout_add(20, step)
m.connect("notify::dark", changed)
GLib.timeout_add(200, step)
GLib.timeout_add_seconds(max(60, n), lambda: (loop.quit(), False)[1])
loop.run()
print(" ".join(f"{s:.3f}" for s in samples))
"""


def adw_latency(bin_dir, n):
    st = Stack(bin_dir, "sway", ["appearanced"], gtk4=True)
    try:
        r = subprocess.run(["/usr/bin/python3", "-c", ADW_PROBE, bin_dir + "/appearancectl", str(n)], env=st.env,
                           capture_output=True, text=True, timeout=max(120, 2 * n))
        samples = [float(x) for x in r.stdout.split()]
        if len(samples) < n:
            raise SystemExit(f"the libadwaita probe saw {len(samples)} of {n} changes: {r.stderr}")
        return samples
    finally:
        st.close()


def main():
    a = arguments(quick=True).parse_args()
    os.makedirs(a.out, exist_ok=True)
    n_read, n_adw = (100, 20) if a.quick else (1000, 200)

    log(f"portal Read through appearanced vs through xdg-desktop-portal-gtk, {n_read} each, alternating")
    rows = portal_reads(a.bin_dir, n_read)
    with open(os.path.join(a.out, "portal_read.csv"), "w") as f:
        f.write("backend,ms\n" + "".join(f"{b},{ms:.4f}\n" for b, ms in rows))
    ours = [ms for b, ms in rows if b == "appearanced"]
    gtk = [ms for b, ms in rows if b == "gtk"]

    log(f"appearancectl set → libadwaita notify::dark, {n_adw} changes")
    adw = adw_latency(a.bin_dir, n_adw)
    with open(os.path.join(a.out, "adw_latency.csv"), "w") as f:
        f.write("ms\n" + "".join(f"{ms:.4f}\n" for ms in adw))

    median = lambda s: pct(s, 50)  # noqa: E731
    result = {
        "portal_read_ms": {"appearanced": {"median": median(ours), "p99": pct(ours, 99)},
                           "gtk": {"median": median(gtk), "p99": pct(gtk, 99)},
                           "ratio_median": median(ours) / median(gtk)},
        "set_to_libadwaita_ms": {"median": median(adw), "p99": pct(adw, 99), "n": len(adw)},
    }
    write_json(a.out, "portal_backend", result)


if __name__ == "__main__":
    main()
