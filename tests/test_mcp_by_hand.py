"""``sessionref mcp`` typed at a prompt by hand, its input a terminal: it says what it is
waiting for, where a client that starts it (its input a pipe) gets nothing on stderr."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from sessionref.cli.demo import sample_root
from tests.conftest import CACHE

TIMEOUT = 60


def mcp_on(stdin: int | None, typed: bytes) -> subprocess.CompletedProcess[bytes]:
    """``sessionref mcp`` over the sample store, ``typed`` given on its input (``stdin`` a
    terminal's end, or a pipe when ``None``), its stderr captured."""
    env = {"PATH": "", "LC_ALL": "C.UTF-8", "XDG_CACHE_HOME": CACHE, "PYTHONPATH": os.getcwd()}
    command = [sys.executable, "-m", "sessionref", "mcp", "--root", str(sample_root())]
    if stdin is None:
        return subprocess.run(command, input=typed, capture_output=True, env=env, timeout=TIMEOUT)
    server = subprocess.Popen(
        command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    out, err = server.communicate(timeout=TIMEOUT)
    return subprocess.CompletedProcess(command, server.returncode, out, err)


def test_by_hand_on_a_terminal_it_says_what_it_waits_for() -> None:
    """A newcomer's trial: typed at a prompt, it sat there without a word, as if hung."""
    leader, follower = pty.openpty()
    os.write(leader, b"\x04")  # Ctrl-D: the end of the input, as the terminal reads it
    try:
        done = mcp_on(follower, b"")
    finally:
        os.close(follower)
        os.close(leader)
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr.decode() == (
        "sessionref mcp: waiting for an MCP client on standard input: a client starts this "
        "command itself (docs/mcp.md §Set-up); Ctrl-D ends it\n"
    )


def test_started_by_a_client_it_says_nothing() -> None:
    done = mcp_on(None, b"")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
