"""The database of an index, whose connection the index owns from the moment it is made.

SQLite removes a database's -wal and -shm files only as its last connection closes, and a
connection nobody owns is never closed: in a cycle with its statement cache, it lives on in the
frames a traceback holds (a Ctrl-C as it was being set up), and past an exit that freezes the
garbage collector (as the CLI does). So the statement that makes a connection stores it on the
index, and it is set up (and checked) there: whatever stops the opening, :meth:`close` closes it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import TypeVar

import sessionref.index.candidates as candidates
from sessionref.index.afresh import build_afresh, remove_unused
from sessionref.index.failures import is_out_of_place, is_unwritable
from sessionref.index.limits import raise_limits
from sessionref.index.reading import reading_as_it_is
from sessionref.index.refresh import IndexedStore, limits_of
from sessionref.index.schema import (
    check_file,
    check_meta,
    check_schema,
    open_database,
    reader_fingerprint,
    root_key,
    set_up,
    wanted_stamp,
)
from sessionref.index.writes import remember_stamp, stamp_kept

T = TypeVar("T")


def file_identity(path: Path) -> tuple[int, int] | None:
    """The device and inode of the file at ``path`` (``None``: there is none), which tell a
    file from one made anew at the same path.

    >>> file_identity(Path("/nonexistent")), file_identity(Path("/")) == file_identity(Path("/"))
    (None, True)
    """
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


class IndexDatabase:
    """The database at ``path`` of an index of ``store``; ``named``: a file the caller named,
    which is used only if sessionref made it (else :class:`~sessionref.index.schema.ForeignFile`).

    >>> import tempfile
    >>> from sessionref.log.store import DirectoryStore
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     database = IndexDatabase(DirectoryStore(folder), Path(folder, "i.sqlite"), False)
    ...     made = database._open() is database._open()
    ...     database.close()
    ...     made, sorted(os.listdir(folder))
    (True, ['i.sqlite'])
    """

    def __init__(self, store: IndexedStore, path: Path, named: bool) -> None:
        self.store, self.path, self._named_file = store, path, named
        self._db: sqlite3.Connection | None = None
        self._made = False  # the database file is this index's own, never yet used whole
        self._copied = False  # the database is a copy in memory (:meth:`_read_as_it_is`)
        self._read = False  # an answer was read from it since :meth:`_unchanged` last looked

    def _open(self) -> sqlite3.Connection:
        """The database, made afresh unless this code built it for this root and read limits
        (or lower ones: :func:`~sessionref.index.limits.raise_limits`); a file the caller
        named that sessionref did not make raises :class:`~sessionref.index.schema.ForeignFile`.
        What stops this (an error, a Ctrl-C) leaves no connection :meth:`close` does not
        close."""
        db = self._db
        if db is None:
            stamp = self._stamp()
            named = self._named_file and check_file(self.path)
            db = self._connected(named)
            if not check_meta(db, *stamp) and not raise_limits(db, *stamp):
                build_afresh(db, wanted_stamp(*stamp))  # in place: others have it open
                self._made = True  # the index it held is gone: this one is made afresh
            remember_stamp(db, wanted_stamp(*stamp))  # what each write checks is there
        self._read = True  # a use of it (a refresh) reads from it
        return db

    def _connected(self, named: bool, again: bool = True) -> sqlite3.Connection:
        """The database opened (held by the index from then on) and set up; opened ``again``
        when the file was removed as it was opened: a connection made while another removes
        it (:func:`~sessionref.index.afresh.remove_unused`) waits at its first read until the
        files are deleted, then fails ("disk I/O error"); the path then names a new file."""
        found = file_identity(self.path)
        self._made = self._made or not os.path.lexists(self.path)
        self._db = db = open_database(self.path)
        try:
            if named:
                check_schema(self.path, db)
            set_up(db)
        except sqlite3.Error:
            if not again or found is None or file_identity(self.path) == found:
                raise
            self.close()
            return self._connected(named, again=False)
        return db

    def _stamp(self) -> tuple[bytes, str, tuple[int, int]]:
        """What a database built for this store is stamped with: its root, this code's
        reader and the store's read limits (:func:`~sessionref.index.schema.check_meta`)."""
        return os.fsencode(root_key(self.store.root)), reader_fingerprint(), limits_of(self.store)

    def _used(self, result: T) -> T:
        """``result`` of a use of the database that ran to its end: from then on, the database
        holds an index, which a later failure leaves in place (:meth:`_leave_as_it_was`)."""
        self._made = False
        return result

    def _leave_as_it_was(self, failure: Exception) -> None:
        """Remove the database this index made and never used whole, once its place failed it
        (a full disk): the folder is left as it was, with no index, not with an empty file or
        one and its -wal and -shm taking room on a disk already full. A database that held an
        index before is kept, for the next use (a full disk says nothing against it), and so
        is one another connection has open (two first builds at once: it is the other's too,
        :func:`~sessionref.index.afresh.remove_unused`).

        >>> import tempfile
        >>> from sessionref.log.store import DirectoryStore
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     database = IndexDatabase(DirectoryStore(folder), Path(folder, "i.sqlite"), False)
        ...     _ = database._open()
        ...     database.close()
        ...     database._leave_as_it_was(sqlite3.OperationalError("database or disk is full"))
        ...     os.listdir(folder)
        []
        """
        if self._made and isinstance(failure, sqlite3.Error) and is_out_of_place(failure):
            self._made = False
            with contextlib.suppress(OSError):
                remove_unused(self.path)  # not under another process that opened it too

    @property
    def _reading(self) -> sqlite3.Connection:
        """The database, for an answer read from it (which :meth:`_unchanged` then checks)."""
        assert self._db is not None
        self._read = True
        return self._db

    def _unchanged(self) -> bool:
        """Whether the database is still stamped as this index opened it, when an answer
        was read from it since this was last asked: another process may have built it
        afresh since (another root, lower read limits) or raised its read limits, and then
        what was just read from it is that process's. (An answer from what was read before
        costs no look.)"""
        read, self._read = self._read, False
        return not read or self._db is None or stamp_kept(self._db)

    def _read_as_it_is(self, failure: Exception) -> bool:
        """Whether the database, which ``failure`` says cannot be written where it is (a
        read-only folder), is used from a copy in memory (:meth:`_copy`): the refresh brings
        the copy up to date, so the answers are the store's, and only the logs changed since
        the index was saved are read again."""
        if not isinstance(failure, sqlite3.Error) or not is_unwritable(failure):
            return False
        self._copied = self._copy() is not None
        return self._copied

    def _copy(self) -> sqlite3.Connection | None:
        """The database, copied into memory as it is on disk (:func:`reading_as_it_is`), for
        one that cannot be written where it is (a read-only folder); ``None`` when the copy
        would not hold all of it (a write-ahead log is beside it) or is not an index built
        for this store, root and limits (then nothing of it is used)."""
        if os.path.exists(f"{self.path}-wal") or not self.path.is_file():
            return None
        memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        try:
            with reading_as_it_is(self.path) as disk:
                disk.backup(memory)
            candidates.register(memory)
            if check_meta(memory, *self._stamp()):
                self._db = memory
                return memory
        except sqlite3.Error:
            pass
        memory.close()
        return None

    def close(self) -> None:
        """Close the database: the last connection to close removes its -wal, -shm files."""
        if self._db is not None:
            self._db.close()
            self._db = None
