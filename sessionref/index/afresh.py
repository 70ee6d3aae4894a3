"""An index built afresh where it is, and a database removed only while no one has it open.

One database serves every command on its root, and another process may have it open. Deleting
its files under that process left it writing into a file no one would read again, beside a
write-ahead log and shared memory of the same names that now belonged to a new database:
SQLite then failed it with "disk I/O error". So an index built for another schema, reader,
root or under higher read limits is emptied and stamped anew in one transaction on the
connection that opened it (:func:`build_afresh`): a process that had it open finds the stamp
it opened it with gone at its next write (:func:`~sessionref.index.writes.transaction`). And a
database is removed (a first build a full disk stopped) only under an exclusive lock, which no
process gets while another has it open (:func:`remove_unused`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sessionref.index.cursors import row_of, run
from sessionref.index.failures import is_busy
from sessionref.index.schema import make_tables, remove_database, stamped

_NEXT_DROPPED = (
    "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view')"
    " AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY sql LIKE 'CREATE VIRTUAL%' DESC LIMIT 1"
)
"""A table or view still to drop, a virtual table first (it drops its own shadow tables)."""


def build_afresh(connection: sqlite3.Connection, wanted: dict[str, Any]) -> None:
    """Empty the database (every table, its indexes and triggers, every view) and give it
    the index's tables stamped ``wanted``, in one transaction (another process sees the old
    index or the new, empty one); nothing when another process stamped it so meanwhile.
    The file keeps its pages (and page size): the new index fills those it frees.

    >>> from sessionref.index.cursors import row_of
    >>> from sessionref.index.schema import check_meta, connect_memory, wanted_stamp
    >>> db = connect_memory()
    >>> check_meta(db, b"/r", "x", (1000, 100))
    True
    >>> run(db, "INSERT INTO entries VALUES (x'2f', 'seen')")
    >>> build_afresh(db, wanted_stamp(b"/r", "x", (500, 100)))
    >>> check_meta(db, b"/r", "x", (500, 100)), row_of(db, "SELECT count(*) FROM entries")
    (True, (0,))
    """
    run(connection, "BEGIN IMMEDIATE")
    try:
        if not stamped(connection, wanted):
            while (found := row_of(connection, _NEXT_DROPPED)) is not None:
                kind, name = found
                run(connection, f'DROP {kind.upper()} "{name.replace(chr(34), chr(34) * 2)}"')
            make_tables(connection, wanted)
    except BaseException:
        run(connection, "ROLLBACK")
        raise
    run(connection, "COMMIT")


def remove_unused(path: Path) -> bool:
    """Delete the database at ``path`` and its files if no connection, of this process or
    another, has it open: whether it is gone. The files are deleted under an exclusive lock
    on it, which no connection gets (at once: no waiting) while another has it open (in
    WAL mode, from its first read on: ``_open`` reads as soon as it is set up), and which
    makes a process that opens it meanwhile wait until they are gone (it then opens the one
    made anew: :meth:`~sessionref.index.database.IndexDatabase._connected`). A database that
    cannot be opened is kept; one that cannot be read as a database (garbage, damaged) is
    deleted.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder, "i.sqlite")
    ...     held = sqlite3.connect(path)
    ...     _ = held.execute("PRAGMA journal_mode = WAL").fetchone()
    ...     _ = held.execute("SELECT * FROM sqlite_master").fetchone()  # it holds it now
    ...     kept = remove_unused(path)
    ...     held.close()
    ...     kept, remove_unused(path), path.exists()
    (False, True, False)
    """
    try:
        uri = f"{path.resolve().as_uri()}?mode=rw"
        connection = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None)
    except (sqlite3.Error, ValueError):
        return not path.exists()
    try:
        run(connection, "PRAGMA locking_mode = EXCLUSIVE")
        run(connection, "BEGIN EXCLUSIVE")  # in WAL mode, locked while another has it open
        remove_database(path)
    except sqlite3.Error as exc:
        if is_busy(exc):  # another has it open
            return False
        remove_database(path)  # it cannot be opened as a database: no one uses it as one
    finally:
        connection.close()
    return True
