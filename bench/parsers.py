#!/usr/bin/python3
"""The worst 1 MiB shapes for the config reader (docs/reliability.md): each is written to a file and checked with
`appearanced --check --config FILE` (parse or refuse, then exit), 20 runs each, beside a one-line config: the
difference of the medians is the parse. Writes parsers.json to --out.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import arguments, write_json  # noqa: E402

MIB = (1 << 20) - 64  # just under the 1 MiB limit on config files


def shapes():
    yield "one-line config (baseline)", 'default-mode = "dark"\n'
    yield "50,000-deep array", "x = " + "[" * 50_000 + "]" * 50_000 + "\n"
    yield "20,000 nested inline tables", "x = " + "{a = " * 20_000 + "1" + "}" * 20_000 + "\n"
    yield "60,000-part dotted key", ".".join(["a"] * 60_000) + " = 1\n"
    n = (MIB - 6) // 4
    yield "1 MiB one-line array", "x = [" + ",".join(["100"] * n) + "]\n"
    keys, size, lines = 0, 4, ["[t]"]
    while size < MIB:
        line = f"k{keys} = {keys}"
        lines.append(line)
        size += len(line) + 1
        keys += 1
    yield f"1 MiB table ({keys:,} keys)", "\n".join(lines) + "\n"
    yield "1 MiB of one long string", 'x = "' + "a" * (MIB - 6) + '"\n'


def run(binary, path, env):
    t0 = time.perf_counter()
    r = subprocess.run([binary, "--check", "--config", path], env=env, capture_output=True, text=True)
    return (time.perf_counter() - t0) * 1000, r.returncode, (r.stdout + r.stderr).strip()[:120]


def main():
    ap = arguments()
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="appearanced-bench-parsers-")
    env = {"PATH": "/usr/bin:/bin", "HOME": root, "XDG_CONFIG_HOME": root}
    results = []
    for name, text in shapes():
        path = os.path.join(root, "config.toml")
        with open(path, "w") as f:
            f.write(text)
        samples, outcome = [], None
        for _ in range(a.runs):
            ms, rc, out = run(a.bin_dir + "/appearanced", path, env)
            samples.append(ms)
            outcome = (rc, out)
        results.append({"shape": name, "bytes": len(text.encode()), "median_ms": statistics.median(samples),
                        "max_ms": max(samples), "exit": outcome[0], "said": outcome[1]})
    base = results[0]["median_ms"]
    for r in results:
        r["parse_ms"] = round(r["median_ms"] - base, 2)
    write_json(a.out, "parsers", results, echo=False)
    for r in results:
        print(f"{r['shape']:34} {r['bytes']:>9} B  median {r['median_ms']:7.2f} ms  parse {r['parse_ms']:7.2f} ms  exit {r['exit']}  {r['said']}")


if __name__ == "__main__":
    main()
