#!/usr/bin/python3
"""Stand-ins for iio-sensor-proxy (light), UPower (power) and systemd-logind (login), for fault injection in tests.

`fake-sensors.py ADDRESS --service SERVICE` (Debian's /usr/bin/python3 with python3-dbus, python3-gi), one process
per service so that a test can stop one and start it again. On the bus at ADDRESS (the test's private "system" bus)
it owns the service's real name and serves its real paths, interfaces, property types, signals and error names;
a property change is sent as PropertiesChanged(interface, {changed}, []). Stand_in.py's command loop: "ready",
then "ok" (or "error <why>") per stdin line, once its effects are on the bus. Every service takes:

  raw [OBJECT.]PROP TYPE VALUE  set PROP to VALUE of type TYPE (b d s u i t x o: "nan", "-inf", "-5" for d;
                         yes/no/true/false/1/0 for b; s takes the rest of the line, maybe empty) and send it at
                         once, whatever the claims (bad-value tests). On the main object unless OBJECT says (light:
                         proxy, compass; power: upower, display, battery, ac; login: session, user, manager);
                         an unknown PROP is added.
  quit                   exit (also on end of stdin)

--service light: net.hadess.SensorProxy at /net/hadess/SensorProxy and .../Compass, as iio-sensor-proxy 3.0.
Claims are per sender (a second claim, or a release without one, succeeds and changes nothing; a sender that
leaves loses its claims). LightLevel and LightLevelUnit follow the sensor only while a light claim is held: the
first claim takes a reading after its reply; a reading that changes nothing sends nothing. Until then LightLevel
is 0 and the unit "lux", unless --level/--unit say the sensor had been read.
  light LUX              the sensor's reading: sent while claimed, else kept for the next claim
  unit lux|vendor        the sensor's unit, like a reading
  flood N LUX1 LUX2      N readings, alternating between LUX1 and LUX2
  has-light yes|no       the sensor appears (HasAmbientLight with the unit and level, then a reading if claimed)
                         or goes (HasAmbientLight false, light claims dropped; the real proxy would also exit)
  claims                 print "claims N": the clients holding a light claim now
Options: --no-light (no sensor at start), --level LUX, --unit lux|vendor.

--service power: org.freedesktop.UPower as UPower 0.99.20, with devices line_power_AC, battery_BAT0 and
DisplayDevice (every property of 0.99.20's org.freedesktop.UPower.Device).
  battery yes|no         on battery or mains: the AC's Online, the battery's and DisplayDevice's State (2
                         discharging, 1 charging), TimeToEmpty, TimeToFull, then OnBattery, each sent
  lid open|closed        LidIsClosed (LidIsPresent true from then on)
Options: --on-battery, --lid (a lid, open).

--service login: org.freedesktop.login1 as systemd-logind 252: the manager, the user (this process's uid) and one
session, id "31" at session/_331 (escaped as sd-bus does: a leading digit, like any byte but a-z, A-Z, 0-9, as
_XX). user/self, session/self and session/auto answer as those (signals only on the real paths); other paths
under session/, user/, seat/ answer UnknownObject. Inhibit hands out a pipe's writing end: the inhibitor lasts
until every copy is closed, with BlockInhibited/DelayInhibited following. SetIdleHint and SetLockedHint refuse
another uid (AccessDenied), SetIdleHint a non-graphical session (NotSupported). Unlisted methods: UnknownMethod.
  idle yes|no [USEC]     IdleHint, IdleSinceHint (USEC, or now) and ...Monotonic on session, user and manager
  locked yes|no          the session's LockedHint
  lock | unlock          the session's Lock / Unlock signal only
  active yes|no          the session's Active (and State active/online)
  sleep | resume         PrepareForSleep(true/false) (and PreparingForSleep)
  inhibitors             print 'inhibitor WHAT MODE "WHO" "WHY"' (JSON strings) per inhibitor, then "inhibitors N"
Options: --session-id ID; --no-display (no display session: User.Display ("", "/"), the session of class
"background", type "unspecified"); --no-pid-session (GetSessionByPID and session/self answer NoSessionForPID, as
for a process of the user's systemd --user services; by default every pid is in the session).
"""

import argparse
import json
import os
import pwd
import sys
import time
import xml.etree.ElementTree as ET

import dbus
import dbus.bus
import dbus.lowlevel
import dbus.mainloop.glib
import dbus.service
import dbus.types
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stand_in import serve_commands, out, Failure  # noqa: E402

PROPS = dbus.PROPERTIES_IFACE
# An unknown method's error without dbus-python's traceback in it, as the real services answer.
dbus.exceptions.UnknownMethodException.include_traceback = False
INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"


