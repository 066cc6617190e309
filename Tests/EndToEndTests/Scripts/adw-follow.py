# A real libadwaita app, as far as its style goes: prints "dark" or "light" now and on every change of
# Adw.StyleManager's `dark`, which libadwaita takes from the XDG desktop portal's color-scheme.
# Run with Debian's /usr/bin/python3 (python3-gi, gir1.2-adw-1) on a GTK 4 broadway display.
import gi

gi.require_version("Adw", "1")
gi.require_version("Gtk", "4.0")
from gi.repository import Adw, GLib

Adw.init()
manager = Adw.StyleManager.get_default()


def show(*_args):
    print("dark" if manager.get_dark() else "light", flush=True)


show()
manager.connect("notify::dark", show)
GLib.MainLoop().run()
