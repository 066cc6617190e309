#!/usr/bin/python3
"""A mode change with ten integrations enabled (docs/benchmarks.md, "Integrations").

Two daemons of the same build, each in a private HOME and XDG dirs with the repository's integrations
(APPEARANCED_INTEGRATIONS_DIR): one with none enabled, one with ten (gtk, qt, neovim, vim, tmux, kitty, foot,
alacritty, emacs, vscode: the eleven but the wallpaper, which needs images). Per round, alternating between
the two: a `set` of the other mode on a fresh connection; a subscriber's notification moment minus the moment
the `set` was sent; and, for the daemon with ten, the moment the last of them has finished (the `integrations`
method polled until every one's `runs` went up), minus the same start. Prints the figures (p50/p99/max) and
writes integrations.json to --out when given.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import hostile  # noqa: E402  (percentiles)

TEN = ["gtk", "qt", "neovim", "vim", "tmux", "kitty", "foot", "alacritty", "emacs", "vscode"]


class Instance(bench.Daemon):
    """A daemon in a private HOME and XDG dirs (the integrations' files go there) with `enabled` enabled."""

    def __init__(self, bin_dir, enabled):
        super().__init__(bin_dir, prefix="appearanced-bench-integrations-", start=False)
        r = self.root
        for d in ("home", "data"):
            os.makedirs(os.path.join(r, d), mode=0o700)
        self.env.update({"HOME": r + "/home", "XDG_DATA_HOME": r + "/data", "XDG_DATA_DIRS": r + "/data",
                         "TMUX_TMPDIR": r + "/runtime", "TMPDIR": r + "/runtime",
                         "APPEARANCED_INTEGRATIONS_DIR": os.path.join(bench.REPO, "integrations")})
        self.start()
        self.enabled = enabled
        if enabled:
            _, reply = bench.request(self.socket, json.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "integrations", "params": {"enable": enabled}}).encode() + b"\n")
            if not reply or "result" not in reply:
                raise SystemExit(f"enabling failed: {reply}")
            self.wait_runs({n: 0 for n in enabled}, time.time() + 30)
        self.sub = bench.Subscriber(self.socket)
        self.mode = "light"

    def runs(self):
        _, reply = bench.request(self.socket, b'{"jsonrpc":"2.0","id":2,"method":"integrations"}\n')
        return {i["name"]: (i["runs"], (i.get("last") or {}).get("result")) for i in reply["result"]["integrations"]}

    def wait_runs(self, before, deadline):
        """The moment every enabled integration has finished one more run than in `before`, and their results."""
        while time.time() < deadline:
            now = self.runs()
            if all(now[n][0] > before[n] for n in self.enabled):
                return time.perf_counter(), {n: now[n][1] for n in self.enabled}
            time.sleep(0.001)
        raise SystemExit("the integrations did not finish in time")

    def round(self):
        self.mode = "dark" if self.mode == "light" else "light"
        before = {n: r for n, (r, _) in self.runs().items()} if self.enabled else {}
        count = len(self.sub.changes) + 1
        t0 = time.perf_counter()
        t_reply, _ = bench.request(self.socket, bench.set_line(self.mode, 3))
        note = self.sub.wait_change(count)
        if t_reply is None or note is None:
            raise SystemExit("a set or its notification was lost")
        last = results = None
        if self.enabled:
            t_last, results = self.wait_runs(before, time.time() + 30)
            last = (t_last - t0) * 1000
        return (note[0] - t0) * 1000, last, results

    def close(self):
        self.sub.close()
        super().close()


def main():
    ap = bench.arguments(out=False)
    ap.add_argument("--rounds", type=int, default=40)
    a = ap.parse_args()
    bin_dir = os.path.abspath(a.bin_dir)
    none, ten = Instance(bin_dir, []), Instance(bin_dir, TEN)
    try:
        notes = {"none": [], "ten": []}
        lasts, failed = [], set()
        for _ in range(a.rounds):
            notes["none"].append(none.round()[0])
            note, last, results = ten.round()
            notes["ten"].append(note)
            lasts.append(last)
            failed |= {f"{n}: {r}" for n, r in results.items() if r != "ok"}
        result = {"rounds": a.rounds, "integrations": TEN,
                  "notification_after_set_ms": {"none enabled": hostile.percentiles(notes["none"]),
                                                "ten enabled": hostile.percentiles(notes["ten"])},
                  "last_integration_done_after_set_ms": hostile.percentiles(lasts),
                  "failed_runs": sorted(failed)}
    finally:
        none.close()
        ten.close()
    bench.write_json(a.out, "integrations", result)


if __name__ == "__main__":
    main()
