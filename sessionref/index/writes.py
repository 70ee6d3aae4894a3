"""Write transactions on an index, each checking that the index is still the one this
connection opened.

Another process may build the index afresh in its file or raise its read limits in place
while this one refreshes it (:meth:`~sessionref.index.database.IndexDatabase._open`). What
this one read under its limits must not be written under another stamp: a log that failed
under lower limits would be kept as failed by the process with higher ones, which never reads
it again. So the stamp an opening settles on is remembered for the connection alone
(:func:`remember_stamp`), and each write transaction begins by checking it is still there
(:func:`transaction`), as each answer read does once read
(:func:`~sessionref.index.turns.answered`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

from sessionref.index.cursors import row_of, run, run_many
from sessionref.index.failures import StampChanged

T = TypeVar("T")
_SEEN = "seen_stamp"
"""The connection's own (``TEMP``) table of the stamp it opened the index with."""


def remember_stamp(db: sqlite3.Connection, wanted: dict[str, Any]) -> None:
    """Remember, for this connection alone, the stamp it opened the index with: ``wanted``
    (its schema, root, reader and read limits: :func:`~sessionref.index.schema.check_meta`),
    which the index was found to have, not what it has now: another process may have stamped
    it anew since.

    >>> from sessionref.index.schema import check_meta, connect_memory, wanted_stamp
    >>> db = connect_memory()
    >>> check_meta(db, b"/r", "x", (1000, 100))
    True
    >>> remember_stamp(db, wanted_stamp(b"/r", "x", (1000, 100))); stamp_kept(db)
    True
    >>> remember_stamp(db, wanted_stamp(b"/r", "x", (2000, 100))); stamp_kept(db)
    False
    """
    run(db, f"CREATE TEMP TABLE IF NOT EXISTS {_SEEN} (key TEXT PRIMARY KEY, value)")
    run(db, f"DELETE FROM temp.{_SEEN}")
    run_many(db, f"INSERT INTO temp.{_SEEN} VALUES (?, ?)", wanted.items())


def stamp_kept(db: sqlite3.Connection) -> bool:
    """Whether the index still has the stamp this connection remembered (true when it
    remembered none: an index in memory, a copy).

    >>> from sessionref.index.schema import check_meta, connect_memory, wanted_stamp
    >>> from sessionref.index.limits import raise_limits
    >>> db = connect_memory()
    >>> stamp_kept(db), check_meta(db, b"/r", "x", (1000, 100))
    (True, True)
    >>> remember_stamp(db, wanted_stamp(b"/r", "x", (1000, 100))); stamp_kept(db)
    True
    >>> raise_limits(db, b"/r", "x", (2000, 100)), stamp_kept(db)
    (True, False)
    """
    if row_of(db, "SELECT 1 FROM temp.sqlite_master WHERE name = ?", (_SEEN,)) is None:
        return True
    query = (
        f"SELECT count(*) FROM temp.{_SEEN} AS seen LEFT JOIN main.meta AS now "
        "ON now.key = seen.key AND now.value IS seen.value WHERE now.key IS NULL"
    )
    return bool(row_of(db, query) == (0,))


def transaction(db: sqlite3.Connection, write: Callable[[], T]) -> T:
    """Run ``write`` inside ``BEGIN IMMEDIATE … COMMIT`` (rolled back if it raises), once
    the index is found to be still the one this connection opened (else
    :class:`~sessionref.index.failures.StampChanged`, nothing written)."""
    run(db, "BEGIN IMMEDIATE")
    try:
        if not stamp_kept(db):
            raise StampChanged
        result = write()
    except BaseException:
        run(db, "ROLLBACK")
        raise
    run(db, "COMMIT")
    return result
