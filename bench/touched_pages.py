#!/usr/bin/python3
"""Which of appearanced's own file sections an idle daemon keeps resident, build beside build (docs/decisions.md,
"Packed relative relocations"). For each build, a fresh daemon on bench.py's real portal stack, 1 s after it
answers: every page of its appearanced mappings is looked up in /proc/PID/pagemap (present or not; needs root)
and counted under the ELF section (readelf -S) it belongs to. Prints KiB per section: BUILD, OTHER, difference.

    python3 bench/touched_pages.py BIN_DIR OTHER_BIN_DIR
"""
import collections
import os
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rss  # noqa: E402  (start: a fresh daemon of st.bin_dir)
from bench import Stack, build_probe  # noqa: E402
from change_latency import start_session  # noqa: E402


def sections(binary):
    """(name, address, size) of every allocated section."""
    out = []
    for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True).stdout.splitlines():
        line = line.strip()
        if not line.startswith("[") or "Nr]" in line:
            continue
        p = line.split("]", 1)[1].split()
        try:
            name, addr, size = p[0], int(p[2], 16), int(p[4], 16)
        except (ValueError, IndexError):
            continue
        if addr:
            out.append((name, addr, size))
    return out


def touched(pid, binary):
    """KiB resident per section of `binary` in process `pid`."""
    maps = []
    for line in open(f"/proc/{pid}/maps"):
        p = line.split()
        if len(p) > 5 and p[5].endswith("/appearanced"):
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            maps.append((lo, hi, int(p[2], 16), p[1]))
    bias = min(lo - off for lo, _, off, _ in maps)
    secs = sections(binary)
    kib = collections.Counter()
    with open(f"/proc/{pid}/pagemap", "rb") as f:
        for lo, hi, _, perm in maps:
            for a in range(lo, hi, 4096):
                f.seek(a // 4096 * 8)
                if struct.unpack("<Q", f.read(8))[0] >> 63 & 1:
                    va = a - bias
                    kib[next((n for n, s, z in secs if s <= va < s + max(z, 1)), "? " + perm)] += 4
    return kib


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    builds = [os.path.abspath(b) for b in sys.argv[1:]]
    probe = build_probe("pages")
    st = Stack(builds[0])
    res = {}
    try:
        start_session(st, probe)
        for b in builds:
            st.bin_dir = b
            rss.start(st)
            time.sleep(1)
            res[b] = touched(st.daemon.pid, b + "/appearanced")
    finally:
        st.close()
        os.unlink(probe)
    a, c = res[builds[0]], res[builds[1]]
    for k in sorted(set(a) | set(c), key=lambda k: -max(a[k], c[k])):
        print(f"{k:40s} {a[k]:6d} {c[k]:6d} {a[k] - c[k]:+6d}")


if __name__ == "__main__":
    main()
