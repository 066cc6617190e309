"""The Python client of appearanced: is the UI dark right now, and tell me when that changes.

    import appearanced

    appearanced.get()                      # "light" or "dark"
    appearanced.state()                    # the whole state object (docs/protocol.md)
    appearanced.set("dark")                # or "light", or "system" to follow the desktop again
    appearanced.set("dark", for_=3600)     # for an hour; until="next": until the next automatic change
    appearanced.toggle()
    for s in appearanced.watch():          # the current state, then every change; follows restarts
        print(s["mode"])

`appearanced.aio` has the same for asyncio. Every function takes `app` (that app's own mode), `socket`
(else found as appearancectl finds it) and `timeout` (seconds; 4 by default). Errors are `appearanced.Error`:
`NotRunning`, `Refused` (the daemon's message), `NotAnswering`, `ConnectionLost`, `UntrustedSocket`,
`ProtocolError`. Standard library only.
"""

from typing import TYPE_CHECKING

from ._core import DEFAULT_KEEPALIVE, DEFAULT_TIMEOUT, Mode, State, Traits, socket_path
from ._errors import ConnectionLost, Error, NotAnswering, NotRunning, ProtocolError, Refused, UntrustedSocket
from ._sync import Watch, call, get, state, status, toggle, watch
from ._sync import set as set  # not in __all__: `from appearanced import *` must not hide the builtin set

if TYPE_CHECKING:
    from . import aio as aio

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # `appearanced.aio` without importing asyncio for the many scripts that never use it.
    if name == "aio":
        import importlib

        return importlib.import_module(".aio", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_KEEPALIVE",
    "DEFAULT_TIMEOUT",
    "ConnectionLost",
    "Error",
    "Mode",
    "NotAnswering",
    "NotRunning",
    "ProtocolError",
    "Refused",
    "State",
    "Traits",
    "UntrustedSocket",
    "Watch",
    "aio",
    "call",
    "get",
    "socket_path",
    "state",
    "status",
    "toggle",
    "watch",
]
