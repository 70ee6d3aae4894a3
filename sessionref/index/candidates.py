"""Candidates from the index: the listing's filter and order in SQL, so that only the sessions
listed are decoded.

Each session row keeps its id, cwd and label lower-cased as JavaScript lower-cases them
(generated columns computed by :func:`lowered` and :func:`lowered_title`, which every
connection registers with :func:`register`). A query lower-cased the same way is a substring
of a text exactly when its UTF-8 bytes are a substring of the text's (UTF-8 never matches in
the middle of a character), so ``instr`` on the stored bytes is the package's
``toLowerCase().includes()``; a query holding a lone surrogate, which JavaScript may match
against half of a character, is left to the caller.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Final

from sessionref.codecs.collation import ties_collated
from sessionref.codecs.jsstring import has_surrogates, js_lower
from sessionref.index.cursors import rows_of
from sessionref.index.refresh import decode_headers
from sessionref.index.tables import blob, text, title_of
from sessionref.log.records import SessionHeader
from sessionref.types import Target

LOWER: Final = "sessionref_lower"
TITLE_LOWER: Final = "sessionref_title_lower"
COLUMNS: Final = f"""
    id_lower BLOB GENERATED ALWAYS AS ({LOWER}(id)) STORED,
    cwd_lower BLOB GENERATED ALWAYS AS ({LOWER}(cwd)) STORED,
    label_lower BLOB GENERATED ALWAYS AS (
        CASE WHEN title IS NULL THEN {LOWER}(id) ELSE {TITLE_LOWER}(title) END
    ) STORED"""
"""The lower-cased id, cwd and label of a ``sessions`` row (a label that is not a string:
``NULL``, it never matches)."""
INDEX: Final = """CREATE INDEX IF NOT EXISTS sessions_for_candidates
ON sessions (cwd, created_at, pos, id, id_lower, cwd_lower, label_lower);"""
"""Every column a candidate query filters and orders on: scanning it reads a tenth of the
pages the ``sessions`` rows take (their conversation's bounds make them large)."""


def lowered(stored: bytes | str | None) -> bytes | None:
    r"""A text as stored (:func:`~sessionref.index.tables.blob`), lower-cased as JavaScript does;
    ``None`` for what is not a text (a cwd that is not a string, kept as JSON text:
    :func:`~sessionref.index.tables.cwd_column`), which no query matches.

    >>> lowered("ÉCOLE \ud800".encode("utf-8", "surrogatepass")).decode("utf-8", "surrogatepass")
    'école \ud800'
    >>> lowered("5") is None
    True
    """
    if not isinstance(stored, bytes):
        return None
    return blob(js_lower(stored.decode("utf-8", "surrogatepass")))


def lowered_title(stored: str | None) -> bytes | None:
    """A title as stored (JSON), lower-cased, if it is a string; ``None`` otherwise.

    >>> lowered_title('"Fix CI"'), lowered_title("7"), lowered_title(None)
    (b'fix ci', None, None)
    """
    title = title_of(stored)
    return blob(js_lower(title)) if isinstance(title, str) else None


def register(connection: sqlite3.Connection) -> None:
    """Give ``connection`` the functions the generated columns call."""
    connection.create_function(LOWER, 1, lowered, deterministic=True)
    connection.create_function(TITLE_LOWER, 1, lowered_title, deterministic=True)


_SELECT: Final = """
WITH found AS (
    SELECT sid, created_at, pos, id,
        CASE WHEN cwd IS NULL THEN 1 WHEN cwd = :cwd THEN 0 ELSE 2 END AS rank
    FROM sessions INDEXED BY sessions_for_candidates
    WHERE id != :target AND (
        :needle IS NULL
        OR instr(id_lower, :needle) OR instr(cwd_lower, :needle) OR instr(label_lower, :needle)
    )
), chosen AS MATERIALIZED (
    SELECT * FROM found
    WHERE :rank IS NULL OR (rank = :rank AND created_at = :created_at)
    ORDER BY rank, created_at DESC, pos
    LIMIT :limit
)
SELECT rank, chosen.created_at, chosen.id, header, title FROM chosen JOIN sessions USING (sid)
ORDER BY rank, chosen.created_at DESC, chosen.pos
"""
"""The sessions found, by group, newest first, then in the store's order, one group
(``rank``, ``created_at``) only when those are given."""

Row = tuple[int, Any, bytes, str, str | None]
"""A session found: its group (0, 1, 2), ``createdAt``, id, header and title as stored."""


def _found(db: sqlite3.Connection, params: dict[str, Any], limit: int) -> list[Row]:
    """The first ``limit`` sessions found, and every other session of the last one's group
    when the limit may cut it (``createdAt`` ties are ordered by id, which SQLite does not
    know how to)."""
    first = {**params, "rank": None, "created_at": None, "limit": limit + 1}
    rows: list[Row] = rows_of(db, _SELECT, first)
    if len(rows) <= limit or rows[limit][:2] != rows[limit - 1][:2]:
        return rows[:limit]
    rank, created_at = rows[limit][:2]
    group = {**params, "rank": rank, "created_at": created_at, "limit": -1}
    tied: list[Row] = rows_of(db, _SELECT, group)
    return [row for row in rows if row[:2] != (rank, created_at)] + tied


def select_candidates(
    db: sqlite3.Connection, target: Target, needle: str, limit: int
) -> list[tuple[SessionHeader, Any]] | None:
    """Every indexed session but the target with its label (its title, else its id): those of
    the target's cwd first, then those without one, then the others, each group in listing
    order; with a ``needle`` (lower-cased already), only those whose id, cwd or label contains
    it; the first ``limit``. ``None`` when the needle holds a lone surrogate.

    >>> from sessionref.index.schema import connect_memory
    >>> select_candidates(connect_memory(), Target("t", "/w"), "x", 5)
    []
    """
    if has_surrogates(needle):
        return None
    params = {
        "target": blob(target.id),
        "needle": blob(needle) if needle else None,
        "cwd": None if target.cwd is None else blob(target.cwd),
    }
    rows = ties_collated(_found(db, params, limit), lambda row: row[:2], lambda row: text(row[2]))
    rows = rows[:limit]
    headers = decode_headers([header for *_, header, _ in rows])
    titles = [title_of(title) for *_, title in rows]
    return [
        (header, header.id if title is None else title)
        for header, title in zip(headers, titles, strict=True)
    ]