def typed(sig, value):
    """`value` as the dbus-python type of D-Bus signature `sig`, so that it is sent as that type."""
    simple = {"b": dbus.Boolean, "d": dbus.Double, "s": dbus.String, "u": dbus.UInt32, "i": dbus.Int32,
              "t": dbus.UInt64, "x": dbus.Int64, "o": dbus.ObjectPath, "y": dbus.Byte, "n": dbus.Int16,
              "q": dbus.UInt16}
    if sig in simple:
        return simple[sig](value)
    # Members typed one by one: in a variant, dbus-python guesses a struct's or an array's members' types
    # from their Python types, whatever signature the container was given.
    if sig.startswith("("):
        return dbus.Struct(tuple(typed(t, v) for t, v in zip(dbus.Signature(sig[1:-1]), value)), signature=sig[1:-1])
    if sig.startswith("a"):
        return dbus.Array([typed(sig[1:], v) for v in value], signature=sig[1:])
    raise ValueError("no type %s" % sig)


def parse_raw(sig, words):
    """A `raw` command's VALUE (the words after TYPE) as a value of D-Bus type `sig`."""
    if sig == "s":
        return dbus.String(" ".join(words))
    if len(words) != 1:
        raise ValueError("raw: one VALUE for type %s" % sig)
    text = words[0]
    if sig == "b":
        if text.lower() not in ("yes", "no", "true", "false", "1", "0"):
            raise ValueError("raw: %s is not a boolean" % text)
        return dbus.Boolean(text.lower() in ("yes", "true", "1"))
    if sig == "d":
        return dbus.Double(float(text))
    if sig in ("u", "i", "t", "x"):
        return typed(sig, int(text))  # out of range: OverflowError, answered as an error
    if sig == "o":
        return dbus.ObjectPath(text)
    raise ValueError("raw: TYPE is one of b d s u i t x o, not %s" % sig)


def yes_no(word):
    if word not in ("yes", "no"):
        raise ValueError("yes or no, not %s" % word)
    return word == "yes"


def now_usec():
    return int(time.time() * 1000000)


def monotonic_usec():
    return int(time.monotonic() * 1000000)


class Served(dbus.service.Object):
    """An object whose properties live in `props` (interface -> name -> value, each of its declared type) and
    whose signals are sent on its own path only (also when it is exported at convenience paths too). Get,
    GetAll and Set answer as `style` does: GDBus's ("gdbus": iio-sensor-proxy, UPower) or sd-bus's ("sdbus":
    logind). Introspect adds the properties and the signals that dbus-python does not know of."""
    SUPPORTS_MULTIPLE_OBJECT_PATHS = True

    def __init__(self, conn, path, style, aliases=()):
        super().__init__(conn, path)
        for alias in aliases:
            self.add_to_connection(conn, alias)
        self.conn, self.path, self.style = conn, path, style
        self.props, self.types, self.signals = {}, {}, {}
        self.writable = {}  # interface -> name -> function(value) for writable properties
        self.signal(PROPS, "PropertiesChanged", "sa{sv}as")

    def declare(self, interface, name, sig, value):
        self.props.setdefault(interface, {})[name] = typed(sig, value)
        self.types.setdefault(interface, {})[name] = sig

    def signal(self, interface, name, sig):
        self.signals.setdefault(interface, []).append((name, sig))

    def emit(self, interface, member, sig, *args):
        msg = dbus.lowlevel.SignalMessage(self.path, interface, member)
        if sig:
            msg.append(*args, signature=sig)
        self.conn.send_message(msg)

    def change(self, interface, values):
        """Sets the properties in `values` (name -> value, of their types already) and sends PropertiesChanged."""
        self.props.setdefault(interface, {}).update(values)
        self.emit(PROPS, "PropertiesChanged", "sa{sv}as", interface, dbus.Dictionary(values, signature="sv"),
                  dbus.Array([], signature="s"))

    def update(self, interface, **values):
        """Sets properties by name to plain values (typed as declared) and sends PropertiesChanged."""
        self.change(interface, {k: typed(self.types[interface][k], v) for k, v in values.items()})

    def _unknown(self, interface, prop):
        if self.style == "sdbus":
            return Failure("org.freedesktop.DBus.Error.UnknownProperty",
                           "Unknown interface %s or property %s." % (interface, prop))
        if interface not in self.props:
            return Failure(INVALID_ARGS, "No such interface \u201c%s\u201d" % interface)
        return Failure(INVALID_ARGS, "No such property \u201c%s\u201d" % prop)

    def check_path(self, object_path):
        """Raises what the real service answers on a convenience path that does not lead anywhere for the caller."""

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v", path_keyword="object_path")
    def Get(self, interface, prop, object_path=None):
        self.check_path(object_path)
        if prop not in self.props.get(interface, {}):
            raise self._unknown(interface, prop)
        return self.props[interface][prop]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}", path_keyword="object_path")
    def GetAll(self, interface, object_path=None):
        self.check_path(object_path)
        if interface == "" and self.style == "sdbus":
            merged = {}
            for values in self.props.values():
                merged.update(values)
            return dbus.Dictionary(merged, signature="sv")
        if interface not in self.props:
            if self.style == "sdbus":
                raise Failure("org.freedesktop.DBus.Error.UnknownInterface", "Unknown interface '%s'." % interface)
            raise Failure(INVALID_ARGS, "No such interface \u201c%s\u201d" % interface)
        return dbus.Dictionary(self.props[interface], signature="sv")

    @dbus.service.method(PROPS, in_signature="ssv", out_signature="", path_keyword="object_path")
    def Set(self, interface, prop, value, object_path=None):
        self.check_path(object_path)
        if prop not in self.props.get(interface, {}):
            raise self._unknown(interface, prop)
        setter = self.writable.get(interface, {}).get(prop)
        if setter is None:
            if self.style == "sdbus":
                raise Failure("org.freedesktop.DBus.Error.PropertyReadOnly", "Property '%s' is not writable." % prop)
            raise Failure(INVALID_ARGS, "Property \u201c%s\u201d is not writable" % prop)
        setter(value)

    @dbus.service.method(dbus.INTROSPECTABLE_IFACE, in_signature="", out_signature="s",
                         path_keyword="object_path", connection_keyword="connection")
    def Introspect(self, object_path, connection):
        text = dbus.service.Object.Introspect(self, object_path, connection)
        head, _, body = text.partition("<node")
        root = ET.fromstring("<node" + body)
        faces = {f.get("name"): f for f in root.findall("interface")}
        for interface in list(self.types) + list(self.signals):
            if interface not in faces:
                faces[interface] = ET.SubElement(root, "interface", name=interface)
        for interface, names in self.types.items():
            for name, sig in names.items():
                access = "readwrite" if name in self.writable.get(interface, {}) else "read"
                ET.SubElement(faces[interface], "property", name=name, type=sig, access=access)
        for interface, signals in self.signals.items():
            for name, sig in signals:
                element = ET.SubElement(faces[interface], "signal", name=name)
                for arg in dbus.Signature(sig):
                    ET.SubElement(element, "arg", type=arg)
        # Child nodes after the interfaces, as dbus-python and GDBus put them.
        for node in root.findall("node"):
            root.remove(node)
            root.append(node)
        ET.indent(root)
        return head + ET.tostring(root, encoding="unicode") + "\n"


