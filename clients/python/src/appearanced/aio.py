"""The asyncio client: `get`, `state`, `set`, `toggle`, `status`, `call` as coroutines, and `watch`, an async
iterator of states that follows the daemon across restarts. The same rules, deadlines and errors as the
blocking functions of `appearanced`; no thread is blocked on the socket.

    async for s in appearanced.aio.watch():
        apply(s["mode"])
"""

from __future__ import annotations

import asyncio
import collections
import socket as _socket
import time
from types import TracebackType
from typing import Any, Awaitable, Deque, Dict, Optional, Set, Type, TypeVar, Union

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
T = TypeVar("T")


class _Late:
    """What `_within` returns when the deadline passed first."""


class _Closed:
    """What `_within` returns when the watch was closed first."""


_LATE = _Late()
_CLOSED = _Closed()


async def _within(awaitable: Awaitable[T], deadline: float, closing: Optional[asyncio.Event] = None) -> Union[T, _Late, _Closed]:
    """`awaitable`'s result, or `_LATE` once the deadline (a monotonic time) passes, or `_CLOSED` once
    `closing` is set; the awaitable is cancelled in the last two cases."""
    work = asyncio.ensure_future(awaitable)
    waits: Set[asyncio.Future[Any]] = {work}
    stop: Optional[asyncio.Future[Any]] = None
    if closing is not None:
        stop = asyncio.ensure_future(closing.wait())
        waits.add(stop)
    try:
        done, _ = await asyncio.wait(waits, timeout=max(0.0, deadline - time.monotonic()),
                                     return_when=asyncio.FIRST_COMPLETED)
    finally:
        if stop is not None:
            stop.cancel()
        if not work.done():
            work.cancel()
            try:
                await work
            except BaseException:  # its cancellation, or what it raised meanwhile: both moot now
                pass
    if work in done:
        return work.result()
    return _CLOSED if stop is not None and stop in done else _LATE


async def _connect(path: str, deadline: float, timeout: float) -> _socket.socket:
    """A non-blocking connection to `path`; a full backlog (EAGAIN) is tried again every 10 ms until the
    deadline, as the blocking client does."""
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
            await asyncio.sleep(0.01)
        except OSError as e:
            sock.close()
            raise not_running(path, e) from None


async def _send(sock: _socket.socket, data: bytes, path: str, deadline: float, timeout: float) -> None:
    loop = asyncio.get_running_loop()
    done = await _within(loop.sock_sendall(sock, data), deadline)
    if isinstance(done, (_Late, _Closed)):
        raise NotAnswering(path, timeout)


async def _recv(sock: _socket.socket, path: str) -> bytes:
    try:
        return await asyncio.get_running_loop().sock_recv(sock, _CHUNK)
    except OSError as e:
        raise ConnectionLost(path, e.strerror or str(e)) from None


async def call(method: str, params: Optional[Dict[str, Any]] = None, *, socket: Optional[str] = None,
               timeout: float = DEFAULT_TIMEOUT) -> Dict[str, Any]:
    """`appearanced.call` for asyncio: one request on a connection of its own; its result."""
    path = socket_path(socket)
    deadline = time.monotonic() + timeout
    sock = await _connect(path, deadline, timeout)
    with sock:
        try:
            await _send(sock, request_line(1, method, params), path, deadline, timeout)
        except OSError as e:
            raise ConnectionLost(path, e.strerror or str(e)) from None
        reader = LineReader()
        while True:
            message = reader.next()
            if message is not None:
                result = reply_to(message, 1, path)
                if result is not None:
                    return result
                continue
            data = await _within(_recv(sock, path), deadline)
            if isinstance(data, (_Late, _Closed)):
                raise NotAnswering(path, timeout)
            if not data:
                raise closed(path)
            reader.feed(data)


async def state(app: Optional[str] = None, *, socket: Optional[str] = None,
                timeout: float = DEFAULT_TIMEOUT) -> State:
    """The current state object (`get`)."""
    path = socket_path(socket)
    return as_state(await call("get", state_params("get", app), socket=path, timeout=timeout), path)


