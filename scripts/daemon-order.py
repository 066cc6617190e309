#!/usr/bin/python3
"""Writes Sources/appearanced/hot-functions.order: the functions appearanced runs, in the order they first
run, for lld's --symbol-ordering-file (Package.swift). Laid out together, the code the daemon keeps resident
fills fewer pages (docs/decisions.md, "appearanced's functions laid out together"; figures: bench/rss.py).

Runs a release build's appearanced under callgrind on the real portal stack of bench/bench.py (private bus,
xdg-desktop-portal with its GTK backend), through what a session does: start, subscribers, portal changes,
`set`, `get`, `status`, `toggle`, a crowd of subscribers coming and going; then stops it and reads the
functions callgrind met, in the order it met them.

    make daemon-order   (or: python3 scripts/daemon-order.py BIN_DIR)

A stale file costs memory, never correctness: lld places the symbols it finds and ignores the rest
(--no-warn-symbol-ordering). Needs valgrind and the test packages (the portal stack).
"""
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Sources", "appearanced", "hot-functions.order")
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench import Hold, Stack  # noqa: E402
from change_latency import sock, start_session, use  # noqa: E402
from hostile import build_probe  # noqa: E402


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: daemon-order.py BIN_DIR (a release build: swift build -c release --static-swift-stdlib)")
    bin_dir = os.path.abspath(sys.argv[1])
    probe = build_probe("order")
    st = Stack(bin_dir)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "callgrind.out")
        try:
            start_session(st, probe)
            # valgrind 3.19 cannot read the DWARF 5 debug info of the Swift binaries: a copy without it, same
            # code and symbols, beside the same appearancectl.
            subprocess.run(["strip", "-g", "-o", os.path.join(d, "appearanced"), bin_dir + "/appearanced"],
                           check=True, timeout=60)
            os.symlink(bin_dir + "/appearancectl", os.path.join(d, "appearancectl"))
            use(st, d, ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}"])
            sock(st, probe, 2, 4, "portal")
            sock(st, probe, 2, 4, "set")
            for args in (["get"], ["get", "--json"], ["status"], ["set", "dark"], ["toggle"], ["set", "system"],
                         ["log"], ["apps"]):
                st.ctl(*args)
            Hold(st, probe, 50).close()
            time.sleep(0.5)
        finally:
            st.close()  # SIGTERM: callgrind writes its file as the daemon exits
            os.unlink(probe)
        seen = {}
        for line in open(out, encoding="utf-8", errors="replace"):
            m = re.match(r"^c?fn=\(\d+\) (\S+)", line)
            if m and not m.group(1).startswith("0x"):
                seen.setdefault(re.sub(r"'\d+$", "", m.group(1)), None)
    if len(seen) < 500:
        raise SystemExit(f"only {len(seen)} functions seen: did the daemon run under callgrind?")
    with open(OUT, "w") as f:
        f.write("".join(name + "\n" for name in seen))
    print(f"{len(seen)} functions written to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
