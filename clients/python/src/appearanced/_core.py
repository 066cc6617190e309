"""What the blocking and the asyncio clients share, with no I/O of its own: where the socket is and whether
to trust it, the request lines, reading replies, and the subscription's bookkeeping (what to yield, when to
ask whether the daemon is still there, how long to wait before trying again)."""

from __future__ import annotations

import datetime
import json
import os
import stat
from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

from ._errors import ConnectionLost, NotRunning, ProtocolError, Refused, UntrustedSocket

Mode = Literal["light", "dark"]


class Traits(TypedDict):
    """The desktop's other appearance settings; None where the desktop does not say."""

    contrast: Optional[str]
    reducedMotion: Optional[bool]
    accentColor: Optional[str]


class _StateMembers(TypedDict):
    mode: Mode
    darkMode: bool
    system: str
    override: str
    source: str
    seq: int
    instance: str
    traits: Traits
    temporary: Optional[Dict[str, Any]]


class State(_StateMembers, total=False):
    """The state object of docs/protocol.md ("The state object"): `mode` ("light" or "dark"), `darkMode`,
    `system`, `override`, `source`, `seq`, `instance`, `traits`, `temporary`; for an app also `app`,
    `globalMode` and `globalSource`. A newer daemon may add members."""

    app: str
    globalMode: Mode
    globalSource: str
    configProblem: str
    #: Only in what `watch` yields: the mode yielded before this state (None for the first).
    previous: Optional[Mode]


#: How long connecting and each request may take, in seconds, before the daemon counts as not answering.
#: As AppearanceKit's: longer than the daemon's own start-up wait for the first desktop reading (3 s).
DEFAULT_TIMEOUT = 4.0
#: A watch that has heard nothing for this long asks the daemon (`get`) whether it is still there.
DEFAULT_KEEPALIVE = 30.0
#: The longest line the daemon writes (a palette for a subscriber that asked for it): docs/protocol.md.
MAX_REPLY_LENGTH = 18 * 1024 * 1024


def socket_path(explicit: Optional[str] = None) -> str:
    """The daemon's socket, found as appearancectl finds it (docs/protocol.md, "The socket"): `explicit`,
    else `$APPEARANCED_SOCKET`, else `$XDG_RUNTIME_DIR/appearanced/socket`, else
    `/run/user/$UID/appearanced/socket` when that directory is the user's, else `/tmp/appearanced-$UID/socket`.
    A variable set to the empty string counts as unset."""
    if explicit:
        return explicit
    env = os.environ.get("APPEARANCED_SOCKET")
    if env:
        return env
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return runtime + "/appearanced/socket"
    uid = os.getuid()
    run = f"/run/user/{uid}"
    try:
        st = os.lstat(run)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == uid:
            return run + "/appearanced/socket"
    except OSError:
        pass
    return f"/tmp/appearanced-{uid}/socket"


def _describe_non_socket(path: str) -> str:
    try:
        st = os.lstat(path)
    except OSError:
        return "not a socket"
    if stat.S_ISDIR(st.st_mode):
        return "a directory, not a socket"
    if stat.S_ISREG(st.st_mode):
        return "a regular file, not a socket"
    return "not a socket"


def check_trusted(path: str) -> None:
    """Raises `UntrustedSocket` when a fake daemon could be listening at `path`, as AppearanceKit checks: the
    socket and its directory must belong to the user, and the directory must not be writable by others. A
    socket that does not exist is no problem here (connecting then says the daemon is not running)."""
    uid = os.getuid()
    try:
        st = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise UntrustedSocket(
            path,
            "it is not a socket",
            f"{path} is {_describe_non_socket(path)}: give the daemon's socket "
            "(by default $XDG_RUNTIME_DIR/appearanced/socket)",
        )
    reason: Optional[str] = None
    directory = os.path.dirname(path) or "."
    if st.st_uid != uid:
        reason = f"the socket belongs to uid {st.st_uid}, not to uid {uid}"
    else:
        try:
            dst = os.stat(directory)
        except OSError:
            return
        if dst.st_uid != uid:
            reason = f"its directory {directory} belongs to uid {dst.st_uid}, not to uid {uid}"
        elif dst.st_mode & 0o022:
            who = "anyone" if dst.st_mode & 0o002 else "its group"
            reason = f"its directory {directory} may be written by {who} (mode {dst.st_mode & 0o777:o})"
    if reason is not None:
        raise UntrustedSocket(
            path,
            reason,
            f"refusing to use {path}: {reason}. Another user could be listening there; "
            "use a socket in a directory only you can write to (XDG_RUNTIME_DIR).",
        )


def not_running(path: str, error: OSError) -> NotRunning:
    return NotRunning(path, error.strerror or str(error))


Duration = Union[int, float, datetime.timedelta]


def state_params(
    method: str, app: Optional[str], mode: Optional[str] = None, until: Optional[str] = None,
    for_: Optional[Duration] = None,
) -> Dict[str, Any]:
    """The params of `get`, `set`, `toggle` and `subscribe`. Values are passed on as given: the daemon checks
    them and refuses what is wrong with a message of its own (`Refused`)."""
    params: Dict[str, Any] = {}
    if method == "set":
        params["override"] = mode
    if until is not None:
        params["until"] = until
    if for_ is not None:
        seconds = for_.total_seconds() if isinstance(for_, datetime.timedelta) else for_
        # Whole seconds go as an integer (the daemon takes whole seconds; 90.0 is 90).
        if isinstance(seconds, float) and seconds.is_integer():
            seconds = int(seconds)
        params["for"] = seconds
    if app is not None:
        params["app"] = app
    return params


