#!/usr/bin/python3
"""appearanced benchmarks, side by side with the tools people would use instead; and the module the other
bench/ scripts share (the portal stack, a sandboxed daemon, private buses, the probe, timing and statistics).

Runs the real desktop stack headless (private dbus-daemon, xdg-desktop-portal + gtk backend on a GTK
broadway display, switched with gsettings), a release build of appearanced, and bench/probe.c for the
timing that Python cannot do precisely. Raw samples go to CSV files in the output directory, with
summary.json, summary.md and fanout.svg. `make bench` / `make bench-quick` run it; see docs/benchmarks.md.
"""
import argparse
import csv
import json
import os
import platform
import random
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

PORTAL = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
FACE = "io.github.appearanced.Appearance1"
# The portal's Read of the color scheme, as a script would make it.
DBUS_SEND_READ = ["/usr/bin/dbus-send", "--session", "--print-reply", f"--dest={PORTAL}", PORTAL_PATH,
                  "org.freedesktop.portal.Settings.Read", "string:org.freedesktop.appearance", "string:color-scheme"]
BUSCTL_READ = ["/usr/bin/busctl", "--user", "call", PORTAL, PORTAL_PATH, "org.freedesktop.portal.Settings", "Read",
               "ss", "org.freedesktop.appearance", "color-scheme"]


def logger(name):
    return lambda *a: print(f"{name}:", *a, file=sys.stderr, flush=True)


log = logger("bench")


def now():
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def load():
    return open("/proc/loadavg").read().split()[:3]


def on_sigterm_exit():
    """Leaves through `finally` on `kill` too, so that the stacks are cleaned up."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def pct(samples, p):
    """Nearest-rank percentile."""
    s = sorted(samples)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, int(-(-p * len(s) // 100)) - 1))
    return s[k]


def median(samples):
    s = sorted(samples)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def stats(samples, ps=(50, 99), n="n", unit="", digits=None, top=False):
    """{n: count, pP<unit>: ...} (p50 the median, the others nearest-rank), the maximum too with `top`, rounded
    to `digits` if given; None for no samples."""
    if not samples:
        return None
    r = (lambda x: round(x, digits)) if digits is not None else (lambda x: x)
    out = {n: len(samples)} if n else {}
    out.update({f"p{p}{unit}": r(median(samples) if p == 50 else pct(samples, p)) for p in ps})
    if top:
        out[f"max{unit}"] = r(max(samples))
    return out


def arguments(out=True, baseline=None, also=False, quick=False):
    """The options the scripts share: --bin-dir, --out (required if `out`; none if None), --baseline-bin-dir
    (`baseline` its help), --also LABEL=DIR (repeatable), --quick."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True, help="a release build's bin directory")
    if baseline:
        ap.add_argument("--baseline-bin-dir", help=baseline)
    if also:
        ap.add_argument("--also", action="append", default=[], metavar="LABEL=DIR",
                        help="more builds, measured in turn with this one")
    if out is not None:
        ap.add_argument("--out", required=out)
    if quick:
        ap.add_argument("--quick", action="store_true")
    return ap


def builds(bin_dir, also=(), baseline=None, label="baseline"):
    """{"this build": bin_dir, LABEL: DIR for each --also LABEL=DIR, `label`: baseline}, the directories absolute."""
    out = {"this build": os.path.abspath(bin_dir)}
    for name, _, path in (x.rpartition("=") for x in also):
        out[name] = os.path.abspath(path)
    if baseline:
        out[label] = os.path.abspath(baseline)
    return out


def in_turn(bins, reps, measure, log):
    """measure(label, bin_dir) of every build in turn, `reps` times (the builds alternate): {label: [results]}."""
    runs = {label: [] for label in bins}
    for rep in range(reps):
        for label, bin_dir in bins.items():
            runs[label].append(measure(label, bin_dir))
            log(f"{label}: repetition {rep + 1}: {runs[label][-1]}")
    return runs


def medians(runs):
    """The median of every number over `runs`, dicts of one shape (nested alike)."""
    return {k: medians([r[k] for r in runs]) for k in runs[0]} if isinstance(runs[0], dict) else median(runs)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def write_report(out, name, results, text, indent=1):
    """NAME.json (the figures) and NAME.md (`text`, the summary) in `out`; the summary is printed too."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(results, f, indent=indent)
    with open(os.path.join(out, name + ".md"), "w") as f:
        f.write(text)
    print(text)


def write_json(out, name, result, indent=2, echo=True):
    """NAME.json in `out` (made if missing) when an --out was given; printed too with `echo`."""
    if echo:
        print(json.dumps(result, indent=indent))
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(result, f, indent=indent)


def tmpfs_dir():
    """/dev/shm when it is a tmpfs, else None."""
    try:
        for line in open("/proc/self/mounts"):
            fields = line.split()
            if fields[1] == "/dev/shm" and fields[2] == "tmpfs":
                return "/dev/shm"
    except OSError:
        pass
    return None


def raise_nofile():
    """The open-files soft limit lifted to the hard one (crowds of subscribers need descriptors in the daemon
    and in the probe); returns (soft before, hard)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return soft, hard


def build_probe(tag, *extra):
    """Compiles bench/probe.c (with `extra` cc arguments) into a temporary file, which the caller unlinks, and
    lifts the open-files soft limit. With `extra`, returns None if it does not compile."""
    raise_nofile()
    probe = os.path.join(tempfile.gettempdir(), f"appearanced-probe-{tag}-{os.getpid()}")
    dbus = subprocess.run(["pkg-config", "--cflags", "--libs", "dbus-1"], capture_output=True, text=True,
                          check=True).stdout.split()
    r = subprocess.run(["cc", "-O2", "-o", probe, os.path.join(HERE, "probe.c"), *dbus, *extra],
                       capture_output=bool(extra))
    if r.returncode != 0:
        if extra:
            return None
        raise SystemExit("bench/probe.c did not compile")
    return probe


