"""Reading and writing the index tables; every write is one transaction under the write lock.

The ``tree`` stamp in ``meta`` says "the tables hold the store as of this walk" (``entries``
is that walk). Any write of session rows removes it; only :func:`finish` sets it, and only after
checking, inside its transaction, that every served session's row was read at the revision the
listing saw. So a refresh killed half way, or two refreshes racing, leave rows that are each
right for their revision and no stamp to trust them blindly: the next use lists again and reads
what is missing. A store that changes after the walk differs from the stamp next time.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec

from sessionref.index.ahead import StatsAhead
from sessionref.index.cursors import row_of, rows_of, run, run_many
from sessionref.index.refresh import HeaderEntry, SessionData
from sessionref.index.restat import Changed, read_walk_stats, restat_tree, walk_stats
from sessionref.index.walk import Tree
from sessionref.index.writes import transaction
from sessionref.log.records import SessionHeader
from sessionref.log.store import StoreProblem
from sessionref.types import Cwd

T = TypeVar("T")

Expected = Mapping[str, tuple[str, str | None]]
"""Served session id → (log path, revision seen when listing)."""


def blob(text: str) -> bytes:
    r"""Text as stored (lone surrogates kept).

    >>> text(blob("a\ud800")) == "a\ud800"
    True
    """
    return text.encode("utf-8", "surrogatepass")


def cwd_column(cwd: Cwd) -> bytes | str | None:
    """A header's cwd as the ``sessions`` table keeps it: a string as :func:`blob`; one that is
    not a string as its JSON text, stored as TEXT: never equal to a target's cwd (a BLOB) and
    never lower-cased to match a query, as the package never ranks it first nor finds a query
    in it.

    >>> cwd_column("/w"), cwd_column(5), cwd_column(None)
    (b'/w', '5', None)
    """
    if cwd is None or isinstance(cwd, str):
        return None if cwd is None else blob(cwd)
    return json.dumps(cwd, ensure_ascii=True, separators=(",", ":"))


def text(stored: bytes) -> str:
    """Text from :func:`blob`."""
    return stored.decode("utf-8", "surrogatepass")


def batches(items: Iterator[T], size: int, total: int) -> Iterator[list[T]]:
    """Consecutive lists of ``size`` items, shorter (down to one) once fewer than ``4 * size``
    of the ``total`` remain: a quarter of what remains. The last list is written when nothing
    is left to read beside it, so it is kept short.

    >>> [len(batch) for batch in batches(iter(range(20)), 4, 20)]
    [4, 4, 3, 2, 1, 1, 1, 1, 1, 1, 1]
    """
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= max(1, min(size, total // 4)):
            total -= len(batch)
            yield batch
            batch = []
    if batch:
        yield batch


def header_cache(db: sqlite3.Connection) -> dict[bytes, HeaderEntry]:
    """Every remembered header line, by log path."""
    rows = rows_of(db, "SELECT path, revision, header, error FROM header_cache")
    return {path: _header_entry(*row) for path, *row in rows}


def _header_entry(revision: Any, line: Any, error: bytes | str | None) -> HeaderEntry:
    """A remembered header line, its error stored by :func:`blob` (as text: an older index).

    >>> _header_entry(1, b"h", "/\\udcff".encode("utf-8", "surrogatepass")).error == "/\\udcff"
    True
    """
    return HeaderEntry(revision, line, text(error) if isinstance(error, bytes) else error)


def stamped_tree(db: sqlite3.Connection) -> str | None:
    """The tree revision the tables are known to match, if any."""
    row = row_of(db, "SELECT value FROM meta WHERE key = 'tree'")
    return None if row is None else str(row[0])


def listed_headers(db: sqlite3.Connection) -> list[str]:
    """The served headers (as stored JSON) in listing order."""
    return [row[0] for row in rows_of(db, "SELECT header FROM sessions ORDER BY pos")]


def stored_problems(db: sqlite3.Connection) -> list[StoreProblem]:
    """The problems of the listing that was stamped."""
    row = row_of(db, "SELECT value FROM meta WHERE key = 'problems'")
    return [StoreProblem(path, message) for path, message in json.loads(row[0])] if row else []


def stored_conflicts(db: sqlite3.Connection) -> dict[str, str]:
    """Why the harness's lookup fails the read of sessions the stamped listing served."""
    row = row_of(db, "SELECT value FROM meta WHERE key = 'conflicts'")
    return dict(json.loads(row[0])) if row else {}


