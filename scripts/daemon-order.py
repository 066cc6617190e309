#!/usr/bin/python3
"""Writes link/appearanced.order: the functions appearanced runs after its start-up, in the order they first run,
for lld's --symbol-ordering-file (Package.swift). Laid out together, the code the daemon keeps resident fills
fewer pages (docs/decisions.md, "appearanced's functions are laid out together too"; figures: bench/rss.py). The
start-up's own functions are left to lld's order after them: their pages are let go once it serves, and
listing them too measured the same (idle RSS and start-up time, docs/benchmarks.md).

Runs a release build's appearanced under callgrind on the real portal stack of bench/bench.py (private bus,
xdg-desktop-portal with its GTK backend), through what a session does: start, subscribers, portal changes,
`set`, `get`, `status`, `toggle`, a crowd of subscribers coming and going; then stops it and reads the
functions callgrind met before and after the start-up's release of its pages (a dump at
cposix_release_readonly_pages), in the order it met them.

    make daemon-order   (or: python3 scripts/daemon-order.py BIN_DIR)

A stale file costs memory, never correctness: lld places the symbols it finds and ignores the rest
(--no-warn-symbol-ordering). Needs valgrind and the test packages (the portal stack).
"""
import importlib
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "link", "appearanced.order")
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench import Hold, Stack  # noqa: E402
from change_latency import sock, start_session, use, without_debug_info  # noqa: E402
from hostile import build_probe  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "scripts"))
first_met = importlib.import_module("cli-order").first_met
RELEASE = "cposix_release_readonly_pages"


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: daemon-order.py BIN_DIR (a release build: swift build -c release --static-swift-stdlib)")
    bin_dir = os.path.abspath(sys.argv[1])
    probe = build_probe("order")
    st = Stack(bin_dir)
    try:
        start_session(st, probe)
        out = os.path.join(st.root, "callgrind.out")
        use(st, without_debug_info(st, bin_dir), ["valgrind", "--tool=callgrind", "--demangle=no",
                                                  f"--dump-before={RELEASE}", f"--callgrind-out-file={out}"])
        sock(st, probe, 2, 4, "portal")
        sock(st, probe, 2, 4, "set")
        for args in (["get"], ["get", "--json"], ["status"], ["set", "dark"], ["toggle"], ["set", "system"],
                     ["log"], ["apps"]):
            st.ctl(*args)
        Hold(st, probe, 50).close()
        time.sleep(0.5)
        st.daemon.terminate()  # callgrind writes its file as the daemon exits
        st.daemon.wait(timeout=30)
        # out.1: the start-up, up to the release; out.2 (or out): the rest.
        dumps = sorted((p for p in os.listdir(st.root) if p.startswith("callgrind.out")), key=len)
        parts = []
        for name in dumps:
            with open(os.path.join(st.root, name), encoding="utf-8", errors="replace") as f:
                parts.append(list(first_met(f)))
        if len(parts) != 2:
            raise SystemExit(f"expected the start-up and the rest as two dumps, found {dumps}")
        startup, later = (parts[1], parts[0]) if dumps[0] == "callgrind.out" else (parts[0], parts[1])
        seen = dict.fromkeys(later)
    finally:
        st.close()
        os.unlink(probe)
    if len(seen) < 500 or not startup:
        raise SystemExit(f"only {len(seen)} functions seen: did the daemon run under callgrind?")
    # Only what lld can place: the shared libraries' functions (libc, libstdc++, libdbus) are not in the binary.
    own = set(subprocess.run(["nm", "--defined-only", "--format=just-symbols", bin_dir + "/appearanced"],
                             capture_output=True, text=True, check=True, timeout=120).stdout.split())
    seen = [name for name in seen if name in own]
    with open(OUT, "w") as f:
        f.write("".join(name + "\n" for name in seen))
    print(f"{len(seen)} functions that run after the start-up written to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
