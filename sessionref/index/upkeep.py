"""Looking after index databases: what one holds (:func:`index_stats`), and dropping those
whose store root is gone (:func:`prune_indexes`). Neither changes an index in use."""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final, NamedTuple

from sessionref.index.afresh import remove_unused
from sessionref.index.cursors import row_of, rows_of
from sessionref.index.failures import is_busy
from sessionref.index.reading import read_index, reading
from sessionref.index.schema import (
    ForeignFile,
    check_ours,
    default_index_path,
    names_a_file,
    root_key,
    stamped_limits,
)

DATABASE_FILES: Final = ("", "-wal")
"""The files of a database that hold its data: the database and its write-ahead log."""


def database_size(path: Path) -> int:
    """Bytes a database takes on disk (the database and its write-ahead log).

    >>> database_size(Path("/nonexistent.sqlite"))
    0
    """
    return sum(
        os.path.getsize(f"{path}{suffix}")
        for suffix in DATABASE_FILES
        if os.path.exists(f"{path}{suffix}")
    )


def _last_written(path: Path) -> datetime:
    """When the database (or its write-ahead log) was last written: its last refresh that
    found something to change."""
    times = [
        os.stat(f"{path}{suffix}").st_mtime
        for suffix in DATABASE_FILES
        if os.path.exists(f"{path}{suffix}")
    ]
    return datetime.fromtimestamp(max(times), tz=timezone.utc)


def _meta(db: sqlite3.Connection) -> dict[str, Any]:
    """The ``meta`` rows of a database sessionref made; raises :class:`sqlite3.Error` for any
    other file."""
    return dict(rows_of(db, "SELECT key, value FROM meta"))


def _contents(db: sqlite3.Connection) -> tuple[int, tuple[int, int] | None, bytes | None]:
    """How many sessions a database sessionref made holds, the read limits it was built
    under and the root it was built for (as its ``meta`` keeps it); raises
    :class:`sqlite3.Error` for any other file."""
    meta = _meta(db)
    (sessions,) = row_of(db, "SELECT count(*) FROM sessions")
    root = meta.get("root")
    return (
        int(sessions),
        stamped_limits(meta.get("limits")),
        root if isinstance(root, bytes) else None,
    )


class IndexStats(NamedTuple):
    """What an index database holds: its file, its store root, how many sessions, how many
    bytes on disk, when it was last written (``None`` for all but ``path`` and ``root``
    when there is no database yet, or none that can be read: then ``unusable`` says why), and
    the read limits it was built under, ``(max_bytes, max_line_bytes)`` (``None`` also for an
    index made before they were kept: the next refresh rebuilds it)."""

    path: Path
    root: str
    sessions: int | None
    size: int | None
    updated: datetime | None
    unusable: str | None = None
    limits: tuple[int, int] | None = None


def index_stats(root: Path, override: str | os.PathLike[str] | None = None) -> IndexStats:
    """The stats of the index of ``root`` (where :func:`default_index_path` puts it), read
    without refreshing it. A file that cannot be read as an index says why, as a refresh
    would treat it: a file named as the index that sessionref did not make is left alone,
    anything else is rebuilt. Raises :class:`sqlite3.Error` only when another process holds
    the database locked past the busy timeout."""
    path = default_index_path(root, override)
    if not path.exists():
        return IndexStats(path, str(root), None, None, None)
    try:
        if names_a_file(override):
            check_ours(path)
        sessions, limits, built_for = read_index(path, _contents)  # as on a read-only disk
    except ForeignFile as exc:
        unusable = f"{exc}; sessionref leaves it alone"
        return IndexStats(path, str(root), None, None, None, unusable)
    except sqlite3.Error as exc:
        if is_busy(exc):
            raise
        unusable = f"cannot be read as an index ({exc}); the next refresh rebuilds it"
        return IndexStats(path, str(root), None, None, None, unusable)
    if built_for is not None and built_for != os.fsencode(root_key(root)):
        # a file named as the index serves one root: a command on another rebuilt it for that
        other = os.fsdecode(built_for)
        unusable = (
            f"holds the index of another root, {other}; the next refresh rebuilds it for this one"
        )
        return IndexStats(path, str(root), None, None, None, unusable)
    size, updated = database_size(path), _last_written(path)
    return IndexStats(path, str(root), sessions, size, updated, limits=limits)


def index_folder(override: str | os.PathLike[str] | None = None) -> Path | None:
    """The folder that holds one database per root (``None`` when ``override`` or
    ``$SESSIONREF_INDEX`` names one database file).

    >>> index_folder("/tmp/indexes/").as_posix()
    '/tmp/indexes'
    """
    if names_a_file(override):
        return None
    return default_index_path(Path(os.sep), override).parent


def prune_indexes(override: str | os.PathLike[str] | None = None) -> list[tuple[Path, str]]:
    """Delete every index database (in :func:`index_folder`, or the one file named) whose
    store root is no longer a directory: ``(database, root)`` of each one deleted. Files that
    are not sessionref's indexes, and databases another process has open, are left
    (:func:`~sessionref.index.afresh.remove_unused`)."""
    folder = index_folder(override)
    if folder is None:
        files = [default_index_path(Path(os.sep), override)]
    else:
        files = sorted(folder.glob("*.sqlite")) if folder.is_dir() else []
    pruned = []
    for path in files:
        root = _root_of(path)
        if root is not None and not os.path.isdir(root) and remove_unused(path):
            pruned.append((path, root))
    return pruned


def _root_of(path: Path) -> str | None:
    """The store root an index database was built for; ``None`` when the file is not one
    (or another process holds it locked, or it is no regular file: a FIFO would block)."""
    if not path.is_file():
        return None
    try:
        check_ours(path)  # read as an index only then
        with reading(path) as db:
            root = _meta(db).get("root")
    except (ForeignFile, sqlite3.Error, OSError, ValueError):
        return None
    return os.fsdecode(root) if isinstance(root, bytes) else None