def indexed_revisions(db: sqlite3.Connection) -> dict[str, tuple[str, str | None]]:
    """Indexed session id → (path, revision it was read at)."""
    rows = rows_of(db, "SELECT id, path, revision FROM sessions")
    return {text(raw): (text(path), revision) for raw, path, revision in rows}


def title_of(stored: str | None) -> Any:
    """A title as stored (JSON: a title may be any JSON value), or ``None``.

    >>> title_of('"a"'), title_of("7"), title_of(None)
    ('a', 7, None)
    """
    return None if stored is None else json.loads(stored)


def titles(db: sqlite3.Connection) -> dict[str, Any]:
    """Indexed session id → its latest title (decoded at once; one by one only when a title
    holds a lone surrogate, which msgspec refuses)."""
    rows = rows_of(db, "SELECT id, title FROM sessions")
    stored = [title for _, title in rows]
    try:
        values = msgspec.json.decode("[" + ",".join(t or "null" for t in stored) + "]")
    except msgspec.DecodeError:
        values = [title_of(title) for title in stored]
    return {text(raw): value for (raw, _), value in zip(rows, values, strict=True)}


_UPSERT: Final = """
INSERT INTO sessions (id, pos, header, path, revision, failure, title, created_at, cwd, bounds)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    pos = excluded.pos, header = excluded.header, path = excluded.path,
    revision = excluded.revision, failure = excluded.failure, title = excluded.title,
    created_at = excluded.created_at, cwd = excluded.cwd, bounds = excluded.bounds
RETURNING sid
"""


def _drop_text(db: sqlite3.Connection, raw_id: bytes) -> None:
    """Delete a session's conversation text from the full-text index (if it has one)."""
    row = row_of(db, "SELECT sid, bounds FROM sessions WHERE id = ?", (raw_id,))
    if row is not None and row[1]:
        run(db, "DELETE FROM texts WHERE rowid = ?", (row[0],))


SessionRow = tuple[SessionHeader, int, str, SessionData]
"""A session just read: header, listing position, header JSON, what was read."""


def _put_sessions(db: sqlite3.Connection, rows: Sequence[SessionRow]) -> None:
    """Insert or replace sessions' rows, then their texts (inside a transaction).

    The texts go in after every row, by rising rowid: a statement with ``RETURNING`` makes the
    full-text index write out the terms it holds in memory, and so does a rowid lower than the
    last, so a text inserted between two upserts became a small segment of its own, merged
    again and again (a 1-process cold build took 3-5% more CPU time that way).
    """
    texts: dict[int, str] = {}  # by sid: the last row of a session wins, as it did
    for header, position, header_json, data in rows:
        raw_id = blob(header.id)
        _drop_text(db, raw_id)
        cwd = cwd_column(header.cwd)
        title = None if data.title is None else json.dumps(data.title, ensure_ascii=True)
        values = (raw_id, position, header_json, blob(data.path), data.revision)
        failure = None if data.failure is None else blob(data.failure)  # it may name a path
        values_more = (failure, title, header.created_at, cwd, data.bounds or None)
        sid = row_of(db, _UPSERT, values + values_more)[0]
        texts.pop(sid, None)
        if data.bounds:
            texts[sid] = data.text
    run_many(db, "INSERT INTO texts (rowid, text) VALUES (?, ?)", sorted(texts.items()))


def write_sessions(db: sqlite3.Connection, rows: Sequence[SessionRow]) -> None:
    """Store sessions just read; the tables no longer match a known tree."""

    def write() -> None:
        run(db, "DELETE FROM meta WHERE key = 'tree'")
        _put_sessions(db, rows)

    transaction(db, write)