def run_probe(argv, env=None, timeout=None):
    """A probe run that prints a CSV of rounds (t0, first, last, ...): the rounds told (last >= 0), and the
    lines of those that timed out."""
    r = subprocess.run([str(x) for x in argv], env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"probe {' '.join(map(str, argv[1:4]))} failed: {r.stderr}")
    return ([x for x in csv.DictReader(r.stdout.splitlines()) if int(x["last"]) >= 0],
            [line for line in r.stderr.splitlines() if "timed out" in line])


def lasts(rows):
    return [int(x["last"]) - int(x["t0"]) for x in rows]


def wait_until(ready, what, timeout=20, pause=0.05, proc=None, log_path=None):
    """Asks `ready()` every `pause` s until it is true; SystemExit(`what`) after `timeout` s, or at once when
    `proc` has exited (with `log_path`'s content)."""
    deadline = time.time() + timeout
    while not ready():
        if proc is not None and proc.poll() is not None:
            raise SystemExit("appearanced exited: " + (open(log_path).read() if log_path else what))
        if time.time() > deadline:
            raise SystemExit(what)
        time.sleep(pause)


def ctl_answers(bin_dir, env):
    return subprocess.run([bin_dir + "/appearancectl", "get"], env=env, capture_output=True).returncode == 0


def bus_config(kind="session", listen="unix:tmpdir=/tmp", limits=()):
    """A private dbus-daemon's config: no service files (nothing is activated), anyone may own any name."""
    return (f"<busconfig><type>{kind}</type><listen>{listen}</listen><auth>EXTERNAL</auth>"
            '<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>'
            '<allow own="*"/></policy>' + "".join(f'<limit name="{n}">{v}</limit>' for n, v in limits)
            + "</busconfig>\n")


# The session bus's own limits (session.conf: messages up to 1e9 bytes).
SESSION_LIMITS = (("max_incoming_bytes", 1000000000), ("max_outgoing_bytes", 1000000000),
                  ("max_message_size", 1000000000))
# Every limit that N = 10,000 listeners could hit, raised.
FANOUT_LIMITS = SESSION_LIMITS + (
    ("max_completed_connections", 100000), ("max_incomplete_connections", 20000),
    ("max_connections_per_user", 100000), ("max_match_rules_per_connection", 50000),
    ("max_replies_per_connection", 50000), ("auth_timeout", 240000))
FANOUT_BUS_CONF = bus_config(limits=FANOUT_LIMITS)


def private_bus(root, name="bus", kind="session", limits=SESSION_LIMITS, stderr=None):
    """A dbus-daemon listening on ROOT/NAME with bus_config (NAME.conf beside it). Returns (process, address)."""
    with open(f"{root}/{name}.conf", "w") as f:
        f.write(bus_config(kind, f"unix:path={root}/{name}", limits))
    bus = subprocess.Popen(["/usr/bin/dbus-daemon", f"--config-file={root}/{name}.conf", "--nofork", "--nopidfile",
                            "--print-address=1"], stdout=subprocess.PIPE, stderr=stderr, text=True)
    # Its address comes at once, or it failed: 10 s at most.
    if not select.select([bus.stdout], [], [], 10)[0]:
        bus.kill()
        raise SystemExit("dbus-daemon printed no address within 10 s")
    return bus, bus.stdout.readline().strip()


def name_owned(address, name):
    r = subprocess.run(["/usr/bin/dbus-send", f"--bus={address}", "--print-reply", "--dest=org.freedesktop.DBus",
                        "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", f"string:{name}"],
                       capture_output=True, text=True, timeout=5)
    return r.returncode == 0 and r.stdout.split()[-1] == "true"


