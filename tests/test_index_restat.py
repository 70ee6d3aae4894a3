"""The index's cheap look at an unchanged store (``sessionref.index.restat``): the stamped
walk kept as numbers, statted and compared without reading the walk's rows; never trusted
for another walk than the stamped one."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

import sessionref.index.database as index_database
from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.index import RefreshReport, SessionIndex
from tests.store_clock import StoreClock
from tests.test_index import index_of, settled_store, small_store
from tests.test_index_harnesses import Settled, claude_lines, claude_store


def traced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements every index database opened from now on runs."""
    statements: list[str] = []
    connect = index_database.open_database

    def connect_traced(path: Path) -> sqlite3.Connection:
        db = connect(path)
        db.set_trace_callback(statements.append)
        return db

    monkeypatch.setattr(index_database, "open_database", connect_traced)
    return statements


def walk_rows_read(statements: list[str]) -> bool:
    """Whether the statements read the stamped walk's rows."""
    return any(s.startswith("SELECT") and "FROM entries" in s for s in statements)


def stats_row(path: Path) -> bytes | None:
    """The walk stats the index at ``path`` keeps, if any."""
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT value FROM meta WHERE key = 'stats'").fetchone()
    return None if row is None else bytes(row[0])


def indexed_store(tmp_path: Path) -> tuple[Path, Path, StoreClock]:
    """A small DSH store, its index (settled) and the clock of both."""
    root = tmp_path / "store"
    small_store(root)
    clock = settled_store(root)
    index_of(root, tmp_path, clock=clock).refresh()
    return root, tmp_path / "index.sqlite", clock


def retitle(log: Path, title: str) -> None:
    """Append a title event to a plain log (the session is read again)."""
    event = {"type": "session/title", "seq": 1, "time": 2, "data": {"title": title}}
    with log.open("ab") as file:
        file.write(json.dumps(event).encode() + b"\n")


def indexed_changed_then_put_back(root: Path, tmp_path: Path, clock: StoreClock) -> None:
    """Change a log of ``root``, index the change, then put the log back as it was (size and
    mtime): the index's walk is no longer the store, though the store matches an older walk."""
    log = next(root.glob("*/s3/session.jsonl"))
    before = log.stat()
    retitle(log, "changed")
    clock.date(root)
    assert index_of(root, tmp_path, clock=clock).refresh().read == 1
    os.truncate(log, before.st_size)
    os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_use_that_finds_the_store_unchanged_reads_none_of_the_walks_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _, clock = indexed_store(tmp_path)
    statements = traced(monkeypatch)
    assert index_of(root, tmp_path, clock=clock).refresh().read == 0
    assert statements and not walk_rows_read(statements)
    log = next(root.glob("*/s3/session.jsonl"))
    retitle(log, "changed")
    clock.date(root)
    assert index_of(root, tmp_path, clock=clock).refresh().read == 1
    assert index_of(root, tmp_path, clock=clock).refresh().read == 0


def test_an_index_made_before_the_stats_were_kept_gets_them_and_sees_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, path, clock = indexed_store(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM meta WHERE key = 'stats'")
    assert index_of(root, tmp_path, clock=clock).refresh().read == 0
    assert stats_row(path) is not None
    statements = traced(monkeypatch)
    assert index_of(root, tmp_path, clock=clock).refresh().read == 0
    assert not walk_rows_read(statements)


def test_stats_kept_for_another_walk_are_never_trusted(tmp_path: Path) -> None:
    """The stats of an older walk, which the store matches again, while the tables hold a
    later one (as a process of a version that kept no stats would leave them): the store is
    looked at as if there were none."""
    root, path, clock = indexed_store(tmp_path)
    older = stats_row(path)
    indexed_changed_then_put_back(root, tmp_path, clock)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'stats'", (older,))
    assert index_of(root, tmp_path, clock=clock).refresh().read == 1  # back as it was


def test_a_session_file_that_is_a_link_is_followed_and_a_warm_use_reads_nothing(
    tmp_path: Path,
) -> None:
    """The state of a link is its target's, as the listing reads it: never the link's own."""
    clock = Settled()
    root = claude_store(tmp_path / "claude", clock)
    target = tmp_path / "elsewhere" / "eeee5555.jsonl"
    clock.write(target, claude_lines("eeee5555", "/w", ["linked"]))
    (root / "projects" / "-w" / "eeee5555.jsonl").symlink_to(target)
    path = tmp_path / "index.sqlite"

    def refreshed() -> RefreshReport:  # a command's use: a store and an index of its own
        return SessionIndex(ClaudeCodeStore(root), path, clock=clock).refresh()

    assert refreshed() == (4, 4, 0)
    assert refreshed() == (4, 0, 0)
    clock.write(target, claude_lines("eeee5555", "/w", ["linked", "and changed"]))
    assert refreshed() == (4, 1, 0)
    assert refreshed() == (4, 0, 0)
