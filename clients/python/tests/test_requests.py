"""get, state, set, toggle, app overrides and temporary overrides against the real daemon."""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict

import pytest

import appearanced
from conftest import Daemon, Sandbox


def test_the_installed_package_is_the_one_tested() -> None:
    # `pip install ./clients/python` into the test venv: not the source tree by accident.
    installed = Path(appearanced.__file__).resolve()
    assert Path(sys.prefix).resolve() in installed.parents, installed
    assert (installed.parent / "py.typed").exists()
    from importlib import metadata

    assert not metadata.requires("appearanced"), "the client has no runtime dependencies"


def test_the_public_names() -> None:
    names: Dict[str, Any] = {}
    exec("from appearanced import *", names)
    assert {"get", "state", "toggle", "watch", "Error", "NotRunning", "Refused", "aio"} <= names.keys()
    assert "set" not in names, "a star import must not hide the builtin set"
    assert issubclass(appearanced.NotRunning, appearanced.Error) and issubclass(appearanced.Refused, appearanced.Error)
    # appearanced.aio without importing it; asyncio only once it is used.
    r = subprocess.run([sys.executable, "-c", "import sys, appearanced; assert 'asyncio' not in sys.modules; "
                        "print(appearanced.aio.watch.__module__)"], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, "appearanced.aio\n"), r.stderr


def test_get_and_state(daemon: Daemon) -> None:
    assert appearanced.get() == "light"
    s = appearanced.state()
    assert s["mode"] == "light" and s["darkMode"] is False
    assert s["override"] == "system" and s["source"] == "default" and s["system"] == "unavailable"
    assert s["seq"] == 0 and re.fullmatch(r"[0-9a-f]{16}", s["instance"])
    assert s["traits"] == {"contrast": None, "reducedMotion": None, "accentColor": None}
    assert s["temporary"] is None


def test_set_and_toggle(daemon: Daemon) -> None:
    s = appearanced.set("dark")
    assert (s["mode"], s["override"], s["source"], s["seq"]) == ("dark", "dark", "override", 1)
    assert appearanced.get() == "dark"
    # The toggle rule: following the desktop gives light, so the override goes back to system.
    s = appearanced.toggle()
    assert (s["mode"], s["override"], s["source"]) == ("light", "system", "default")
    s = appearanced.toggle()
    assert (s["mode"], s["override"]) == ("dark", "dark")
    s = appearanced.set("system")
    assert (s["mode"], s["override"]) == ("light", "system")
    # The override is saved before the reply: a new daemon starts with it.
    appearanced.set("dark")
    daemon.stop()
    daemon.sandbox.start_daemon()
    assert appearanced.state()["override"] == "dark"


def test_app_overrides_concern_that_app_only(daemon: Daemon) -> None:
    s = appearanced.set("dark", app="kitty")
    assert (s["mode"], s["source"], s.get("app"), s.get("globalMode")) == ("dark", "app", "kitty", "light")
    assert appearanced.get() == "light"
    assert appearanced.get(app="kitty") == "dark"
    assert appearanced.get(app="foot") == "light"
    assert appearanced.call("apps") == {"apps": [{"app": "kitty", "override": "dark"}]}
    # Toggling kitty back to what it would get anyway removes its override.
    s = appearanced.toggle(app="kitty")
    assert (s["mode"], s["source"]) == ("light", "default")
    assert appearanced.call("apps") == {"apps": []}
    appearanced.set("light", app="kitty")
    appearanced.set("system", app="kitty")
    assert appearanced.call("apps") == {"apps": []}


def test_until_next(daemon: Daemon) -> None:
    s = appearanced.set("dark", until="next")
    assert (s["mode"], s["source"], s["override"]) == ("dark", "temporary", "system")
    assert s["temporary"] == {"mode": "dark", "until": "next"}
    # A plain set ends it: the newest word wins.
    s = appearanced.set("light")
    assert s["temporary"] is None and s["override"] == "light"
    s = appearanced.toggle(until="next")
    assert s["temporary"] == {"mode": "dark", "until": "next"} and s["mode"] == "dark"


def test_for_seconds_and_timedelta(daemon: Daemon) -> None:
    before = int(time.time())
    s = appearanced.set("dark", for_=3600)
    after = int(time.time()) + 1
    temporary = s["temporary"]
    assert temporary is not None and temporary["mode"] == "dark" and s["source"] == "temporary"
    assert before + 3600 <= temporary["until"] <= after + 3600
    before = int(time.time())
    s = appearanced.toggle(for_=datetime.timedelta(minutes=5))
    after = int(time.time()) + 1
    temporary = s["temporary"]
    assert temporary is not None and temporary["mode"] == "light" and s["mode"] == "light"
    assert before + 300 <= temporary["until"] <= after + 300
    # A whole number of seconds as a float is whole seconds.
    assert appearanced.set("dark", for_=90.0)["temporary"] is not None


def test_status_and_call(daemon: Daemon) -> None:
    st = appearanced.status()
    assert st["protocol"] >= 6 and st["mode"] == "light" and isinstance(st["pid"], int)
    assert appearanced.call("schedule") == {"configured": False, "mode": None, "hiddenBy": None, "events": []}


def test_the_socket_is_found_as_appearancectl_finds_it(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = sandbox.env["XDG_RUNTIME_DIR"]
    assert appearanced.socket_path() == runtime + "/appearanced/socket"
    assert appearanced.socket_path("/x/sock") == "/x/sock"
    monkeypatch.setenv("APPEARANCED_SOCKET", "/elsewhere/sock")
    assert appearanced.socket_path() == "/elsewhere/sock"
    # Empty counts as unset.
    monkeypatch.setenv("APPEARANCED_SOCKET", "")
    assert appearanced.socket_path() == runtime + "/appearanced/socket"
    monkeypatch.setenv("XDG_RUNTIME_DIR", "")
    uid = __import__("os").getuid()
    assert appearanced.socket_path() in (f"/run/user/{uid}/appearanced/socket", f"/tmp/appearanced-{uid}/socket")


def test_appearanced_socket_and_the_socket_argument_reach_the_daemon(sandbox: Sandbox,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    other = sandbox.root / "trial"
    other.mkdir(mode=0o700)
    sandbox.start_daemon("--state-dir", str(other), "--socket", str(other / "socket"), socket=str(other / "socket"))
    monkeypatch.setenv("APPEARANCED_SOCKET", str(other / "socket"))
    assert appearanced.set("dark")["mode"] == "dark"
    monkeypatch.delenv("APPEARANCED_SOCKET")
    with pytest.raises(appearanced.NotRunning):
        appearanced.get()  # XDG_RUNTIME_DIR's socket: no daemon there
    assert appearanced.get(socket=str(other / "socket")) == "dark"