def stop(*procs):
    """Terminates the processes (killed after 10 s) and waits for them."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class Daemon:
    """A release appearanced in a sandbox of its own (runtime, state and config folders in a temporary
    directory) with no bus, or with `bus` a private session bus (no portal on it: the daemon is its own source)
    where it serves its D-Bus service. `config` is its config.toml, `hook` an executable hooks.d/chatty, `env`
    overrides its environment (None: unset), `pin` {"daemon": CPUs, "flood": CPUs} its and the bus's affinity.
    With start=False, start() starts it."""

    def __init__(self, bin_dir, hook=None, bus=False, prefix="appearanced-bench-hostile-", runtime="runtime",
                 config=None, env=None, bus_limits=SESSION_LIMITS, pin=None, start=True):
        self.bin_dir, self.pin, self.p = bin_dir, pin, None
        self.root = tempfile.mkdtemp(prefix=prefix)
        for d in (runtime, "state", "config/appearanced"):
            os.makedirs(os.path.join(self.root, d), mode=0o700, exist_ok=True)
        if config is not None:
            with open(self.root + "/config/appearanced/config.toml", "w") as f:
                f.write(config)
        if hook:
            hooks = os.path.join(self.root, "config", "appearanced", "hooks.d")
            os.makedirs(hooks)
            with open(os.path.join(hooks, "chatty"), "w") as f:
                f.write(hook)
            os.chmod(os.path.join(hooks, "chatty"), 0o755)
        self.env = {"PATH": "/usr/bin:/bin", "HOME": self.root, "XDG_RUNTIME_DIR": f"{self.root}/{runtime}",
                    "XDG_STATE_HOME": self.root + "/state", "XDG_CONFIG_HOME": self.root + "/config",
                    "DBUS_SESSION_BUS_ADDRESS": f"unix:path={self.root}/no-bus",
                    "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={self.root}/no-bus"}
        self.socket = f"{self.root}/{runtime}/appearanced/socket"
        self.bus = None
        if bus:
            self.bus, self.address = private_bus(self.root, limits=bus_limits)
            self.env["DBUS_SESSION_BUS_ADDRESS"] = self.address
            if pin:
                os.sched_setaffinity(self.bus.pid, pin["flood"])
        for k, v in (env or {}).items():
            if v is None:
                self.env.pop(k, None)
            else:
                self.env[k] = v
        if start:
            self.start()

    def start(self, pause=0.05, env=None):
        """Starts the daemon (with `env` added to its environment) and returns once it answers (and owns its
        name on the bus)."""
        self.p = subprocess.Popen([self.bin_dir + "/appearanced"], env={**self.env, **(env or {})},
                                  stderr=subprocess.DEVNULL)
        if self.pin:
            os.sched_setaffinity(self.p.pid, self.pin["daemon"])
        wait_until(lambda: ctl_answers(self.bin_dir, self.env) and (not self.bus or name_owned(self.address, FACE)),
                   f"{self.bin_dir}/appearanced did not start", pause=pause, proc=self.p)

    def stop(self):
        if self.p:
            stop(self.p)
            self.p = None

    def get(self):
        t0 = time.perf_counter()
        r = subprocess.run([self.bin_dir + "/appearancectl", "get"], env=self.env, capture_output=True)
        return (time.perf_counter() - t0) * 1000 if r.returncode == 0 else None

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.socket)
        return s

    def kill_hooks(self):
        """Ends the hooks this daemon started (each wrote its pid; a hook runs in a process group of its own)."""
        try:
            pids = [int(x) for x in open(self.root + "/hook-pids").read().split()]
        except OSError:
            return
        for pid in pids:
            for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    kill()
                except OSError:
                    pass

    def close(self):
        self.stop()
        self.kill_hooks()
        if self.bus:
            stop(self.bus)
        shutil.rmtree(self.root, ignore_errors=True)


class Stack:
    """Temp dirs, broadwayd, the private session bus with the real portal, and appearanced.

    XDG_RUNTIME_DIR is on a tmpfs, as logind makes it for every session (/run/user/UID), unless
    `runtime_on_disk` (or no tmpfs is at hand): the daemon replaces its mode file there before it tells any
    subscriber, and on ext4 that replacement costs about 0.12 ms (the rename over the old file starts
    writing the new one back), on a tmpfs about 0.015 ms (docs/benchmarks.md)."""

    def __init__(self, bin_dir, runtime_on_disk=False, desktop="GNOME", portals=("gtk",)):
        self.bin_dir = bin_dir
        self.root = tempfile.mkdtemp(prefix="appearanced-bench-")
        self.procs = []
        for d in ("home", "state", "config", "portals", "s2"):
            os.makedirs(os.path.join(self.root, d), mode=0o700, exist_ok=True)
        shm = None if runtime_on_disk else tmpfs_dir()
        # As short as logind's /run/user/UID: the socket path's length shows in a client's cost (a String of
        # 64 bytes or more costs appearancectl ~36 K instructions more to let go, docs/benchmarks.md).
        self.runtime = tempfile.mkdtemp(prefix="rt", dir=shm) if shm else self.root + "/runtime"
        os.makedirs(self.runtime, mode=0o700, exist_ok=True)
        # The backends the portal may use, as the desktop's .portal files say (appearanced's own from the repo).
        for name in portals:
            src = os.path.join(REPO, "portal/appearanced.portal") if name == "appearanced" \
                else f"/usr/share/xdg-desktop-portal/portals/{name}.portal"
            shutil.copy(src, os.path.join(self.root, "portals", f"{name}.portal"))
        self.env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": self.root + "/home",
                    "XDG_RUNTIME_DIR": self.runtime, "XDG_STATE_HOME": self.root + "/state",
                    "XDG_CONFIG_HOME": self.root + "/config", "XDG_DESKTOP_PORTAL_DIR": self.root + "/portals",
                    "XDG_CURRENT_DESKTOP": desktop, "GDK_BACKEND": "broadway", "NO_AT_BRIDGE": "1",
                    "GSETTINGS_BACKEND": "dconf", "SWIFT_BACKTRACE": "enable=no"}
        # appearanced must not drive GNOME's setting here: the desktop changes only when the benchmark says.
        os.makedirs(self.root + "/config/appearanced", exist_ok=True)
        with open(self.root + "/config/appearanced/config.toml", "w") as f:
            f.write('[desktop]\nfollow = "off"\n')
        self.socket = self.runtime + "/appearanced/socket"
        self.mode_file = self.runtime + "/appearanced/mode"
        self.daemon = None
        self.bus_proc = None

    def spawn(self, argv, env=None, **kw):
        p = subprocess.Popen(argv, env=env or self.env, stdin=subprocess.DEVNULL, **kw)
        self.procs.append(p)
        return p

    def start_broadway(self, server="/usr/bin/broadwayd"):
        """broadwayd (GTK 3) or gtk4-broadwayd on a free display number: a display for the portal's GTK
        backend or a libadwaita app, with no X or Wayland."""
        for _ in range(8):
            n = random.randint(100, 900)
            out = open(os.path.join(self.root, f"broadway-{n}.log"), "w+")
            p = self.spawn([server, f":{n}"], stdout=out, stderr=subprocess.STDOUT)
            deadline = time.time() + 10
            while time.time() < deadline and p.poll() is None:
                out.seek(0)
                if "Listening on" in out.read():
                    self.env["BROADWAY_DISPLAY"] = f":{n}"
                    return
                time.sleep(0.02)
            p.kill()
            p.wait()
        raise SystemExit(f"could not start {server}")

    def start_session(self, light=True, broadway="/usr/bin/broadwayd"):
        """broadway (if given), the session bus and, with `light`, the desktop light."""
        if broadway:
            self.start_broadway(broadway)
        self.bus_proc, self.env["DBUS_SESSION_BUS_ADDRESS"] = self.start_bus("bus")
        if light:
            self.gsettings("prefer-light")

    def start_bus(self, name, config=None, env=None):
        """A private dbus-daemon; services it activates inherit its environment. Returns (proc, address)."""
        argv = ["/usr/bin/dbus-daemon", "--nofork", "--nopidfile", f"--address=unix:path={self.root}/{name}",
                "--print-address=1"]
        argv.insert(1, f"--config-file={config}" if config else "--session")
        p = self.spawn(argv, env=env, stdout=subprocess.PIPE, stderr=open(f"{self.root}/{name}.log", "w"), text=True)
        return p, p.stdout.readline().strip()

    def stop_bus(self, p, unmount=True):
        stop(p)
        doc = self.runtime + "/doc"
        if unmount and os.path.ismount(doc):
            subprocess.run(["/bin/fusermount3", "-u", doc], stderr=subprocess.DEVNULL)

    def gsettings(self, value):
        subprocess.run(["/usr/bin/gsettings", "set", "org.gnome.desktop.interface", "color-scheme", value],
                       env=self.env, check=True)

    def ctl(self, *args, env=None):
        return subprocess.run([self.bin_dir + "/appearancectl", *args], env=env or self.env,
                              capture_output=True, text=True)

    def start_daemon(self, wrapper=()):
        """appearanced of self.bin_dir (under `wrapper`, valgrind say), once it answers `get`."""
        self.daemon = self.spawn([*wrapper, self.bin_dir + "/appearanced"], stderr=open(self.root + "/daemon.log", "w"))
        wait_until(lambda: self.ctl("get").returncode == 0, "appearanced did not answer" +
                   (" under " + wrapper[0] if wrapper else ""), timeout=120 if wrapper else 20,
                   pause=0.2 if wrapper else 0.02, proc=self.daemon, log_path=self.root + "/daemon.log")

    def stop_daemon(self):
        if self.daemon is not None:
            self.daemon.terminate()
            self.daemon.wait(timeout=60)
            self.procs.remove(self.daemon)
            self.daemon = None

    def restart_daemon(self):
        """A fresh daemon for every set of subscribers: after many clients close at once, appearanced can
        stop reading connections that reuse their descriptor numbers (see docs/benchmarks.md), and a
        benchmark must not wait on that."""
        self.stop_daemon()
        self.start_daemon()
        return self.daemon.pid

    def use(self, bin_dir, wrapper=()):
        """Stops the running daemon (if any) and starts `bin_dir`'s, optionally under `wrapper`."""
        self.stop_daemon()
        self.bin_dir = bin_dir
        self.start_daemon(wrapper)

    def bus_pid(self, name):
        r = subprocess.run(["/usr/bin/dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
                            "/org/freedesktop/DBus", "org.freedesktop.DBus.GetConnectionUnixProcessID",
                            f"string:{name}"], env=self.env, capture_output=True, text=True)
        return int(r.stdout.split()[-1]) if r.returncode == 0 else None

    def close(self):
        stop(*reversed(self.procs))
        # Activated services (the portal, its backends, dconf) leave with their bus, but not at once.
        subprocess.run(["/usr/bin/pkill", "-f", f"DBUS_STARTER_ADDRESS=unix:path={self.root}/"], stderr=subprocess.DEVNULL)
        doc = self.runtime + "/doc"
        if os.path.ismount(doc):
            subprocess.run(["/bin/fusermount3", "-u", doc], stderr=subprocess.DEVNULL)
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.rmtree(self.runtime, ignore_errors=True)


