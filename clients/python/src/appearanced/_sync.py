"""The blocking client: one connection per request, and `Watch`, a subscription that follows the daemon."""

from __future__ import annotations

import collections
import select
import socket as _socket
import threading
import time
from types import TracebackType
from typing import Any, Deque, Dict, Iterator, Optional, Type

from ._core import (
    DEFAULT_KEEPALIVE,
    DEFAULT_TIMEOUT,
    Backoff,
    Duration,
    LineReader,
    Mode,
    State,
    Subscription,
    as_state,
    check_trusted,
    closed,
    not_running,
    reply_to,
    request_line,
    socket_path,
    state_params,
)
from ._errors import ConnectionLost, Error, NotAnswering, NotRunning

_CHUNK = 64 * 1024


def _connect(path: str, deadline: float, timeout: float) -> _socket.socket:
    """A non-blocking connection to `path`. A full backlog (the daemon is not accepting) answers EAGAIN,
    with nothing to wait for: tried again every 10 ms until the deadline."""
    check_trusted(path)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.setblocking(False)
    while True:
        try:
            sock.connect(path)
            return sock
        except BlockingIOError:
            if time.monotonic() >= deadline:
                sock.close()
                raise NotAnswering(path, timeout) from None
            time.sleep(0.01)
        except OSError as e:
            sock.close()
            raise not_running(path, e) from None


def _wait(sock: _socket.socket, events: int, deadline: float, wake: Optional[_socket.socket] = None) -> str:
    """Waits until `sock` is ready for `events`, `wake` is readable, or the deadline passes: "ready", "wake"
    or "timeout"."""
    poller = select.poll()
    poller.register(sock, events)
    if wake is not None:
        poller.register(wake, select.POLLIN)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        # Rounded up to whole milliseconds, so a wait never ends just before its deadline.
        ready = poller.poll(int(left * 1000) + 1)
        if not ready:
            continue
        if wake is not None and any(fd == wake.fileno() for fd, _ in ready):
            return "wake"
        return "ready"


def _send(sock: _socket.socket, data: bytes, path: str, deadline: float, timeout: float) -> None:
    view = memoryview(data)
    while view:
        try:
            sent = sock.send(view)
        except BlockingIOError:
            if _wait(sock, select.POLLOUT, deadline) == "timeout":
                raise NotAnswering(path, timeout) from None
            continue
        view = view[sent:]


def _said_why(sock: _socket.socket, path: str, request_id: int) -> None:
    """After a failed write: the daemon may have said why before it closed the connection (too many
    connections, a request line too long); raises that as `Refused`."""
    reader = LineReader()
    deadline = time.monotonic() + 0.2
    while _wait(sock, select.POLLIN, deadline) == "ready":
        try:
            data = sock.recv(_CHUNK)
        except OSError:
            return
        if not data:
            return
        reader.feed(data)
        message = reader.next()
        while message is not None:
            reply_to(message, request_id, path)
            message = reader.next()


def call(method: str, params: Optional[Dict[str, Any]] = None, *, socket: Optional[str] = None,
         timeout: float = DEFAULT_TIMEOUT) -> Dict[str, Any]:
    """Sends one request (`method`, `params`) on a connection of its own and returns the daemon's result.
    Connecting, writing and the reply together take at most `timeout` seconds (`NotAnswering` past it).
    For the methods this module has no function for: `status`, `apps`, `log`, `palette`, …"""
    path = socket_path(socket)
    deadline = time.monotonic() + timeout
    sock = _connect(path, deadline, timeout)
    with sock:
        try:
            _send(sock, request_line(1, method, params), path, deadline, timeout)
        except OSError as e:
            _said_why(sock, path, 1)
            raise ConnectionLost(path, e.strerror or str(e)) from None
        reader = LineReader()
        while True:
            message = reader.next()
            if message is not None:
                result = reply_to(message, 1, path)
                if result is not None:
                    return result
                continue
            if _wait(sock, select.POLLIN, deadline) == "timeout":
                raise NotAnswering(path, timeout)
            try:
                data = sock.recv(_CHUNK)
            except BlockingIOError:
                continue
            except OSError as e:
                raise ConnectionLost(path, e.strerror or str(e)) from None
            if not data:
                raise closed(path)
            reader.feed(data)


