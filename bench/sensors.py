#!/usr/bin/python3
"""The automatic layer's sensors (docs/benchmarks.md, "Sensors"): what `[light-sensor]`, `[power] on-battery` and
`[automatic] wait-for-idle` cost a release appearanced, beside the same build with none of them configured.

Each daemon runs in a room of its own: a private session bus with no services (no portal, so nothing ranks above
the automatic layer and the daemon's session-bus client is connected, as in a session) and a private system bus
with the project's stand-ins for iio-sensor-proxy, UPower and logind (Tests/EndToEndTests/Scripts/fake-sensors.py,
one process each, the light at 12 or 13 lux, on AC, the session active). Both rooms have the same buses and stand-ins;
only config.toml differs.

- Idle RSS: fresh daemons of each config in turn, --reps times (the method of bench/rss.py): VmRSS and VmHWM
  from /proc/PID/status and smaps_rollup's anonymous and file-backed pages, 1 s after the daemon answers `get`
  (with the light sensor: once `get` says it decides); `status` checks afterwards that all three are followed.
  Medians over the repetitions, and for the sensors also apart by the order at start: the daemon lets its
  start-up's code pages go once its first reading of the portal is in, and when the sensor's first change
  comes after that, the code pages of that change stay (about 0.8 MiB, as after any change); with no portal
  on the bus the two race. The daemon's log tells which came first.
- Idle wake-ups: --idle-daemons daemons of each config, all side by side over the same window. Each settles
  first, until no thread of it has switched for --settle seconds (a bus connection's call-deadline timer fires
  once ~25 s after its last call; Dispatch's idle workers end ~5 s after use); then the context switches of
  all its threads (/proc/PID/task/*/status, bench.py's count) and its CPU ticks over --seconds, and its VmRSS
  at the end (median).
- Change latency: a daemon with only `[light-sensor]` and `delay = "0s"` (a new side is applied in the same
  reading), one socket subscriber, and the light stand-in driven `light 5` / `light 500` in turn. The stand-in
  (wrapped by this script: `sensors.py stand-in ...`) stamps CLOCK_MONOTONIC right before it sends
  PropertiesChanged; the subscriber, a thread blocked in recv, stamps its complete `changed` line. With
  --portal-rounds, the portal path of the same build in alternating blocks of the same run, for context:
  bench/probe.c's `sock SOCKET 1 N portal` on bench.py's real portal stack, which starts its clock when a
  listener of its own pops the portal's SettingChanged (one bus hop after the emission) and includes the
  daemon's `Read` of the portal.

Writes sensors.json, sensors.md and sensors-latency.csv to --out.

    python3 bench/sensors.py --bin-dir DIR [--seconds 60] [--reps 9] [--idle-daemons 3] [--rounds 400]
        [--portal-rounds 400] --out out/bench
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
FAKE_SENSORS = os.path.join(os.path.dirname(HERE), "Tests/EndToEndTests/Scripts/fake-sensors.py")

ALL_THREE = '[light-sensor]\ndark-below = 40\nlight-above = 80\ndelay = "1s"\n[power]\non-battery = "dark"\n' \
            '[automatic]\nwait-for-idle = true\n'
CONFIGS = {"none": "", "all three": ALL_THREE}
LATENCY = '[light-sensor]\ndark-below = 40\nlight-above = 80\ndelay = "0s"\n'


def stand_in(argv):
    """fake-sensors.py with its emissions stamped: every signal it sends is stamped (CLOCK_MONOTONIC, ns) right
    before the send, and the stamps of a command are printed as "emitted NS ..." just before its "ok", so the
    stamping adds nothing between the command and the signal on the bus."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("fake_sensors", FAKE_SENSORS)
    fake = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fake)
    stamps = []

    def emit(self, interface, member, sig, *args):
        msg = fake.dbus.lowlevel.SignalMessage(self.path, interface, member)
        if sig:
            msg.append(*args, signature=sig)
        stamps.append(time.monotonic_ns())
        self.conn.send_message(msg)

    plain_out = fake.out

    def out(line):
        if line == "ok" and stamps:
            plain_out("emitted " + " ".join(map(str, stamps)))
            stamps.clear()
        plain_out(line)

    fake.Served.emit = emit
    fake.out = out
    sys.argv = [FAKE_SENSORS] + argv
    fake.main()


