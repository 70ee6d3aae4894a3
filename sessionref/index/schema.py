"""Where a store's index lives, and opening it: one SQLite database (WAL) per store root.

The database is a cache: whatever is wrong with it (corrupt, another schema, another reader,
another root, lower read limits) is answered by starting it afresh, never by trusting it
(higher read limits: :mod:`sessionref.index.limits`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import sqlite3
import stat
import time
from pathlib import Path
from typing import Any, Final

import sessionref.index.candidates as candidates
from sessionref.index.cursors import row_of, rows_of, run, run_many
from sessionref.index.failures import is_busy, is_out_of_place
from sessionref.index.reading import BUSY_TIMEOUT_MS, read_index

SCHEMA_VERSION: Final = 8
INDEX_ENV: Final = "SESSIONREF_INDEX"
PAGE_BYTES: Final = 16384
"""The database page: with full-text leaves as large, inserting the trigrams of a cold build
costs some 15% less CPU than with 4 KiB pages and leaves, searches no more."""

DDL: Final = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS header_cache (
    path BLOB PRIMARY KEY, revision TEXT NOT NULL, header TEXT, error TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions (
    sid INTEGER PRIMARY KEY,
    id BLOB NOT NULL UNIQUE,
    pos INTEGER NOT NULL,
    header TEXT NOT NULL,
    path BLOB NOT NULL,
    revision TEXT,
    failure TEXT,
    title TEXT,
    created_at,
    cwd BLOB,
    bounds BLOB,{candidates.COLUMNS}
);
CREATE INDEX IF NOT EXISTS sessions_by_path ON sessions (path);
{candidates.INDEX}
CREATE TABLE IF NOT EXISTS entries (path BLOB PRIMARY KEY, state TEXT NOT NULL) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(text, tokenize='trigram');
INSERT INTO texts (texts, rank) VALUES ('pgsz', {PAGE_BYTES - 384});
"""
"""A session's conversation is one ``texts`` row, its rowid the session's ``sid``: the units
joined by a newline, ``sessions.bounds`` where each ends (``refresh.session_text``). One row per
session ranks sessions, not messages, and costs half the insert time of one row per unit. The
full-text index's leaves fill a database page (``pgsz``)."""


@functools.cache
def reader_fingerprint() -> str:
    """A digest of the code that decides what the index holds (the readers of every harness,
    the codecs they parse with, the titles a first prompt gives, the projection, the lower
    case candidate queries search, and how the problems it keeps name what they quote).

    An index built by other code is rebuilt, so a reader fix never leaves stale answers. The
    code does not change while a process runs: it is read once (one command may open an
    index for each of several roots).

    >>> len(reader_fingerprint())
    32
    """
    digest = hashlib.blake2b(f"{SCHEMA_VERSION}{DDL}".encode(), digest_size=16)
    package = Path(__file__).resolve().parent.parent
    for part in ("log", "pipeline", "claude_code", "codex", "codecs"):
        for source in sorted(package.joinpath(part).iterdir(), key=lambda p: p.name):
            if source.name.endswith(".py"):
                digest.update(source.name.encode() + b"\0" + source.read_bytes())
    for module in ("transcript.py", "snapshot.py", "controls.py", "index/candidates.py"):
        digest.update(package.joinpath(module).read_bytes())
    return digest.hexdigest()


def root_key(root: Path) -> str:
    """The real path of a store root, which names its database.

    >>> root_key(Path("/"))
    '/'
    """
    return os.path.realpath(root)


def _chosen(override: str | os.PathLike[str] | None) -> Path | None:
    """The location the caller or ``$SESSIONREF_INDEX`` names (an empty one names none)."""
    chosen = os.fspath(override) if override is not None else ""
    chosen = chosen or os.environ.get(INDEX_ENV, "")
    return Path(chosen).expanduser() if chosen else None


def names_a_file(override: str | os.PathLike[str] | None) -> bool:
    """Whether the caller (or ``$SESSIONREF_INDEX``) named the database file itself, rather
    than a folder that holds one database per root: such a file may be someone else's.

    >>> names_a_file("/tmp/x.sqlite"), names_a_file("/tmp"), names_a_file("/new/folder/")
    (True, False, False)
    """
    chosen = _chosen(override)
    spelled = os.fspath(override) if override else os.environ.get(INDEX_ENV, "")
    return chosen is not None and not chosen.is_dir() and not spelled.endswith(os.sep)


def default_index_path(root: Path, override: str | os.PathLike[str] | None = None) -> Path:
    """The database of ``root``: ``override``, else ``$SESSIONREF_INDEX``, else the user cache.

    A path naming a directory (one that exists, or any ending in ``/``) holds one database per
    store root, as the cache does.

    >>> default_index_path(Path("/r"), "/tmp/x.sqlite").as_posix()
    '/tmp/x.sqlite'
    """
    chosen = _chosen(override)
    if chosen is not None and names_a_file(override):
        return chosen
    if chosen is None:
        from platformdirs import user_cache_dir  # imported only when needed: 10 ms to load

        chosen = Path(user_cache_dir("sessionref")) / "index"
    name = hashlib.sha256(os.fsencode(root_key(root))).hexdigest()[:24]
    return chosen / f"{name}.sqlite"


