"""An index opened under higher read limits than it was built under, brought to them in place.

A read limit only ever makes a read fail (a log over ``max_bytes``, a line over
``max_line_bytes``: ``SessionLogError``); it never changes what a read that succeeds gives.
So a log read whole under some limits reads the same under higher ones, and only what failed
under the old limits can read otherwise: a session whose log did not load is read again at
the next refresh; every other session keeps its row, and its log is not opened. The cached
first lines (a header, a harness's head) are all read again, as a cold listing reads them: a
Codex head scan that reads on past ``max_bytes`` is a problem (a head is never read whole), so
a head that listed nothing under the lower limits may list under the higher ones. Lower
limits can make any log fail, which only reading it tells: the index is built afresh then
(:meth:`~sessionref.index.database.IndexDatabase._open`).
"""

from __future__ import annotations

import sqlite3

from sessionref.index.cursors import rows_of, run
from sessionref.index.schema import SCHEMA_VERSION, limits_stamp, stamped_limits

_FAILED_AGAIN = (
    # every session whose log failed is read again (revision unknown)
    "UPDATE sessions SET revision = NULL WHERE failure IS NOT NULL",
    # every first line is read again as the store lists (a head scan stops at max_bytes)
    "DELETE FROM header_cache",
    # the store lists again: a header that now reads makes a session
    "DELETE FROM meta WHERE key IN ('tree', 'stats')",
)


def higher(built: tuple[int, int] | None, limits: tuple[int, int]) -> bool:
    """Whether ``limits`` are each at least those an index was ``built`` under (``None``:
    not kept), and not both the same.

    >>> higher((1000, 100), (2000, 100)), higher((1000, 100), (2000, 50))
    (True, False)
    >>> higher((1000, 100), (1000, 100)), higher(None, (1000, 100))
    (False, False)
    """
    if built is None or built == limits:
        return False
    return built[0] <= limits[0] and built[1] <= limits[1]


def raise_limits(
    connection: sqlite3.Connection, root: bytes, reader: str, limits: tuple[int, int]
) -> bool:
    """Whether the database, built for this schema, ``root`` and ``reader`` under lower read
    limits than ``limits``, is now stamped with ``limits``, what failed under the old ones
    to be read again at the next refresh (:data:`_FAILED_AGAIN`); all in one transaction,
    its stamp checked again inside it (another process may have changed it meanwhile).
    ``False`` (nothing changed) for any other database.

    >>> from sessionref.index.schema import check_meta, connect_memory
    >>> db = connect_memory()
    >>> check_meta(db, b"/r", "x", (1000, 100))
    True
    >>> raise_limits(db, b"/r", "x", (500, 100)), raise_limits(db, b"/r", "x", (2000, 100))
    (False, True)
    >>> check_meta(db, b"/r", "x", (2000, 100))
    True
    """
    run(connection, "BEGIN IMMEDIATE")
    try:
        found = dict(rows_of(connection, "SELECT key, value FROM meta"))
        same = (found.get("schema"), found.get("root"), found.get("reader"))
        raised = same == (SCHEMA_VERSION, root, reader) and higher(
            stamped_limits(found.get("limits")), limits
        )
        if raised:
            for statement in _FAILED_AGAIN:
                run(connection, statement)
            stamp = (limits_stamp(limits),)
            run(connection, "UPDATE meta SET value = ? WHERE key = 'limits'", stamp)
    except BaseException:
        run(connection, "ROLLBACK")
        raise
    run(connection, "COMMIT")
    return raised
