"""Opening an index database that exists, to read it (never creating it).

An index is a WAL database: SQLite removes its -wal and -shm files as the last connection to
it closes, if that connection could write to it: a read-only one (``mode=ro``) leaves them.
:func:`reading` opens one that could, and writes nothing.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Final, TypeVar

from sessionref.index.cursors import run
from sessionref.index.failures import is_out_of_place

T = TypeVar("T")

BUSY_TIMEOUT_MS: Final = 120_000
"""How long any connection to an index waits for another's lock."""


def reading(path: Path) -> contextlib.closing[sqlite3.Connection]:
    """The index database at ``path``, opened to read: never created, nothing written
    (``query_only``); closed as the last connection, it folds the write-ahead log in and
    removes the -wal and -shm files, which a read-only connection leaves.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder, "i.sqlite")
    ...     made = sqlite3.connect(path, isolation_level=None)
    ...     _ = made.execute("PRAGMA journal_mode = WAL").fetchall()
    ...     made.close()
    ...     with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
    ...         _ = db.execute("SELECT * FROM sqlite_master").fetchall()
    ...     left = sorted(os.listdir(folder))
    ...     with reading(path) as db:
    ...         _ = db.execute("SELECT * FROM sqlite_master").fetchall()
    ...     left, sorted(os.listdir(folder))
    (['i.sqlite', 'i.sqlite-shm', 'i.sqlite-wal'], ['i.sqlite'])
    """
    uri = f"{path.resolve().as_uri()}?mode=rw"
    connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        run(connection, "PRAGMA query_only = ON")
    except BaseException:
        connection.close()
        raise
    return contextlib.closing(connection)


def reading_as_it_is(path: Path) -> contextlib.closing[sqlite3.Connection]:
    """The index database at ``path``, read as a file no one writes (``immutable``): for one
    in a folder SQLite cannot write beside it (a WAL database needs its -shm file), whose
    write-ahead log is gone, so the file holds all of it.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder, "i.sqlite")
    ...     made = sqlite3.connect(path, isolation_level=None)
    ...     _ = made.execute("CREATE TABLE t (x)")
    ...     made.close()
    ...     with reading_as_it_is(path) as db:
    ...         db.execute("SELECT count(*) FROM t").fetchone()
    (0,)
    """
    uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
    return contextlib.closing(sqlite3.connect(uri, uri=True))


def read_index(path: Path, read: Callable[[sqlite3.Connection], T]) -> T:
    """``read`` of the index database at ``path``, opened with :func:`reading`; one in a folder
    SQLite cannot write beside (a read-only disk) is read as it is (:func:`reading_as_it_is`)
    when it has no write-ahead log (then the file holds all of it). Any other failure raises.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder, "i.sqlite")
    ...     with contextlib.closing(sqlite3.connect(path)) as made:
    ...         _ = made.execute("CREATE TABLE t (x)")
    ...     read_index(path, lambda db: db.execute("SELECT count(*) FROM t").fetchone())
    (0,)
    """
    try:
        with reading(path) as db:
            return read(db)
    except sqlite3.Error as exc:
        if not is_out_of_place(exc) or os.path.exists(f"{path}-wal"):
            raise
    with reading_as_it_is(path) as db:
        return read(db)