# --- light: iio-sensor-proxy -------------------------------------------------------------------------------

PROXY = "net.hadess.SensorProxy"
PROXY_PATH = "/net/hadess/SensorProxy"
COMPASS = "net.hadess.SensorProxy.Compass"
COMPASS_PATH = "/net/hadess/SensorProxy/Compass"


class Claims:
    """Who holds a claim on each sensor, released when the holder leaves the bus."""

    def __init__(self, conn, on_first):
        self.conn, self.on_first = conn, on_first
        self.holders = {}  # sensor -> {sender: name watch}

    def claim(self, sensor, sender):
        held = self.holders.setdefault(sensor, {})
        if sender in held:
            return  # the real proxy answers a second claim with success and changes nothing
        held[sender] = self.conn.watch_name_owner(sender, lambda owner: owner or self.gone(sender))
        if len(held) == 1:
            # After the reply, as the real proxy's first reading comes once its driver polls.
            GLib.idle_add(lambda: self.on_first(sensor) and False)

    def release(self, sensor, sender):
        watch = self.holders.get(sensor, {}).pop(sender, None)
        if watch is not None:
            watch.cancel()

    def gone(self, sender):
        for sensor in list(self.holders):
            self.release(sensor, sender)

    def drop(self, sensor):
        for sender in list(self.holders.get(sensor, {})):
            self.release(sensor, sender)

    def count(self, sensor):
        return len(self.holders.get(sensor, {}))


def claim_methods(interface, name, sensor):
    """The methods ClaimNAME and ReleaseNAME of `interface`, which claim and release `sensor` for their caller."""
    def claim(self, sender=None):
        self.claims.claim(sensor, sender)

    def release(self, sender=None):
        self.claims.release(sensor, sender)

    claim.__name__, release.__name__ = "Claim" + name, "Release" + name
    method = dbus.service.method(interface, in_signature="", out_signature="", sender_keyword="sender")
    return method(claim), method(release)


class SensorProxy(Served):
    def __init__(self, conn, args):
        super().__init__(conn, PROXY_PATH, "gdbus")
        self.declare(PROXY, "HasAccelerometer", "b", False)
        self.declare(PROXY, "AccelerometerOrientation", "s", "undefined")
        self.declare(PROXY, "HasAmbientLight", "b", not args.no_light)
        self.declare(PROXY, "LightLevelUnit", "s", args.unit or "lux")
        self.declare(PROXY, "LightLevel", "d", args.level if args.level is not None else 0.0)
        self.declare(PROXY, "HasProximity", "b", False)
        self.declare(PROXY, "ProximityNear", "b", False)
        self.claims = Claims(conn, self.first_claim)
        # The sensor's own state, which the properties follow while it is claimed.
        self.sensor_level = float(args.level) if args.level is not None else 0.0
        self.sensor_unit = args.unit or "lux"

    def has_light(self):
        return bool(self.props[PROXY]["HasAmbientLight"])

    def reading(self):
        """A reading from the sensor: applied and sent if the light is claimed and it changes something."""
        if not self.has_light() or self.claims.count("light") == 0:
            return
        values = self.props[PROXY]
        if values["LightLevel"] != self.sensor_level or values["LightLevelUnit"] != self.sensor_unit:
            self.change(PROXY, {"LightLevelUnit": dbus.String(self.sensor_unit),
                                "LightLevel": dbus.Double(self.sensor_level)})

    def first_claim(self, sensor):
        if sensor == "light":
            self.reading()
            self.conn.flush()

    def set_has_light(self, present):
        if present == self.has_light():
            return
        if present:
            values = self.props[PROXY]
            self.change(PROXY, {"HasAmbientLight": dbus.Boolean(True), "LightLevelUnit": values["LightLevelUnit"],
                                "LightLevel": values["LightLevel"]})
            self.reading()
        else:
            self.claims.drop("light")
            self.change(PROXY, {"HasAmbientLight": dbus.Boolean(False)})

    ClaimAccelerometer, ReleaseAccelerometer = claim_methods(PROXY, "Accelerometer", "accel")
    ClaimLight, ReleaseLight = claim_methods(PROXY, "Light", "light")
    ClaimProximity, ReleaseProximity = claim_methods(PROXY, "Proximity", "proximity")


