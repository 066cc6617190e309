#!/usr/bin/python3
"""`appearancectl get` against its floor (docs/benchmarks.md, "The CLI at the floor"; docs/decisions.md, "How
appearancectl is linked").

Builds appearancectl as shipped (a static executable, its hot functions laid out together), beside it the
same without that order and as it was linked before (dynamic glibc, libstdc++ and libm), each from its own copy
of the tree (bench/variant.py cli-unordered, cli-dynamic), the same compiled with direct metadata accessors
(variant.ACCESSORS_FLAGS on the command line), and the minimal C client bench/floor.c. Then,
on the real portal stack of bench/bench.py (private bus, xdg-desktop-portal with its GTK backend, one running
appearanced):
  - instructions (callgrind, repeatable on a noisy machine) for appearancectl get, get --json, set, toggle,
    status and the error path (no daemon), both links; /bin/true and the C client;
  - page faults of one run (minor faults, from wait4), every build of `get`, the C client and /bin/true;
  - wall time, exec to exit, interleaved run by run: every appearancectl build, the C client, /bin/true and
    `dbus-send --print-reply` of the portal's Settings.Read; ratios are medians of run-by-run ratios;
  - appearanced (whose link did not change) from exec to answering, and its idle RSS.
Writes cli_floor.json to --out.

    make bench  (or: python3 bench/cli_floor.py --out out/bench [--runs 1000])
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import (DBUS_SEND_READ, REPO, Stack, instructions, interleaved, page_faults, rss, stats,  # noqa: E402
                   wait_until, write_json)
import variant  # noqa: E402

TIMEOUT = 600
METADATA = ("swift_getTypeByMangledName", "swift_getGenericMetadata")


def count(argv, env, expect_ok=True, metadata=None):
    """instructions() on a copy without debug info; with `metadata` (a dict), also notes which of the runtime's
    generic-metadata entry points the run reached (METADATA)."""
    total, text = instructions(argv, env, strip=("-g",), expect_ok=expect_ok)
    if metadata is not None:
        metadata[" ".join(os.path.basename(x) for x in argv)] = [m for m in METADATA if m in text]
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=1000)
    a = ap.parse_args()
    shipped = variant.swift_build(REPO)
    unordered = variant.build("cli-unordered", "appearancectl")
    dynamic = variant.build("cli-dynamic", "appearancectl")
    # The compiler option measured and not adopted (docs/decisions.md): metadata by accessor, not mangled name.
    accessors = variant.swift_build(REPO, *variant.ACCESSORS_FLAGS, "--product", "appearancectl", "--scratch-path",
                                    os.path.join(REPO, ".build-accessors-cli"))
    floor = os.path.join(tempfile.gettempdir(), f"appearanced-floor-{os.getpid()}")
    subprocess.run(["cc", "-O2", "-o", floor, os.path.join(HERE, "floor.c")], check=True, timeout=TIMEOUT)
    ctl = {"static (shipped)": shipped + "/appearancectl", "static, unordered": unordered + "/appearancectl",
           "dynamic (before)": dynamic + "/appearancectl"}
    R = {"runs": a.runs, "file": {k: {"bytes": os.path.getsize(v),
                                      "linked": subprocess.run(["file", "-b", v], capture_output=True, text=True,
                                                               timeout=TIMEOUT).stdout.split(",")[3].strip()}
                                  for k, v in ctl.items()}}

    st = Stack(shipped)
    try:
        st.start_session()
        read = DBUS_SEND_READ
        # Activates the portal and its backend, and waits until the portal answers.
        wait_until(lambda: subprocess.run(read, env=st.env, capture_output=True, timeout=TIMEOUT).returncode == 0,
                   "the portal did not answer", timeout=30, pause=0.1)

        # appearanced: exec to answering (its first `get` answered), then idle RSS.
        starts = []
        for _ in range(5 if a.runs < 500 else 20):
            t0 = time.perf_counter()
            st.start_daemon()
            starts.append((time.perf_counter() - t0) * 1000)
            st.stop_daemon()
        st.start_daemon()
        time.sleep(1)
        R["appearanced"] = {"exec_to_answering_ms_p50": round(statistics.median(starts), 2), "runs": len(starts),
                            "idle_rss_kib": rss(st.daemon.pid)["VmRSS"],
                            "linked": "dynamic (glibc, libdbus, libstdc++), unchanged"}
        assert st.ctl("get").stdout == "light\n"

        # Instructions.
        counts = {}
        for label, path in ctl.items():
            if label == "static, unordered":
                counts[label] = {"get": count([path, "get"], st.env)}  # the same code, laid out otherwise
                continue
            c = {}
            for name, args in (("get", ["get"]), ("get --json", ["get", "--json"]), ("set light", ["set", "light"]),
                               ("toggle", ["toggle"]), ("status", ["status"])):
                c[name] = count([path, *args], st.env,
                                       metadata=R.setdefault("generic_metadata_reached", {}) if label == "static (shipped)" else None)
                if name == "toggle":
                    st.ctl("set", "system")
            c["error path (no daemon)"] = count([path, "--socket", st.root + "/runtime/none", "get"], st.env,
                                                       expect_ok=False)
            counts[label] = c
        counts["static, metadata accessors (not adopted)"] = {
            name: count([accessors + "/appearancectl", *args], st.env)
            for name, args in (("get --json", ["get", "--json"]), ("status", ["status"]))}
        counts["minimal C client (floor.c)"] = {"get": count([floor, st.socket], st.env)}
        counts["/bin/true"] = {"exec": count(["/bin/true"], st.env)}
        R["instructions"] = counts

        # Page faults of one run (the kernel's count, repeatable), median of 50.
        def faults(argv):
            return page_faults(argv, st.env, 50, major=True)
        R["page_faults"] = {f"appearancectl get ({label})": faults([path, "get"]) for label, path in ctl.items()}
        R["page_faults"]["minimal C client"] = faults([floor, st.socket])
        R["page_faults"]["/bin/true"] = faults(["/bin/true"])

        # Wall time, interleaved.
        tools = {"appearancectl get (static)": [ctl["static (shipped)"], "get"],
                 "appearancectl get (static, unordered)": [ctl["static, unordered"], "get"],
                 "appearancectl get (dynamic, before)": [ctl["dynamic (before)"], "get"],
                 "minimal C client": [floor, st.socket],
                 "dbus-send Read": read,
                 "/bin/true": ["/bin/true"]}
        samples = interleaved(tools, a.runs, st.env)
        R["wall_ms"] = {n: stats([x / 1e6 for x in s], n=None, digits=3) for n, s in samples.items()}

        def ratio(x, y):
            return round(statistics.median([p / q for p, q in zip(samples[x], samples[y])]), 3)
        R["ratios"] = {
            "appearancectl get (static) / dbus-send Read": ratio("appearancectl get (static)", "dbus-send Read"),
            "appearancectl get (dynamic, before) / dbus-send Read": ratio("appearancectl get (dynamic, before)", "dbus-send Read"),
            "appearancectl get (static) / minimal C client": ratio("appearancectl get (static)", "minimal C client"),
            "appearancectl get (static) / (static, unordered)": ratio("appearancectl get (static)", "appearancectl get (static, unordered)"),
            "instructions: get (static) / minimal C client":
                round(counts["static (shipped)"]["get"] / counts["minimal C client (floor.c)"]["get"], 2),
        }
    finally:
        st.close()
        os.unlink(floor)
    write_json(a.out, "cli_floor", R)


if __name__ == "__main__":
    main()