if len(sys.argv) > 1 and sys.argv[0].endswith("sensors.py") and sys.argv[1] == "stand-in":
    stand_in(sys.argv[2:])
    sys.exit(0)

import bench  # noqa: E402
from bench import (idle_delta, load, logger, median, now, on_sigterm_exit, private_bus,  # noqa: E402
                   proc_counters, rss, tmpfs_dir, write_csv, write_report)
from rss import detail  # noqa: E402

log = logger("sensors")


class Service:
    """One stand-in (light, power or login) on the room's system bus, driven line by line."""

    def __init__(self, room, service):
        self.p = subprocess.Popen(["/usr/bin/python3", os.path.abspath(__file__), "stand-in", room.system_address,
                                   "--service", service], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(f"{room.root}/fake-{service}.log", "w"), text=True, env=room.env)
        if self.p.stdout.readline().strip() != "ready":
            raise SystemExit(f"the {service} stand-in did not start: " + open(f"{room.root}/fake-{service}.log").read())

    def send(self, command):
        """Sends a command; returns the emission stamps (ns) once its "ok" is in."""
        self.p.stdin.write(command + "\n")
        self.p.stdin.flush()
        stamps = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit(f"the stand-in ended after {command!r}")
            line = line.strip()
            if line.startswith("emitted "):
                stamps = [int(x) for x in line.split()[1:]]
            elif line == "ok":
                return stamps
            elif line.startswith("error"):
                raise SystemExit(f"stand-in: {command!r}: {line}")

    def close(self):
        if self.p.poll() is None:
            self.p.stdin.close()
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