def write_as_read(
    db: sqlite3.Connection,
    listing: Sequence[tuple[SessionHeader, str]],
    read: Iterator[tuple[str, SessionData]],
    size: int,
    counted: tuple[int, Callable[[int, int], None] | None],
) -> None:
    """Write sessions as they are read, in :func:`batches` of ``size`` (``listing``: every
    served header and its JSON, in order; ``counted``: how many sessions will come, and whom
    to tell how many are written)."""
    total, progress = counted
    by_id = {header.id: (header, n, encoded) for n, (header, encoded) in enumerate(listing)}
    done = 0
    if progress is not None and total:
        progress(done, total)
    for batch in batches(read, size, total):
        write_sessions(db, [(*by_id[key], data) for key, data in batch])
        done += len(batch)
        if progress is not None:
            progress(done, total)


def _remember_headers(db: sqlite3.Connection, learned: Mapping[bytes, HeaderEntry]) -> None:
    """Remember the header lines ``learned``, by log path."""
    items = learned.items()
    rows = ((p, rev, line, None if err is None else blob(err)) for p, (rev, line, err) in items)
    run_many(db, "INSERT OR REPLACE INTO header_cache VALUES (?, ?, ?, ?)", rows)


def replace_logs(
    db: sqlite3.Connection,
    rows: Sequence[SessionRow],
    stamps: tuple[str, str | None],
    before: Mapping[bytes, str],
    entries: Mapping[bytes, str],
    learned: Mapping[bytes, HeaderEntry],
) -> bool:
    """Store sessions re-read because only their logs changed, if the tables still match the
    tree ``stamps[0]``, whose walk is ``before``; then they match ``stamps[1]`` (``None``: no
    known tree), whose walk is ``before`` with ``entries``, the changed entries (as remembered).
    ``learned`` are the header lines read. False, writing nothing, when another refresh changed
    the tables meanwhile.
    """

    def write() -> bool:
        if stamped_tree(db) != stamps[0]:
            return False
        _put_sessions(db, rows)
        _remember_headers(db, learned)
        run_many(db, "INSERT OR REPLACE INTO entries VALUES (?, ?)", entries.items())
        _stamp_walk(db, stamps[1], {**before, **entries})
        return True

    return transaction(db, write)


def sessions_at(db: sqlite3.Connection, paths: Sequence[str]) -> dict[str, tuple[str, int, str]]:
    """Log path → (session id, listing position, header JSON) of the sessions at ``paths``."""
    found = {}
    for path in paths:
        for raw, pos, header in rows_of(
            db, "SELECT id, pos, header FROM sessions WHERE path = ?", (blob(path),)
        ):
            found[path] = (text(raw), pos, header)
    return found


def header_entries(db: sqlite3.Connection, paths: Sequence[bytes]) -> dict[bytes, HeaderEntry]:
    """The remembered header lines of the logs at ``paths`` (those remembered)."""
    query = "SELECT revision, header, error FROM header_cache WHERE path = ?"
    rows = ((path, row_of(db, query, (path,))) for path in paths)
    return {path: _header_entry(*row) for path, row in rows if row is not None}


def holds(db: sqlite3.Connection, session_id: str) -> bool:
    """Whether the index serves ``session_id``."""
    return row_of(db, "SELECT 1 FROM sessions WHERE id = ?", (blob(session_id),)) is not None


def session_count(db: sqlite3.Connection) -> int:
    """How many sessions the index serves."""
    return int(row_of(db, "SELECT count(*) FROM sessions")[0])


def stamped_walk(
    db: sqlite3.Connection, root: Path, racy_after: int, ahead: StatsAhead | None = None
) -> tuple[str | None, dict[bytes, str] | None, Changed]:
    """The stamped tree, the walk it was made of (entry → state) and what changed in the store
    at ``root`` since (:func:`~sessionref.index.restat.restat_tree`, or ``ahead``'s answer;
    ``None`` when the index keeps no stats of the walk), read in one snapshot. The walk's
    entries are read only when something changed; all three are ``None`` with no stamp."""
    run(db, "BEGIN")
    try:
        stamp = stamped_tree(db)
        if stamp is None:
            return None, None, None
        row = row_of(db, "SELECT value FROM meta WHERE key = 'stats'")
        remembered = None if row is None else read_walk_stats(row[0], stamp)
        if remembered is None or ahead is None:
            changed = None if remembered is None else restat_tree(root, racy_after, remembered)
        else:
            changed = ahead.changed(stamp, remembered)
        if changed == {}:
            return stamp, None, changed
        entries = rows_of(db, "SELECT path, state FROM entries")
    finally:
        run(db, "COMMIT")
        if ahead is not None:
            ahead.close()
    return stamp, dict(entries), changed