def request_line(request_id: Union[int, str], method: str, params: Optional[Dict[str, Any]] = None) -> bytes:
    message: Dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params:
        message["params"] = params
    return (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


class LineReader:
    """Cuts the bytes read into lines (JSON values), each at most `MAX_REPLY_LENGTH` bytes."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._searched = 0

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def next(self) -> Optional[Dict[str, Any]]:
        """The next message, or None until a whole line is there; blank lines are skipped."""
        while True:
            end = self._buffer.find(b"\n", self._searched)
            if end < 0:
                self._searched = len(self._buffer)
                if len(self._buffer) > MAX_REPLY_LENGTH:
                    raise ProtocolError(f"the daemon sent a line over {MAX_REPLY_LENGTH} bytes")
                return None
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            self._searched = 0
            if not line.strip(b" \t\r"):
                continue
            try:
                message = json.loads(line)
            except ValueError as e:
                raise ProtocolError(f"the daemon sent a line that is not JSON ({e})") from None
            if not isinstance(message, dict):
                raise ProtocolError("the daemon sent a line that is not a JSON object")
            return message


def reply_to(message: Dict[str, Any], request_id: Union[int, str], socket: str) -> Optional[Dict[str, Any]]:
    """The result when `message` is the reply to `request_id`; raises `Refused` when it is an error for it (or
    an error without an id: the daemon refusing the connection as a whole); None for anything else
    (a notification, a reply to another request)."""
    if "method" in message:
        return None
    rid = message.get("id")
    error = message.get("error")
    if isinstance(error, dict) and (rid == request_id or rid is None):
        code = error.get("code")
        text = error.get("message")
        raise Refused(code if isinstance(code, int) else 0, text if isinstance(text, str) else json.dumps(error), socket)
    if rid != request_id:
        return None
    result = message.get("result")
    if not isinstance(result, dict):
        raise ProtocolError(f"the daemon's reply to request {request_id} has no result object", socket)
    return result


def as_state(result: Dict[str, Any], socket: str) -> State:
    if result.get("mode") not in ("light", "dark"):
        raise ProtocolError(f"the daemon's state has no mode: {json.dumps(result)[:200]}", socket)
    return result  # type: ignore[return-value]  # checked where it matters; members are the daemon's


def closed(socket: str) -> ConnectionLost:
    return ConnectionLost(socket, "the daemon closed the connection")


class Backoff:
    """The pauses between attempts to reach the daemon again, as AppearanceKit's and appearancectl's: 50 ms,
    doubling after each failed attempt up to 2 s; `reset()` once subscribed again."""

    FIRST = 0.05
    LONGEST = 2.0

    def __init__(self) -> None:
        self._next = self.FIRST

    def next(self) -> float:
        pause = self._next
        self._next = min(self._next * 2, self.LONGEST)
        return pause

    def reset(self) -> None:
        self._next = self.FIRST


SUBSCRIBE_ID = 1


class Subscription:
    """One watch's bookkeeping across its connections. Per connection: `subscribe_line()` is written, then
    every message read goes to `receive()`, which returns the states to yield. `ping_line()` asks whether the
    daemon is still there (a `get` on the same connection); `receive` notes its reply (`awaiting_ping`)."""

    def __init__(self, app: Optional[str], socket: str) -> None:
        self.app = app
        self.socket = socket
        self.last_mode: Optional[Mode] = None
        #: Subscribed on the current connection (the reply to `subscribe` came).
        self.subscribed = False
        #: Subscribed at least once: from then on, a lost daemon is waited for.
        self.ever_subscribed = False
        self.awaiting_ping = False
        self._ping_id = 0

    def subscribe_line(self) -> bytes:
        self.subscribed = False
        self.awaiting_ping = False
        return request_line(SUBSCRIBE_ID, "subscribe", state_params("subscribe", self.app))

    def ping_line(self) -> bytes:
        self._ping_id += 1
        self.awaiting_ping = True
        return request_line(f"alive-{self._ping_id}", "get", state_params("get", self.app))

    def receive(self, message: Dict[str, Any]) -> List[State]:
        if not self.subscribed:
            result = reply_to(message, SUBSCRIBE_ID, self.socket)
            if result is None:
                return []
            self.subscribed = True
            self.ever_subscribed = True
            return self._offer(as_state(result, self.socket))
        if message.get("method") == "changed":
            params = message.get("params")
            if isinstance(params, dict):
                return self._offer(as_state(params, self.socket))
            return []
        if self.awaiting_ping and message.get("id") == f"alive-{self._ping_id}":
            self.awaiting_ping = False
            reply_to(message, message["id"], self.socket)  # a refusal is raised, as for any request
        return []

    def _offer(self, state: State) -> List[State]:
        """The state to yield, if its mode is news: the same mode is never yielded twice in a row (after a
        reconnect, or a `changed` whose state a reply already told)."""
        if state["mode"] == self.last_mode:
            return []
        out: State = dict(state)  # type: ignore[assignment]
        out["previous"] = self.last_mode
        self.last_mode = state["mode"]
        return [out]


__all__ = [
    "DEFAULT_KEEPALIVE",
    "DEFAULT_TIMEOUT",
    "Backoff",
    "Duration",
    "LineReader",
    "Mode",
    "State",
    "Subscription",
    "Traits",
    "check_trusted",
    "socket_path",
]