class Room:
    """A sandbox (runtime directory on a tmpfs, as logind makes it), a private session bus with no services, a
    private system bus with the three stand-ins, and a config.toml; daemons of `bin_dir` are started in it."""

    def __init__(self, bin_dir, config, name):
        self.bin_dir, self.config, self.name = bin_dir, config, name
        self.root = tempfile.mkdtemp(prefix=f"appearanced-bench-sensors-{name.replace(' ', '-')}-")
        self.buses, self.services, self.daemon = [], {}, None
        self.held_at_start = self.starts = 0
        try:
            self.make()
        except BaseException:
            self.close()
            raise

    def make(self):
        shm = tmpfs_dir()
        self.runtime = tempfile.mkdtemp(prefix="rt", dir=shm) if shm else self.root + "/runtime"
        for d in ("home", "state", "config/appearanced"):
            os.makedirs(os.path.join(self.root, d), mode=0o700, exist_ok=True)
        os.makedirs(self.runtime, mode=0o700, exist_ok=True)
        with open(self.root + "/config/appearanced/config.toml", "w") as f:
            f.write(self.config)
        self.env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": self.root + "/home",
                    "XDG_RUNTIME_DIR": self.runtime, "XDG_STATE_HOME": self.root + "/state",
                    "XDG_CONFIG_HOME": self.root + "/config", "SWIFT_BACKTRACE": "enable=no"}
        self.socket = self.runtime + "/appearanced/socket"
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self.bus("session")
        self.system_address = self.env["DBUS_SYSTEM_BUS_ADDRESS"] = self.bus("system")
        for service in ("light", "power", "login"):
            self.services[service] = Service(self, service)
        self.level = 12
        self.services["light"].send(f"light {self.level}")

    def bus(self, kind):
        p, address = private_bus(self.root, f"{kind}-bus", kind, (), stderr=open(f"{self.root}/{kind}.log", "w"))
        self.buses.append(p)
        if not address:
            raise SystemExit(f"the {kind} bus did not start")
        return address

    def ctl(self, *args):
        return subprocess.run([self.bin_dir + "/appearancectl", *args], env=self.env, capture_output=True, text=True)

    def status(self):
        r = self.ctl("status", "--json")
        return json.loads(r.stdout) if r.returncode == 0 else None

    def start(self):
        """A fresh daemon; returns once it answers `get` and, with the light sensor configured, says the sensor
        decides. Only `get` is asked (as bench/rss.py does): `status` would fault in code of its own, more of it
        with sensors configured (their details), and that would be counted as theirs. `followed` checks the rest.

        With wait-for-idle, the sensor's first level is held for idle when the session's hints came in before it
        and the daemon was serving already (a race at start); such a daemon is counted in `held_at_start` and
        replaced by a fresh one, so that every figure is of a daemon whose sensor decides."""
        for _ in range(10):
            if self.start_once():
                return
            self.held_at_start += 1
            log(f"{self.name}: the first level was held for idle; a fresh daemon instead")
        raise SystemExit(f"appearanced ({self.name}): the first level was held for idle 10 times in a row")

    def start_once(self):
        self.stop()
        self.starts += 1
        # A level the proxy has not said yet: the daemon's claim then brings a PropertiesChanged with it at once
        # (a level equal to the last one said sends nothing, and the daemon reads the property 2 s later).
        self.level = 12 if self.level != 12 else 13
        self.services["light"].send(f"light {self.level}")
        self.daemon = subprocess.Popen([self.bin_dir + "/appearanced"], env=self.env, stdin=subprocess.DEVNULL,
                                       stderr=open(f"{self.root}/daemon.log", "w"))
        # The light decides within 2 s of the claim at worst (the daemon's Get when no level came).
        deadline = time.time() + 20
        while True:
            if self.daemon.poll() is not None:
                raise SystemExit("appearanced exited: " + open(f"{self.root}/daemon.log").read())
            r = self.ctl("get", "--json")
            if r.returncode == 0:
                if "[light-sensor]" not in self.config or json.loads(r.stdout)["source"] == "light-sensor":
                    # What the stand-ins sent on their own (the claim's first reading) is not a command's: its
                    # stamps are taken here, so a command's "emitted" says only what that command sent.
                    self.services["light"].send("claims")
                    return True
                if deadline - time.time() < 15 and "waiting for idle" in (self.status() or {}).get("automatic", ""):
                    return False
            if time.time() > deadline:
                raise SystemExit(f"appearanced ({self.name}) did not answer with its sensors: {r.stdout}{r.stderr}")
            time.sleep(0.02)

    def followed(self):
        """The daemon's status, checked: every input the config names is followed (the light decides, on AC,
        the session active)."""
        s = self.status()
        want = {"source": "light-sensor" if "[light-sensor]" in self.config else None,
                "power": "on AC" if "[power]" in self.config else None,
                "idle": "active" if "wait-for-idle = true" in self.config else None}
        for k, v in want.items():
            if v is not None and s.get(k) != v:
                raise SystemExit(f"appearanced ({self.name}) does not follow its sensors: {k} is {s.get(k)!r}, not {v!r}; {s}")
        return s

    def late_change(self):
        """Whether the sensor's first change came after the daemon served and let its start-up's code pages go
        (its log says the portal's first reading, after which it serves, before the change); None without one."""
        lines = open(f"{self.root}/daemon.log").read().splitlines()
        served = next((i for i, l in enumerate(lines) if ": system: " in l), None)
        changed = next((i for i, l in enumerate(lines) if "(source: light-sensor)" in l), None)
        return None if served is None or changed is None else changed > served

    def stop(self):
        if self.daemon is not None:
            self.daemon.terminate()
            self.daemon.wait(30)
            self.daemon = None

    def close(self):
        self.stop()
        for s in self.services.values():
            s.close()
        bench.stop(*self.buses)
        shutil.rmtree(self.root, ignore_errors=True)
        if getattr(self, "runtime", None):
            shutil.rmtree(self.runtime, ignore_errors=True)


def switches(pid):
    threads, _ = proc_counters(pid)
    return sum(v + n for v, n in threads.values()), set(threads)


