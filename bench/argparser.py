#!/usr/bin/python3
"""swift-argument-parser's start-up cost (docs/decisions.md, "Argument parsing"): `appearancectl get` as
shipped (hand parser) against the same `get` parsed by swift-argument-parser 1.8.2 (bench/argparser), both
release builds with the static Swift runtime, against one running daemon, alternating, whole process; and
their instruction counts with callgrind. Writes argparser.json to --out.
"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import Daemon, alternate, arguments, instructions, write_json  # noqa: E402
import variant  # noqa: E402


def main():
    ap = arguments()
    ap.add_argument("--runs", type=int, default=1000)
    a = ap.parse_args()
    pkg = os.path.join(HERE, "argparser")
    os.makedirs(os.path.join(pkg, ".build-link"), exist_ok=True)
    link = os.path.join(pkg, ".build-link", "appearanced")
    if not os.path.islink(link):
        os.symlink(os.path.dirname(HERE), link)
    cmds = {"hand parser": [a.bin_dir + "/appearancectl", "get"],
            "swift-argument-parser": [variant.swift_build(pkg) + "/appearancectl-ap", "get"]}
    d = Daemon(a.bin_dir)
    try:
        samples = alternate(cmds, a.runs, d.env)
        result = {k: {"runs": len(v), "p50_ms": statistics.median(v)} for k, v in samples.items()}
        result["difference_p50_ms"] = result["swift-argument-parser"]["p50_ms"] - result["hand parser"]["p50_ms"]
        # valgrind 3.19 cannot read the DWARF 5 debug info of these binaries: counted on copies without it.
        result["instructions"] = {k: instructions(argv, d.env, strip=("-g",))[0] for k, argv in cmds.items()}
    finally:
        d.close()
    write_json(a.out, "argparser", result)


if __name__ == "__main__":
    main()
