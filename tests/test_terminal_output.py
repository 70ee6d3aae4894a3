"""What every command sends a terminal of a session's text: no control character a terminal
would obey (an escape sequence, a C1 control such as U+009B, which a terminal decoding UTF-8
takes for CSI) and no bidi control (which would reorder the line, so that what is read is not
what is there). A JSON output stays the same JSON: its strings say the same characters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessionref.log.builder import LogBuilder
from sessionref.testing import write_session_store
from tests.conftest import CACHE
from tests.terminal import on_a_terminal

HOSTILE = (
    "pwn \x1b]0;T\x07 \x1b[2J \u009b31m \u009d8;;http://x\u009c \u202eevil\u202c \u2066i\u2069"
)
"""Escape sequences (set the title, clear the screen), their C1 forms (CSI, an OSC 8 link),
an override and an isolate."""
SESSION = f"s{HOSTILE}"
OBEYED = {*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0D, 0x20), *range(0x7F, 0xA0)}
BIDI = {*range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def hostile_store(root: Path) -> str:
    """A DSH session whose id, cwd, title, prompt and reply hold :data:`HOSTILE`."""
    log = LogBuilder()
    log.user(f"find me {HOSTILE}")
    log.assistant(f"said {HOSTILE}")
    log.title(f"title {HOSTILE}")
    header = {"version": 0, "id": SESSION, "createdAt": 1, "cwd": f"/w{HOSTILE}"}
    write_session_store(root, [{"header": {**header, "delegationDepth": 0}, "events": log.events}])
    return str(root)


def piped(*args: str) -> bytes:
    env = {"PATH": "", "LC_ALL": "C.UTF-8", "XDG_CACHE_HOME": CACHE, "PYTHONPATH": os.getcwd()}
    done = subprocess.run(
        [sys.executable, "-m", "sessionref", *args], capture_output=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


COMMANDS = {
    "snapshot": ["snapshot", SESSION],
    "snapshot --json": ["snapshot", SESSION, "--json", "--label-from", "title"],
    "candidates": ["candidates", "--no-index"],
    "candidates --json": ["candidates", "--json", "--no-index"],
    "search": ["search", "find", "--no-index"],
    "search --json": ["search", "find", "--json", "--no-index"],
    "export": ["export", SESSION],
    "export json": ["export", SESSION, "--format", "json"],
    "show": ["show", SESSION],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_terminal_gets_no_control_character_of_a_session(tmp_path: Path, command: str) -> None:
    """A security trial: ``snapshot``, ``candidates --json``, ``search --json`` sent the raw
    C1 controls and bidi controls of a session's id, title, cwd and text to a terminal (JSON
    escapes neither), and ``export --format json`` its bidi controls."""
    root = hostile_store(tmp_path / "store")
    args = [*COMMANDS[command], "--root", root]
    done, text = on_a_terminal(*args)
    assert done.returncode == 0, done.stderr
    assert "pwn" in text
    assert not {ord(c) for c in text} & (OBEYED | BIDI)
    if "--json" in args or "json" in args:  # the same JSON value as a pipe gets
        shown, expected = json.loads(text), json.loads(piped(*args))
        if command == "snapshot --json":  # each message has an id of its own
            del shown["id"], expected["id"]
        assert shown == expected
