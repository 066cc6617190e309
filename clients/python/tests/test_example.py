"""examples/python/gtk_follow.py, a GTK 4 window on the client, against the real daemon on a GTK broadway
display (gtk4-broadwayd: no X server, nothing of the session's)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from typing import IO, Dict, Iterator, List, Tuple

import pytest

import appearanced
from conftest import REPO, WAIT, Sandbox, wait_until

EXAMPLE = REPO / "examples" / "python" / "gtk_follow.py"
BROADWAYD = "/usr/bin/gtk4-broadwayd"


class Output:
    """A child's output lines as they come."""

    def __init__(self, process: "subprocess.Popen[str]") -> None:
        self.process = process
        self.lines: List[str] = []
        self.err: List[str] = []
        for stream, into in ((process.stdout, self.lines), (process.stderr, self.err)):
            if stream is None:
                continue
            threading.Thread(target=self._read, args=(stream, into), daemon=True).start()

    @staticmethod
    def _read(stream: IO[str], into: List[str]) -> None:
        with stream:  # closed at the end of the output, by the thread that reads it
            for line in stream:
                into.append(line.rstrip("\n"))

    def wait_for(self, count: int) -> List[str]:
        wait_until(f"{count} lines from the example; have {self.lines}, stderr {self.err}",
                   lambda: len(self.lines) >= count)
        return list(self.lines)


@pytest.fixture
def display(sandbox: Sandbox) -> Iterator[Dict[str, str]]:
    """A GTK 4 broadway display: the environment a GTK app needs to show its window on it."""
    if not os.access(BROADWAYD, os.X_OK):
        pytest.skip(f"needs {BROADWAYD} (libgtk-4-bin)")
    pytest.importorskip("gi", reason="needs PyGObject (python3-gi)")
    for _ in range(8):
        number = random.randint(100, 900)
        server = subprocess.Popen([BROADWAYD, f":{number}"], env=sandbox.env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = Output(server)
        try:
            wait_until(f"{BROADWAYD} :{number} to listen", lambda: bool(out.lines) or server.poll() is not None,
                       timeout=10)
        except AssertionError:
            pass
        if out.lines and "Listening on" in out.lines[0]:
            env = dict(sandbox.env, GDK_BACKEND="broadway", BROADWAY_DISPLAY=f":{number}", NO_AT_BRIDGE="1")
            try:
                yield env
            finally:
                server.kill()
                server.wait(timeout=WAIT)
            return
        server.kill()
        server.wait(timeout=WAIT)
    pytest.fail(f"could not start {BROADWAYD}")


def start(env: Dict[str, str], *args: str) -> Tuple["subprocess.Popen[str]", Output]:
    # This interpreter: the venv the client was installed into (and, on Debian, python3-gi beside it).
    p = subprocess.Popen([sys.executable, str(EXAMPLE), *args], env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, Output(p)


def test_the_window_follows_the_mode(sandbox: Sandbox, display: Dict[str, str]) -> None:
    daemon = sandbox.start_daemon()
    p, out = start(display)
    try:
        assert out.wait_for(1) == ["light"]
        appearanced.set("dark")
        assert out.wait_for(2) == ["light", "dark"]
        # Across a restart: the new daemon starts dark (the override was saved), which the window has.
        daemon.stop(signal.SIGKILL)
        sandbox.start_daemon()
        appearanced.toggle()
        assert out.wait_for(3) == ["light", "dark", "light"]
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=WAIT) == 0, out.err
        assert out.lines == ["light", "dark", "light"] and out.err == []
    finally:
        p.kill()
        p.wait(timeout=WAIT)


def test_an_apps_own_mode_and_no_daemon(sandbox: Sandbox, display: Dict[str, str]) -> None:
    daemon = sandbox.start_daemon()
    appearanced.set("dark", app="org.example.Follow")
    p, out = start(display, "--app", "org.example.Follow")
    try:
        assert out.wait_for(1) == ["dark"]
        appearanced.set("dark")  # everyone: the app's mode stays dark, nothing is printed
        appearanced.set("system", app="org.example.Follow")
        appearanced.set("light")
        assert out.wait_for(2) == ["dark", "light"]
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=WAIT) == 0, out.err
    finally:
        p.kill()
        p.wait(timeout=WAIT)
    # No daemon: the window says why, and the example ends with status 1.
    daemon.stop()
    p, out = start(display)
    assert p.wait(timeout=WAIT) == 1
    wait_until("the example's stderr", lambda: bool(out.err))
    assert out.err[0].startswith(f"appearanced is not running: cannot connect to {sandbox.socket}"), out.err
    assert out.lines == []