def spawn_time(path, argv, env, devnull):
    """exec to exit of one command, stdout/stderr to /dev/null (posix_spawn: no Python fork cost)."""
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(path, argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                                        (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status = os.waitpid(pid, 0)
    t1 = time.perf_counter_ns()
    if status != 0:
        raise SystemExit(f"{argv} failed with status {status}")
    return t1 - t0


def interleaved(tools, runs, env, warm=20):
    """exec to exit (ns) of every tool ({name: argv}), `warm` + `runs` rounds, each round in a rotated order so
    that no tool always follows another; the warm-up rounds left out. {name: [ns]}."""
    devnull = os.open("/dev/null", os.O_WRONLY)
    names = list(tools)
    samples = {n: [] for n in names}
    for i in range(warm + runs):
        for n in names[i % len(names):] + names[:i % len(names)]:
            ns = spawn_time(tools[n][0], tools[n], env, devnull)
            if i >= warm:
                samples[n].append(ns)
    os.close(devnull)
    return samples


def alternate(cmds, runs, env):
    """Whole-process ms of each command ({label: argv}), run by run, the order reversed every other run."""
    samples = {k: [] for k in cmds}
    for i in range(runs):
        for label in (list(cmds) if i % 2 == 0 else list(cmds)[::-1]):
            t0 = time.perf_counter()
            subprocess.run(cmds[label], env=env, stdout=subprocess.DEVNULL, check=True)
            samples[label].append((time.perf_counter() - t0) * 1000)
    return samples


def page_faults(argv, env, runs, major=False):
    """The minor (and with `major` the major) page faults of one run of argv (wait4's rusage), median of `runs`."""
    out = []
    for _ in range(runs):
        pid = os.posix_spawn(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
                                                               (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0)])
        _, status, usage = os.wait4(pid, 0)
        if status != 0:
            raise SystemExit(f"{argv} failed with status {status}")
        out.append(usage.ru_minflt + (usage.ru_majflt if major else 0))
    return median(out)


def instructions(argv, env, strip=None, expect_ok=True):
    """Instructions from exec to exit under callgrind (callgrind_annotate's PROGRAM TOTALS) and the annotation.
    valgrind 3.19 cannot read the DWARF 5 debug info of a Swift build: with `strip` (strip's options: () all,
    ("-g",) the debug info) it counts a stripped copy (the same code)."""
    with tempfile.TemporaryDirectory() as d:
        exe = argv[0]
        if strip is not None:
            exe = os.path.join(d, os.path.basename(argv[0]))
            subprocess.run(["strip", *strip, "-o", exe, argv[0]], check=True, timeout=600)
        out = os.path.join(d, "callgrind.out")
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", exe, *argv[1:]], env=env,
                           capture_output=True, text=True, timeout=600)
        if (r.returncode == 0) != expect_ok:
            raise SystemExit(f"{argv}: exit {r.returncode}: {r.stderr[-400:]}")
        text = subprocess.run(["callgrind_annotate", "--threshold=100", out], capture_output=True, text=True,
                              timeout=600).stdout
    return next(int(l.split()[0].replace(",", "")) for l in text.splitlines() if "PROGRAM TOTALS" in l), text


def proc_status(pid, *keys):
    """Fields of /proc/PID/status (the number, KiB for sizes)."""
    return {k: int(v.split()[0]) for k, _, v in (l.partition(":") for l in open(f"/proc/{pid}/status")) if k in keys}


def smaps_rollup(pid):
    """/proc/PID/smaps_rollup's fields, KiB."""
    return {k: int(v.split()[0]) for k, _, v in (l.partition(":") for l in open(f"/proc/{pid}/smaps_rollup"))
            if v.strip().endswith("kB")}