SQLITE_MAGIC: Final = b"SQLite format 3\x00"


class ForeignFile(Exception):
    """The file named as the index is not known to be one sessionref made: it is left alone.
    The message says so of the file, after its path (``is not an index (…)``)."""


OUR_TABLES: Final = frozenset({"meta", "header_cache", "sessions"})
"""Tables every version of sessionref's index has had: a database that lists them in its
schema is one sessionref made (another program's would need all three names)."""


def check_ours(path: Path) -> None:
    """Raise :class:`ForeignFile` unless the file at ``path`` is missing, empty, or an SQLite
    database whose schema shows it is sessionref's (:func:`check_file`, then
    :func:`check_schema`). A lock held past the busy timeout raises :class:`sqlite3.Error`.

    >>> check_ours(Path("/nonexistent/x.sqlite"))
    >>> check_ours(Path(os.devnull))
    Traceback (most recent call last):
    ...
    sessionref.index.schema.ForeignFile: is not an index (it is not a regular file)
    """
    if check_file(path):
        check_schema(path)


def check_file(path: Path) -> bool:
    """Raise :class:`ForeignFile` unless the file at ``path`` is missing, empty or an SQLite
    database; whether it is one (whose schema :func:`check_schema` then reads). Anything but
    a regular file (``/dev/null``, a FIFO) is not one: read without waiting for a FIFO's
    writer, and never removed to be rebuilt.

    >>> check_file(Path("/nonexistent/x.sqlite"))
    False
    """
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
            regular = stat.S_ISREG(os.fstat(file.fileno()).st_mode)
            head = file.read(len(SQLITE_MAGIC)) if regular else b""
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise ForeignFile(f"cannot be read ({exc.strerror})") from None
    if not regular:
        raise ForeignFile("is not an index (it is not a regular file)")
    if head and head != SQLITE_MAGIC:
        raise ForeignFile("is not an index (it is not an SQLite database)")
    return bool(head)


def check_schema(path: Path, db: sqlite3.Connection | None = None) -> None:
    """Raise :class:`ForeignFile` unless the SQLite database at ``path`` has no table (one
    that sessionref is creating: it holds nothing) or its schema lists :data:`OUR_TABLES`.
    The schema is read with ``db``, a connection to it its caller owns, or else with one of
    its own that writes nothing and leaves nothing beside it
    (:func:`~sessionref.index.reading.reading`). The schema is on the database's first page,
    so an index damaged elsewhere is still known as sessionref's (and rebuilt); a file whose
    schema cannot be read is not known to be, and is left alone. A lock held past the busy
    timeout raises :class:`sqlite3.Error`.

    >>> check_schema(Path("i.sqlite"), connect_memory())
    >>> theirs = sqlite3.connect(":memory:")
    >>> run(theirs, "CREATE TABLE notes (text)")
    >>> try:
    ...     check_schema(Path("i.sqlite"), theirs)
    ... except ForeignFile as exc:
    ...     print(exc)
    is not an index (it is an SQLite database sessionref did not make)
    """
    try:
        tables = _table_names(db) if db is not None else read_index(path, _table_names)
    except sqlite3.Error as exc:
        if is_busy(exc) or (db is not None and is_out_of_place(exc)):
            raise  # the place fails the caller's connection, as it would any database
        raise ForeignFile(f"may not be an index: its schema cannot be read ({exc})") from None
    except ValueError:  # a path no URI can spell
        raise ForeignFile("cannot be opened to read (no URI spells its path)") from None
    if tables and not tables >= OUR_TABLES:
        raise ForeignFile("is not an index (it is an SQLite database sessionref did not make)")


def _table_names(db: sqlite3.Connection) -> frozenset[str]:
    """The names of the database's tables (read from its schema, on its first page).

    >>> sorted(_table_names(connect_memory()) & OUR_TABLES) == sorted(OUR_TABLES)
    True
    """
    rows = rows_of(db, "SELECT name FROM sqlite_master WHERE type = 'table'")
    return frozenset(name for (name,) in rows)


def _stamp(db: sqlite3.Connection) -> dict[str, Any]:
    """The ``meta`` table's rows (none when there is no such table).

    >>> _stamp(sqlite3.connect(":memory:"))
    {}
    """
    if row_of(db, "SELECT 1 FROM sqlite_master WHERE name = 'meta'") is None:
        return {}
    query = "SELECT key, value FROM meta WHERE key IN ('schema', 'root', 'reader', 'limits')"
    return dict(rows_of(db, query))


