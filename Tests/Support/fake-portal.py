#!/usr/bin/python3
"""A fake org.freedesktop.portal.Desktop for fault injection in tests.

Run with Debian's /usr/bin/python3 (it has python3-dbus and python3-gi). It connects to the bus in
DBUS_SESSION_BUS_ADDRESS, exports /org/freedesktop/portal/desktop with org.freedesktop.portal.Settings
in the shape of portal version 1 (xdg-desktop-portal 1.16: only Read, value wrapped twice) or 2
(ReadOne, Read, ReadAll), and is driven line by line on stdin so a test controls every fault.

stdout protocol: "ready" once the name is owned (or, with --no-acquire, once connected); then exactly
one "ok" (or "error <why>") per command, printed after the command's effects are on the bus. Commands:

  set N            store color-scheme N (uint32) and emit SettingChanged once
  store N          store N, no signal
  signal N         emit SettingChanged with N, stored value unchanged (1.16's contradicting signals)
  dup N            store N and emit SettingChanged twice
  burst N K        store N and emit SettingChanged K times in a row
  set-type T V     store V as D-Bus type T (s, i, u, b, d, x, y, n, q, t, o, g) and emit once
  store-type T V   store V as type T, no signal
  notfound         Read/ReadOne answer org.freedesktop.portal.Error.NotFound (until the next set/store)
  no-settings      Settings methods answer UnknownMethod, like 1.16 without a settings backend
  settings         undo no-settings
  gnome N          emit org.gnome.desktop.interface color-scheme (what xdg-desktop-portal-gtk adds)
  other-key N      emit org.freedesktop.appearance other-key N (a key the sentry does not follow)
  contrast N       store the trait contrast N (uint32) and emit SettingChanged once
  motion N         store reduced-motion N (uint32) and emit once
  accent R G B     store accent-color (R, G, B) as (ddd) and emit once
  trait-type K T V store trait K (contrast, reduced-motion, accent-color) as type T value V and emit once
  unset K          remove trait K (reads answer NotFound, as before 1.18/1.20/1.22) and emit once

Traits start absent (NotFound) unless given with --contrast, --reduced-motion or --accent "R G B".
  reads            print "reads N": how many Read/ReadOne calls were answered so far
  release          release the bus name (NameOwnerChanged to nobody)
  acquire          own the bus name again
  quit             exit (also on end of stdin)
"""

import argparse
import os
import sys

import dbus
import dbus.bus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "EndToEndTests", "Scripts"))
from stand_in import serve_commands, own, out, Failure  # noqa: E402

NAME = "org.freedesktop.portal.Desktop"
PATH = "/org/freedesktop/portal/desktop"
IFACE = "org.freedesktop.portal.Settings"
NS, KEY = "org.freedesktop.appearance", "color-scheme"

TYPES = {
    "s": dbus.String, "o": dbus.ObjectPath, "g": dbus.Signature,
    "i": lambda v, **kw: dbus.Int32(int(v), **kw), "u": lambda v, **kw: dbus.UInt32(int(v), **kw),
    "x": lambda v, **kw: dbus.Int64(int(v), **kw), "t": lambda v, **kw: dbus.UInt64(int(v), **kw),
    "n": lambda v, **kw: dbus.Int16(int(v), **kw), "q": lambda v, **kw: dbus.UInt16(int(v), **kw),
    "y": lambda v, **kw: dbus.Byte(int(v), **kw), "d": lambda v, **kw: dbus.Double(float(v), **kw),
    "b": lambda v, **kw: dbus.Boolean(v in ("1", "true"), **kw),
}


class SettingsV1(dbus.service.Object):
    version = 1

    def __init__(self, conn, value):
        super().__init__(conn, PATH)
        self.type, self.raw = "u", str(value)
        self.traits = {}  # key -> function(variant_level) -> value
        self.notfound = False
        self.hidden = False
        self.reads = 0

    def value(self, variant_level):
        return TYPES[self.type](self.raw, variant_level=variant_level)

    def lookup(self, namespace, key, variant_level):
        self.reads += 1
        if self.hidden:
            raise Failure("org.freedesktop.DBus.Error.UnknownMethod", "No such interface " + IFACE)
        if namespace == NS and key in self.traits:
            return self.traits[key](variant_level)
        if namespace != NS or key != KEY or self.notfound:
            raise Failure("org.freedesktop.portal.Error.NotFound", "Requested setting not found")
        return self.value(variant_level)

    @dbus.service.method(IFACE, in_signature="ss", out_signature="v")
    def Read(self, namespace, key):
        # 1.16 wraps the value in a second variant; later portals kept that for compatibility.
        return self.lookup(namespace, key, 2)

    @dbus.service.signal(IFACE, signature="ssv")
    def SettingChanged(self, namespace, key, value):
        pass

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
    def Get(self, interface, prop):
        if interface == IFACE and prop == "version":
            return dbus.UInt32(self.version)
        raise Failure("org.freedesktop.DBus.Error.UnknownProperty", "No such property " + prop)

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"version": dbus.UInt32(self.version)} if interface == IFACE else {}


