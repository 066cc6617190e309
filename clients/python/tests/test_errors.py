"""The errors: no daemon, a refused request with the daemon's message, a socket that never answers (a real
listening socket made here), a lost connection, and sockets not to be trusted."""

from __future__ import annotations

import json
import os
import socket
import stat
from typing import Callable, List

import pytest

import appearanced
from conftest import Daemon, FakeDaemon, Sandbox, within

STATE = {"mode": "light", "darkMode": False, "system": "unavailable", "override": "system", "source": "default",
         "seq": 0, "instance": "0123456789abcdef", "traits": {"contrast": None, "reducedMotion": None,
                                                             "accentColor": None}, "temporary": None}


def silent(conn: socket.socket) -> None:
    """Accepts, reads what comes, never answers."""
    while True:
        try:
            if not conn.recv(4096):
                return
        except OSError:
            return


def fake(fakes: List[FakeDaemon], handler: Callable[[socket.socket], None]) -> FakeDaemon:
    f = FakeDaemon(handler).serve()
    fakes.append(f)
    return f


def test_not_running(sandbox: Sandbox) -> None:
    with pytest.raises(appearanced.NotRunning) as e:
        appearanced.get()
    assert isinstance(e.value, appearanced.Error)
    assert str(e.value).startswith(f"appearanced is not running: cannot connect to {sandbox.socket} (No such file")
    assert e.value.socket == sandbox.socket
    with pytest.raises(appearanced.NotRunning):
        appearanced.set("dark")
    with pytest.raises(appearanced.NotRunning):
        next(appearanced.watch())


def test_not_running_after_the_daemon_died(sandbox: Sandbox, daemon: Daemon) -> None:
    # SIGKILL leaves the socket file behind; nothing listens on it.
    daemon.stop(9)
    assert os.path.exists(sandbox.socket)
    with pytest.raises(appearanced.NotRunning, match="Connection refused"):
        appearanced.get()


def test_refused_carries_the_daemons_message(daemon: Daemon) -> None:
    with pytest.raises(appearanced.Refused) as e:
        appearanced.set("blue")
    assert isinstance(e.value, appearanced.Error)
    assert e.value.code == -32602
    assert str(e.value) == 'set: invalid override "blue", expected "light", "dark" or "system"'
    assert e.value.message == str(e.value)
    with pytest.raises(appearanced.Refused, match='^set: give "until" or "for", not both$'):
        appearanced.set("dark", until="next", for_=60)
    with pytest.raises(appearanced.Refused, match="system"):
        appearanced.set("system", for_=60)
    with pytest.raises(appearanced.Refused) as bad_app:
        appearanced.get(app="not an id!")
    assert "not an id!" in str(bad_app.value)
    # A refused subscribe ends the watch with the daemon's message.
    with pytest.raises(appearanced.Refused):
        next(appearanced.watch(app="not an id!"))
    # Nothing changed.
    assert appearanced.state()["seq"] == 0


def test_a_socket_that_never_answers(fakes: List[FakeDaemon]) -> None:
    f = fake(fakes, silent)
    with pytest.raises(appearanced.NotAnswering) as e:
        within(lambda: appearanced.get(socket=f.path, timeout=0.3))
    assert str(e.value).startswith(f"appearanced did not answer on {f.path} within 0.3 s")
    with pytest.raises(appearanced.NotAnswering):
        within(lambda: appearanced.toggle(socket=f.path, timeout=0.3))
    # The reply to subscribe has the same deadline.
    with pytest.raises(appearanced.NotAnswering):
        within(lambda: next(appearanced.watch(socket=f.path, timeout=0.3)))


def test_a_socket_that_does_not_accept(fakes: List[FakeDaemon]) -> None:
    # A listener that never accepts, its backlog full: connecting answers EAGAIN until the deadline.
    f = FakeDaemon(silent, backlog=0)
    fakes.append(f)
    fillers = []
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        fillers.append(s)
        try:
            s.connect(f.path)
        except BlockingIOError:
            break
        assert len(fillers) < 100, "the backlog never filled"
    try:
        with pytest.raises(appearanced.NotAnswering):
            within(lambda: appearanced.get(socket=f.path, timeout=0.3))
    finally:
        for s in fillers:
            s.close()


