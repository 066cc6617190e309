"""The client against the real daemon: each test has its own runtime, state and config folders and no session
bus, so nothing of the session is touched. Nothing sleeps and hopes: every wait has a condition and a deadline.

The daemon is the one in APPEARANCED_BIN_DIR (`make test-python` sets it to the release build), else the
release or debug build of this checkout."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, TypeVar

import pytest

import appearanced

REPO = Path(__file__).resolve().parents[3]
T = TypeVar("T")

#: A slower machine (or a sanitizer build) makes the waits longer, never red.
SCALE = float(os.environ.get("APPEARANCED_TEST_TIMEOUT_SCALE", "1"))
WAIT = 20.0 * SCALE


def bin_dir() -> Path:
    given = os.environ.get("APPEARANCED_BIN_DIR")
    if given:
        return Path(given)
    for build in ("release", "debug"):
        candidate = REPO / ".build" / build
        if (candidate / "appearanced").exists():
            return candidate
    pytest.exit("no appearanced binary: build it (swift build -c release) or set APPEARANCED_BIN_DIR", 2)


def wait_until(what: str, condition: Callable[[], bool], timeout: float = WAIT) -> None:
    """Returns once `condition()` holds; fails, saying what it waited for, after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.005)


def within(fn: Callable[[], T], timeout: float = WAIT) -> T:
    """`fn()` run in a thread: its result or what it raised, or a failure if it has not ended after `timeout`
    seconds (a call that hangs fails the test instead of hanging the suite)."""
    box: "queue.Queue[tuple[bool, Any]]" = queue.Queue()

    def run() -> None:
        try:
            box.put((True, fn()))
        except BaseException as e:  # handed to the test as it was raised
            box.put((False, e))

    threading.Thread(target=run, daemon=True).start()
    try:
        ok, value = box.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"the call did not end within {timeout} s") from None
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