class Compass(Served):
    def __init__(self, conn, claims):
        super().__init__(conn, COMPASS_PATH, "gdbus")
        self.claims = claims
        self.declare(COMPASS, "HasCompass", "b", False)
        self.declare(COMPASS, "CompassHeading", "d", 0.0)

    ClaimCompass, ReleaseCompass = claim_methods(COMPASS, "Compass", "compass")


def light_service(conn, args):
    proxy = SensorProxy(conn, args)
    compass = Compass(conn, proxy.claims)
    objects = {"proxy": proxy, "compass": compass}

    def run(cmd, rest):
        if cmd == "light":
            proxy.sensor_level = float(rest[0])
            proxy.reading()
        elif cmd == "unit":
            if rest[0] not in ("lux", "vendor"):
                raise ValueError("unit lux or vendor, not %s" % rest[0])
            proxy.sensor_unit = rest[0]
            proxy.reading()
        elif cmd == "flood":
            for i in range(int(rest[0])):
                proxy.sensor_level = float(rest[1] if i % 2 == 0 else rest[2])
                proxy.reading()
        elif cmd == "has-light":
            proxy.set_has_light(yes_no(rest[0]))
        elif cmd == "claims":
            out("claims %d" % proxy.claims.count("light"))
        else:
            return False
        return True

    return PROXY, objects, "proxy", run


# --- power: UPower ---------------------------------------------------------------------------------------

UPOWER = "org.freedesktop.UPower"
UPOWER_PATH = "/org/freedesktop/UPower"
DEVICE = "org.freedesktop.UPower.Device"
DEVICES = UPOWER_PATH + "/devices/"

# Device.Type: 1 line power, 2 battery; State: 1 charging, 2 discharging.
DEVICE_PROPS = [
    ("NativePath", "s"), ("Vendor", "s"), ("Model", "s"), ("Serial", "s"), ("UpdateTime", "t"), ("Type", "u"),
    ("PowerSupply", "b"), ("HasHistory", "b"), ("HasStatistics", "b"), ("Online", "b"), ("Energy", "d"),
    ("EnergyEmpty", "d"), ("EnergyFull", "d"), ("EnergyFullDesign", "d"), ("EnergyRate", "d"), ("Voltage", "d"),
    ("ChargeCycles", "i"), ("Luminosity", "d"), ("TimeToEmpty", "x"), ("TimeToFull", "x"), ("Percentage", "d"),
    ("Temperature", "d"), ("IsPresent", "b"), ("State", "u"), ("IsRechargeable", "b"), ("Capacity", "d"),
    ("Technology", "u"), ("WarningLevel", "u"), ("BatteryLevel", "u"), ("IconName", "s"),
]


class Device(Served):
    def __init__(self, conn, name, values):
        super().__init__(conn, DEVICES + name, "gdbus")
        defaults = {"s": "", "t": 0, "u": 0, "b": False, "d": 0.0, "i": 0, "x": 0}
        for prop, sig in DEVICE_PROPS:
            self.declare(DEVICE, prop, sig, values.get(prop, defaults[sig]))

    @dbus.service.method(DEVICE, in_signature="", out_signature="")
    def Refresh(self):
        pass

    @dbus.service.method(DEVICE, in_signature="suu", out_signature="a(udu)")
    def GetHistory(self, kind, timespan, resolution):
        return dbus.Array([], signature="(udu)")

    @dbus.service.method(DEVICE, in_signature="s", out_signature="a(dd)")
    def GetStatistics(self, kind):
        return dbus.Array([], signature="(dd)")


class UPowerDaemon(Served):
    def __init__(self, conn, args):
        super().__init__(conn, UPOWER_PATH, "gdbus")
        self.declare(UPOWER, "DaemonVersion", "s", "0.99.20")
        self.declare(UPOWER, "OnBattery", "b", args.on_battery)
        self.declare(UPOWER, "LidIsClosed", "b", False)
        self.declare(UPOWER, "LidIsPresent", "b", args.lid)
        self.signal(UPOWER, "DeviceAdded", "o")
        self.signal(UPOWER, "DeviceRemoved", "o")
        self.devices = [dbus.ObjectPath(DEVICES + "line_power_AC"), dbus.ObjectPath(DEVICES + "battery_BAT0")]

    @dbus.service.method(UPOWER, in_signature="", out_signature="ao")
    def EnumerateDevices(self):
        return dbus.Array(self.devices, signature="o")

    @dbus.service.method(UPOWER, in_signature="", out_signature="o")
    def GetDisplayDevice(self):
        return dbus.ObjectPath(DEVICES + "DisplayDevice")

    @dbus.service.method(UPOWER, in_signature="", out_signature="s")
    def GetCriticalAction(self):
        return "PowerOff"