def state(app: Optional[str] = None, *, socket: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> State:
    """The current state object (`get`): everyone's, or `app`'s own with `app`."""
    path = socket_path(socket)
    return as_state(call("get", state_params("get", app), socket=path, timeout=timeout), path)


def get(app: Optional[str] = None, *, socket: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> Mode:
    """What the UI should be now, "light" or "dark" (for `app`, its own mode)."""
    return state(app, socket=socket, timeout=timeout)["mode"]


def set(mode: str, app: Optional[str] = None, until: Optional[str] = None, for_: Optional[Duration] = None, *,
        socket: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> State:
    """Sets the override and returns the state after it: `mode` "light" or "dark" forces it, "system" follows
    the desktop again. With `until="next"`, only until the next automatic change (a schedule transition, the
    desktop changing its own setting); with `for_` (seconds, or a `datetime.timedelta`), for that long. With
    `app`, that app's own override ("system" removes it). The daemon has saved it when this returns; what it
    refuses (an unknown mode, `until` and `for_` together, …) raises `Refused` with its message."""
    path = socket_path(socket)
    return as_state(call("set", state_params("set", app, mode, until, for_), socket=path, timeout=timeout), path)


def toggle(app: Optional[str] = None, until: Optional[str] = None, for_: Optional[Duration] = None, *,
           socket: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> State:
    """Flips the mode (atomically, in the daemon) and returns the state after it; `until` and `for_` as for
    `set`. Toggling back returns to following the desktop."""
    path = socket_path(socket)
    return as_state(call("toggle", state_params("toggle", app, None, until, for_), socket=path, timeout=timeout), path)


def status(*, socket: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> Dict[str, Any]:
    """The state object plus the daemon's facts (`status`: version, protocol, pid, subscribers, …)."""
    return call("status", socket=socket, timeout=timeout)


class Watch:
    """The current state, then every change of mode: an iterator of state objects (see `watch`).

    Each state carries `previous`, the mode yielded before it (None for the first); the same mode is never
    yielded twice in a row. `close()` (from any thread) ends the iteration; so does leaving a `with` block."""

    def __init__(self, app: Optional[str] = None, *, socket: Optional[str] = None,
                 timeout: float = DEFAULT_TIMEOUT, keepalive: float = DEFAULT_KEEPALIVE,
                 reconnect: bool = True) -> None:
        self.socket = socket_path(socket)
        self.timeout = timeout
        self.keepalive = keepalive
        self.reconnect = reconnect
        self._sub = Subscription(app, self.socket)
        self._sock: Optional[_socket.socket] = None
        self._reader = LineReader()
        self._pending: Deque[State] = collections.deque()
        self._backoff = Backoff()
        # When the reply being waited for (to `subscribe`, or to the keepalive's `get`) is late.
        self._reply_deadline = 0.0
        # When the connection last said anything: the keepalive asks after `keepalive` seconds of silence.
        self._heard = 0.0
        self._wake_read, self._wake_write = _socket.socketpair()
        self._wake_read.setblocking(False)
        self._wake_write.setblocking(False)
        self._lock = threading.Lock()
        self._busy = False
        self._closed = False
        self._released = False

    def __iter__(self) -> Iterator[State]:
        return self

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # pragma: no cover - an interpreter shutting down
            pass

    def close(self) -> None:
        """Ends the watch: a `next()` waiting in another thread ends the iteration at once (StopIteration),
        and the connection is closed. Safe to call more than once, from any thread."""
        with self._lock:
            self._closed = True
            busy = self._busy
        try:
            self._wake_write.send(b"x")
        except OSError:
            pass
        if not busy:
            self._release()

    def _release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        self._drop()
        self._wake_read.close()
        self._wake_write.close()

    def __next__(self) -> State:
        with self._lock:
            if self._closed or self._busy:
                if self._busy:
                    raise RuntimeError("this watch is already being iterated in another thread")
                raise StopIteration
            self._busy = True
        try:
            return self._next()
        except BaseException:
            # An error ends the watch, as it ends a generator.
            with self._lock:
                self._closed = True
            raise
        finally:
            with self._lock:
                self._busy = False
                release = self._closed
            if release:
                self._release()

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _lose(self, error: Error) -> None:
        """The connection is lost (or could not be made): raises `error` when it is not to be waited out
        (no reconnecting, or never subscribed yet), else waits the back-off's pause (StopIteration if closed
        meanwhile)."""
        subscribed = self._sub.subscribed
        self._drop()
        self._sub.subscribed = False
        if not self.reconnect or not self._sub.ever_subscribed:
            raise error
        if subscribed:
            self._backoff.reset()
        pause = self._backoff.next()
        ready = select.select([self._wake_read], [], [], pause)[0]
        if ready:
            raise StopIteration

    def _open(self) -> None:
        now = time.monotonic()
        self._reply_deadline = now + self.timeout
        sock = _connect(self.socket, self._reply_deadline, self.timeout)
        self._sock = sock
        self._reader = LineReader()
        try:
            _send(sock, self._sub.subscribe_line(), self.socket, self._reply_deadline, self.timeout)
        except OSError as e:
            raise ConnectionLost(self.socket, e.strerror or str(e)) from None
        self._heard = time.monotonic()

    def _next(self) -> State:
        while True:
            if self._pending:
                return self._pending.popleft()
            if self._sock is None:
                try:
                    self._open()
                except (NotRunning, NotAnswering, ConnectionLost) as e:
                    self._lose(e)
                    continue
            sock = self._sock
            assert sock is not None
            waiting_for_reply = not self._sub.subscribed or self._sub.awaiting_ping
            deadline = self._reply_deadline if waiting_for_reply else self._heard + self.keepalive
            what = _wait(sock, select.POLLIN, deadline, self._wake_read)
            if what == "wake":
                raise StopIteration
            if what == "timeout":
                if waiting_for_reply:
                    self._lose(NotAnswering(self.socket, self.timeout))
                    continue
                # Silence for `keepalive` seconds: is the daemon still there? Its `get` reply must come in time.
                self._reply_deadline = time.monotonic() + self.timeout
                try:
                    _send(sock, self._sub.ping_line(), self.socket, self._reply_deadline, self.timeout)
                except NotAnswering as e:
                    self._lose(e)
                except OSError as e:
                    self._lose(ConnectionLost(self.socket, e.strerror or str(e)))
                continue
            try:
                data = sock.recv(_CHUNK)
            except BlockingIOError:
                continue
            except OSError as e:
                self._lose(ConnectionLost(self.socket, e.strerror or str(e)))
                continue
            if not data:
                self._lose(closed(self.socket))
                continue
            self._heard = time.monotonic()
            self._reader.feed(data)
            message = self._reader.next()
            while message is not None:
                self._pending.extend(self._sub.receive(message))
                message = self._reader.next()


def watch(app: Optional[str] = None, *, socket: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT,
          keepalive: float = DEFAULT_KEEPALIVE, reconnect: bool = True) -> Watch:
    """The current state, then the state after every change of mode (for `app`, of its own mode), as long as
    it is iterated:

        for s in appearanced.watch():
            apply(s["mode"])

    It follows the daemon across restarts: when the connection is lost (the daemon stopped, crashed or
    restarted), it connects and subscribes again, waiting 50 ms, then twice as long each time up to 2 s, and
    yields the state it finds there if its mode differs from the last one yielded. Every blocking read has a
    deadline: the reply to `subscribe` within `timeout` seconds, and after `keepalive` seconds without a word
    the daemon is asked (`get`) and must answer within `timeout`; a daemon that does not is treated as lost.

    Raised, ending the iteration: the first connection's failure (`NotRunning`, `NotAnswering`, …: the daemon
    was never reached), `Refused` (the daemon refused `subscribe`, e.g. a bad app id), `UntrustedSocket`,
    `ProtocolError`; and with `reconnect=False`, the error that broke the connection."""
    return Watch(app, socket=socket, timeout=timeout, keepalive=keepalive, reconnect=reconnect)


# `set` is left out: `from … import *` must not hide the builtin set.
__all__ = ["Watch", "call", "get", "state", "status", "toggle", "watch"]
