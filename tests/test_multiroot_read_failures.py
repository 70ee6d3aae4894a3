"""With several roots, a session whose log breaks a read limit fails as it does from its root
alone: READ_FAILED naming the log and why (docs/harnesses.md §Stores), never "not found".

A newcomer's trial: a Claude Code session whose line 4 is over ``--max-line-bytes`` read
from ``--root dsh --root claude`` said 'session "…" not found in --root dsh --root claude;
1 log passed over', where ``--root claude`` alone names the log and its long line. Every pair
of harnesses, both limits, and every reader of a session (snapshot, export, show, the MCP
server's and the library's batch) are compared here with the answer of the session's root
alone.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import TypedDict

import pytest

from sessionref.batch.local import build_snapshots
from sessionref.cli import main
from sessionref.cli.common import OpenStore, error_line
from sessionref.errors import SessionReferenceError
from sessionref.mcp.catalog import Catalog, index_at
from sessionref.roots import check_root, open_stores
from sessionref.testing import write_session_store
from tests.mcp_store import session_log, write_store
from tests.test_mcp_roots import CLAUDE, CODEX, claude_session, codex_session

LIMITS = {"--max-line-bytes": 1000, "--max-log-bytes": 3000}
"""Each limit, and a value every ordinary log of the roots keeps to."""
LONG = "x" * 5000
"""What the user says in the session of each root that breaks both limits."""
CLAUDE_LONG = "5e55a000-0000-4000-8000-0000000000d1"
BROKEN = {"dsh": "s-long", "claude-code": CLAUDE_LONG, "codex": CODEX}
"""The session of each harness's root whose log breaks the limits."""
PAIRS = list(itertools.permutations(BROKEN, 2))
"""(the harness of the broken session's root, that of the other root)."""
READERS = ("snapshot", "export", "show", "mcp", "batch")


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A root of each harness: ordinary sessions, and the one of :data:`BROKEN` (in DSH and
    Claude Code a user message of :data:`LONG`; in Codex its one rollout gets one more)."""
    base = tmp_path_factory.mktemp("roots")
    dsh = write_store(base / "dsh", base / "project")
    write_session_store(dsh, [session_log(BROKEN["dsh"], 1, "/w", None, LONG)])
    claude_session(base / "claude", CLAUDE, "Fix the flaky login test", 1)
    claude_session(base / "claude", CLAUDE_LONG, LONG, 2)
    codex_session(base / "codex")
    said = {"type": "user_message", "message": LONG}
    line = {"timestamp": "2025-06-02T10:00:01.000Z", "type": "event_msg", "payload": said}
    with next((base / "codex" / "sessions").rglob("rollout-*.jsonl")).open("a") as rollout:
        rollout.write(json.dumps(line) + "\n")
    return {"dsh": dsh, "claude-code": base / "claude", "codex": base / "codex"}


def log_of(root: Path, session_id: str) -> Path:
    """The one log file below ``root`` whose path names ``session_id``."""
    (found,) = (path for path in root.rglob("*.jsonl") if session_id in str(path))
    return found


class Limits(TypedDict, total=False):
    """The read limits a store is opened with."""

    max_bytes: int
    max_line_bytes: int


def limits_of(limit: str) -> Limits:
    """The store argument the option ``limit`` sets, to its value in :data:`LIMITS`."""
    if limit == "--max-log-bytes":
        return Limits(max_bytes=LIMITS[limit])
    return Limits(max_line_bytes=LIMITS[limit])


def batch_error(given: list[Path], limit: str, session_id: str) -> str:
    """The error the library's batch gives for ``session_id`` read from the stores of
    ``given`` (a :class:`~sessionref.MultiStore` over several) under ``limit``: its code and
    message, as one line."""
    store = open_stores([check_root(str(root)) for root in given], **limits_of(limit))
    (result,) = build_snapshots(store, session_ids=[session_id])
    return f"{result['error']['code']}: {result['error']['message']}"


def served_error(given: list[Path], limit: str, session_id: str, index: Path) -> str:
    """The error line the MCP server's read of ``session_id`` gives (in this process), served
    from ``given`` under ``limit``, each root through its index as ``sessionref mcp`` has it."""
    lister = index_at(str(index) + os.sep)
    checked = [check_root(str(root)) for root in given]
    opened = OpenStore(checked, lister=lister, live=True, **limits_of(limit))
    catalog = Catalog(opened, cwd="/w", max_bytes=65536)
    with pytest.raises(SessionReferenceError) as raised:
        catalog.prompt([session_id], None)
    return error_line(raised.value).removesuffix("\n")


def read_error(
    reader: str,
    given: list[Path],
    limit: str,
    session_id: str,
    capsys: pytest.CaptureFixture[str],
    index: Path,
) -> str:
    """The one error line ``reader`` gives for ``session_id`` read from the roots ``given``."""
    if reader == "mcp":
        return served_error(given, limit, session_id, index)
    if reader == "batch":
        return batch_error(given, limit, session_id)
    roots = [arg for root in given for arg in ("--root", str(root))]
    capsys.readouterr()
    assert main([reader, *roots, limit, str(LIMITS[limit]), session_id]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("limit", LIMITS)
@pytest.mark.parametrize(("broken", "other"), PAIRS)
def test_a_log_over_a_limit_fails_from_several_roots_as_from_its_root_alone(
    roots: dict[str, Path],
    broken: str,
    other: str,
    limit: str,
    reader: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    session_id = BROKEN[broken]
    alone = read_error(reader, [roots[broken]], limit, session_id, capsys, tmp_path)
    assert alone.startswith("SESSION_REFERENCE_READ_FAILED: ") and "not found" not in alone
    assert f"{log_of(roots[broken], session_id)}: " in alone
    for given in ([roots[other], roots[broken]], [roots[broken], roots[other]]):
        assert read_error(reader, given, limit, session_id, capsys, tmp_path) == alone


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(("one", "two"), list(itertools.combinations(BROKEN, 2)))
def test_an_id_in_no_root_is_still_not_found_there(
    roots: dict[str, Path],
    one: str,
    two: str,
    reader: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    given = [roots[one], roots[two]]
    line = read_error(reader, given, "--max-line-bytes", "s-nowhere", capsys, tmp_path)
    named = "" if reader == "batch" else f" in --root {roots[one]} --root {roots[two]}"
    assert line.startswith("SESSION_REFERENCE_READ_FAILED: ")
    assert f'session "s-nowhere" not found{named}' in line