def proc_counters(pid):
    """Per thread: {tid: (voluntary, nonvoluntary)}, and utime+stime ticks of the whole process.
    /proc/PID/status counts the main thread only, so threads are read one by one."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            c = proc_status(f"{pid}/task/{tid}", "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")
            threads[tid] = (c["voluntary_ctxt_switches"], c["nonvoluntary_ctxt_switches"])
        except (FileNotFoundError, KeyError):
            pass
    stat = open(f"/proc/{pid}/stat").read()
    fields = stat[stat.rindex(")") + 2:].split()
    return threads, int(fields[11]) + int(fields[12])


def cpu_ms(pid):
    """User and system CPU time of `pid`, in ms."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 // os.sysconf("SC_CLK_TCK")


def idle_delta(before, after):
    """Context switches over the window: threads alive at both ends by difference, new threads in full;
    threads that ended during the window are counted separately (their last switches are lost)."""
    (tb, kb), (ta, ka) = before, after
    vol = sum(ta[t][0] - tb[t][0] for t in ta if t in tb) + sum(ta[t][0] for t in ta if t not in tb)
    nonvol = sum(ta[t][1] - tb[t][1] for t in ta if t in tb) + sum(ta[t][1] for t in ta if t not in tb)
    return {"voluntary": vol, "nonvoluntary": nonvol, "ticks": ka - kb, "threads": len(ta),
            "threads_started": len([t for t in ta if t not in tb]), "threads_ended": len([t for t in tb if t not in ta])}


def rss(pid):
    return proc_status(pid, "VmRSS", "VmHWM")  # KiB


GET_LINE = b'{"jsonrpc":"2.0","id":1,"method":"get"}\n'


def set_line(mode, id=2):
    return b'{"jsonrpc":"2.0","id":%d,"method":"set","params":{"override":"%s"}}\n' % (id, mode.encode())


def socket_get(path, timeout=5.0):
    """One `get` as appearancectl makes it: a fresh connection, one line out, one line back; ms, or None."""
    t0 = time.perf_counter()
    done, _ = request(path, GET_LINE, timeout)
    return None if done is None else (done - t0) * 1000


def request(path, line, timeout=5.0):
    """One request on a fresh connection; (the moment its reply line was complete, the reply) or (None, None)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.sendall(line)
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                return None, None
            buf += chunk
        return time.perf_counter(), json.loads(buf)
    except (OSError, ValueError):
        return None, None
    finally:
        s.close()


class Subscriber:
    """A subscribed connection read by a thread of its own, blocked in recv: every `changed` line is stamped
    (time.perf_counter: CLOCK_MONOTONIC, as the probe's and the stand-ins' stamps) when the recv that completed
    it returns, so that a notification arriving before a `set` reply is stamped when it arrives. `changes`:
    [(stamp, mode)]; `mode`: the last one said (known once the constructor returns)."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(5)
        self.s.connect(path)
        self.s.settimeout(None)
        self.s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"subscribe"}\n')
        self.changes, self.mode, self.cond = [], None, threading.Condition()
        self.t = threading.Thread(target=self.read, daemon=True)
        self.t.start()
        with self.cond:
            self.cond.wait_for(lambda: self.mode is not None, 5)

    def read(self):
        buf = b""
        while True:
            try:
                chunk = self.s.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            now = time.perf_counter()
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                state = msg.get("result") or msg.get("params") or {}
                with self.cond:
                    self.mode = state.get("mode", self.mode)
                    if msg.get("method") == "changed":
                        self.changes.append((now, self.mode))
                    self.cond.notify_all()

    def wait_change(self, count, timeout=5.0):
        """(stamp, mode) of the count-th `changed` line, or None after `timeout` s."""
        with self.cond:
            self.cond.wait_for(lambda: len(self.changes) >= count, timeout)
            return self.changes[count - 1] if len(self.changes) >= count else None

    def close(self):
        try:
            self.s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.t.join(2)
        self.s.close()