async def get(app: Optional[str] = None, *, socket: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> Mode:
    """What the UI should be now, "light" or "dark" (for `app`, its own mode)."""
    return (await state(app, socket=socket, timeout=timeout))["mode"]


async def set(mode: str, app: Optional[str] = None, until: Optional[str] = None, for_: Optional[Duration] = None,
              *, socket: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> State:
    """Sets the override (see `appearanced.set`); the state after it."""
    path = socket_path(socket)
    return as_state(await call("set", state_params("set", app, mode, until, for_), socket=path, timeout=timeout), path)


async def toggle(app: Optional[str] = None, until: Optional[str] = None, for_: Optional[Duration] = None, *,
                 socket: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> State:
    """Flips the mode (see `appearanced.toggle`); the state after it."""
    path = socket_path(socket)
    params = state_params("toggle", app, None, until, for_)
    return as_state(await call("toggle", params, socket=path, timeout=timeout), path)


async def status(*, socket: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> Dict[str, Any]:
    """The state object plus the daemon's facts (`status`)."""
    return await call("status", socket=socket, timeout=timeout)


class Watch:
    """`appearanced.Watch` for asyncio: an async iterator of state objects (see `watch`). `aclose()` (from
    any task) ends it; so does leaving an `async with` block."""

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
        self._reply_deadline = 0.0
        self._heard = 0.0
        # Made on first use, inside the loop that iterates (an Event made outside a loop binds to the wrong one
        # before Python 3.10).
        self._closing: Optional[asyncio.Event] = None
        self._closed = False
        self._busy = False

    def __aiter__(self) -> Watch:
        return self

    async def __aenter__(self) -> Watch:
        return self

    async def __aexit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                        traceback: Optional[TracebackType]) -> None:
        await self.aclose()

    def __del__(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    async def aclose(self) -> None:
        """Ends the watch: an `__anext__` waiting in another task ends the iteration (StopAsyncIteration), and
        the connection is closed."""
        self._closed = True
        if self._closing is not None:
            self._closing.set()
        if not self._busy:
            self._drop()

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    async def __anext__(self) -> State:
        if self._closed:
            raise StopAsyncIteration
        if self._busy:
            raise RuntimeError("this watch is already being iterated in another task")
        if self._closing is None:
            self._closing = asyncio.Event()
        self._busy = True
        try:
            return await self._next(self._closing)
        except asyncio.CancelledError:
            raise  # the task was cancelled: the watch may be iterated again
        except BaseException:
            self._closed = True  # an error ends the watch, as it ends an async generator
            raise
        finally:
            self._busy = False
            if self._closed:
                self._drop()

    async def _lose(self, error: Error, closing: asyncio.Event) -> None:
        subscribed = self._sub.subscribed
        self._drop()
        self._sub.subscribed = False
        if not self.reconnect or not self._sub.ever_subscribed:
            raise error
        if subscribed:
            self._backoff.reset()
        pause = self._backoff.next()
        if isinstance(await _within(asyncio.sleep(pause), time.monotonic() + pause + 1, closing), _Closed):
            raise StopAsyncIteration

    async def _open(self) -> None:
        self._reply_deadline = time.monotonic() + self.timeout
        sock = await _connect(self.socket, self._reply_deadline, self.timeout)
        self._sock = sock
        self._reader = LineReader()
        try:
            await _send(sock, self._sub.subscribe_line(), self.socket, self._reply_deadline, self.timeout)
        except OSError as e:
            raise ConnectionLost(self.socket, e.strerror or str(e)) from None
        self._heard = time.monotonic()

    async def _next(self, closing: asyncio.Event) -> State:
        while True:
            if self._pending:
                return self._pending.popleft()
            if closing.is_set():
                raise StopAsyncIteration
            if self._sock is None:
                try:
                    await self._open()
                except (NotRunning, NotAnswering, ConnectionLost) as e:
                    await self._lose(e, closing)
                    continue
            sock = self._sock
            assert sock is not None
            waiting_for_reply = not self._sub.subscribed or self._sub.awaiting_ping
            deadline = self._reply_deadline if waiting_for_reply else self._heard + self.keepalive
            try:
                data = await _within(_recv(sock, self.socket), deadline, closing)
            except ConnectionLost as e:
                await self._lose(e, closing)
                continue
            if isinstance(data, _Closed):
                raise StopAsyncIteration
            if isinstance(data, _Late):
                if waiting_for_reply:
                    await self._lose(NotAnswering(self.socket, self.timeout), closing)
                    continue
                # Silence for `keepalive` seconds: the daemon must answer a `get` within `timeout`.
                self._reply_deadline = time.monotonic() + self.timeout
                try:
                    await _send(sock, self._sub.ping_line(), self.socket, self._reply_deadline, self.timeout)
                except NotAnswering as e:
                    await self._lose(e, closing)
                except OSError as e:
                    await self._lose(ConnectionLost(self.socket, e.strerror or str(e)), closing)
                continue
            if not data:
                await self._lose(closed(self.socket), closing)
                continue
            self._heard = time.monotonic()
            self._reader.feed(data)
            message = self._reader.next()
            while message is not None:
                self._pending.extend(self._sub.receive(message))
                message = self._reader.next()


def watch(app: Optional[str] = None, *, socket: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT,
          keepalive: float = DEFAULT_KEEPALIVE, reconnect: bool = True) -> Watch:
    """The current state, then the state after every change of mode, as an async iterator; it follows the
    daemon across restarts, with the same deadlines and errors as `appearanced.watch`:

        async with appearanced.aio.watch() as states:
            async for s in states:
                apply(s["mode"])
    """
    return Watch(app, socket=socket, timeout=timeout, keepalive=keepalive, reconnect=reconnect)


# `set` is left out: `from … import *` must not hide the builtin set.
__all__ = ["Watch", "call", "get", "state", "status", "toggle", "watch"]
