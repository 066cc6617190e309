#!/usr/bin/env python3
"""A GTK 4 window that follows appearanced live, on the Python client (pip install ./clients/python).

    python3 examples/python/gtk_follow.py [--app ID]

The window turns dark or light with appearanced's mode (GTK's prefer-dark setting) and says which; its button
toggles the mode. With --app, it follows that app's own mode (`appearancectl set dark --app ID`). It also
prints the mode it applied, one line per change, for scripts and the tests. The watch runs in a thread of its
own and hands each state to GTK's main loop; it follows the daemon across restarts.

Needs PyGObject and GTK 4 (Debian: python3-gi gir1.2-gtk-4.0).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Optional

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import GLib, Gtk  # noqa: E402

import appearanced  # noqa: E402


class FollowWindow:
    def __init__(self, app: Optional[str], loop: GLib.MainLoop) -> None:
        self.app = app
        self.loop = loop
        self.settings = Gtk.Settings.get_default()
        self.window = Gtk.Window(title="appearanced" + (f" ({app})" if app else ""))
        self.window.set_default_size(360, 160)
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=12)
        for side in ("top", "bottom", "start", "end"):
            getattr(box, f"set_margin_{side}")(24)
        self.label = Gtk.Label(label="Asking appearanced…")
        button = Gtk.Button(label="Toggle")
        button.connect("clicked", self.on_toggle)
        box.append(self.label)
        box.append(button)
        self.window.set_child(box)
        self.window.connect("close-request", self.on_close)
        self.status = 0
        self.watch = appearanced.watch(app)
        threading.Thread(target=self.follow, daemon=True).start()
        self.window.present()

    def follow(self) -> None:
        """The watch's thread: each state goes to the main loop, where GTK may be touched."""
        try:
            for state in self.watch:
                GLib.idle_add(self.apply, state["mode"])
        except appearanced.Error as e:
            GLib.idle_add(self.fail, str(e))

    def apply(self, mode: str) -> bool:
        self.settings.props.gtk_application_prefer_dark_theme = mode == "dark"
        self.label.set_text(f"The UI is {mode}.")
        applied = "dark" if self.settings.props.gtk_application_prefer_dark_theme else "light"
        print(applied, flush=True)
        return False  # GLib.SOURCE_REMOVE: run once

    def fail(self, message: str) -> bool:
        print(message, file=sys.stderr, flush=True)
        self.status = 1
        self.quit()
        return False  # GLib.SOURCE_REMOVE: run once

    def on_toggle(self, _button: Gtk.Button) -> None:
        # Off the main loop: a request waits for the daemon (4 s at most).
        def toggle() -> None:
            try:
                appearanced.toggle(self.app)
            except appearanced.Error as e:
                GLib.idle_add(self.label.set_text, str(e))

        threading.Thread(target=toggle, daemon=True).start()

    def on_close(self, _window: Gtk.Window) -> bool:
        self.quit()
        return False

    def quit(self) -> bool:
        self.watch.close()  # ends the watch's thread, wherever it waits
        self.loop.quit()
        return False  # GLib.SOURCE_REMOVE: run once


def main() -> int:
    parser = argparse.ArgumentParser(description="A GTK 4 window that follows appearanced.")
    parser.add_argument("--app", help="follow this app's own mode")
    args = parser.parse_args()
    loop = GLib.MainLoop()
    window = FollowWindow(args.app, loop)
    for sig in (signal.SIGINT, signal.SIGTERM):
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, sig, window.quit)
    loop.run()
    return window.status


if __name__ == "__main__":
    sys.exit(main())
