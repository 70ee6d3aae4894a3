"""A command run with its stdout on a terminal (a pseudo-terminal), as a user at a prompt
runs it: what the terminal was sent, its own line ends (``\\r\\n``) turned back into ``\\n``."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from tests.conftest import CACHE


def on_a_terminal(*args: str) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """Run ``sessionref ARGS`` with stdout on a terminal: the finished process (its stderr
    captured) and the text the terminal got."""
    leader, follower = pty.openpty()
    env = {"PATH": "", "LC_ALL": "C.UTF-8", "XDG_CACHE_HOME": CACHE, "PYTHONPATH": os.getcwd()}
    command = [sys.executable, "-m", "sessionref", *args]
    done = subprocess.run(command, stdout=follower, stderr=subprocess.PIPE, env=env, timeout=60)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # the terminal's other end is closed: all was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return done, shown.decode("utf-8").replace("\r\n", "\n")
