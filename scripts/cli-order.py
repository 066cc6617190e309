#!/usr/bin/python3
"""Writes link/appearancectl.order: the functions appearancectl runs for its common commands,
in the order they first run, then the data they touch (type metadata, caches, globals), for lld's
--symbol-ordering-file (Package.swift). Laid out together, they fill fewer pages, so a short-lived
`appearancectl get` takes fewer page faults (docs/decisions.md, "How appearancectl is linked"; the figures:
bench/cli_floor.py).

Runs each command under callgrind (functions) and lackey (every load and store, mapped to the symbols
around them) against a private appearanced with no bus, from a release build:

    make cli-order   (or: python3 scripts/cli-order.py BIN_DIR)

A stale file costs speed, never correctness: lld places the symbols it finds and ignores the rest
(--no-warn-symbol-ordering).
"""
import bisect
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "link", "appearancectl.order")
COMMANDS = [["get"], ["get", "--json"], ["set", "dark"], ["toggle"], ["status"], ["set", "system"],
            ["--socket", "/nonexistent/socket", "get"]]


def valgrind(tool, exe, args, env, out):
    """The lines valgrind's `tool` (its options, writing to `out`) wrote about one run of `exe args`."""
    subprocess.run(["valgrind", *tool, exe, *args], env=env, capture_output=True, timeout=300)
    return open(out, encoding="utf-8", errors="replace")


def functions(exe, args, env, d):
    """The symbols callgrind saw run, in the order it first met them."""
    out = os.path.join(d, "callgrind.out")
    return first_met(valgrind(["--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}"], exe, args, env, out))


def first_met(lines):
    """The function names of a callgrind file (run with --demangle=no), in the order callgrind first met
    them (its function ids follow first calls); scripts/daemon-order.py reads the daemon's the same way."""
    names = []
    for line in lines:
        m = re.match(r"^c?fn=\(\d+\) (\S+)", line)
        if m and not m.group(1).startswith("0x"):
            names.append(re.sub(r"'\d+$", "", m.group(1)))
    return names


def data(exe, args, env, d, table):
    """The data symbols (initialised, zeroed or read-only) that the command's loads and stores touch, in the
    order they are first touched."""
    starts, symbols = table
    out = os.path.join(d, "lackey.out")
    names = []
    for line in valgrind(["--tool=lackey", "--trace-mem=yes", f"--log-file={out}"], exe, args, env, out):
        m = re.match(r"^ [LSM] ([0-9a-f]+),", line)
        if not m:
            continue
        address = int(m.group(1), 16)
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0:
            start, size, name = symbols[i]
            if address < start + max(size, 1):
                names.append(name)
    return names


def data_symbols(exe):
    """(sorted starts, [(start, size, name)]) of the data symbols in `exe`, from nm."""
    out = subprocess.run(["nm", "-n", "-S", "--defined-only", exe], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "bBdDrRvV":
            symbols.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    symbols.sort()
    return [s[0] for s in symbols], symbols


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: cli-order.py BIN_DIR (a release build: swift build -c release --static-swift-stdlib)")
    bin_dir = sys.argv[1]
    root = tempfile.mkdtemp(prefix="appearanced-order-")
    env = {"PATH": "/usr/bin:/bin", "HOME": root, "XDG_RUNTIME_DIR": root + "/runtime",
           "XDG_STATE_HOME": root + "/state", "XDG_CONFIG_HOME": root + "/config",
           "DBUS_SESSION_BUS_ADDRESS": f"unix:path={root}/no-bus"}
    for d in ("runtime", "state", "config"):
        os.makedirs(os.path.join(root, d), mode=0o700)
    daemon = subprocess.Popen([bin_dir + "/appearanced"], env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while subprocess.run([bin_dir + "/appearancectl", "get"], env=env, capture_output=True, timeout=10).returncode:
            if time.time() > deadline:
                raise SystemExit("appearanced did not start")
            time.sleep(0.05)
        seen, touched = {}, {}
        with tempfile.TemporaryDirectory() as d:
            exe = os.path.join(d, "appearancectl")
            # valgrind 3.19 cannot read the DWARF 5 debug info of the Swift binaries: a copy without it, same
            # code and symbols.
            subprocess.run(["strip", "-g", "-o", exe, bin_dir + "/appearancectl"], check=True, timeout=60)
            table = data_symbols(exe)
            for args in COMMANDS:
                for name in functions(exe, args, env, d):
                    seen.setdefault(name, None)
                for name in data(exe, args, env, d, table):
                    touched.setdefault(name, None)
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)
    with open(OUT, "w") as f:
        f.write("".join(name + "\n" for name in list(seen) + [n for n in touched if n not in seen]))
    print(f"{len(seen)} functions and {len(touched)} data symbols written to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
