"""An index whose place fails it (a full disk, a read-only folder) while nothing is wrong with
its content: the answers come from the store, and the database is kept as it is."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import sessionref.index.database as index_database
import sessionref.index.reading as index_reading
import sessionref.index.schema as index_schema
import sessionref.index.tables as index_tables
import sessionref.index.upkeep as upkeep
from sessionref.cli.app import main
from sessionref.index import SessionIndex
from sessionref.log.store import DirectoryStore
from sessionref.types import Target
from tests.test_index import StoreClock, assert_answers_right, index_of, small_store


def _sessions_in(path: Path) -> int:
    with sqlite3.connect(path) as db:
        (count,) = db.execute("SELECT count(*) FROM sessions").fetchone()
    db.close()
    return int(count)


def _full_disk(monkeypatch: Any, room: Callable[[sqlite3.Connection], int]) -> None:
    """Each database opened from now on grows to ``room(db)`` pages, no more: SQLite's
    "database or disk is full" (SQLITE_FULL) past them, as on a full disk."""
    connect = index_database.open_database

    def full_disk(where: Path) -> sqlite3.Connection:
        db = connect(where)
        db.execute(f"PRAGMA max_page_count = {room(db)}")
        return db

    monkeypatch.setattr(index_database, "open_database", full_disk)


def _answered_on_a_full_disk(tmp_path: Path) -> None:
    """The store at ``tmp_path / "store"`` answers right, from the store (the index bypassed),
    with one warning that the disk is full."""
    warnings: list[str] = []
    with index_of(tmp_path / "store", tmp_path, warn=warnings.append) as index:
        assert_answers_right(index, tmp_path / "store")
        assert index.bypassed
    assert len(warnings) == 1 and "database or disk is full" in warnings[0]


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
    _full_disk(monkeypatch, lambda db: int(db.execute("PRAGMA page_count").fetchone()[0]))
    _answered_on_a_full_disk(tmp_path)
    assert os.stat(path).st_ino == inode and _sessions_in(path) == 3
    monkeypatch.undo()
    with index_of(tmp_path / "store", tmp_path) as index:
        assert index.refresh().read >= 297 and not index.bypassed
    assert _sessions_in(path) == 300


def test_a_full_disk_leaves_no_index_where_there_was_none(tmp_path: Path, monkeypatch: Any) -> None:
    """A newcomer's trial on a 1 MB disk: the first search made a database there, could not
    fill it (SQLite's "database or disk is full") and left it behind, an empty file or one
    with its -wal and -shm, a megabyte on a disk already full, which ``--stats`` called a
    damaged index and ``--prune`` never removed. As it was is no index at all."""
    small_store(tmp_path / "store", 300)
    _full_disk(monkeypatch, lambda db: 2)  # no room for the tables
    _answered_on_a_full_disk(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["store"]


def test_a_full_disk_leaves_no_index_where_it_made_a_stale_one_afresh(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """An index built by another reader is emptied and built afresh in its file: when the
    full disk stops that build (the new index outgrows the pages the old one freed), what
    it holds is no index either (the one it replaced is gone already), and is removed as a
    first build's is."""
    small_store(tmp_path / "store", 3)
    with index_of(tmp_path / "store", tmp_path) as index:
        index.refresh()
    small_store(tmp_path / "store", 300)
    monkeypatch.setattr(index_database, "reader_fingerprint", lambda: "another reader")
    _full_disk(monkeypatch, lambda db: int(db.execute("PRAGMA page_count").fetchone()[0]))
    _answered_on_a_full_disk(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["store"]


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

    monkeypatch.setattr(index_reading, "reading", read_only_folder)
    stats = upkeep.index_stats(tmp_path / "store", path)
    assert (stats.sessions, stats.unusable) == (4, None)
    assert stats.size == path.stat().st_size


def _read_only_folder(where: Path) -> sqlite3.Connection:
    """SQLite's error opening a WAL database in a folder it cannot write (no -shm file)."""
    error = sqlite3.OperationalError("unable to open database file")
    error.sqlite_errorcode = 14  # SQLITE_CANTOPEN
    raise error


def test_search_uses_an_index_in_a_read_only_folder_from_a_copy_in_memory(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A newcomer's trial: an index in a folder it cannot write was not used at all (the
    answers came from reading the whole store) with a warning that sounded like corruption,
    ``is unusable (unable to open database file)``. It is used from a copy in memory,
    brought up to date there: the answers are the store's, only the logs added since it was
    saved are read, one line says so, and the file is left as it is."""
    small_store(tmp_path / "all", 6)
    small_store(tmp_path / "store", 4)
    with index_of(tmp_path / "store", tmp_path) as index:
        index.refresh()
    path = tmp_path / "index.sqlite"
    saved = (path.read_bytes(), path.stat().st_mtime_ns)
    for added in ("s4", "s5"):  # sessions come after the index was saved
        shutil.copytree(
            tmp_path / "all" / "_no-cwd" / added, tmp_path / "store" / "_no-cwd" / added
        )

    monkeypatch.setattr(index_database, "open_database", _read_only_folder)
    warnings: list[str] = []
    with index_of(tmp_path / "store", tmp_path, warn=warnings.append) as index:
        assert index.refresh().read == 2
        assert index.bypassed  # nothing it reads is saved
        found = index.candidates(Target("t"), "s5", 10)
        assert found is not None and [header.id for header, _ in found] == ["s5"]
        assert_answers_right(index, tmp_path / "store")
    assert warnings == [
        f"sessionref: index {path} cannot be written where it is (unable to open database"
        " file); using a copy in memory, brought up to date there and not saved"
    ]
    assert (path.read_bytes(), path.stat().st_mtime_ns) == saved and _sessions_in(path) == 4


def test_an_index_file_named_in_a_read_only_folder_is_used_from_a_copy(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A newcomer's trial: ``--index FILE`` (``SessionIndex(store, FILE)``) naming an index
    on a read-only disk said ``may not be an index: its schema cannot be read (unable to
    open database file)`` and read the whole store, where naming its folder used the index
    from a copy. SQLite opens the connection, then fails the first read of the schema (a
    WAL database needs its -shm file beside it): that says where the file is, not what it
    is."""
    small_store(tmp_path / "store", 4)
    with index_of(tmp_path / "store", tmp_path) as index:
        index.refresh()
    path = tmp_path / "index.sqlite"
    saved = path.read_bytes()

    def schema_in_a_read_only_folder(db: sqlite3.Connection) -> Any:
        _read_only_folder(path)

    monkeypatch.setattr(index_schema, "_table_names", schema_in_a_read_only_folder)
    warnings: list[str] = []
    with index_of(tmp_path / "store", tmp_path, warn=warnings.append) as index:
        assert index.refresh().read == 0 and index.copied
        assert_answers_right(index, tmp_path / "store")
    assert warnings == [
        f"sessionref: index {path} cannot be written where it is (unable to open database"
        " file); using a copy in memory, brought up to date there and not saved"
    ]
    assert path.read_bytes() == saved


def test_stats_of_an_index_file_named_in_a_read_only_folder(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """``index --stats --index FILE`` on a read-only disk said the file ``may not be an
    index``; it reads its schema as it reads its contents, from the file as it is."""
    small_store(tmp_path / "store", 4)
    path = tmp_path / "index.sqlite"
    with index_of(tmp_path / "store", tmp_path) as index:
        index.refresh()
    monkeypatch.setattr(index_reading, "sqlite3", _SQLiteInAReadOnlyFolder())
    stats = upkeep.index_stats(tmp_path / "store", path)
    assert (stats.sessions, stats.unusable) == (4, None)


class _SQLiteInAReadOnlyFolder:
    """``sqlite3`` as a read-only folder has it: a connection that may write (``mode=rw``)
    cannot open a WAL database; one to the file as it is (``immutable``) can."""

    def __getattr__(self, name: str) -> Any:
        return getattr(sqlite3, name)

    def connect(self, database: str, **options: Any) -> sqlite3.Connection:
        if "mode=rw" in database:
            return _read_only_folder(Path(database))
        connection: sqlite3.Connection = sqlite3.connect(database, **options)
        return connection


def test_index_says_its_count_is_a_copys_and_the_file_was_left_as_it_was(
    tmp_path: Path, monkeypatch: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """``sessionref index`` over an index in a folder it cannot write counted the sessions
    of the copy it brought up to date in memory, but its summary said only ``none saved:
    PATH was not written``: a user who found the file unchanged, under a count that includes
    the sessions just added, was not told where they were counted."""
    small_store(tmp_path / "all", 5)
    small_store(tmp_path / "store", 3)
    long_ago = os.stat(tmp_path).st_mtime - 3600  # not written just now: the index keeps them
    for written in tmp_path.rglob("*"):
        os.utime(written, (long_ago, long_ago))
    path = tmp_path / "index.sqlite"
    where = ["--root", str(tmp_path / "store"), "--index", str(path)]
    assert main(["index", *where]) == 0
    capsys.readouterr()
    saved = (path.read_bytes(), path.stat().st_mtime_ns)
    for added in ("s3", "s4"):
        shutil.copytree(
            tmp_path / "all" / "_no-cwd" / added, tmp_path / "store" / "_no-cwd" / added
        )
    monkeypatch.setattr(index_database, "open_database", _read_only_folder)
    assert main(["index", *where]) == 1  # nothing saved: the command's one work undone
    out, err = capsys.readouterr()
    assert out == (
        f"5 sessions indexed (2 logs read, 0 removed) in a copy in memory, none saved: {path}"
        " cannot be written where it is and was left as it was\n"
    )
    assert len(err.splitlines()) == 1 and "using a copy in memory" in err
    assert (path.read_bytes(), path.stat().st_mtime_ns) == saved and _sessions_in(path) == 3


def test_an_index_in_a_read_only_folder_with_its_log_beside_it_is_said_so(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """With a write-ahead log beside it the file does not hold all of the index, which is not
    used: the warning says its place is at fault, not that it is unusable (corrupt)."""
    small_store(tmp_path / "store", 3)
    with index_of(tmp_path / "store", tmp_path) as index:
        index.refresh()
    path = tmp_path / "index.sqlite"
    Path(f"{path}-wal").write_bytes(b"")
    monkeypatch.setattr(index_database, "open_database", _read_only_folder)
    warnings: list[str] = []
    with index_of(tmp_path / "store", tmp_path, warn=warnings.append) as index:
        assert_answers_right(index, tmp_path / "store")
        assert index.bypassed
    assert warnings == [
        f"sessionref: index {path} cannot be written where it is (unable to open database"
        " file); reading the store directly"
    ]


@pytest.mark.parametrize("module", ["controls.py", "codecs/jsjson.py", "log/reader.py"])
def test_the_reader_fingerprint_covers_the_code_whose_answers_the_index_keeps(
    tmp_path: Path, monkeypatch: Any, module: str
) -> None:
    """An index keeps parsed answers and the problems' messages (``controls.quoted`` names
    their ids): a change to any code that makes them must make the index rebuild."""
    package = Path(index_schema.__file__).resolve().parent.parent
    copy = tmp_path / "sessionref"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__", "sample"))
    monkeypatch.setattr(index_schema, "__file__", str(copy / "index" / "schema.py"))
    before = index_schema.reader_fingerprint.__wrapped__()
    with (copy / module).open("a") as source:
        source.write("\n# changed\n")
    assert index_schema.reader_fingerprint.__wrapped__() != before


def test_a_refresh_writes_nothing_once_another_process_stamped_the_index_anew(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Two commands on one index with other read limits: while the one with the lower limits
    refreshes (every log over them failed), the other raises the index's limits in place and
    fills it. The first must not then write its failures under the higher stamp: the second
    kept them as failed, never read again, until the logs changed (found by a trial)."""
    small_store(tmp_path / "store", 6)
    low = DirectoryStore(tmp_path / "store", max_bytes=100)  # every log is longer
    assert len(low.headers()) == 6
    real_transaction = index_tables.transaction
    raced: list[int] = []

    def racing(db: sqlite3.Connection, write: Callable[[], Any]) -> Any:
        if not raced:  # the other command, between this one's reads and its first write
            raced.append(1)
            with index_of(tmp_path / "store", tmp_path) as other:
                assert len(other.headers()) == 6 and other.unread() == []
        return real_transaction(db, write)

    monkeypatch.setattr(index_tables, "transaction", racing)
    warnings: list[str] = []
    path, clock = tmp_path / "index.sqlite", StoreClock("settled")
    with SessionIndex(low, path, warn=warnings.append, clock=clock) as first:
        assert len(first.headers()) == 6  # its answers, from the store
        assert len(first.unread()) == 6
    monkeypatch.undo()
    with index_of(tmp_path / "store", tmp_path) as again:
        assert_answers_right(again, tmp_path / "store")
        assert again.unread() == []  # was every log, 'log exceeds 100 bytes'
    assert raced and len(warnings) == 1 and "changed under this command" in warnings[0]