def idle(rooms, seconds, settle, settle_max):
    """Side by side: each room's daemon settles (no switch of any of its threads for `settle` s, `settle_max` s at
    most), then all are counted over the same `seconds`."""
    last = {r.name: switches(r.daemon.pid) for r in rooms}
    quiet_since = {r.name: time.monotonic() for r in rooms}
    started = time.monotonic()
    settled = {}
    while len(settled) < len(rooms):
        time.sleep(0.25)
        now = time.monotonic()
        for r in rooms:
            if r.name in settled:
                continue
            c = switches(r.daemon.pid)
            if c != last[r.name]:
                last[r.name], quiet_since[r.name] = c, now
            if now - quiet_since[r.name] >= settle or now - started >= settle_max:
                settled[r.name] = {"settled_after_s": round(now - started, 1), "quiet_s": round(now - quiet_since[r.name], 1)}
        # Once one has settled, the others keep settling; the window starts when all have.
    before = {r.name: proc_counters(r.daemon.pid) for r in rooms}
    time.sleep(seconds)
    out = {}
    for r in rooms:
        after = proc_counters(r.daemon.pid)
        out[r.name] = {**idle_delta(before[r.name], after), **settled[r.name], "seconds": seconds,
                       "VmRSS_after_kib": rss(r.daemon.pid)["VmRSS"]}
    return out


def sensor_block(room, sub, rounds, samples, lost):
    """`rounds` changes of the light across both thresholds: emission stamp to the subscriber's `changed`."""
    light = room.services["light"]
    for _ in range(rounds):
        want = "light" if sub.mode == "dark" else "dark"
        count = len(sub.changes) + 1
        stamps = light.send("light 500" if want == "light" else "light 5")
        got = sub.wait_change(count)
        if got is None:
            lost.append("no changed within 5 s")
            log("no changed within 5 s; status:", room.status())
            sub.mode = room.status()["mode"]
            continue
        t, mode = got
        if mode != want or len(stamps) != 1:
            lost.append(f"{mode} for {want}, {len(stamps)} emissions")
            continue
        samples.append((t * 1e9 - stamps[0]) / 1e6)
        time.sleep(random.uniform(0.015, 0.025))  # nothing left to settle; apart, so each round starts idle


def portal_block(st, probe, rounds, samples, lost):
    from change_latency import sock
    rows, missed = sock(st, probe, 1, rounds, "portal")
    lost.extend(missed)
    samples.extend((int(r["first"]) - int(r["t0"])) / 1e6 for r in rows)


def stats(samples):
    return bench.stats(samples, (50, 90, 99), unit="_ms", digits=3, top=True)


