"""One index database shared by commands that run at once: one that builds it afresh (under
lower read limits) or gives up a first build on a full disk never deletes the files another
one has open (SQLite then failed that one with "disk I/O error", about 1 run in 12 of two
processes under two limits), and the other one's answers stay its own."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import sessionref.index.afresh as index_afresh
import sessionref.index.database as index_database
import sessionref.index.tables as index_tables
from sessionref.index import SessionIndex
from sessionref.log.store import DirectoryStore
from tests.test_index import StoreClock, assert_answers_right, index_of, small_store


def _sessions_in(path: Path) -> int:
    with sqlite3.connect(path) as db:
        (count,) = db.execute("SELECT count(*) FROM sessions").fetchone()
    db.close()
    return int(count)


def _low(tmp_path: Path, warnings: list[str]) -> SessionIndex:
    """An index of the store under limits every one of its logs is over (each read fails)."""
    low = DirectoryStore(tmp_path / "store", max_bytes=100)
    clock = StoreClock("settled")
    return SessionIndex(low, tmp_path / "index.sqlite", warn=warnings.append, clock=clock)


def _answered_from_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The high-limits command, which another command raced (the race patched in by the
    caller, undone here once it ran), answers from the store with one warning saying why."""
    warnings: list[str] = []
    with index_of(tmp_path / "store", tmp_path, warn=warnings.append) as high:
        assert_answers_right(high, tmp_path / "store")
        assert high.unread() == [] and high.bypassed
    monkeypatch.undo()
    assert len(warnings) == 1 and "changed under this command" in warnings[0]


