"""appearanced.aio: the same requests, errors, deadlines and watch under asyncio. Each test's coroutine runs
with a deadline (`run`): one that hangs fails instead of hanging the suite."""

from __future__ import annotations

import asyncio
import signal
from typing import Any, Awaitable, List, Optional, TypeVar

import pytest

import appearanced
import appearanced.aio
from conftest import WAIT, Daemon, FakeDaemon, Sandbox
from test_errors import silent

T = TypeVar("T")


def run(coroutine: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coroutine, WAIT)

    return asyncio.run(bounded())


async def take(w: appearanced.aio.Watch) -> appearanced.State:
    """The next state, with a deadline."""
    return await asyncio.wait_for(w.__anext__(), WAIT)


def test_requests(daemon: Daemon) -> None:
    async def main() -> None:
        assert await appearanced.aio.get() == "light"
        s = await appearanced.aio.set("dark")
        assert (s["mode"], s["override"]) == ("dark", "dark")
        assert (await appearanced.aio.state())["mode"] == "dark"
        s = await appearanced.aio.toggle()
        assert (s["mode"], s["override"]) == ("light", "system")
        s = await appearanced.aio.set("dark", app="kitty")
        assert (s["mode"], s.get("app")) == ("dark", "kitty")
        assert await appearanced.aio.get(app="kitty") == "dark" and await appearanced.aio.get() == "light"
        s = await appearanced.aio.set("dark", until="next")
        assert s["temporary"] == {"mode": "dark", "until": "next"}
        s = await appearanced.aio.toggle(for_=60)
        assert s["temporary"] is not None and s["temporary"]["mode"] == "light"
        assert (await appearanced.aio.status())["protocol"] >= 6
        # Requests at once, each on its own connection.
        modes = await asyncio.gather(*(appearanced.aio.get() for _ in range(20)))
        assert modes == ["light"] * 20

    run(main())


def test_errors(sandbox: Sandbox, fakes: List[FakeDaemon]) -> None:
    f = FakeDaemon(silent).serve()
    fakes.append(f)

    async def main() -> None:
        with pytest.raises(appearanced.NotRunning, match=f"cannot connect to {sandbox.socket}"):
            await appearanced.aio.get()
        with pytest.raises(appearanced.NotRunning):
            await take(appearanced.aio.watch())
        # A socket that accepts and never answers: the deadline, not a hang.
        with pytest.raises(appearanced.NotAnswering, match=f"did not answer on {f.path} within 0.3 s"):
            await appearanced.aio.get(socket=f.path, timeout=0.3)
        with pytest.raises(appearanced.NotAnswering):
            await take(appearanced.aio.watch(socket=f.path, timeout=0.3))
        sandbox.start_daemon()
        with pytest.raises(appearanced.Refused) as e:
            await appearanced.aio.set("blue")
        assert e.value.code == -32602
        assert str(e.value) == 'set: invalid override "blue", expected "light", "dark" or "system"'
        with pytest.raises(appearanced.Refused):
            await take(appearanced.aio.watch(app="not an id!"))

    run(main())


def test_watch_current_first_then_changes(daemon: Daemon) -> None:
    async def main() -> None:
        async with appearanced.aio.watch() as w:
            first = await take(w)
            assert (first["mode"], first["previous"]) == ("light", None)
            await appearanced.aio.set("dark")
            await appearanced.aio.set("dark")
            await appearanced.aio.toggle()
            s = await take(w)
            assert (s["mode"], s["previous"]) == ("dark", "light")
            s = await take(w)
            assert (s["mode"], s["previous"]) == ("light", "dark")
        with pytest.raises(StopAsyncIteration):
            await w.__anext__()

    run(main())


def test_watch_survives_a_daemon_restart(sandbox: Sandbox, daemon: Daemon) -> None:
    async def main() -> None:
        async with appearanced.aio.watch() as w:
            first = await take(w)
            assert first["mode"] == "light"
            daemon.stop(signal.SIGKILL)
            sandbox.write_config('default-mode = "dark"\n')
            await asyncio.get_running_loop().run_in_executor(None, sandbox.start_daemon)
            s = await take(w)
            assert (s["mode"], s["previous"], s["seq"]) == ("dark", "light", 0)
            assert s["instance"] != first["instance"]
            await appearanced.aio.set("light")
            assert (await take(w))["mode"] == "light"

    run(main())


def test_watch_keepalive_finds_a_stopped_daemon(daemon: Daemon) -> None:
    async def main() -> None:
        w = appearanced.aio.watch(keepalive=0.2, reconnect=False)
        assert (await take(w))["mode"] == "light"
        daemon.send(signal.SIGSTOP)
        try:
            with pytest.raises(appearanced.NotAnswering):
                await take(w)
        finally:
            daemon.send(signal.SIGCONT)
        # An error ends the watch.
        with pytest.raises(StopAsyncIteration):
            await w.__anext__()

    run(main())


def test_watch_aclose_from_another_task_ends_it(daemon: Daemon) -> None:
    async def main() -> None:
        w = appearanced.aio.watch()
        got: List[Optional[Any]] = []

        async def iterate() -> None:
            async for s in w:
                got.append(s)

        task = asyncio.ensure_future(iterate())
        while not got:
            await asyncio.sleep(0.005)
        await w.aclose()
        await asyncio.wait_for(task, WAIT)
        assert [s["mode"] for s in got if s is not None] == ["light"]

    run(main())


def test_watch_in_a_cancelled_task(daemon: Daemon) -> None:
    async def main() -> None:
        w = appearanced.aio.watch()
        assert (await take(w))["mode"] == "light"
        task = asyncio.ensure_future(w.__anext__())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # Cancelling a wait leaves the watch usable.
        await appearanced.aio.set("dark")
        assert (await take(w))["mode"] == "dark"
        await w.aclose()

    run(main())