def battery_values(on_battery):
    return {"State": 2 if on_battery else 1, "TimeToEmpty": 3 * 3600 if on_battery else 0,
            "TimeToFull": 0 if on_battery else 1800}


def power_service(conn, args):
    upower = UPowerDaemon(conn, args)
    battery = dict(Type=2, PowerSupply=True, IsPresent=True, IsRechargeable=True, Percentage=80.0,
                   Energy=40.0, EnergyFull=50.0, EnergyFullDesign=55.0, EnergyRate=9.5, Voltage=12.1,
                   Capacity=90.9, Technology=1, WarningLevel=1, BatteryLevel=1, ChargeCycles=-1,
                   IconName="battery-full-symbolic", **battery_values(args.on_battery))
    objects = {
        "upower": upower,
        "ac": Device(conn, "line_power_AC", dict(NativePath="AC", Type=1, PowerSupply=True, Online=not args.on_battery,
                                                 IsPresent=False, BatteryLevel=0, IconName="ac-adapter-symbolic")),
        "battery": Device(conn, "battery_BAT0", dict(battery, NativePath="BAT0", Vendor="Stand-in",
                                                     Model="fake-sensors", Serial="31", HasHistory=True,
                                                     HasStatistics=True, UpdateTime=int(time.time()))),
        "display": Device(conn, "DisplayDevice", dict(battery, UpdateTime=int(time.time()))),
    }

    def run(cmd, rest):
        if cmd == "battery":
            on = yes_no(rest[0])
            objects["ac"].update(DEVICE, Online=not on)
            for name in ("battery", "display"):
                objects[name].update(DEVICE, **battery_values(on))
            upower.update(UPOWER, OnBattery=on)
        elif cmd == "lid":
            if rest[0] not in ("open", "closed"):
                raise ValueError("lid open or closed, not %s" % rest[0])
            changes = {"LidIsClosed": rest[0] == "closed"}
            if not upower.props[UPOWER]["LidIsPresent"]:
                changes["LidIsPresent"] = True
            upower.update(UPOWER, **changes)
        else:
            return False
        return True

    return UPOWER, objects, "upower", run


# --- login: systemd-logind ---------------------------------------------------------------------------------

LOGIN = "org.freedesktop.login1"
LOGIN_PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"
USER = "org.freedesktop.login1.User"
SESSION = "org.freedesktop.login1.Session"
LOGIN_ERROR = "org.freedesktop.login1."
IDLE_PROPS = ("IdleHint", "IdleSinceHint", "IdleSinceHintMonotonic")
INHIBIT_WHAT = ("shutdown", "sleep", "idle", "handle-power-key", "handle-suspend-key", "handle-hibernate-key",
                "handle-lid-switch", "handle-reboot-key")


def label_escape(text):
    """An object path label as sd-bus's bus_label_escape makes it: every byte but a-z, A-Z and (not first) 0-9
    as _XX (lower-case hex); "" as "_"."""
    if not text:
        return "_"
    escaped = ""
    for i, byte in enumerate(text.encode()):
        c = chr(byte)
        if (c.isascii() and c.isalpha()) or (i > 0 and c.isascii() and c.isdigit()):
            escaped += c
        else:
            escaped += "_%02x" % byte
    return escaped


class Login:
    """What logind knows: one user (this process's), one session, inhibitors, the idle state."""

    def __init__(self, conn, args):
        self.conn, self.args = conn, args
        self.uid = os.getuid()
        try:
            entry = pwd.getpwuid(self.uid)
            self.user_name, self.gid = entry.pw_name, entry.pw_gid
        except KeyError:
            self.user_name, self.gid = str(self.uid), os.getgid()
        self.session_id = args.session_id
        self.user_path = dbus.ObjectPath("%s/user/_%d" % (LOGIN_PATH, self.uid))
        self.session_path = dbus.ObjectPath("%s/session/%s" % (LOGIN_PATH, label_escape(self.session_id)))
        self.inhibitors = []  # [what, who, why, mode, uid, pid, fd]

    def no_session_for_caller(self):
        return Failure(LOGIN_ERROR + "NoSessionForPID", "Caller does not belong to any known session.")

    def resolve_session(self, name):
        """GetSession's answer for `name` (the caller is in the session unless --no-pid-session)."""
        if name == self.session_id:
            return self.session_path
        if name == "self":
            if self.args.no_pid_session:
                raise self.no_session_for_caller()
            return self.session_path
        if name == "auto":
            if self.args.no_pid_session and self.args.no_display:
                raise Failure(LOGIN_ERROR + "NoSessionForPID",
                              "Caller does not belong to any known session and doesn't own any suitable session.")
            return self.session_path
        raise Failure(LOGIN_ERROR + "NoSuchSession", "No session '%s' known" % name)