class Daemon:
    """An appearanced process in the sandbox."""

    def __init__(self, sandbox: Sandbox, args: List[str], socket: str) -> None:
        self.sandbox = sandbox
        self.socket = socket
        self.log = open(sandbox.root / f"daemon-{len(sandbox.daemons)}.log", "wb")
        self.process = subprocess.Popen([str(bin_dir() / "appearanced"), *args], env=sandbox.env,
                                        stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)

    @property
    def output(self) -> str:
        return Path(self.log.name).read_text(errors="replace")

    def wait_ready(self) -> Daemon:
        def answers() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"the daemon exited ({self.process.returncode}): {self.output}")
            try:
                appearanced.get(socket=self.socket, timeout=5)
                return True
            except appearanced.Error:
                return False

        wait_until(f"the daemon to answer on {self.socket}", answers)
        return self

    def send(self, sig: int) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signals the daemon and waits for it to exit: its exit status."""
        if sig == signal.SIGSTOP:
            raise ValueError("stop() waits for an exit; use send() to stop the process")
        self.send(sig)
        try:
            return self.process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError(f"the daemon did not exit within {WAIT} s after signal {sig}") from None
        finally:
            self.log.close()


class Sandbox:
    """A private folder tree and environment: XDG_RUNTIME_DIR (0700), XDG_STATE_HOME, XDG_CONFIG_HOME, HOME,
    and a session bus address where nothing listens."""

    def __init__(self) -> None:
        # Not pytest's tmp_path: a Unix socket's path must fit in 108 bytes.
        self.root = Path(tempfile.mkdtemp(prefix="appearanced-py-"))
        for d in ("runtime", "state", "config", "home"):
            (self.root / d).mkdir(mode=0o700)
        self.env: Dict[str, str] = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root / "home"),
            "XDG_RUNTIME_DIR": str(self.root / "runtime"),
            "XDG_STATE_HOME": str(self.root / "state"),
            "XDG_CONFIG_HOME": str(self.root / "config"),
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent",
            "SWIFT_BACKTRACE": "enable=no",
        }
        self.daemons: List[Daemon] = []

    @property
    def socket(self) -> str:
        return str(self.root / "runtime" / "appearanced" / "socket")

    @property
    def config_file(self) -> Path:
        return self.root / "config" / "appearanced" / "config.toml"

    def write_config(self, text: str) -> None:
        self.config_file.parent.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(text)

    def start_daemon(self, *args: str, socket: Optional[str] = None) -> Daemon:
        """Starts appearanced with `args` and waits until it answers on `socket` (by default the sandbox's)."""
        d = Daemon(self, list(args), socket or self.socket)
        self.daemons.append(d)
        return d.wait_ready()

    def close(self) -> None:
        for d in self.daemons:
            if d.process.poll() is None:
                d.process.send_signal(signal.SIGCONT)
                d.process.kill()
                d.process.wait(timeout=WAIT)
            d.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def sandbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    """The sandbox, with this process's environment pointing at it (as a script run in it would find the
    daemon: through XDG_RUNTIME_DIR)."""
    s = Sandbox()
    monkeypatch.delenv("APPEARANCED_SOCKET", raising=False)
    for key, value in s.env.items():
        if key != "PATH":
            monkeypatch.setenv(key, value)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def daemon(sandbox: Sandbox) -> Daemon:
    return sandbox.start_daemon()


class Collector:
    """Iterates a watch in a thread of its own; the test takes each state with a deadline."""

    def __init__(self, watch: appearanced.Watch) -> None:
        self.watch = watch
        self.items: "queue.Queue[tuple[str, Any]]" = queue.Queue()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for state in self.watch:
                self.items.put(("state", state))
            self.items.put(("end", None))
        except BaseException as e:
            self.items.put(("error", e))

    def next(self, timeout: float = WAIT) -> appearanced.State:
        """The next state yielded; fails on an error, the end, or nothing within `timeout` seconds."""
        try:
            kind, value = self.items.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the watch yielded nothing within {timeout} s") from None
        if kind != "state":
            raise AssertionError(f"the watch ended ({kind}: {value!r}) instead of yielding a state")
        return value  # type: ignore[no-any-return]

    def end(self, timeout: float = WAIT) -> Optional[BaseException]:
        """How the iteration ended: None when it simply stopped, else the exception it raised."""
        try:
            kind, value = self.items.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the watch did not end within {timeout} s") from None
        if kind == "state":
            raise AssertionError(f"the watch yielded {value!r} instead of ending")
        return value  # type: ignore[no-any-return]

    def close(self) -> None:
        self.watch.close()
        self.thread.join(timeout=WAIT)
        assert not self.thread.is_alive(), "the watch's thread did not end after close()"


@pytest.fixture
def collect() -> Iterator[Callable[[appearanced.Watch], Collector]]:
    made: List[Collector] = []

    def start(watch: appearanced.Watch) -> Collector:
        c = Collector(watch)
        made.append(c)
        return c

    yield start
    for c in made:
        c.close()


class FakeDaemon:
    """A real listening Unix socket in a private folder, run by a thread, that does what a test says with each
    connection it accepts: `handler(connection)`. For what the real daemon never does (never answering)."""

    def __init__(self, handler: Callable[[socket.socket], None], backlog: int = 8) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="appearanced-fake-"))
        self.path = str(self.root / "socket")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(backlog)
        self.handler = handler
        self.connections: List[socket.socket] = []
        self.accepted = threading.Semaphore(0)
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def serve(self) -> FakeDaemon:
        self.thread.start()
        return self

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(conn)
            self.accepted.release()
            threading.Thread(target=self.handler, args=(conn,), daemon=True).start()

    def close(self) -> None:
        self._stop = True
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        for c in self.connections:
            c.close()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def fakes() -> Iterator[List[FakeDaemon]]:
    made: List[FakeDaemon] = []
    yield made
    for f in made:
        f.close()
