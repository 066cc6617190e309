#!/usr/bin/python3
"""A fake org.freedesktop.GeoClue2 for fault injection in tests.

Run with Debian's /usr/bin/python3 (python3-dbus, python3-gi). It connects to the bus at the address given
as its first argument (the test's private "system" bus), owns org.freedesktop.GeoClue2 and serves the
Manager (GetClient, CreateClient, DeleteClient), clients (DesktopId, RequestedAccuracyLevel, DistanceThreshold,
TimeThreshold, Location, Active; Start, Stop; LocationUpdated) and Location objects (Latitude, Longitude,
Accuracy, Timestamp, ...), as GeoClue 2 does. Driven line by line on stdin; "ready" once the name is owned,
then one "ok" (or "error <why>") per command, after its effects are on the bus:

  fix LAT LON [SECONDS]  a new Location object; every started client gets LocationUpdated(old, new)
  storm N LAT LON LAT2 LON2  N fixes one after the other, alternating between the two places
  props                  print "prop NAME VALUE" for each property of the last client made
  clients                print "clients N": clients made so far
  quit                   exit (also on end of stdin)

Modes (--mode): ok (default); deny (Start answers AccessDenied as GeoClue does without an agent);
disabled (Start answers AccessDenied as GeoClue does when the user turned location off); silent (GetClient
is never answered).
"""

import argparse
import os
import sys

import dbus
import dbus.bus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stand_in import serve_commands, out, Failure  # noqa: E402

NAME = "org.freedesktop.GeoClue2"
MANAGER = "org.freedesktop.GeoClue2.Manager"
CLIENT = "org.freedesktop.GeoClue2.Client"
LOCATION = "org.freedesktop.GeoClue2.Location"
PROPS = dbus.PROPERTIES_IFACE


class Props(dbus.service.Object):
    """An object whose properties of `interface` are `values`, read with Get and GetAll."""
    interface = None

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, prop):
        if interface != self.interface or prop not in self.values:
            raise Failure("org.freedesktop.DBus.Error.UnknownProperty", "No such property " + prop)
        return self.values[prop]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return dbus.Dictionary(self.values if interface == self.interface else {}, signature="sv")


class Location(Props):
    interface = LOCATION

    def __init__(self, conn, path, lat, lon, seconds):
        super().__init__(conn, path)
        self.values = {
            "Latitude": dbus.Double(lat), "Longitude": dbus.Double(lon), "Accuracy": dbus.Double(25000.0),
            "Altitude": dbus.Double(-1.7976931348623157e308), "Speed": dbus.Double(-1.0), "Heading": dbus.Double(-1.0),
            "Description": dbus.String(""),
            "Timestamp": dbus.Struct((dbus.UInt64(seconds), dbus.UInt64(0)), signature="tt"),
        }


class Client(Props):
    interface = CLIENT

    def __init__(self, conn, path, owner, mode):
        super().__init__(conn, path)
        self.owner, self.mode = owner, mode
        self.values = {
            "Location": dbus.ObjectPath("/"), "DistanceThreshold": dbus.UInt32(0), "TimeThreshold": dbus.UInt32(0),
            "DesktopId": dbus.String(""), "RequestedAccuracyLevel": dbus.UInt32(0), "Active": dbus.Boolean(False),
        }
        self.started = False

    @dbus.service.method(CLIENT, in_signature="", out_signature="")
    def Start(self):
        if self.mode[0] == "deny":
            raise Failure("org.freedesktop.DBus.Error.AccessDenied",
                          "'%s' disallowed, no agent for UID %d" % (self.values["DesktopId"], os.getuid()))
        if self.mode[0] == "disabled":
            raise Failure("org.freedesktop.DBus.Error.AccessDenied", "Geolocation disabled for UID %d" % os.getuid())
        self.started = True
        self.values["Active"] = dbus.Boolean(True)

    @dbus.service.method(CLIENT, in_signature="", out_signature="")
    def Stop(self):
        self.started = False
        self.values["Active"] = dbus.Boolean(False)

    @dbus.service.signal(CLIENT, signature="oo")
    def LocationUpdated(self, old, new):
        pass

    @dbus.service.method(PROPS, in_signature="ssv", out_signature="")
    def Set(self, interface, prop, value):
        writable = {"DistanceThreshold": dbus.UInt32, "TimeThreshold": dbus.UInt32, "DesktopId": dbus.String,
                    "RequestedAccuracyLevel": dbus.UInt32}
        if interface != CLIENT or prop not in writable:
            raise Failure("org.freedesktop.DBus.Error.PropertyReadOnly", "Property " + prop + " is not writable")
        self.values[prop] = writable[prop](value)


class Manager(dbus.service.Object):
    def __init__(self, conn, mode):
        super().__init__(conn, "/org/freedesktop/GeoClue2/Manager")
        self.conn, self.mode = conn, mode
        self.clients = []
        self.made = 0

    def make(self, sender):
        self.made += 1
        path = "/org/freedesktop/GeoClue2/Client/%d" % self.made
        client = Client(self.conn, path, sender, self.mode)
        self.clients.append(client)
        return dbus.ObjectPath(path)

    @dbus.service.method(MANAGER, in_signature="", out_signature="o", sender_keyword="sender",
                         async_callbacks=("reply", "fail"))
    def GetClient(self, sender=None, reply=None, fail=None):
        if self.mode[0] == "silent":
            return  # never answered
        reply(self.make(sender))

    @dbus.service.method(MANAGER, in_signature="", out_signature="o", sender_keyword="sender")
    def CreateClient(self, sender=None):
        return self.make(sender)

    @dbus.service.method(MANAGER, in_signature="o", out_signature="")
    def DeleteClient(self, path):
        for client in [c for c in self.clients if c.__dbus_object_path__ == path]:
            client.started = False
            client.remove_from_connection()
            self.clients.remove(client)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("address")
    parser.add_argument("--mode", choices=("ok", "deny", "disabled", "silent"), default="ok")
    args = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    conn = dbus.bus.BusConnection(args.address)
    mode = [args.mode]
    manager = Manager(conn, mode)
    locations = []
    loop = GLib.MainLoop()

    def run(words):
        cmd, rest = words[0], words[1:]
        if cmd == "fix":
            seconds = int(rest[2]) if len(rest) > 2 else int(GLib.get_real_time() // 1000000)
            path = "/org/freedesktop/GeoClue2/Location/%d" % (len(locations) + 1)
            locations.append(Location(conn, path, float(rest[0]), float(rest[1]), seconds))
            for c in manager.clients:
                if c.started:
                    old = c.values["Location"]
                    c.values["Location"] = dbus.ObjectPath(path)
                    c.LocationUpdated(old, dbus.ObjectPath(path))
        elif cmd == "storm":
            for i in range(int(rest[0])):
                run(["fix", rest[1], rest[2]] if i % 2 == 0 else ["fix", rest[3], rest[4]])
        elif cmd == "props":
            if not manager.clients:
                raise ValueError("no client yet")
            for k, v in sorted(manager.clients[-1].values.items()):
                out("prop %s %s" % (k, v))
        elif cmd == "clients":
            out("clients %d" % len(manager.clients))
        else:
            raise ValueError("unknown command " + cmd)

    serve_commands(conn, NAME, loop, run, out)


if __name__ == "__main__":
    main()
