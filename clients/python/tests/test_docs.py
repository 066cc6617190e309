"""The Python in README.md and docs/python.md runs as shown, against the real daemon: every indented block
that imports the client. (README's walk, Tests/EndToEndTests/ReadmeWalkTests.swift, leaves these blocks to
this test.) A block that watches must print the mode and keep following; any other must end with status 0."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

import appearanced
from conftest import REPO, WAIT, Sandbox, wait_until
from test_example import Output


def python_blocks(doc: Path) -> List[Tuple[int, str]]:
    """The doc's indented code blocks (four spaces, after a blank line) that import appearanced, with the line
    each starts on."""
    blocks: List[Tuple[int, List[str]]] = []
    current: List[str] = []
    start = 0
    previous_blank = True
    for number, line in enumerate(doc.read_text().split("\n"), 1):
        if current and (line.startswith("    ") or not line):
            current.append(line[4:])
        elif not current and previous_blank and line.startswith("    "):
            current, start = [line[4:]], number
        elif current:
            blocks.append((start, current))
            current = []
        previous_blank = not line
    if current:
        blocks.append((start, current))
    return [(n, "\n".join(b).strip() + "\n") for n, b in blocks
            if any(re.match(r"import .*\bappearanced\b", line) for line in b)]


BLOCKS = [(f"{doc}:{n}", text) for doc in ("README.md", "docs/python.md") for n, text in python_blocks(REPO / doc)]


def test_the_docs_have_python() -> None:
    assert sum(1 for where, _ in BLOCKS if where.startswith("README.md")) == 1
    assert sum(1 for where, _ in BLOCKS if where.startswith("docs/python.md")) >= 4


@pytest.mark.parametrize("where,code", BLOCKS, ids=[where for where, _ in BLOCKS])
def test_a_block_runs(where: str, code: str, sandbox: Sandbox) -> None:
    sandbox.start_daemon()
    script = sandbox.root / "block.py"
    script.write_text(code)
    p = subprocess.Popen([sys.executable, str(script)], env=dict(sandbox.env, PYTHONUNBUFFERED="1"), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = Output(p)
    try:
        if "watch(" in code:
            # It follows: the mode now is the last it printed, and it is still waiting for the next change.
            def printed_the_mode() -> bool:
                if p.poll() is not None:
                    raise AssertionError(f"{where} ended ({p.returncode}): {out.lines} {out.err}")
                return bool(out.lines) and out.lines[-1].split()[0] == appearanced.get()

            wait_until(f"{where}: the watch printing the mode; have {out.lines}, stderr {out.err}", printed_the_mode)
            appearanced.toggle()
            wait_until(f"{where}: the watch printing the toggled mode; have {out.lines}", printed_the_mode)
        else:
            assert p.wait(timeout=WAIT) == 0, f"{where}: {out.err}"
            if "Refused" in code:
                wait_until("the refusal printed", lambda: bool(out.lines))
                assert out.lines == ['set: invalid override "blue", expected "light", "dark" or "system"']
    finally:
        p.kill()
        p.wait(timeout=WAIT)