def main():
    ap = bench.arguments()
    ap.add_argument("--seconds", type=float, default=60, help="the idle window")
    ap.add_argument("--settle", type=float, default=30, help="seconds without a switch before the idle window")
    ap.add_argument("--settle-max", type=float, default=120)
    ap.add_argument("--reps", type=int, default=9, help="repetitions of the idle RSS, configs in turn")
    ap.add_argument("--idle-daemons", type=int, default=3, help="daemons of each config in the idle window")
    ap.add_argument("--rounds", type=int, default=400, help="light changes timed")
    ap.add_argument("--portal-rounds", type=int, default=400, help="portal changes timed beside them (0: none)")
    ap.add_argument("--block", type=int, default=50, help="rounds per block when the two paths alternate")
    a = ap.parse_args()
    bin_dir = os.path.abspath(a.bin_dir)
    R = {"bin_dir": bin_dir, "date": now(), "load_before": load(), "nproc": os.cpu_count()}
    on_sigterm_exit()
    rooms, st, probe = [], None, None
    try:
        # --idle-daemons rooms of each config, all side by side for the idle window; the idle RSS's repetitions
        # take them in turn.
        by = {name: [] for name in CONFIGS}
        for i in range(a.idle_daemons):
            for name, config in CONFIGS.items():
                rooms.append(Room(bin_dir, config, f"{name} {i + 1}"))
                by[name].append(rooms[-1])

        # Idle RSS (bench/rss.py's method): fresh daemons, the configs in turn, 1 s after each answers.
        runs = {name: [] for name in CONFIGS}
        for rep in range(a.reps):
            for name in CONFIGS:
                r = by[name][rep % len(by[name])]
                r.start()
                time.sleep(1)
                runs[name].append({**rss(r.daemon.pid), **detail(r.daemon.pid)})
                r.followed()
                runs[name][-1]["late_change"] = r.late_change()
                log(f"{name}: repetition {rep + 1}: {runs[name][-1]}")
                r.stop()
        R["rss_runs"] = runs
        R["rss"] = {name: {k: median([x[k] for x in xs]) for k in xs[0] if k != "late_change"} for name, xs in runs.items()}
        # The two kinds of start apart: the sensor's first change before the daemon let its start-up's code pages
        # go (what the sensors cost), and after (the pages of that change stay, as after any change).
        R["rss_by_order"] = {kind: {"starts": len(xs), "VmRSS": median([x["VmRSS"] for x in xs]) if xs else None,
                                    "anonymous_kib": median([x["anonymous_kib"] for x in xs]) if xs else None}
                             for kind, xs in (("first change before", [x for x in runs["all three"] if x["late_change"] is False]),
                                              ("first change after", [x for x in runs["all three"] if x["late_change"]]))}

        # Idle wake-ups: every room's daemon at once, settled, then counted over the same window.
        for r in rooms:
            r.start()
        log(f"idle: {len(rooms)} daemons settling ({a.settle:.0f} s without a switch), then {a.seconds:.0f} s")
        R["idle_daemons"] = idle(rooms, a.seconds, a.settle, a.settle_max)
        log("idle:", R["idle_daemons"])
        statuses = [r.followed() for r in by["all three"]]
        for r in by["all three"]:
            R["idle_daemons"][r.name]["late_change"] = r.late_change()
        R["status_all_three"] = {k: statuses[0].get(k) for k in ("mode", "source", "automatic", "lightSensor", "power", "idle")}
        R["held_at_start"] = {"daemons started with all three": sum(r.starts for r in by["all three"]),
                              "their first level held for idle": sum(r.held_at_start for r in by["all three"])}
        R["idle"] = {}
        for name in CONFIGS:
            each = [R["idle_daemons"][r.name] for r in by[name]]
            R["idle"][name] = {"daemons": len(each), "seconds": a.seconds,
                               "switches": sum(x["voluntary"] + x["nonvoluntary"] for x in each),
                               "ticks": sum(x["ticks"] for x in each),
                               "threads": median([x["threads"] for x in each]),
                               "VmRSS_after_kib": median([x["VmRSS_after_kib"] for x in each])}
        for r in rooms:
            r.close()
        rooms = []

        # Change latency: the light sensor with no delay; the portal path beside it in alternating blocks.
        rooms.append(Room(bin_dir, LATENCY, "latency"))
        lat = rooms[0]
        lat.start()
        sub = bench.Subscriber(lat.socket)
        if a.portal_rounds:
            from change_latency import start_session
            probe = bench.build_probe("sensors")
            st = bench.Stack(bin_dir)
            start_session(st, probe)
            st.use(bin_dir)
        sensor, portal, lost = [], [], {"sensor": [], "portal": []}
        s_left, p_left = a.rounds, a.portal_rounds if st else 0
        while s_left or p_left:
            if s_left:
                n = min(a.block, s_left)
                sensor_block(lat, sub, n, sensor, lost["sensor"])
                s_left -= n
            if p_left:
                n = min(a.block, p_left)
                portal_block(st, probe, n, portal, lost["portal"])
                p_left -= n
            log(f"latency: {len(sensor)} sensor rounds, {len(portal)} portal rounds")
        sub.close()
        R["latency"] = {"light sensor (delay 0s): PropertiesChanged sent → changed read": stats(sensor),
                        "portal, for context: SettingChanged read by a listener → changed read": stats(portal),
                        "lost": lost}
        os.makedirs(a.out, exist_ok=True)
        write_csv(os.path.join(a.out, "sensors-latency.csv"), ["path", "ms"],
                  [("sensor", f"{x:.4f}") for x in sensor] + [("portal", f"{x:.4f}") for x in portal])
    finally:
        for r in rooms:
            r.close()
        if st:
            st.close()
        if probe:
            os.unlink(probe)
    R["load_after"] = load()
    write_report(a.out, "sensors", R, summary(R))


