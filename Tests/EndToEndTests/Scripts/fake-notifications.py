#!/usr/bin/python3
"""A stand-in org.freedesktop.Notifications for fault injection in tests.

Run with Debian's /usr/bin/python3 (python3-dbus, python3-gi). It connects to the bus at the address given as
its first argument (the test's private session bus), owns org.freedesktop.Notifications and serves
GetCapabilities, GetServerInformation, Notify and CloseNotification as the Desktop Notifications specification
says. Its signals (ActionInvoked, NotificationClosed) are broadcast, as some servers do (dunst sends them to the
notice's sender only). It prints what it is asked, one line each:

  notify {"id": N, "replaces": N, "app": "...", "summary": "...", "body": "...", "actions": [...], "timeout": N, "sender": "..."}
  close N                  CloseNotification(N) (the notice is gone; NotificationClosed(N, 3) is sent)

and is driven line by line on stdin; "ready" once the name is owned, then one "ok" (or "error <why>") per command,
after its effects are on the bus:

  invoke ID KEY            ActionInvoked(ID, KEY)
  closed ID REASON         NotificationClosed(ID, REASON) (1 expired, 2 dismissed by the user)
  odd ID                   ActionInvoked(ID, ID) and NotificationClosed("ID"): the wrong types
  forge DEST ID KEY        ActionInvoked(ID, KEY) sent to DEST from another connection (not the server)
  showing                  print "showing ID ID ..." (the notices open now)
  quit                     exit (also on end of stdin)

Modes (--mode): ok (default); no-actions (GetCapabilities has no "actions"); odd-notify (Notify answers a
string, not an id); odd-caps (GetCapabilities answers a number); refuse (Notify answers an error).
"""

import argparse
import json
import os
import sys

import dbus
import dbus.bus
import dbus.lowlevel
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stand_in import serve_commands, out  # noqa: E402

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
IFACE = "org.freedesktop.Notifications"


class Server(dbus.service.Object):
    def __init__(self, conn, mode):
        super().__init__(conn, PATH)
        self.mode = mode
        self.last = 0
        self.open = set()

    # No out_signature: the reply's is the value's own (odd modes answer with the wrong type).
    @dbus.service.method(IFACE, in_signature="")
    def GetCapabilities(self):
        if self.mode == "odd-caps":
            return dbus.UInt32(7)
        caps = ["body"] if self.mode == "no-actions" else ["actions", "body"]
        return dbus.Array(caps, signature="s")

    @dbus.service.method(IFACE, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("fake-notifications", "appearanced tests", "1", "1.2")

    @dbus.service.method(IFACE, in_signature="susssasa{sv}i", sender_keyword="sender")
    def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout, sender=None):
        if self.mode == "refuse":
            raise dbus.exceptions.DBusException("no notices today", name="org.freedesktop.DBus.Error.Failed")
        if replaces and replaces in self.open:
            nid = int(replaces)
        else:
            self.last += 1
            nid = self.last
        self.open.add(nid)
        out("notify " + json.dumps({"id": nid, "replaces": int(replaces), "app": str(app), "summary": str(summary),
                                    "body": str(body), "actions": [str(a) for a in actions], "timeout": int(timeout),
                                    "sender": str(sender)}))
        if self.mode == "odd-notify":
            return dbus.String("id-%d" % nid)
        return dbus.UInt32(nid)

    @dbus.service.method(IFACE, in_signature="u", out_signature="")
    def CloseNotification(self, nid):
        out("close %d" % nid)
        if nid in self.open:
            self.open.discard(nid)
            self.NotificationClosed(nid, 3)

    @dbus.service.signal(IFACE, signature="us")
    def ActionInvoked(self, nid, key):
        pass

    @dbus.service.signal(IFACE, signature="uu")
    def NotificationClosed(self, nid, reason):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("address")
    parser.add_argument("--mode", choices=("ok", "no-actions", "odd-notify", "odd-caps", "refuse"), default="ok")
    args = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    conn = dbus.bus.BusConnection(args.address)
    server = Server(conn, args.mode)
    loop = GLib.MainLoop()

    def signal(member, signature, values, destination=None, via=conn):
        msg = dbus.lowlevel.SignalMessage(PATH, IFACE, member)
        if destination:
            msg.set_destination(destination)
        msg.append(*values, signature=signature)
        via.send_message(msg)
        via.flush()

    def run(words):
        cmd, rest = words[0], words[1:]
        if cmd == "invoke":
            signal("ActionInvoked", "us", [dbus.UInt32(int(rest[0])), rest[1]])
        elif cmd == "closed":
            nid = int(rest[0])
            server.open.discard(nid)
            signal("NotificationClosed", "uu", [dbus.UInt32(nid), dbus.UInt32(int(rest[1]))])
        elif cmd == "odd":
            signal("ActionInvoked", "uu", [dbus.UInt32(int(rest[0])), dbus.UInt32(int(rest[0]))])
            signal("NotificationClosed", "s", [rest[0]])
        elif cmd == "forge":
            other = dbus.bus.BusConnection(args.address)
            signal("ActionInvoked", "us", [dbus.UInt32(int(rest[1])), rest[2]], destination=rest[0], via=other)
            other.close()
        elif cmd == "showing":
            out("showing" + "".join(" %d" % n for n in sorted(server.open)))
        else:
            raise ValueError("unknown command " + cmd)

    serve_commands(conn, NAME, loop, run, out)


if __name__ == "__main__":
    main()
