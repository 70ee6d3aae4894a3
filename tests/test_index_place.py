"""An index whose place fails it (a full disk, a read-only folder) while nothing is wrong with
its content: the answers come from the store, and the database is kept as it is."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import sessionref.index.database as index_database
import sessionref.index.upkeep as upkeep
from tests.test_index import assert_answers_right, index_of, small_store


def _sessions_in(path: Path) -> int:
    with sqlite3.connect(path) as db:
        (count,) = db.execute("SELECT count(*) FROM sessions").fetchone()
    db.close()
    return int(count)


def test_a_full_disk_leaves_the_index_as_it_was(tmp_path: Path, monkeypatch: Any) -> None:
    """SQLite's "database or disk is full" as a refresh writes: one warning, the answers from
    the store, and the index it had is kept for the next use, not deleted (a full disk says
    nothing against it, and a large one takes long to build again)."""
    small_store(tmp_path / "store", 3)
    path = tmp_path / "index.sqlite"
    with index_of(tmp_path / "store", tmp_path) as index:
        index.refresh()
    inode = os.stat(path).st_ino
    small_store(tmp_path / "store", 300)  # the refresh must grow the database
    connect = index_database.open_database

    def full_disk(where: Path) -> sqlite3.Connection:
        db = connect(where)
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        db.execute(f"PRAGMA max_page_count = {pages}")  # no room to grow: SQLITE_FULL
        return db

    monkeypatch.setattr(index_database, "open_database", full_disk)
    warnings: list[str] = []
    with index_of(tmp_path / "store", tmp_path, warn=warnings.append) as index:
        assert_answers_right(index, tmp_path / "store")
        assert index.bypassed
    assert len(warnings) == 1 and "database or disk is full" in warnings[0]
    assert os.stat(path).st_ino == inode and _sessions_in(path) == 3
    monkeypatch.undo()
    with index_of(tmp_path / "store", tmp_path) as index:
        assert index.refresh().read >= 297 and not index.bypassed
    assert _sessions_in(path) == 300


def test_stats_read_an_index_in_a_read_only_folder(tmp_path: Path, monkeypatch: Any) -> None:
    """In a folder it cannot write, SQLite cannot open a WAL database to read it
    (``unable to open database file``, SQLITE_CANTOPEN): with no write-ahead log beside it,
    the database file holds everything, and the stats read it as it is."""
    small_store(tmp_path / "store", 4)
    path = tmp_path / "index.sqlite"
    with index_of(tmp_path / "store", tmp_path) as index:
        index.refresh()

    def read_only_folder(where: Path) -> Any:
        error = sqlite3.OperationalError("unable to open database file")
        error.sqlite_errorcode = 14  # as a read-only folder gives it
        raise error

    monkeypatch.setattr(upkeep, "reading", read_only_folder)
    stats = upkeep.index_stats(tmp_path / "store", path)
    assert (stats.sessions, stats.unusable) == (4, None)
    assert stats.size == path.stat().st_size