def summary(R):
    m, i = R["rss"], R["idle"]
    n = i["none"]["daemons"]
    o = [f"{R['date']}, {R['nproc']} CPUs, load {' '.join(R['load_before'])} before and {' '.join(R['load_after'])} after\n",
         f"Idle: {n} daemons of each config side by side, each settled (no switch for 30 s), then counted over the same "
         f"{i['none']['seconds']:.0f} s; VmRSS idle as bench/rss.py takes it (a fresh daemon, 1 s after it answers; median "
         f"of {len(R['rss_runs']['none'])}, configs in turn), and after the window (median of the {n}):\n",
         "| config | context switches, all threads | CPU ticks | VmRSS idle | anonymous / file-backed | threads | "
         "VmHWM | VmRSS after the window | threads |",
         "|---|---|---|---|---|---|---|---|---|"]
    for name in ("none", "all three"):
        w, r = i[name], m[name]
        o.append(f"| {name} | {w['switches']} | {w['ticks']} | {r['VmRSS'] / 1024:.2f} MiB "
                 f"| {r['anonymous_kib'] / 1024:.2f} / {r['file_kib'] / 1024:.2f} MiB | {r['threads']:.0f} | {r['VmHWM'] / 1024:.2f} MiB "
                 f"| {w['VmRSS_after_kib'] / 1024:.2f} MiB | {w['threads']:.0f} |")
    # "*": the sensor's first change came after the daemon let its start-up's code pages go (they stay then).
    for name in ("none", "all three"):
        each = sorted((x["VmRSS"] / 1024, "*" if x.get("late_change") else "") for x in R["rss_runs"][name])
        o.append(f"\nVmRSS idle, each fresh daemon ({name}): " + ", ".join(f"{x:.2f}{m}" for x, m in each) + " MiB")
        after = sorted((d["VmRSS_after_kib"] / 1024, "*" if d.get("late_change") else "")
                       for k, d in R["idle_daemons"].items() if k.rsplit(" ", 1)[0] == name)
        o.append("after the window: " + ", ".join(f"{x:.2f}{m}" for x, m in after) + " MiB")
    o.append("\n(*: the sensor's first change came after the daemon let its start-up's code pages go)")
    for kind, b in R["rss_by_order"].items():
        if b["VmRSS"] is not None:
            o.append(f"All three, the {b['starts']} starts with the sensor's {kind}: VmRSS {b['VmRSS'] / 1024:.2f} MiB "
                     f"({(b['VmRSS'] - m['none']['VmRSS']) / 1024:+.2f} MiB), anonymous {b['anonymous_kib'] / 1024:.2f} MiB "
                     f"({(b['anonymous_kib'] - m['none']['anonymous_kib']) / 1024:+.2f}).")
    o.append(f"\nAll three configured: VmRSS {(m['all three']['VmRSS'] - m['none']['VmRSS']) / 1024:+.2f} MiB idle "
             f"(anonymous {(m['all three']['anonymous_kib'] - m['none']['anonymous_kib']) / 1024:+.2f}, file-backed "
             f"{(m['all three']['file_kib'] - m['none']['file_kib']) / 1024:+.2f} MiB), "
             f"{(i['all three']['VmRSS_after_kib'] - i['none']['VmRSS_after_kib']) / 1024:+.2f} MiB after the window.\n")
    o.append("| change latency | n | p50 | p90 | p99 | max |")
    o.append("|---|---|---|---|---|---|")
    for what, s in R["latency"].items():
        if what != "lost" and s:
            o.append(f"| {what} | {s['n']} | {s['p50_ms']:.3f} ms | {s['p90_ms']:.3f} ms | {s['p99_ms']:.3f} ms | {s['max_ms']:.3f} ms |")
    h = R["held_at_start"]
    o.append(f"\nOf {h['daemons started with all three']} daemons started with all three, "
             f"{h['their first level held for idle']} held the sensor's first level for idle (replaced by a fresh one).")
    lost = R["latency"]["lost"]
    if lost["sensor"] or lost["portal"]:
        o.append(f"\nLost rounds: {lost}")
    return "\n".join(o) + "\n"


if __name__ == "__main__":
    main()
