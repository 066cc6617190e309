"""watch: the current state first, then each change; across daemon restarts; its deadlines."""

from __future__ import annotations

import json
import signal
import socket
import threading
from typing import Callable, List

import pytest

import appearanced
from conftest import Collector, Daemon, FakeDaemon, Sandbox, within
from test_errors import STATE, silent

Collect = Callable[[appearanced.Watch], Collector]


def test_the_current_state_first_then_each_change(daemon: Daemon, collect: Collect) -> None:
    w = collect(appearanced.watch())
    first = w.next()
    assert first["mode"] == "light" and first["previous"] is None and first["seq"] == 0
    appearanced.set("dark")
    s = w.next()
    assert (s["mode"], s["previous"], s["source"], s["darkMode"]) == ("dark", "light", "override", True)
    assert s["instance"] == first["instance"] and s["seq"] > first["seq"]


def test_each_change_and_nothing_else(daemon: Daemon, collect: Collect) -> None:
    w = collect(appearanced.watch())
    assert w.next()["mode"] == "light"
    appearanced.set("dark")
    appearanced.set("dark")  # changes nothing
    appearanced.set("dark", until="next")  # changes the source, not the mode
    appearanced.toggle()
    appearanced.toggle()
    seen = [w.next() for _ in range(3)]
    assert [(s["mode"], s["previous"]) for s in seen] == [("dark", "light"), ("light", "dark"), ("dark", "light")]
    assert seen[0]["seq"] < seen[1]["seq"] < seen[2]["seq"]


def test_an_apps_own_mode(daemon: Daemon, collect: Collect) -> None:
    w = collect(appearanced.watch(app="kitty"))
    first = w.next()
    assert (first["mode"], first.get("app")) == ("light", "kitty")
    appearanced.set("dark", app="kitty")
    s = w.next()
    assert (s["mode"], s["source"], s["previous"]) == ("dark", "app", "light")
    appearanced.set("dark")  # everyone dark: kitty is dark already
    appearanced.set("light", app="foot")  # another app's override never reaches kitty
    appearanced.set("system", app="kitty")  # kitty follows everyone's dark: no change for kitty
    appearanced.set("light")
    s = w.next()
    assert (s["mode"], s["source"], s["previous"], s["globalMode"]) == ("light", "override", "dark", "light")


def test_it_survives_a_daemon_restart(sandbox: Sandbox, daemon: Daemon, collect: Collect) -> None:
    w = collect(appearanced.watch())
    first = w.next()
    assert first["mode"] == "light"
    daemon.stop(signal.SIGKILL)
    # The new daemon starts dark (its config says so): the watch yields its state.
    sandbox.write_config('default-mode = "dark"\n')
    second = sandbox.start_daemon()
    s = w.next()
    assert (s["mode"], s["previous"], s["seq"]) == ("dark", "light", 0)
    assert s["instance"] != first["instance"]
    # Subscribed to the new daemon: its changes come.
    appearanced.set("light")
    assert w.next()["mode"] == "light"
    # A clean stop and a start in the same mode yield nothing; the next change does.
    second.stop(signal.SIGTERM)
    sandbox.write_config("")
    third = sandbox.start_daemon()
    appearanced.toggle()
    s = w.next()
    assert (s["mode"], s["previous"], s["seq"]) == ("dark", "light", 1)
    assert third.process.pid != second.process.pid


def test_without_reconnecting_a_lost_daemon_ends_it(daemon: Daemon, collect: Collect) -> None:
    w = collect(appearanced.watch(reconnect=False))
    assert w.next()["mode"] == "light"
    daemon.stop(signal.SIGTERM)
    e = w.end()
    assert isinstance(e, appearanced.ConnectionLost), e
    assert "the daemon closed the connection" in str(e)


def test_a_stopped_daemon_is_found_out(daemon: Daemon, collect: Collect) -> None:
    # After `keepalive` seconds of silence the daemon is asked; a stopped one does not answer in time. (The
    # default timeout: a live daemon's replies must never be late on a busy machine.)
    w = collect(appearanced.watch(keepalive=0.2, reconnect=False))
    assert w.next()["mode"] == "light"
    daemon.send(signal.SIGSTOP)
    try:
        e = w.end()
        assert isinstance(e, appearanced.NotAnswering), e
    finally:
        daemon.send(signal.SIGCONT)


def test_a_silent_daemon_is_left_and_reached_again(fakes: List[FakeDaemon], collect: Collect) -> None:
    # The first connection answers subscribe, then never again (not even the keepalive's get); the watch
    # leaves it and subscribes again, and the second connection answers dark.
    connections = []

    def serve(conn: socket.socket) -> None:
        connections.append(conn)
        conn.recv(4096)
        state = STATE if len(connections) == 1 else dict(STATE, mode="dark", darkMode=True, seq=3)
        conn.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "result": state}).encode() + b"\n")
        silent(conn)

    f = FakeDaemon(serve).serve()
    fakes.append(f)
    w = collect(appearanced.watch(socket=f.path, keepalive=0.2))
    assert w.next()["mode"] == "light"
    s = w.next()
    assert (s["mode"], s["previous"], s["seq"]) == ("dark", "light", 3)
    assert len(connections) == 2


def test_the_keepalive_is_answered_by_a_live_daemon(daemon: Daemon, collect: Collect) -> None:
    w = collect(appearanced.watch(keepalive=0.05, reconnect=False))
    assert w.next()["mode"] == "light"
    # Many keepalive rounds later, the same subscription still delivers (reconnect=False: never left).
    before = appearanced.status()["subscribers"]
    for _ in range(3):
        appearanced.toggle()
        w.next()
    assert appearanced.status()["subscribers"] == before == 1


def test_close_from_another_thread_ends_it(daemon: Daemon) -> None:
    w = appearanced.watch()
    assert within(lambda: next(w))["mode"] == "light"
    ended = threading.Event()

    def iterate() -> None:
        for _ in w:
            pass
        ended.set()

    t = threading.Thread(target=iterate, daemon=True)
    t.start()
    w.close()
    t.join(timeout=20)
    assert ended.is_set()
    assert list(w) == []
    # Closing again is harmless; a `with` block closes it too.
    w.close()
    with appearanced.watch() as w2:
        assert within(lambda: next(w2))["mode"] == "light"
    with pytest.raises(StopIteration):
        next(w2)


def test_close_while_the_daemon_is_away_ends_it(daemon: Daemon, collect: Collect) -> None:
    w = collect(appearanced.watch())
    assert w.next()["mode"] == "light"
    daemon.stop(signal.SIGKILL)
    w.watch.close()
    assert w.end() is None