class SettingsV2(SettingsV1):
    version = 2

    @dbus.service.method(IFACE, in_signature="ss", out_signature="v")
    def ReadOne(self, namespace, key):
        return self.lookup(namespace, key, 1)

    @dbus.service.method(IFACE, in_signature="as", out_signature="a{sa{sv}}")
    def ReadAll(self, namespaces):
        if self.hidden:
            raise Failure("org.freedesktop.DBus.Error.UnknownMethod", "No such interface " + IFACE)
        values = {} if self.notfound else {KEY: self.value(1)}
        values.update({k: f(1) for k, f in self.traits.items()})
        return dbus.Dictionary({NS: dbus.Dictionary(values, signature="sv")}, signature="sa{sv}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", type=int, choices=(1, 2), default=2, help="portal Settings version")
    parser.add_argument("--value", type=int, default=0, help="initial color-scheme")
    parser.add_argument("--no-acquire", action="store_true", help="connect but do not own the name yet")
    parser.add_argument("--contrast", type=int, help="initial contrast trait (absent unless given)")
    parser.add_argument("--reduced-motion", type=int, help="initial reduced-motion trait (absent unless given)")
    parser.add_argument("--accent", help='initial accent-color "R G B" (absent unless given)')
    args = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    conn = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])
    settings = (SettingsV2 if args.version == 2 else SettingsV1)(conn, args.value)

    def accent_value(words):
        r, g, b = (float(w) for w in words)
        return lambda level: dbus.Struct((dbus.Double(r), dbus.Double(g), dbus.Double(b)), signature="ddd",
                                         variant_level=level)

    def typed(type_code, raw):
        TYPES[type_code](raw)  # validate before storing
        return lambda level: TYPES[type_code](raw, variant_level=level)

    if args.contrast is not None:
        settings.traits["contrast"] = typed("u", str(args.contrast))
    if args.reduced_motion is not None:
        settings.traits["reduced-motion"] = typed("u", str(args.reduced_motion))
    if args.accent is not None:
        settings.traits["accent-color"] = accent_value(args.accent.split())
    loop = GLib.MainLoop()

    def emit(namespace, key, value):
        settings.SettingChanged(namespace, key, value)

    def store(type_code, raw):
        TYPES[type_code](raw)  # validate before changing anything
        settings.type, settings.raw, settings.notfound = type_code, raw, False

    def run(words):
        cmd, rest = words[0], words[1:]
        if cmd in ("set", "store", "dup"):
            store("u", rest[0])
            for _ in range({"set": 1, "store": 0, "dup": 2}[cmd]):
                emit(NS, KEY, settings.value(1))
        elif cmd == "burst":
            store("u", rest[0])
            for _ in range(int(rest[1])):
                emit(NS, KEY, settings.value(1))
        elif cmd == "signal":
            emit(NS, KEY, dbus.UInt32(int(rest[0]), variant_level=1))
        elif cmd in ("set-type", "store-type"):
            store(rest[0], " ".join(rest[1:]))
            if cmd == "set-type":
                emit(NS, KEY, settings.value(1))
        elif cmd == "notfound":
            settings.notfound = True
        elif cmd == "no-settings":
            settings.hidden = True
        elif cmd == "settings":
            settings.hidden = False
        elif cmd == "gnome":
            names = {"0": "default", "1": "prefer-dark", "2": "prefer-light"}
            emit("org.gnome.desktop.interface", KEY, dbus.String(names.get(rest[0], rest[0]), variant_level=1))
        elif cmd == "other-key":
            emit(NS, "other-key", dbus.UInt32(int(rest[0]), variant_level=1))
        elif cmd in ("contrast", "motion", "accent", "trait-type", "unset"):
            key = {"contrast": "contrast", "motion": "reduced-motion", "accent": "accent-color"}.get(cmd, rest[0])
            if key not in ("contrast", "reduced-motion", "accent-color"):
                raise ValueError("unknown trait " + key)
            if cmd == "accent":
                settings.traits[key] = accent_value(rest)
            elif cmd == "trait-type":
                settings.traits[key] = typed(rest[1], " ".join(rest[2:]))
            elif cmd == "unset":
                settings.traits.pop(key, None)
            else:
                settings.traits[key] = typed("u", rest[0])
            value = settings.traits[key](1) if key in settings.traits else dbus.UInt32(0, variant_level=1)
            emit(NS, key, value)
        elif cmd == "reads":
            out("reads %d" % settings.reads)
        elif cmd == "release":
            conn.release_name(NAME)
        elif cmd == "acquire":
            own(conn, NAME)
        else:
            raise ValueError("unknown command " + cmd)

    serve_commands(conn, None if args.no_acquire else NAME, loop, run, out)


if __name__ == "__main__":
    main()
