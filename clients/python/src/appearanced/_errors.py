"""The exceptions of the client: every one is an `Error`, whose message says what went wrong and what to do."""

from __future__ import annotations

from typing import Optional


class Error(Exception):
    """Anything that went wrong talking to appearanced. `socket` is the socket's path (None if none was
    reached); `str(error)` is a message for people."""

    def __init__(self, message: str, socket: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.socket = socket


class NotRunning(Error):
    """Nothing answers on the socket: the daemon is not running (or listens elsewhere)."""

    def __init__(self, socket: str, reason: str) -> None:
        super().__init__(
            f"appearanced is not running: cannot connect to {socket} ({reason}). "
            "Start it with 'systemctl --user start appearanced.socket', or run 'appearanced'.",
            socket,
        )
        self.reason = reason


class Refused(Error):
    """The daemon read the request and refused it: `message` is the daemon's own (for people), `code` the
    JSON-RPC error code (-32602 invalid params, -32000 the request failed, …)."""

    def __init__(self, code: int, message: str, socket: Optional[str] = None) -> None:
        super().__init__(message, socket)
        self.code = code


class NotAnswering(Error):
    """The daemon did not answer within the deadline: it is stopped (SIGSTOP), stuck, or does not accept
    connections."""

    def __init__(self, socket: str, seconds: float) -> None:
        shown = f"{seconds:g}"
        super().__init__(
            f"appearanced did not answer on {socket} within {shown} s: it may be stopped or stuck. "
            "Check it with 'systemctl --user status appearanced', or restart it.",
            socket,
        )
        self.seconds = seconds


class ConnectionLost(Error):
    """The connection broke before the reply came (the daemon exited or restarted)."""

    def __init__(self, socket: str, reason: str) -> None:
        super().__init__(f"lost the connection to appearanced on {socket} ({reason})", socket)
        self.reason = reason


class UntrustedSocket(Error):
    """The socket is not safely the user's own (another user's, or in a directory others may write to), or
    is no socket at all: not connected to, because a fake daemon could be listening there."""

    def __init__(self, socket: str, reason: str, message: str) -> None:
        super().__init__(message, socket)
        self.reason = reason


class ProtocolError(Error):
    """The daemon sent something this client cannot read."""

    def __init__(self, detail: str, socket: Optional[str] = None) -> None:
        super().__init__(f"protocol error: {detail}", socket)