class Hold:
    """N socket subscribers kept connected by a probe process (`stack`: anything with .socket and .env)."""

    def __init__(self, stack, probe, n):
        self.p = subprocess.Popen([probe, "hold", stack.socket, str(n)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=stack.env)
        if self.p.stdout.readline().strip() != "ready":
            raise SystemExit(f"hold {n} failed")

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    q = a.quick
    out = a.out
    os.makedirs(out, exist_ok=True)
    R = {"quick": q, "samples": {}}

    # 10,000 subscribers need 10,000 descriptors in the daemon and in the probe: the daemon raises nothing
    # itself, so everything here runs with the soft limit at the hard limit.
    soft, hard = raise_nofile()
    R["nofile"] = {"before": soft, "used": hard}
    if hard < 10100:
        raise SystemExit(f"the hard limit of open files is {hard}: 10,000 subscribers need more")
    probe = build_probe("bench")

    R["machine"] = {
        "nproc": os.cpu_count(),
        "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
        "kernel": platform.release(),
        "swift": subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[0]
        if shutil.which("swift") else "?",
        "portal": subprocess.run(["dpkg-query", "-W", "-f=${Version}", "xdg-desktop-portal"], capture_output=True,
                                 text=True).stdout,
        "date": now(),
        "load_before": load(),
    }
    log("machine", R["machine"])

    st = Stack(a.bin_dir)
    on_sigterm_exit()
    try:
        run(st, probe, R, q, out)
    finally:
        st.close()
        os.unlink(probe)
    R["machine"]["load_after"] = load()
    json.dump(R, open(os.path.join(out, "summary.json"), "w"), indent=1)
    open(os.path.join(out, "summary.md"), "w").write(summary_md(R))
    fanout_svg(R, os.path.join(out, "fanout.svg"))
    print(summary_md(R))


def run(st, probe, R, q, out):
    st.start_session()
    subprocess.run([probe, "readrtt", "3"], env=st.env, check=True, capture_output=True)  # activate the portal
    st.start_daemon()
    assert st.ctl("get").stdout == "light\n", st.ctl("get", "--json").stdout
    dpid = st.daemon.pid
    ppid, gpid = st.bus_pid(PORTAL), st.bus_pid("org.freedesktop.impl.portal.desktop.gtk")
    log("pids: appearanced", dpid, "portal", ppid, "gtk", gpid)

    # --- RSS, idle (nothing subscribed yet) ---
    time.sleep(1)
    R["rss"] = {"appearanced idle": rss(dpid), "xdg-desktop-portal idle": rss(ppid),
                "xdg-desktop-portal-gtk idle": rss(gpid)}

    # --- idle wake-ups with 100 subscribers ---
    window = 10 if q else 60
    h = Hold(st, probe, 100)
    time.sleep(5)  # let the burst of 100 connections settle (idle Dispatch worker threads end)
    pids = (("appearanced", dpid), ("xdg-desktop-portal", ppid), ("xdg-desktop-portal-gtk", gpid))
    before = {n: proc_counters(p) for n, p in pids}
    log(f"idle window {window} s")
    time.sleep(window)
    after = {n: proc_counters(p) for n, p in pids}
    h.close()
    R["idle"] = {"window_s": window, "subscribers": 100,
                 "procs": {n: idle_delta(before[n], after[n]) for n in before}}
    write_csv(os.path.join(out, "idle.csv"), ["process", "window_s", "voluntary_ctxt_switches",
                                              "nonvoluntary_ctxt_switches", "cpu_ticks", "threads",
                                              "threads_started", "threads_ended"],
              [[n, window, v["voluntary"], v["nonvoluntary"], v["ticks"], v["threads"], v["threads_started"],
                v["threads_ended"]] for n, v in R["idle"]["procs"].items()])

    # --- RSS with 1,000 and 10,000 subscribers ---
    for n in (1000, 10000):
        dpid = st.restart_daemon()
        h = Hold(st, probe, n)
        time.sleep(0.5)
        R["rss"][f"appearanced {n} subscribers"] = rss(dpid)
        h.close()
    time.sleep(0.5)
    R["rss"]["appearanced after (0 subscribers)"] = rss(dpid)
    write_csv(os.path.join(out, "rss.csv"), ["what", "VmRSS_KiB", "VmHWM_KiB"],
              [[k, v["VmRSS"], v["VmHWM"]] for k, v in R["rss"].items()])

    # --- one-shot queries: CLIs and the status file, interleaved ---
    tools = {
        "appearancectl get": [st.bin_dir + "/appearancectl", "get"],
        "dbus-send Read": DBUS_SEND_READ,
        "gdbus call Read": ["/usr/bin/gdbus", "call", "--session", "--dest", PORTAL, "--object-path", PORTAL_PATH,
                            "--method", "org.freedesktop.portal.Settings.Read", "org.freedesktop.appearance",
                            "color-scheme"],
        "busctl --user call Read": BUSCTL_READ,
        "gsettings get": ["/usr/bin/gsettings", "get", "org.gnome.desktop.interface", "color-scheme"],
        "cat mode file": ["/bin/cat", st.mode_file],
        "/bin/true (exec floor)": ["/bin/true"],
    }
    R["tool_output"] = {}
    for name, argv in list(tools.items()):
        r = subprocess.run(argv, env=st.env, capture_output=True, text=True)
        R["tool_output"][name] = {"rc": r.returncode, "out": r.stdout.strip()[:120], "err": r.stderr.strip()[:200]}
        if r.returncode != 0:
            log(f"{name} does not work here ({r.stderr.strip()}); left out")
            del tools[name]
    runs = 300 if q else 1000
    warm = 20
    log(f"one-shot queries: {len(tools)} tools x {runs} runs, interleaved")
    samples = interleaved(tools, runs, st.env, warm)
    # The shell's read builtin: one bash loop, each iteration timed with EPOCHREALTIME (µs resolution).
    loops = 3000 if not q else 1000
    script = ('f=$1; for ((i=0;i<$2;i++)); do s=$EPOCHREALTIME; read -r m < "$f"; e=$EPOCHREALTIME; '
              'echo "${s/./} ${e/./} $m"; done')
    r = subprocess.run(["/bin/bash", "-c", script, "bash", st.mode_file, str(loops + warm)], env=st.env,
                       capture_output=True, text=True, check=True)
    lines = r.stdout.split("\n")[warm:-1]
    assert all(l.split()[2] in ("light", "dark") for l in lines)
    samples["bash read builtin"] = [(int(l.split()[1]) - int(l.split()[0])) * 1000 for l in lines]
    write_csv(os.path.join(out, "oneshot.csv"), ["tool", "run", "ns"],
              [[n, k, v] for n, s in samples.items() for k, v in enumerate(s)])
    R["samples"]["oneshot"] = {n: stats(s) for n, s in samples.items()}
    # pairwise ratios against dbus-send: run i of tool X over run i of dbus-send (same round), median of those
    base = samples["dbus-send Read"]
    R["ratios_vs_dbus_send"] = {}
    for n, s in samples.items():
        if n == "bash read builtin":
            R["ratios_vs_dbus_send"][n] = median(s) / median(base)
        else:
            R["ratios_vs_dbus_send"][n] = median([x / y for x, y in zip(s, base)])

    # --- change latency, 1 subscriber; and the Read round trip the daemon adds ---
    st.restart_daemon()
    rounds = 60 if q else 300
    log(f"change latency: {rounds} gsettings switches")
    rows, lost = run_probe([probe, "sock", st.socket, 1, rounds, "portal"], st.env)
    R["timeouts"] = {"change latency": lost}
    added = lasts(rows)
    write_csv(os.path.join(out, "change.csv"), ["round", "added_ns"], enumerate(added))
    r = subprocess.run([probe, "readrtt", str(rounds + 1)], env=st.env, capture_output=True, text=True, check=True)
    read = [int(x) for x in r.stdout.split()[1:]]
    write_csv(os.path.join(out, "read_rtt.csv"), ["call", "ns"], enumerate(read))
    R["samples"]["change_added"] = stats(added)
    R["samples"]["read_rtt"] = stats(read)
    R["read_share"] = median(read) / median(added)

    # --- fan-out to N subscribers vs dbus-daemon to N match-rule listeners ---
    conf = os.path.join(st.root, "fanout-bus.conf")
    open(conf, "w").write(FANOUT_BUS_CONF)
    fbus, faddr = st.start_bus("fanout-bus", conf)
    fan_rows = []
    R["fanout"] = {}

    def fan(what, n, argv):
        rows, to = run_probe(argv, st.env)
        if to:
            R["timeouts"][f"{what} N={n}"] = to
            log(f"{len(to)} rounds timed out: {to[0]}")
        return rows

    for n in (1, 100, 1000, 10000):
        k = (6 if n == 10000 else 10) if q else (30 if n == 10000 else 60)
        # appearanced: a portal change and `set` requests in turn on the same subscribers and daemon
        # (probe `mixed`: portal, set, set back to system, ...), so both see the machine in the same state.
        log(f"fan-out appearanced N={n}: {k} portal changes and {2 * k} set requests, interleaved")
        st.restart_daemon()
        rows = fan("appearanced", n, [probe, "sock", st.socket, n, 3 * k, "mixed"])
        runs = [("appearanced (portal change)", [x for x in rows if x["trigger"] == "portal"]),
                ("appearanced (set request)", [x for x in rows if x["trigger"] == "set"])]
        log(f"fan-out dbus-daemon signal N={n} x {k}")
        runs.append(("dbus-daemon signal", fan("dbus-daemon signal", n, [probe, "dbus", faddr, n, k])))
        for what, rr in runs:
            last = lasts(rr)
            first = [int(x["first"]) - int(x["t0"]) for x in rr]
            fan_rows += [[what, n, i, f, l] for i, (f, l) in enumerate(zip(first, last))]
            R["fanout"].setdefault(what, {})[n] = {**stats(last), "first_p50": median(first),
                                                   "first_to_last_p50": median([l - f for f, l in zip(first, last)])}
    write_csv(os.path.join(out, "fanout.csv"), ["what", "N", "round", "first_ns", "last_ns"], fan_rows)
    st.stop_bus(fbus)

    # --- start-up: exec to a `get` answered, with the warm portal and with no bus; the portal cold ---
    rounds = 15 if q else 60
    cold_rounds = 4 if q else 12
    sock2 = st.root + "/s2/socket"
    nobus = dict(st.env, DBUS_SESSION_BUS_ADDRESS=f"unix:path={st.root}/no-bus")
    su = {"appearanced, portal warm": [], "appearanced, no bus": [], "portal cold activation to first Read": []}
    log(f"start-up x {rounds}")
    for i in range(rounds):
        for name, env in (("appearanced, portal warm", st.env), ("appearanced, no bus", nobus)):
            # A state folder of its own: the running daemon holds the stack's (one daemon per state folder).
            r = subprocess.run([probe, "startup", sock2, "1", "--", st.bin_dir + "/appearanced", "--socket", sock2,
                                "--state-dir", st.root + "/s2/state"],
                               env=env, capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit("startup: " + r.stderr)
            su[name].append(int(r.stdout.split()[0]))
        if i < cold_rounds:
            # Same runtime dir (broadway's socket name depends on it): the cold bus's document portal finds
            # doc/ mounted by the warm one and gives up, which the Settings portal does not need.
            cb, caddr = st.start_bus(f"cold-bus-{i}")
            r = subprocess.run([probe, "readrtt", "1"], env=dict(st.env, DBUS_SESSION_BUS_ADDRESS=caddr),
                               capture_output=True, text=True)
            st.stop_bus(cb, unmount=False)
            if r.returncode != 0:
                raise SystemExit("cold portal: " + r.stderr)
            su["portal cold activation to first Read"].append(int(r.stdout.split(",")[1]))
            time.sleep(0.5)  # the portal and its backend leave with their bus
    write_csv(os.path.join(out, "startup.csv"), ["what", "run", "ns"],
              [[k, i, v] for k, s in su.items() for i, v in enumerate(s)])
    R["samples"]["startup"] = {k: stats(s) for k, s in su.items()}

    # `set` throughput (group commit, durability after SIGKILL): bench/set_throughput.py.


def ms(ns):
    return f"{ns / 1e6:.2f} ms"


def summary_md(R):
    o = []
    m = R["machine"]
    o.append(f"Machine: {m['nproc']} CPUs, {m['cpu']}, Linux {m['kernel']}, {m['swift']}, xdg-desktop-portal "
             f"{m['portal']}; {m['date']}; load before {' '.join(m['load_before'])}, after "
             f"{' '.join(m.get('load_after', ['?']))}; {'quick' if R['quick'] else 'full'} run; "
             f"RLIMIT_NOFILE soft {R['nofile']['before']} raised to {R['nofile']['used']}.\n")
    o.append("| one-shot query | n | median | p99 | × dbus-send (median of paired ratios) |")
    o.append("|---|---|---|---|---|")
    for n, s in R["samples"]["oneshot"].items():
        o.append(f"| {n} | {s['n']} | {ms(s['p50'])} | {ms(s['p99'])} | {R['ratios_vs_dbus_send'][n]:.3f} |")
    c, rd = R["samples"]["change_added"], R["samples"]["read_rtt"]
    o.append("")
    o.append(f"Change latency added over a direct D-Bus listener (1 subscriber, n={c['n']}): p50 {ms(c['p50'])}, "
             f"p99 {ms(c['p99'])}; the verifying portal Read alone (n={rd['n']}): p50 {ms(rd['p50'])}, p99 "
             f"{ms(rd['p99'])} = {R['read_share'] * 100:.0f} % of the added p50.\n")
    o.append("| fan-out, time to the last subscriber | N | rounds | p50 | p99 | first p50 | first → last p50 |")
    o.append("|---|---|---|---|---|---|---|")
    for what, byn in R["fanout"].items():
        for n, s in byn.items():
            o.append(f"| {what} | {n} | {s['n']} | {ms(s['p50'])} | {ms(s['p99'])} | {ms(s['first_p50'])} | "
                     f"{ms(s['first_to_last_p50'])} |")
    d = R["fanout"]["dbus-daemon signal"]
    for what in ("appearanced (portal change)", "appearanced (set request)"):
        o.append(f"\n{what} / dbus-daemon, p50: " + ", ".join(
            f"N={n}: {R['fanout'][what][n]['p50'] / d[n]['p50']:.2f}×" for n in d))
    pc, sr = R["fanout"]["appearanced (portal change)"], R["fanout"]["appearanced (set request)"]
    def times(a, b):
        return f"{a / b:.2f}×" if b else "—"  # one subscriber: first and last are the same moment
    o.append("\nappearanced, portal change / set request (same subscribers, interleaved), p50 to the last: " + ", ".join(
        f"N={n}: {times(pc[n]['p50'], sr[n]['p50'])} (first → last {times(pc[n]['first_to_last_p50'], sr[n]['first_to_last_p50'])})"
        for n in pc))
    i = R["idle"]
    o.append(f"\nIdle over {i['window_s']} s with {i['subscribers']} subscribers:\n")
    o.append("| process | voluntary ctx switches | nonvoluntary | CPU ticks | threads (started, ended) |")
    o.append("|---|---|---|---|---|")
    for n, v in i["procs"].items():
        o.append(f"| {n} | {v['voluntary']} | {v['nonvoluntary']} | {v['ticks']} | {v['threads']} "
                 f"({v['threads_started']}, {v['threads_ended']}) |")
    o.append("\n| memory | VmRSS | VmHWM |")
    o.append("|---|---|---|")
    for n, v in R["rss"].items():
        o.append(f"| {n} | {v['VmRSS'] / 1024:.1f} MiB | {v['VmHWM'] / 1024:.1f} MiB |")
    o.append("\n| start-up | n | median | p99 |")
    o.append("|---|---|---|---|")
    for n, s in R["samples"]["startup"].items():
        o.append(f"| {n} | {s['n']} | {ms(s['p50'])} | {ms(s['p99'])} |")
    to = {k: len(v) for k, v in R.get("timeouts", {}).items() if v}
    if to:
        o.append(f"\nRounds lost (no notification within 5 s, left out of the figures): {to}")
    return "\n".join(o) + "\n"


def fanout_svg(R, path):
    """Fan-out time to the last subscriber vs N, log-log, p50 lines with p99 whiskers. Hand-rolled SVG."""
    import math
    W, H, L, Rm, T, B = 720, 440, 80, 240, 40, 60
    series = [("appearanced (portal change)", "#d9480f"), ("appearanced (set request)", "#f59f00"),
              ("dbus-daemon signal", "#1c7ed6")]
    ns = [1, 100, 1000, 10000]
    vals = [v for name, _ in series for n in ns for v in (R["fanout"][name][n]["p50"], R["fanout"][name][n]["p99"])]
    lo = 10 ** math.floor(math.log10(min(vals) / 1e6))
    hi = 10 ** math.ceil(math.log10(max(vals) / 1e6))
    def x(n):
        return L + (math.log10(n) / 4) * (W - L - Rm)
    def y(v_ms):
        return T + (1 - (math.log10(v_ms) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))) * (H - T - B)
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
         'font-family="DejaVu Sans, sans-serif" font-size="13">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{L}" y="24" font-size="15" font-weight="bold">Fan-out: one change, time until the last of N '
         'listeners has it</text>']
    d = lo
    while d <= hi * 1.0001:
        yy = y(d)
        s.append(f'<line x1="{L}" y1="{yy:.1f}" x2="{W - Rm}" y2="{yy:.1f}" stroke="#ddd"/>')
        s.append(f'<text x="{L - 8}" y="{yy + 4:.1f}" text-anchor="end">{d:g} ms</text>')
        d *= 10
    for n in ns:
        s.append(f'<line x1="{x(n):.1f}" y1="{T}" x2="{x(n):.1f}" y2="{H - B}" stroke="#eee"/>')
        s.append(f'<text x="{x(n):.1f}" y="{H - B + 18}" text-anchor="middle">{n:,}</text>')
    s.append(f'<text x="{(L + W - Rm) / 2:.0f}" y="{H - 18}" text-anchor="middle">N listeners (log)</text>')
    s.append(f'<rect x="{L}" y="{T}" width="{W - L - Rm}" height="{H - T - B}" fill="none" stroke="#888"/>')
    for k, (name, col) in enumerate(series):
        pts = " ".join(f"{x(n) + (k - 1) * 7:.1f},{y(R['fanout'][name][n]['p50'] / 1e6):.1f}" for n in ns)
        s.append(f'<polyline points="{pts}" fill="none" stroke="{col}" stroke-width="2.5"/>')
        for n in ns:
            v = R["fanout"][name][n]
            xx, y50, y99 = x(n) + (k - 1) * 7, y(v["p50"] / 1e6), y(v["p99"] / 1e6)  # whiskers side by side
            s.append(f'<line x1="{xx:.1f}" y1="{y50:.1f}" x2="{xx:.1f}" y2="{y99:.1f}" stroke="{col}" stroke-width="1.5"/>')
            s.append(f'<line x1="{xx - 5:.1f}" y1="{y99:.1f}" x2="{xx + 5:.1f}" y2="{y99:.1f}" stroke="{col}" stroke-width="1.5"/>')
            s.append(f'<circle cx="{xx:.1f}" cy="{y50:.1f}" r="4" fill="{col}"/>')
        ly = T + 20 + k * 44
        s.append(f'<line x1="{W - Rm + 16}" y1="{ly}" x2="{W - Rm + 40}" y2="{ly}" stroke="{col}" stroke-width="2.5"/>')
        words = name.split(" (")
        s.append(f'<text x="{W - Rm + 46}" y="{ly + 4}">{words[0]}</text>')
        if len(words) > 1:
            s.append(f'<text x="{W - Rm + 46}" y="{ly + 20}" fill="#555">({words[1]}</text>')
    s.append(f'<text x="{W - Rm + 16}" y="{T + 20 + 3 * 44}" fill="#555">dot: median; whisker</text>')
    s.append(f'<text x="{W - Rm + 16}" y="{T + 36 + 3 * 44}" fill="#555">to p99</text>')
    s.append("</svg>")
    open(path, "w").write("\n".join(s) + "\n")


if __name__ == "__main__":
    main()
