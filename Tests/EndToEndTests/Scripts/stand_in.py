"""What the project's D-Bus stand-ins (fake-geoclue.py, fake-notifications.py, fake-sensors.py and
Tests/Support/fake-portal.py) share: own their bus name, then take commands from stdin, a line each, answering
"ok" (or "error <why>") once a command's effects are on the bus.
"""
import os
import sys

import dbus.bus
import dbus.exceptions
from gi.repository import GLib


def own(conn, name):
    """Owns `name` on `conn`, refusing to queue behind another owner."""
    result = conn.request_name(name, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
    if result not in (dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER, dbus.bus.REQUEST_NAME_REPLY_ALREADY_OWNER):
        raise RuntimeError("could not own %s (request_name answered %d)" % (name, result))


def serve_commands(conn, name, loop, run, out):
    """Owns `name` on `conn` (None: not yet), prints "ready", and runs `loop` with each line of stdin given to
    `run` as its words, but "quit", which ends the loop as the end of stdin does."""
    pending = b""

    def on_stdin(fd, condition):
        nonlocal pending
        data = os.read(fd, 4096)
        if not data:
            loop.quit()
            return False
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            words = line.decode().split()
            if not words:
                continue
            try:
                if words[0] == "quit":  # every stand-in's command: exit (as on end of stdin)
                    loop.quit()
                else:
                    run(words)
                conn.flush()  # the command's signals are on the bus before the test hears "ok"
                out("ok")
            except Exception as e:  # report and keep serving: the test decides what a failure means
                out("error %s" % e)
        return True

    if name is not None:
        own(conn, name)
    GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_stdin)
    out("ready")
    loop.run()


def out(line):
    """One line to the test, at once."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class Failure(dbus.exceptions.DBusException):
    """An error answer with the real service's name and text."""
    def __init__(self, name, text):
        super().__init__(text, name=name)
