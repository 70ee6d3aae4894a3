"""What an SQLite failure says about an index: another process holds it (it passes), its place
fails it (a full disk, a read-only folder: it is left as it is), or its content is wrong (it
is rebuilt)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

_BUSY: Final = ((5, 6), ("database is locked", "database table is locked"))
"""SQLITE_BUSY and SQLITE_LOCKED, and how they read: another connection holds a lock."""
_OUT_OF_PLACE: Final = (
    (3, 8, 10, 13, 14),
    (
        "access permission denied",
        "attempt to write a readonly database",
        "disk I/O error",
        "database or disk is full",
        "unable to open database file",
    ),
)
"""SQLITE_PERM, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL and SQLITE_CANTOPEN, and how they
read."""
_UNWRITABLE: Final = (
    (3, 8, 14),
    (
        "access permission denied",
        "attempt to write a readonly database",
        "unable to open database file",
    ),
)
"""SQLITE_PERM, SQLITE_READONLY and SQLITE_CANTOPEN (a WAL database in a folder SQLite cannot
write beside it: no -shm file), and how they read: the database may still be read as it is."""


class StampChanged(sqlite3.OperationalError):
    """The index is no longer the one this process opened: another process built it anew
    or raised its read limits meanwhile (:func:`~sessionref.index.writes.transaction`)."""

    def __init__(self) -> None:
        super().__init__("another process stamped it anew meanwhile: other read limits or root")


def _says(error: sqlite3.Error, kind: tuple[tuple[int, ...], tuple[str, ...]]) -> bool:
    """Whether ``error`` is of ``kind``: by its primary result code (Python 3.11+ gives it),
    else by how its message starts.

    >>> _says(sqlite3.OperationalError("database is locked"), _BUSY)
    True
    """
    codes, messages = kind
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in codes
    return str(error).startswith(messages)


def is_busy(error: sqlite3.Error) -> bool:
    """Whether ``error`` only says that another connection holds a lock: it passes, and
    nothing is wrong with the database.

    >>> is_busy(sqlite3.OperationalError("database is locked"))
    True
    >>> is_busy(sqlite3.DatabaseError("file is not a database"))
    False
    """
    return _says(error, _BUSY)


def is_out_of_place(error: sqlite3.Error) -> bool:
    """Whether ``error`` says that the database's place failed it (a full disk, a read-only
    or forbidden folder, an I/O error), not that its content is wrong: it is left as it is.

    >>> is_out_of_place(sqlite3.OperationalError("database or disk is full"))
    True
    >>> is_out_of_place(sqlite3.DatabaseError("database disk image is malformed"))
    False
    """
    return _says(error, _OUT_OF_PLACE)


def is_unwritable(error: sqlite3.Error) -> bool:
    """Whether ``error`` says that the database cannot be written where it is (a read-only
    folder or file): it can still be read as it is, where a full disk or an I/O error says
    nothing of the kind.

    >>> is_unwritable(sqlite3.OperationalError("unable to open database file"))
    True
    >>> is_unwritable(sqlite3.OperationalError("database or disk is full"))
    False
    """
    return _says(error, _UNWRITABLE)


def _kind(failure: Exception) -> str:
    """What a failure to use a database says of it: another process holds it (``busy``), its
    place fails it (``out of place``), its content is wrong (``broken``); or it is no SQLite
    error (``other``: a folder that cannot be made, say).

    >>> _kind(sqlite3.OperationalError("database is locked")), _kind(OSError("read-only"))
    ('busy', 'other')
    """
    if not isinstance(failure, sqlite3.Error):
        return "other"
    if isinstance(failure, StampChanged):
        return "changed"
    if is_busy(failure):
        return "busy"
    return "out of place" if is_out_of_place(failure) else "broken"


def broken(failure: Exception) -> bool:
    """Whether a failure to use a database says that its content is wrong (it is rebuilt),
    not that another process holds it or that its place fails it (it is left as it is).

    >>> broken(sqlite3.DatabaseError("file is not a database"))
    True
    >>> broken(sqlite3.OperationalError("database is locked")), broken(OSError("read-only"))
    (False, False)
    """
    return _kind(failure) == "broken"


_STATES: Final = {
    "busy": "is busy",
    "out of place": "cannot be written where it is",
    "changed": "changed under this command",
}
"""How :func:`bypass_warning` says each kind of failure (any other: ``is unusable``)."""


def bypass_warning(path: Path, failure: Exception) -> str:
    """The one line that says an index is not used, and why: another process holds it, its
    place fails it (a read-only folder, a full disk), or it cannot be read as an index.

    >>> bypass_warning(Path("/i.sqlite"), sqlite3.OperationalError("database is locked"))
    'sessionref: index /i.sqlite is busy (database is locked); reading the store directly'
    >>> print(bypass_warning(Path("/i.sqlite"), sqlite3.OperationalError("disk I/O error")))
    sessionref: index /i.sqlite cannot be written where it is (disk I/O error); reading the \
store directly
    """
    state = _STATES.get(_kind(failure), "is unusable")
    return f"sessionref: index {path} {state} ({failure}); reading the store directly"


def copy_warning(path: Path, failure: Exception) -> str:
    """The one line that says an index that cannot be written where it is is used from a copy
    in memory, brought up to date there (the logs changed since it was saved are read again
    each time) and never saved.

    >>> print(copy_warning(Path("/ro/i.sqlite"), sqlite3.OperationalError("unable to open \
database file")))
    sessionref: index /ro/i.sqlite cannot be written where it is (unable to open database \
file); using a copy in memory, brought up to date there and not saved
    """
    return (
        f"sessionref: index {path} cannot be written where it is ({failure}); using a copy"
        " in memory, brought up to date there and not saved"
    )