def test_lower_limits_build_the_index_afresh_in_the_file_another_command_has_open(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """While a command under the default limits refreshes, one under lower limits builds the
    index afresh. It did so by deleting the files the first had open, which then wrote into
    a deleted file (or failed with "disk I/O error"). Now the database is emptied in place:
    the first finds it stamped anew at its next write, says so once and answers from the
    store; the second's index is the file every later command opens."""
    small_store(tmp_path / "store", 6)
    path = tmp_path / "index.sqlite"
    with index_of(tmp_path / "store", tmp_path) as index:
        index.refresh()
    inode = os.stat(path).st_ino
    small_store(tmp_path / "store", 9)  # the refresh must write
    real_transaction = index_tables.transaction
    low_warnings: list[str] = []
    raced: list[int] = []

    def racing(db: sqlite3.Connection, write: Callable[[], Any]) -> Any:
        if not raced:  # the other command, between this one's reads and its write
            raced.append(1)
            with _low(tmp_path, low_warnings) as low:
                assert len(low.headers()) == 9 and len(low.unread()) == 9
        return real_transaction(db, write)

    monkeypatch.setattr(index_tables, "transaction", racing)
    _answered_from_the_store(tmp_path, monkeypatch)
    assert raced and low_warnings == []
    assert os.stat(path).st_ino == inode and _sessions_in(path) == 9
    with _low(tmp_path, low_warnings) as low:  # the file holds the low index, whole
        assert low.refresh().read == 0 and len(low.unread()) == 9
    assert low_warnings == []


def test_a_first_build_a_full_disk_stops_leaves_the_one_another_command_is_making(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Two first builds at once: both found no database, the second opened the one the
    first had just made. When a full disk stopped the second, it removed "the database it
    made", which was the first's, under the first (whose index was then lost). Now a
    database is removed only while no other connection has it open."""
    small_store(tmp_path / "store", 300)
    path = tmp_path / "index.sqlite"
    connect = index_database.open_database
    first = index_of(tmp_path / "store", tmp_path)
    opened: list[int] = []

    def first_opens_too(where: Path) -> sqlite3.Connection:
        if not opened:  # both found no file: the first makes it, then this one opens it
            opened.append(1)
            monkeypatch.setattr(index_database, "open_database", connect)
            first._open()
            monkeypatch.setattr(index_database, "open_database", first_opens_too)
        db = connect(where)
        db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")
        return db

    monkeypatch.setattr(index_database, "open_database", first_opens_too)
    warnings: list[str] = []
    with index_of(tmp_path / "store", tmp_path, warn=warnings.append) as second:
        assert_answers_right(second, tmp_path / "store")
        assert second.bypassed
    monkeypatch.undo()
    assert len(warnings) == 1 and "database or disk is full" in warnings[0]
    with first:
        assert first.refresh().read == 300 and not first.bypassed
    assert _sessions_in(path) == 300


def test_answers_read_after_another_command_built_the_index_afresh_are_the_stores(
    tmp_path: Path,
) -> None:
    """A command refreshed the index, then one under lower limits built it afresh and filled
    it with its own answers (every log failed), then the first read its answers: they were
    the other's. Now an answer stands only if the index is still stamped as it was opened;
    else it is the store's, with one warning."""
    small_store(tmp_path / "store", 6)
    warnings: list[str] = []
    with index_of(tmp_path / "store", tmp_path, warn=warnings.append, once=True) as high:
        assert len(high.headers()) == 6 and not high.bypassed
        low_warnings: list[str] = []
        with _low(tmp_path, low_warnings) as low:
            assert len(low.headers()) == 6 and len(low.unread()) == 6 and not low.bypassed
        assert high.unread() == [] and high.bypassed
        assert_answers_right(high, tmp_path / "store")
    assert low_warnings == []
    assert len(warnings) == 1 and "changed under this command" in warnings[0]


def test_an_index_stamped_anew_as_it_is_opened_is_not_written_under_that_stamp(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The stamp a command checks at each write is the one it opened the index with, not the
    one the index has once it is open: another command under lower limits that built it
    afresh in between would have had this one's answers written into its index."""
    small_store(tmp_path / "store", 6)
    with index_of(tmp_path / "store", tmp_path) as index:
        index.refresh()
    small_store(tmp_path / "store", 9)  # the refresh must write
    real_remember = index_database.remember_stamp
    low_warnings: list[str] = []

    def lowered_first(db: sqlite3.Connection, *wanted: Any) -> None:
        if not low_warnings:  # the other command, as this one opens the index
            low_warnings.append("raced")
            with _low(tmp_path, low_warnings) as low:
                assert low.refresh().read == 9
        real_remember(db, *wanted)

    monkeypatch.setattr(index_database, "remember_stamp", lowered_first)
    _answered_from_the_store(tmp_path, monkeypatch)
    assert low_warnings == ["raced"]
    with _low(tmp_path, low_warnings) as low:  # its index, as it made it
        assert low.refresh().read == 0 and len(low.unread()) == 9
    assert low_warnings == ["raced"]


def test_a_database_taken_for_broken_is_not_deleted_while_another_command_has_it_open(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A refresh that fails as on a damaged database deletes it and builds it again, but not
    while another connection has it open: that one may be right that it is whole (here it
    is), and would write on into a deleted file. The refresh tries it again instead."""
    small_store(tmp_path / "store", 3)
    path = tmp_path / "index.sqlite"
    with index_of(tmp_path / "store", tmp_path) as index:
        index.refresh()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("INSERT INTO meta VALUES ('held', 1)")
    small_store(tmp_path / "store", 5)  # the refresh must write
    real_walk = index_tables.stamped_walk
    failed: list[int] = []

    def damaged_once(*args: Any) -> Any:
        if not failed:
            failed.append(1)
            raise sqlite3.DatabaseError("database disk image is malformed")
        return real_walk(*args)

    monkeypatch.setattr(index_tables, "stamped_walk", damaged_once)
    warnings: list[str] = []
    with index_of(tmp_path / "store", tmp_path, warn=warnings.append) as index:
        assert_answers_right(index, tmp_path / "store")
        assert not index.bypassed
    holder.close()
    assert failed and warnings == []
    with sqlite3.connect(path) as db:  # the holder's database, with its row and 5 sessions
        assert db.execute("SELECT value FROM meta WHERE key = 'held'").fetchone() == (1,)
    db.close()
    assert _sessions_in(path) == 5


def test_a_database_removed_as_a_command_opens_it_is_made_again_not_bypassed(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A database is removed (a prune, a broken one's removal, a first build a full disk
    stopped) under an exclusive lock, which makes a command that opened it meanwhile wait:
    then its connection was to the file just deleted, and its first read failed with "disk
    I/O error", which it took for a place that cannot be written (one warning, the store read
    directly, no index left). It opens the database made anew at that path instead."""
    small_store(tmp_path / "store", 3)
    path = tmp_path / "index.sqlite"
    with index_of(tmp_path / "store", tmp_path) as index:
        index.refresh()
    locked, connected = threading.Event(), threading.Event()
    real_remove, real_open = index_afresh.remove_database, index_database.open_database

    def remove_once_opened(where: Path) -> None:  # under the exclusive lock
        locked.set()
        assert connected.wait(10)
        time.sleep(0.3)  # the command's first read now waits for the lock
        real_remove(where)

    def opened_as_it_is_removed(where: Path) -> sqlite3.Connection:
        assert locked.wait(10)
        db = real_open(where)
        connected.set()
        return db

    monkeypatch.setattr(index_afresh, "remove_database", remove_once_opened)
    monkeypatch.setattr(index_database, "open_database", opened_as_it_is_removed)
    removed: list[bool] = []
    remover = threading.Thread(target=lambda: removed.append(index_afresh.remove_unused(path)))
    remover.start()
    warnings: list[str] = []
    try:
        with index_of(tmp_path / "store", tmp_path, warn=warnings.append) as index:
            assert index.refresh().read == 3 and not index.bypassed
            assert_answers_right(index, tmp_path / "store")
    finally:
        remover.join()
    monkeypatch.undo()
    assert removed == [True] and warnings == []
    assert _sessions_in(path) == 3
