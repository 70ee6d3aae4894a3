"""A small store for the MCP server's tests: four sessions whose listing order, titles and
words are known, around one project directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessionref.testing import write_session_store
from tests.logs import title, turn

#: (id, createdAt, in the project?, title, what the user said); the project's sessions come
#: first, then the one without a cwd, then the other project's, each newest first.
SESSIONS = (
    ("s-auth", 3000, True, "Auth refactor", "move the token refresh flow to JWT"),
    ("s-docs", 4000, False, "Docs: dark mode", "add a dark mode toggle"),
    ("s-none", 5000, None, None, "scratch notes about nothing"),
    ("s-old", 1000, True, "Old AUTH notes", "the first look at sessions"),
)
LISTED = ["s-auth", "s-old", "s-none", "s-docs"]
OTHER_PROJECT = "/elsewhere/docs"


def session_log(
    session_id: str, created_at: int, cwd: str | None, name: str | None, said: str
) -> dict[str, Any]:
    """A log of one turn (``said``, answered "ok"), titled ``name`` when given."""
    header: dict[str, Any] = {"version": 0, "id": session_id, "createdAt": created_at}
    if cwd is not None:
        header["cwd"] = cwd
    events = turn(0, 1, said, "ok") + ([title(6, name)] if name is not None else [])
    return {"header": {**header, "delegationDepth": 0}, "events": events}


def write_store(root: Path, project: Path) -> Path:
    """The four sessions under ``root``; ``project`` is the directory of the project ones."""
    project.mkdir(parents=True, exist_ok=True)
    cwds = {True: str(project), False: OTHER_PROJECT, None: None}
    logs = [
        session_log(session_id, created_at, cwds[mine], name, said)
        for session_id, created_at, mine, name, said in SESSIONS
    ]
    write_session_store(root, logs)
    return root