class LoginManager(Served):
    def __init__(self, conn, login):
        super().__init__(conn, LOGIN_PATH, "sdbus")
        self.login = login
        self.session = None  # set once made
        stamp, mono = now_usec(), monotonic_usec()
        for name, sig, value in [
                ("IdleHint", "b", False), ("IdleSinceHint", "t", stamp), ("IdleSinceHintMonotonic", "t", mono),
                ("BlockInhibited", "s", ""), ("DelayInhibited", "s", ""), ("InhibitDelayMaxUSec", "t", 5000000),
                ("PreparingForShutdown", "b", False), ("PreparingForSleep", "b", False), ("LidClosed", "b", False),
                ("Docked", "b", False), ("OnExternalPower", "b", True), ("NCurrentSessions", "t", 1),
                ("NCurrentInhibitors", "t", 0)]:
            self.declare(MANAGER, name, sig, value)
        for name, sig in [("SessionNew", "so"), ("SessionRemoved", "so"), ("UserNew", "uo"), ("UserRemoved", "uo"),
                          ("PrepareForShutdown", "b"), ("PrepareForSleep", "b")]:
            self.signal(MANAGER, name, sig)

    def caller_pid(self, sender):
        return int(self.conn.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                           "GetConnectionUnixProcessID", "s", (sender,)))

    @dbus.service.method(MANAGER, in_signature="s", out_signature="o")
    def GetSession(self, name):
        return self.login.resolve_session(name)

    @dbus.service.method(MANAGER, in_signature="u", out_signature="o")
    def GetSessionByPID(self, pid):
        if self.login.args.no_pid_session:
            if pid == 0:
                raise self.login.no_session_for_caller()
            raise Failure(LOGIN_ERROR + "NoSessionForPID", "PID %d does not belong to any known session" % pid)
        return self.login.session_path

    @dbus.service.method(MANAGER, in_signature="u", out_signature="o")
    def GetUser(self, uid):
        if uid != self.login.uid:
            raise Failure(LOGIN_ERROR + "NoSuchUser", "User ID %d is not logged in or lingering" % uid)
        return self.login.user_path

    @dbus.service.method(MANAGER, in_signature="u", out_signature="o", sender_keyword="sender")
    def GetUserByPID(self, pid, sender=None):
        if pid == 0:
            pid = self.caller_pid(sender)
        try:
            owner = os.stat("/proc/%d" % pid).st_uid
        except OSError:
            owner = None
        if owner != self.login.uid:
            raise Failure(LOGIN_ERROR + "NoUserForPID",
                          "PID %d does not belong to any logged in user or lingering user" % pid)
        return self.login.user_path

    @dbus.service.method(MANAGER, in_signature="", out_signature="a(susso)")
    def ListSessions(self):
        seat = self.session.props[SESSION]["Seat"][0]
        return dbus.Array([(self.login.session_id, dbus.UInt32(self.login.uid), self.login.user_name, seat,
                            self.login.session_path)], signature="(susso)")

    @dbus.service.method(MANAGER, in_signature="", out_signature="a(uso)")
    def ListUsers(self):
        return dbus.Array([(dbus.UInt32(self.login.uid), self.login.user_name, self.login.user_path)],
                          signature="(uso)")

    @dbus.service.method(MANAGER, in_signature="", out_signature="a(ssssuu)")
    def ListInhibitors(self):
        return dbus.Array([(w, who, why, mode, dbus.UInt32(uid), dbus.UInt32(pid))
                           for w, who, why, mode, uid, pid, _ in self.login.inhibitors], signature="(ssssuu)")

    @dbus.service.method(MANAGER, in_signature="ssss", out_signature="h", sender_keyword="sender")
    def Inhibit(self, what, who, why, mode, sender=None):
        if not what or any(w not in INHIBIT_WHAT for w in what.split(":")):
            raise Failure(INVALID_ARGS, "Invalid what specification %s" % what)
        if mode not in ("block", "delay"):
            raise Failure(INVALID_ARGS, "Invalid mode specification %s" % mode)
        if mode == "delay" and any(w not in ("shutdown", "sleep") for w in what.split(":")):
            raise Failure(INVALID_ARGS, "Delay inhibitors only supported for shutdown and sleep")
        # logind keeps the reading end of a FIFO and hands out the writing end: the lock lasts until every
        # copy of that is closed.
        reader, writer = os.pipe()
        entry = [what, who, why, mode, int(self.conn.get_unix_user(sender)), self.caller_pid(sender), reader]
        self.login.inhibitors.append(entry)

        def closed(fd, condition):
            self.login.inhibitors.remove(entry)
            os.close(fd)
            self.inhibited_changed()
            return False

        GLib.io_add_watch(reader, GLib.IO_HUP | GLib.IO_ERR, closed)
        self.inhibited_changed()
        fd = dbus.types.UnixFd(writer)
        os.close(writer)  # UnixFd holds its own duplicate
        return fd

    def inhibited_changed(self):
        block = sorted({w for e in self.login.inhibitors if e[3] == "block" for w in e[0].split(":")})
        delay = sorted({w for e in self.login.inhibitors if e[3] == "delay" for w in e[0].split(":")})
        values = self.props[MANAGER]
        values["NCurrentInhibitors"] = dbus.UInt64(len(self.login.inhibitors))  # EmitsChangedSignal false
        changes = {}
        if values["BlockInhibited"] != ":".join(block):
            changes["BlockInhibited"] = dbus.String(":".join(block))
        if values["DelayInhibited"] != ":".join(delay):
            changes["DelayInhibited"] = dbus.String(":".join(delay))
        if changes:
            self.change(MANAGER, changes)

    @dbus.service.method(MANAGER, in_signature="s", out_signature="")
    def LockSession(self, name):
        self.login.resolve_session(name)
        self.session.emit(SESSION, "Lock", "")

    @dbus.service.method(MANAGER, in_signature="s", out_signature="")
    def UnlockSession(self, name):
        self.login.resolve_session(name)
        self.session.emit(SESSION, "Unlock", "")

    @dbus.service.method(MANAGER, in_signature="", out_signature="")
    def LockSessions(self):
        self.session.emit(SESSION, "Lock", "")

    @dbus.service.method(MANAGER, in_signature="", out_signature="")
    def UnlockSessions(self):
        self.session.emit(SESSION, "Unlock", "")