def test_a_connection_closed_before_the_reply(fakes: List[FakeDaemon]) -> None:
    def read_and_close(conn: socket.socket) -> None:
        conn.recv(4096)
        conn.close()

    f = fake(fakes, read_and_close)
    with pytest.raises(appearanced.ConnectionLost, match="the daemon closed the connection"):
        within(lambda: appearanced.get(socket=f.path))


def test_a_refusal_before_closing_is_the_daemons_message(fakes: List[FakeDaemon]) -> None:
    # As the daemon says "too many connections" before it closes one.
    def refuse(conn: socket.socket) -> None:
        conn.sendall(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"too many connections"}}\n')
        conn.close()

    f = fake(fakes, refuse)
    with pytest.raises(appearanced.Refused, match="^too many connections$"):
        within(lambda: appearanced.get(socket=f.path))


def test_notifications_and_other_replies_before_the_reply_are_skipped(fakes: List[FakeDaemon]) -> None:
    def chatty(conn: socket.socket) -> None:
        conn.recv(4096)
        changed = dict(STATE, mode="dark", previous="light")
        conn.sendall(b"\n  \r\n" + json.dumps({"jsonrpc": "2.0", "method": "changed", "params": changed}).encode()
                     + b"\n" + json.dumps({"jsonrpc": "2.0", "id": 7, "result": {}}).encode() + b"\n"
                     + json.dumps({"jsonrpc": "2.0", "id": 1, "result": STATE}).encode() + b"\n")
        silent(conn)

    f = fake(fakes, chatty)
    assert within(lambda: appearanced.state(socket=f.path)) == STATE


def test_a_reply_that_is_not_json(fakes: List[FakeDaemon]) -> None:
    def garbage(conn: socket.socket) -> None:
        conn.recv(4096)
        conn.sendall(b"this is not json\n")
        silent(conn)

    f = fake(fakes, garbage)
    with pytest.raises(appearanced.ProtocolError):
        within(lambda: appearanced.get(socket=f.path))


def test_a_socket_in_a_folder_others_may_write_is_not_used(fakes: List[FakeDaemon]) -> None:
    f = fake(fakes, silent)
    os.chmod(f.root, 0o777)
    with pytest.raises(appearanced.UntrustedSocket) as e:
        within(lambda: appearanced.get(socket=f.path))
    assert str(e.value) == (f"refusing to use {f.path}: its directory {f.root} may be written by anyone (mode 777). "
                            "Another user could be listening there; use a socket in a directory only you can write "
                            "to (XDG_RUNTIME_DIR).")
    os.chmod(f.root, 0o770)
    with pytest.raises(appearanced.UntrustedSocket, match="may be written by its group"):
        within(lambda: appearanced.get(socket=f.path))
    with pytest.raises(appearanced.UntrustedSocket):
        next(appearanced.watch(socket=f.path))
    assert not f.connections, "the client connected to an untrusted socket"


@pytest.mark.skipif(os.getuid() != 0, reason="giving a socket to another uid needs root")
def test_another_users_socket_is_not_used(fakes: List[FakeDaemon]) -> None:
    f = fake(fakes, silent)
    os.chown(f.path, 4242, -1)
    with pytest.raises(appearanced.UntrustedSocket, match="the socket belongs to uid 4242, not to uid 0"):
        within(lambda: appearanced.get(socket=f.path))
    os.chown(f.path, 0, -1)
    os.chown(f.root, 4242, -1)
    with pytest.raises(appearanced.UntrustedSocket, match=f"its directory {f.root} belongs to uid 4242"):
        within(lambda: appearanced.get(socket=f.path))
    assert not f.connections


def test_a_path_that_is_no_socket(sandbox: Sandbox) -> None:
    path = sandbox.root / "home" / "file"
    path.write_text("")
    with pytest.raises(appearanced.UntrustedSocket, match=f"^{path} is a regular file, not a socket"):
        appearanced.get(socket=str(path))
    with pytest.raises(appearanced.UntrustedSocket, match="is a directory, not a socket"):
        appearanced.get(socket=str(sandbox.root))
    assert stat.S_ISREG(path.stat().st_mode)
