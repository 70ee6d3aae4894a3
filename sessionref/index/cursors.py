"""Statements on an index database, each run by a cursor closed before the caller goes on.

A cursor that is not closed (one left in the middle of its rows, or one ``executemany`` ran)
holds its statement, and SQLite closes a connection that still has a statement only once
that statement is finalized: until then the connection lingers, and so do the -wal and -shm
files it would remove. Such a cursor outlives its use when a frame holds it as an exception
unwinds (a Ctrl-C as rows are read): the traceback keeps the frame, so closing the index
while the exception is handled, or at an exit that leaves cycles uncollected (the CLI freezes
the garbage collector), left both files. Every statement of ``sessionref.index`` runs through
these functions, which close their cursor whatever stops them: no cursor is ever held.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

Parameters = Sequence[object] | Mapping[str, object]
"""A statement's parameters: by position, or by name."""
T = TypeVar("T")


def rows_of(db: sqlite3.Connection, sql: str, parameters: Parameters = ()) -> list[Any]:
    """Every row of ``sql``, read to the end by a cursor closed before they are returned.

    >>> rows_of(sqlite3.connect(":memory:"), "VALUES (1, 'a'), (?, 'b')", (2,))
    [(1, 'a'), (2, 'b')]
    """
    return _fetched(db, sql, parameters, sqlite3.Cursor.fetchall)


def row_of(db: sqlite3.Connection, sql: str, parameters: Parameters = ()) -> Any:
    """The first row of ``sql`` (``None`` when it has none), its cursor closed.

    >>> db = sqlite3.connect(":memory:")
    >>> row_of(db, "VALUES (1), (2)"), row_of(db, "SELECT 1 WHERE :no", {"no": 0})
    ((1,), None)
    """
    return _fetched(db, sql, parameters, sqlite3.Cursor.fetchone)


def _fetched(
    db: sqlite3.Connection,
    sql: str,
    parameters: Parameters,
    fetch: Callable[[sqlite3.Cursor], T],
) -> T:
    """What ``fetch`` reads of ``sql``'s rows, by a cursor closed whatever stops it."""
    cursor = db.cursor()  # no statement yet: nothing to close before the try
    try:
        return fetch(cursor.execute(sql, parameters))
    finally:
        cursor.close()


def run(db: sqlite3.Connection, sql: str, parameters: Parameters = ()) -> None:
    """Run ``sql``, a statement that gives no rows, and close its cursor.

    >>> db = sqlite3.connect(":memory:")
    >>> run(db, "CREATE TABLE t (a)"), run(db, "INSERT INTO t VALUES (?)", (7,))
    (None, None)
    >>> rows_of(db, "SELECT a FROM t")
    [(7,)]
    """
    db.execute(sql, parameters).close()


def run_many(db: sqlite3.Connection, sql: str, parameters: Iterable[Parameters]) -> None:
    """Run ``sql`` once for each of ``parameters`` and close its cursor (which ``executemany``
    leaves holding the statement).

    >>> db = sqlite3.connect(":memory:")
    >>> run(db, "CREATE TABLE t (a)"), run_many(db, "INSERT INTO t VALUES (?)", [(1,), (2,)])
    (None, None)
    >>> rows_of(db, "SELECT a FROM t")
    [(1,), (2,)]
    """
    db.executemany(sql, parameters).close()
