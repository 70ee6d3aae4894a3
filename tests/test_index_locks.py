"""The index and other processes' locks: a lock passes, so it is waited for or the store is
read directly, but the database is never deleted from under the process that holds it."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import sessionref.index.schema as schema
from sessionref.index import SessionIndex
from sessionref.log.store import DirectoryStore
from tests.test_index import assert_answers_right, small_store


def test_opening_waits_for_a_process_that_is_creating_the_database(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """While another process creates the database it holds the write lock before the file is
    in WAL mode; SQLite then answers the switch to WAL with "locked" at once, without waiting.
    The index waits for the lock (here the holder lets go as soon as the index first waits)
    and opens that same database, with no warning."""
    small_store(tmp_path / "store")
    path = tmp_path / "index.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    inode = os.stat(path).st_ino
    real_sleep = time.sleep

    def let_go_then_sleep(seconds: float) -> None:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        real_sleep(seconds)

    monkeypatch.setattr(schema.time, "sleep", let_go_then_sleep)
    warnings: list[str] = []
    index = SessionIndex(DirectoryStore(tmp_path / "store"), path, warn=warnings.append)
    assert index.refresh().read == 12
    assert not holder.in_transaction  # the index did wait for it
    assert os.stat(path).st_ino == inode  # the holder's file, not a new one
    assert warnings == [] and not index.bypassed
    assert_answers_right(index, tmp_path / "store")
    holder.close()


def test_a_lock_held_past_the_busy_timeout_leaves_the_database_alone(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A refresh that cannot get the write lock in time reads the store directly (one
    warning) and neither deletes nor rebuilds the database the other process is writing."""
    small_store(tmp_path / "store", 3)
    path = tmp_path / "index.sqlite"
    SessionIndex(DirectoryStore(tmp_path / "store"), path).refresh()
    small_store(tmp_path / "store", 5)  # the refresh must write
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO meta VALUES ('held', 1)")
    inode = os.stat(path).st_ino
    monkeypatch.setattr(schema, "BUSY_TIMEOUT_MS", 50)
    warnings: list[str] = []
    index = SessionIndex(DirectoryStore(tmp_path / "store"), path, warn=warnings.append)
    assert_answers_right(index, tmp_path / "store")
    assert index.bypassed
    assert len(warnings) == 1 and "busy" in warnings[0]
    assert os.stat(path).st_ino == inode
    holder.execute("COMMIT")
    holder.close()
    index = SessionIndex(DirectoryStore(tmp_path / "store"), path, warn=warnings.append)
    assert_answers_right(index, tmp_path / "store")
    with sqlite3.connect(path) as db:  # the holder's write is there: the same database
        assert db.execute("SELECT value FROM meta WHERE key = 'held'").fetchone() == (1,)
    db.close()
    assert len(warnings) == 1


def test_a_named_file_another_process_is_creating_is_not_taken_for_a_foreign_one(
    tmp_path: Path,
) -> None:
    """Another process has made the file an SQLite database in WAL mode but not yet given
    it the tables: nothing in it is anyone's, so it is used, with no warning."""
    small_store(tmp_path / "store")
    path = tmp_path / "named.sqlite"
    creator = sqlite3.connect(path, isolation_level=None)
    assert creator.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
    warnings: list[str] = []
    index = SessionIndex(DirectoryStore(tmp_path / "store"), path, warn=warnings.append)
    assert index.refresh().read == 12
    assert warnings == [] and not index.bypassed
    assert_answers_right(index, tmp_path / "store")
    creator.close()