class LoginUser(Served):
    def __init__(self, conn, login):
        super().__init__(conn, login.user_path, "sdbus", aliases=[LOGIN_PATH + "/user/self"])
        no_display = login.args.no_display
        stamp, mono = now_usec(), monotonic_usec()
        for name, sig, value in [
                ("UID", "u", login.uid), ("GID", "u", login.gid), ("Name", "s", login.user_name),
                ("Timestamp", "t", stamp), ("TimestampMonotonic", "t", mono),
                ("RuntimePath", "s", "/run/user/%d" % login.uid), ("Service", "s", "user@%d.service" % login.uid),
                ("Slice", "s", "user-%d.slice" % login.uid),
                ("Display", "(so)", ("", "/") if no_display else (login.session_id, login.session_path)),
                ("State", "s", "online" if no_display else "active"),
                ("Sessions", "a(so)", [(login.session_id, login.session_path)]),
                ("IdleHint", "b", False), ("IdleSinceHint", "t", stamp), ("IdleSinceHintMonotonic", "t", mono),
                ("Linger", "b", False)]:
            self.declare(USER, name, sig, value)


class LoginSession(Served):
    def __init__(self, conn, login, manager, user):
        aliases = [LOGIN_PATH + "/session/self", LOGIN_PATH + "/session/auto"]
        super().__init__(conn, login.session_path, "sdbus", aliases=aliases)
        self.login, self.manager, self.user = login, manager, user
        no_display = login.args.no_display
        stamp, mono = now_usec(), monotonic_usec()
        for name, sig, value in [
                ("Id", "s", login.session_id), ("User", "(uo)", (login.uid, login.user_path)),
                ("Name", "s", login.user_name), ("Timestamp", "t", stamp), ("TimestampMonotonic", "t", mono),
                ("VTNr", "u", 2), ("Seat", "(so)", ("seat0", LOGIN_PATH + "/seat/seat0")), ("TTY", "s", ""),
                ("Display", "s", ""), ("Remote", "b", False), ("RemoteHost", "s", ""), ("RemoteUser", "s", ""),
                ("Service", "s", "gdm-password"), ("Desktop", "s", "GNOME"),
                ("Scope", "s", "session-%s.scope" % login.session_id), ("Leader", "u", os.getpid()),
                ("Audit", "u", 0), ("Type", "s", "unspecified" if no_display else "wayland"),
                ("Class", "s", "background" if no_display else "user"), ("Active", "b", True),
                ("State", "s", "active"), ("IdleHint", "b", False), ("IdleSinceHint", "t", stamp),
                ("IdleSinceHintMonotonic", "t", mono), ("LockedHint", "b", False)]:
            self.declare(SESSION, name, sig, value)
        self.signal(SESSION, "Lock", "")
        self.signal(SESSION, "Unlock", "")

    def check_path(self, object_path):
        if object_path.endswith("/self"):
            self.login.resolve_session("self")
        elif object_path.endswith("/auto"):
            self.login.resolve_session("auto")

    def set_idle(self, idle, since=None):
        """As logind's session_set_idle_hint: the hint and its time, sent from the session, user and manager."""
        stamp = now_usec() if since is None else since
        values = {"IdleHint": dbus.Boolean(idle), "IdleSinceHint": dbus.UInt64(stamp),
                  "IdleSinceHintMonotonic": dbus.UInt64(monotonic_usec())}
        self.change(SESSION, values)
        self.user.change(USER, values)
        self.manager.change(MANAGER, values)

    def set_locked(self, locked):
        self.change(SESSION, {"LockedHint": dbus.Boolean(locked)})

    @dbus.service.method(SESSION, in_signature="", out_signature="", path_keyword="object_path")
    def Activate(self, object_path=None):
        self.check_path(object_path)
        if not self.props[SESSION]["Active"]:
            self.set_active(True)

    def set_active(self, active):
        self.props[SESSION]["State"] = dbus.String("active" if active else "online")
        self.change(SESSION, {"Active": dbus.Boolean(active)})

    @dbus.service.method(SESSION, in_signature="", out_signature="", path_keyword="object_path")
    def Lock(self, object_path=None):
        self.check_path(object_path)
        self.emit(SESSION, "Lock", "")

    @dbus.service.method(SESSION, in_signature="", out_signature="", path_keyword="object_path")
    def Unlock(self, object_path=None):
        self.check_path(object_path)
        self.emit(SESSION, "Unlock", "")

    def check_owner(self, sender, what):
        if int(self.conn.get_unix_user(sender)) not in (0, self.login.uid):
            raise Failure("org.freedesktop.DBus.Error.AccessDenied", "Only owner of session may set %s" % what)

    @dbus.service.method(SESSION, in_signature="b", out_signature="", path_keyword="object_path",
                         sender_keyword="sender")
    def SetIdleHint(self, idle, object_path=None, sender=None):
        self.check_path(object_path)
        self.check_owner(sender, "idle hint")
        if self.props[SESSION]["Type"] not in ("x11", "wayland", "mir"):
            raise Failure("org.freedesktop.DBus.Error.NotSupported",
                          "Idle hint control is not supported on non-graphical sessions.")
        self.set_idle(bool(idle))

    @dbus.service.method(SESSION, in_signature="b", out_signature="", path_keyword="object_path",
                         sender_keyword="sender")
    def SetLockedHint(self, locked, object_path=None, sender=None):
        self.check_path(object_path)
        self.check_owner(sender, "locked hint")
        self.set_locked(bool(locked))