def _stamp_walk(db: sqlite3.Connection, stamp: str | None, entries: Mapping[bytes, str]) -> None:
    """Stamp the tables as matching the tree ``stamp`` (``None``: no known tree) whose walk
    ``entries`` the ``entries`` table holds, with the walk's stats (``restat.WalkStats``)."""
    run(db, "DELETE FROM meta WHERE key IN ('tree', 'stats')")
    remembered = None if stamp is None else walk_stats(stamp, entries)
    rows = [("tree", stamp), ("stats", remembered)]
    run_many(db, "INSERT INTO meta VALUES (?, ?)", [row for row in rows if row[1] is not None])


def keep_walk_stats(
    db: sqlite3.Connection, stamp: str | None, entries: Mapping[bytes, str] | None
) -> None:
    """Give the stamped walk ``entries`` its stats (``restat.WalkStats``: an index made before
    they were kept has none), if the tables still match the tree ``stamp``; nothing when either
    is ``None`` (no tree stamped, or its stats were there)."""
    remembered = None if stamp is None or entries is None else walk_stats(stamp, entries)
    if remembered is None:
        return

    def write() -> None:
        if stamped_tree(db) == stamp:
            run(db, "INSERT OR REPLACE INTO meta VALUES ('stats', ?)", (remembered,))

    transaction(db, write)


def _store_listing(
    db: sqlite3.Connection,
    listing: Sequence[tuple[SessionHeader, str]],
    problems: Sequence[StoreProblem],
    seen: set[bytes],
    conflicts: Mapping[str, str],
) -> int:
    """Drop sessions no longer served, set every position, keep the problems and the lookup's
    conflicts; the number dropped."""
    served = {header.id for header, _ in listing}
    every: list[tuple[int, bytes]] = rows_of(db, "SELECT sid, id FROM sessions")
    gone = [(sid, raw) for sid, raw in every if text(raw) not in served]
    for sid, raw in gone:
        _drop_text(db, raw)
        run(db, "DELETE FROM sessions WHERE sid = ?", (sid,))
    run_many(
        db,
        "UPDATE sessions SET pos = ?, header = ? WHERE id = ? AND (pos, header) != (?, ?)",
        (
            (n, header_json, blob(header.id), n, header_json)
            for n, (header, header_json) in enumerate(listing)
        ),
    )
    known = [row[0] for row in rows_of(db, "SELECT path FROM header_cache")]
    run_many(db, "DELETE FROM header_cache WHERE path = ?", ((p,) for p in known if p not in seen))
    wire = json.dumps([[p.path, p.message] for p in problems], ensure_ascii=True)
    run(db, "INSERT OR REPLACE INTO meta VALUES ('problems', ?)", (wire,))
    wire = json.dumps(sorted(conflicts.items()), ensure_ascii=True)
    run(db, "INSERT OR REPLACE INTO meta VALUES ('conflicts', ?)", (wire,))
    return len(gone)


def finish(
    db: sqlite3.Connection,
    listing: tuple[
        Sequence[tuple[SessionHeader, str]], Sequence[StoreProblem], set[bytes], Mapping[str, str]
    ],
    expected: Expected,
    learned: Mapping[bytes, HeaderEntry],
    tree: Tree,
) -> int:
    """Store what a listing saw, and stamp ``tree`` if every row is the one expected.

    ``listing`` is every served (header, header JSON) in order, the problems, the paths
    whose header was listed and the lookup's conflicts; ``learned`` the header lines read.
    Returns the number of sessions dropped.
    """

    def write() -> int:
        removed = _store_listing(db, *listing)
        _remember_headers(db, learned)
        run(db, "DELETE FROM entries")  # in full: another refresh may have written them
        entries = tree.remembered()
        run_many(db, "INSERT INTO entries VALUES (?, ?)", entries.items())
        _stamp_walk(db, tree.stamp if indexed_revisions(db) == expected else None, entries)
        return removed

    return transaction(db, write)