def _use_wal(connection: sqlite3.Connection) -> None:
    """Put the database in WAL mode, waiting (up to the busy timeout) while another
    connection holds a lock: SQLite answers "locked" at once, without waiting, when another
    process is creating the same database; raises :class:`sqlite3.Error` otherwise.

    >>> db = sqlite3.connect(":memory:")
    >>> _use_wal(db)
    Traceback (most recent call last):
    sqlite3.OperationalError: the index cannot use write-ahead logging
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            mode = row_of(connection, "PRAGMA journal_mode = WAL")[0]
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)
            continue
        if mode != "wal":
            raise sqlite3.OperationalError("the index cannot use write-ahead logging")
        return


def open_database(path: Path) -> sqlite3.Connection:
    """Open (creating) a database, to be set up (:func:`set_up`) by its caller, who owns it
    from the moment it is made: nothing can stop this function between the two. Any thread
    may use the connection (:class:`~sessionref.index.SessionIndex` takes turns)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )


def set_up(connection: sqlite3.Connection) -> None:
    """Put a database just opened in WAL mode (:func:`check_meta` gives a new one its tables)
    and set how it is used; raises :class:`sqlite3.Error` (the caller closes it)."""
    candidates.register(connection)
    run(connection, f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    run(connection, f"PRAGMA page_size = {PAGE_BYTES}")  # a new file only: before WAL
    _use_wal(connection)
    run(connection, "PRAGMA synchronous = NORMAL")
    run(connection, "PRAGMA cache_size = -32768")


def check_meta(
    connection: sqlite3.Connection, root: bytes, reader: str, limits: tuple[int, int]
) -> bool:
    """Whether the database was built for this schema, root, reader and read ``limits``
    (``(max_bytes, max_line_bytes)``: a log over them is a read failure, so an index built
    under others holds other answers). A new database gets its tables and stamp in one
    transaction: another process never sees it half made (which :func:`check_schema` would
    take for someone else's).

    >>> db, limits = connect_memory(), (1000, 100)
    >>> check_meta(db, b"/r", "x", limits), check_meta(db, b"/r", "x", limits)
    (True, True)
    >>> check_meta(db, b"/other", "x", limits), check_meta(db, b"/r", "x", (1000, 99))
    (False, False)
    """
    wanted = wanted_stamp(root, reader, limits)
    if not _stamp(connection).keys() & wanted.keys():
        run(connection, "BEGIN IMMEDIATE")
        try:
            if not _stamp(connection).keys() & wanted.keys():
                make_tables(connection, wanted)
        except BaseException:
            run(connection, "ROLLBACK")
            raise
        run(connection, "COMMIT")
    return stamped(connection, wanted)


def wanted_stamp(root: bytes, reader: str, limits: tuple[int, int]) -> dict[str, Any]:
    """The ``meta`` rows of an index built for ``root``, ``reader`` and read ``limits``.

    >>> wanted_stamp(b"/r", "x", (1000, 100))["limits"]
    '1000:100'
    """
    stamp = limits_stamp(limits)
    return {"schema": SCHEMA_VERSION, "root": root, "reader": reader, "limits": stamp}


def stamped(connection: sqlite3.Connection, wanted: dict[str, Any]) -> bool:
    """Whether the database's ``meta`` rows are those ``wanted``.

    >>> stamped(connect_memory(), wanted_stamp(b"/r", "x", (1000, 100)))
    False
    """
    found = _stamp(connection)
    return all(found.get(key) == value for key, value in wanted.items())


def make_tables(connection: sqlite3.Connection, wanted: dict[str, Any]) -> None:
    """Create the index's tables in a database that has none, stamped ``wanted``, inside the
    caller's transaction.

    >>> db = sqlite3.connect(":memory:")
    >>> candidates.register(db)  # the functions its tables use
    >>> make_tables(db, wanted_stamp(b"/r", "x", (1000, 100))); _stamp(db)["limits"]
    '1000:100'
    """
    for statement in DDL.split(";"):
        run(connection, statement)
    run_many(connection, "INSERT INTO meta VALUES (?, ?)", wanted.items())


def limits_stamp(limits: tuple[int, int]) -> str:
    """Read limits ``(max_bytes, max_line_bytes)`` as the ``meta`` table keeps them.

    >>> limits_stamp((1000, 100))
    '1000:100'
    """
    return f"{limits[0]}:{limits[1]}"


def stamped_limits(stamp: object) -> tuple[int, int] | None:
    """The read limits a :func:`limits_stamp` keeps; ``None`` for anything else (an index
    made before they were kept).

    >>> stamped_limits("1000:100"), stamped_limits("1000"), stamped_limits(None)
    ((1000, 100), None, None)
    """
    found = re.fullmatch(r"([0-9]+):([0-9]+)", stamp) if isinstance(stamp, str) else None
    return None if found is None else (int(found[1]), int(found[2]))


def remove_database(path: Path) -> None:
    """Delete a database and its WAL files (what is missing already is fine), the database
    last: a process that makes one anew at ``path`` meanwhile keeps the files it makes."""
    for suffix in ("-wal", "-shm", "-journal", ""):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


def connect_memory() -> sqlite3.Connection:
    """A throwaway index in memory, for when no file can hold one.

    >>> row_of(connect_memory(), "SELECT count(*) FROM sessions")
    (0,)
    """
    connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    candidates.register(connection)
    run(connection, f"PRAGMA page_size = {PAGE_BYTES}")
    connection.executescript(DDL).close()
    return connection