class Missing(dbus.service.FallbackObject):
    """Everything under a path that is not served: sd-bus answers UnknownObject (a session or user that is not
    there, e.g. after logind came back with another session)."""

    def _message_cb(self, connection, message):
        if message.get_path() == self.__dbus_object_path__:
            return super()._message_cb(connection, message)
        if isinstance(message, dbus.lowlevel.MethodCallMessage) and not message.get_no_reply():
            connection.send_message(dbus.lowlevel.ErrorMessage(
                message, "org.freedesktop.DBus.Error.UnknownObject", "Unknown object '%s'." % message.get_path()))


def login_service(conn, args):
    login = Login(conn, args)
    for kind in ("session", "user", "seat"):
        Missing(conn, "%s/%s" % (LOGIN_PATH, kind))
    manager = LoginManager(conn, login)
    user = LoginUser(conn, login)
    session = LoginSession(conn, login, manager, user)
    manager.session = session
    objects = {"manager": manager, "user": user, "session": session}

    def run(cmd, rest):
        if cmd == "idle":
            session.set_idle(yes_no(rest[0]), int(rest[1]) if len(rest) > 1 else None)
        elif cmd == "locked":
            session.set_locked(yes_no(rest[0]))
        elif cmd in ("lock", "unlock"):
            session.emit(SESSION, cmd.capitalize(), "")
        elif cmd == "active":
            session.set_active(yes_no(rest[0]))
        elif cmd in ("sleep", "resume"):
            start = cmd == "sleep"
            manager.props[MANAGER]["PreparingForSleep"] = dbus.Boolean(start)  # EmitsChangedSignal false
            manager.emit(MANAGER, "PrepareForSleep", "b", start)
        elif cmd == "inhibitors":
            for what, who, why, mode, _, _, _ in login.inhibitors:
                out("inhibitor %s %s %s %s" % (what, mode, json.dumps(who), json.dumps(why)))
            out("inhibitors %d" % len(login.inhibitors))
        else:
            return False
        return True

    return LOGIN, objects, "session", run


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("address")
    parser.add_argument("--service", choices=("light", "power", "login"), required=True)
    parser.add_argument("--no-light", action="store_true")
    parser.add_argument("--level", type=float)
    parser.add_argument("--unit", choices=("lux", "vendor"))
    parser.add_argument("--on-battery", action="store_true")
    parser.add_argument("--lid", action="store_true")
    parser.add_argument("--session-id", default="31")
    parser.add_argument("--no-display", action="store_true")
    parser.add_argument("--no-pid-session", action="store_true")
    args = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    conn = dbus.bus.BusConnection(args.address)
    services = {"light": light_service, "power": power_service, "login": login_service}
    name, objects, main_object, run_service = services[args.service](conn, args)
    loop = GLib.MainLoop()

    def run(words):
        cmd, rest = words[0], words[1:]
        if cmd == "raw":
            if len(rest) < 2:
                raise ValueError("raw [OBJECT.]PROP TYPE VALUE")
            where, _, prop = rest[0].rpartition(".")
            target = objects.get(where or main_object)
            if target is None:
                raise ValueError("raw: no object %s (%s)" % (where, ", ".join(sorted(objects))))
            value = parse_raw(rest[1], rest[2:])
            interface = next((i for i, names in target.props.items() if prop in names), None)
            target.change(interface or next(iter(target.props)), {prop: value})
        elif not run_service(cmd, rest):
            raise ValueError("unknown command " + cmd)

    serve_commands(conn, name, loop, run, out)


if __name__ == "__main__":
    main()
