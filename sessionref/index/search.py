"""Full-text search over the indexed conversations, ranked per session.

Each whitespace-separated word of a query must occur (case-insensitively, as a substring)
somewhere in a session's conversation units. Words of 3 characters or more go through the
trigram index and rank by bm25 over the session's text; shorter words filter by a substring scan
of the indexed text, which is also the whole search when every word is short (then all hits rank
equal, score 0.0). Ties go to the newest. The snippet comes from the unit holding the most query
words. Short words fold case exactly as the trigram index does (a ``LIKE`` pattern per
spelling, :mod:`sessionref.index.casefold`). A query may hold any number of words.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any, Final, NamedTuple

import msgspec

from sessionref.codecs.uri import label_mention
from sessionref.errors import CancelToken, cancelled
from sessionref.index.casefold import word_spellings
from sessionref.index.cursors import rows_of
from sessionref.index.refresh import decode_header, indexable, unit_texts
from sessionref.index.tables import blob, title_of
from sessionref.index.tables import text as text_of
from sessionref.log.discovery import StoreProblem
from sessionref.types import Cwd

TRIGRAM: Final = 3
DEFAULT_SEARCH_LIMIT: Final = 10
"""How many sessions a search gives unless told otherwise (the library and the command line)."""
SNIPPET_CHARS: Final = 160
SNIPPET_LEAD: Final = 50
CANCEL_CHECK_STEPS: Final = 10_000
"""How many SQLite virtual machine steps a statement runs between two looks at a cancel token."""
MARK_OPEN: Final = "«"
MARK_CLOSE: Final = "»"
_SPACE: Final = re.compile(r"\s+")


class SearchHit(msgspec.Struct, frozen=True, rename="camel"):
    """One session found by a search, with its best matching unit's snippet. Its label is
    the one candidates have: the title as the log holds it (any JSON value), else the id; the
    mention writes a label that is not a string as its JSON text."""

    session_id: str
    label: Any
    cwd: Cwd
    created_at: int | float
    score: float
    snippet: str
    mention: str


def query_words(query: str) -> list[str]:
    """The distinct words of a query, in order, as the text is indexed (a lone surrogate or
    NUL matches as U+FFFD).

    >>> query_words("  auth  token auth "), query_words("x\\udcff")
    (['auth', 'token'], ['x\\ufffd'])
    """
    return list(dict.fromkeys(indexable(query).split()))


def fts_phrase(word: str) -> str:
    """A word as an FTS5 phrase (a substring under the trigram tokenizer).

    >>> fts_phrase('x"y') == '"x""y"'
    True
    """
    return '"' + word.replace('"', '""') + '"'


class HitRow(NamedTuple):
    """A found session as the database gives it: id, header and title as stored, score,
    its conversation's text and the bounds of its units."""

    id: bytes
    header: str
    title: str | None
    score: float
    text: str
    bounds: bytes

    def units(self) -> list[str]:
        """The conversation's units (:func:`~sessionref.index.refresh.unit_texts`)."""
        return unit_texts(self.text, self.bounds)


def like_pattern(word: str) -> str:
    r"""A LIKE pattern (escape ``\``) matching any text that contains ``word``.

    >>> like_pattern("50%_a\\")
    '%50\\%\\_a\\\\%'
    """
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def balanced(clauses: list[str], operator: str) -> str:
    """``clauses`` joined by ``operator`` as a balanced tree, so that thousands of them stay
    well below SQLite's expression depth limit (1000).

    >>> balanced(["a", "b", "c"], "AND")
    '(a AND (b AND c))'
    """
    if len(clauses) == 1:
        return clauses[0]
    half = len(clauses) // 2
    return f"({balanced(clauses[:half], operator)} {operator} {balanced(clauses[half:], operator)})"


def sql_text(text: str) -> str:
    """``text`` as an SQL string literal.

    >>> print(sql_text("it's"))
    'it''s'
    """
    return "'" + text.replace("'", "''") + "'"


def contains_clause(word: str) -> str:
    r"""The condition that ``text`` holds ``word`` as the trigram index would find it: a
    ``LIKE`` per spelling (:func:`~sessionref.index.casefold.word_spellings`), the patterns
    written in (no parameter per pattern: a query may hold any number of words).

    >>> print(contains_clause("on"), contains_clause("är"), sep="\n")
    text LIKE '%on%' ESCAPE '\'
    (text LIKE '%Är%' ESCAPE '\' OR text LIKE '%är%' ESCAPE '\')
    """
    likes = [f"text LIKE {sql_text(like_pattern(w))} ESCAPE '\\'" for w in word_spellings(word)]
    return balanced(likes, "OR")


def _whole(text: str, index: int, step: int) -> int:
    """Move ``index`` by ``step`` until it does not split a character from its marks."""
    while 0 < index < len(text) and (
        unicodedata.combining(text[index]) or "\udc00" <= text[index] <= "\udfff"
    ):
        index += step
    return index


def snippet(text: str, words: list[str]) -> str:
    """A one-line excerpt of ``text`` around its first match, matches marked, cut at whole
    characters (never between a character and its combining marks).

    >>> snippet("Fix the AUTH token\\nrefresh", ["auth"])
    'Fix the «AUTH» token refresh'
    >>> snippet("x" * 300 + " auth", ["auth"])[:3], len(snippet("x" * 300 + " auth", ["auth"]))
    ('…xx', 163)
    """
    pattern = re.compile(
        "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.IGNORECASE
    )
    found = pattern.search(text) if words else None
    start = max(0, min((found.start() if found else 0) - SNIPPET_LEAD, len(text) - SNIPPET_CHARS))
    start = _whole(text, start, -1)
    end = _whole(text, min(len(text), start + SNIPPET_CHARS), 1)
    window = text[start:end]
    if words:
        window = pattern.sub(lambda m: f"{MARK_OPEN}{m.group(0)}{MARK_CLOSE}", window)
    window = _SPACE.sub(" ", window).strip()
    return ("…" if start > 0 else "") + window + ("…" if end < len(text) else "")


def match_clause(words: list[str]) -> tuple[str, dict[str, str]]:
    r"""The WHERE clause over ``texts`` and its named parameters.

    >>> match_clause(["auth", "on"])
    ("(texts MATCH :match AND text LIKE '%on%' ESCAPE '\\')", {'match': '"auth"'})
    """
    long_words = [w for w in words if len(w) >= TRIGRAM]
    clauses = ["texts MATCH :match"] if long_words else []
    params = {"match": " ".join(fts_phrase(w) for w in long_words)} if long_words else {}
    clauses.extend(contains_clause(w) for w in words if len(w) < TRIGRAM)
    return balanced(clauses, "AND"), params


def best_unit(units: list[str], words: list[str]) -> str:
    """The unit holding the most of ``words`` (case-insensitively), the first of equals.

    >>> best_unit(["auth", "auth token", "token auth"], ["auth", "token"])
    'auth token'
    """
    folded = [word.casefold() for word in words]
    return max(units, key=lambda unit: sum(w in unit.casefold() for w in folded), default="")


HIT_COLUMNS: Final = "s.id, s.header, s.title, {score}, texts.text, s.bounds"
"""The columns of a :class:`HitRow` (its score is given), of ``sessions AS s`` and ``texts``."""
_DETAILS: Final = f"""
SELECT {HIT_COLUMNS.format(score="top.score")}
FROM top
JOIN sessions AS s ON s.sid = top.sid
JOIN texts ON texts.rowid = top.sid
ORDER BY top.score, s.created_at DESC, s.id
"""
"""What a hit shows, for the hits ``top`` names (``sid``, ``score``), best first."""
RANKED_LIMIT: Final = 1000
"""The most hits :func:`ranked_hits` names to the details' statement (two parameters each)."""


def ranked_hits(
    db: sqlite3.Connection, where: str, params: dict[str, str], limit: int
) -> list[tuple[int, float]] | None:
    """The ``limit`` best hits (sid, bm25 score), found by the full-text query itself (its
    sorter keeps only those), so that no other hit is joined to its session; ``None`` when
    the next hit scores as the last (then the newest of the tied ones are in: the caller
    joins every hit).

    >>> from sessionref.index.schema import connect_memory
    >>> ranked_hits(connect_memory(), "texts MATCH :match", {"match": '"auth"'}, 3)
    []
    """
    rows: list[tuple[int, float]] = rows_of(
        db,
        f"SELECT rowid, bm25(texts) AS score FROM texts WHERE {where} ORDER BY score LIMIT :n",
        {**params, "n": limit + 1},
    )
    if len(rows) > limit and rows[limit][1] == rows[limit - 1][1]:
        return None
    return rows[:limit]


def _hit_rows(
    db: sqlite3.Connection, words: list[str], limit: int, cwd: str | None
) -> list[HitRow]:
    """The best ``limit`` hits' id, header, title, score, text and bounds, best first: ranked
    by the full-text query when it can (:func:`ranked_hits`), else every hit joined to its
    session (ties, all words short, a ``cwd``, a limit beyond :data:`RANKED_LIMIT`)."""
    where, params = match_clause(words)
    ranked = any(len(w) >= TRIGRAM for w in words)
    quick = ranked and cwd is None and 0 < limit <= RANKED_LIMIT
    top = ranked_hits(db, where, params, limit) if quick else None
    if top is not None:
        if not top:
            return []
        values = ", ".join("(?, ?)" for _ in top)
        flat = [value for hit in top for value in hit]
        found = rows_of(db, f"WITH top(sid, score) AS (VALUES {values}) {_DETAILS}", flat)
        return list(map(HitRow._make, found))
    score = "bm25(texts)" if ranked else "0.0"
    found = rows_of(
        db,
        f"""
        WITH hits AS MATERIALIZED (SELECT rowid AS sid, {score} AS score FROM texts WHERE {where}),
        top AS MATERIALIZED (
            SELECT hits.sid, hits.score FROM hits JOIN sessions AS s ON s.sid = hits.sid
            WHERE :cwd IS NULL OR s.cwd = :cwd
            ORDER BY hits.score, s.created_at DESC, s.id
            LIMIT :limit
        )
        {_DETAILS}
        """,
        {**params, "cwd": None if cwd is None else blob(cwd), "limit": limit},
    )
    return list(map(HitRow._make, found))


def unread_logs(db: sqlite3.Connection) -> list[StoreProblem]:
    """The logs of the served sessions that could not be read, so that no search finds them,
    in listing order, each with why (a session whose log was not found: named by its id).

    >>> from sessionref.index.schema import connect_memory
    >>> unread_logs(connect_memory())
    []
    """
    rows = rows_of(db, "SELECT id, path, failure FROM sessions WHERE failure NOT NULL ORDER BY pos")
    return [  # why is stored by blob (as text: an index made before)
        StoreProblem(text_of(path) or f"session {text_of(raw)}", _text(why))
        for raw, path, why in rows
    ]


def _text(stored: bytes | str) -> str:
    r"""Text stored by :func:`blob`, or as text.

    >>> _text("a\udcff".encode("utf-8", "surrogatepass")) == _text("a\udcff") == "a\udcff"
    True
    """
    return text_of(stored) if isinstance(stored, bytes) else stored


@contextlib.contextmanager
def cancellable(db: sqlite3.Connection, cancel: CancelToken | None) -> Iterator[None]:
    """Statements run inside stop once ``cancel`` is set (a look every
    :data:`CANCEL_CHECK_STEPS` steps), raising CANCELLED; ``None`` runs them to the end.

    >>> import threading
    >>> db, stop = sqlite3.connect(":memory:"), threading.Event()
    >>> count = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1e5) "
    >>> with cancellable(db, stop):
    ...     db.execute(count + "SELECT count(*) FROM n").fetchone()
    (100000,)
    >>> stop.set()
    >>> with cancellable(db, stop):
    ...     db.execute(count + "SELECT count(*) FROM n").fetchone()
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: session reference preparation was cancelled
    """
    if cancel is None:
        yield
        return
    db.set_progress_handler(cancel.is_set, CANCEL_CHECK_STEPS)
    try:
        yield
    except sqlite3.OperationalError:
        if not cancel.is_set():
            raise
        raise cancelled() from None
    finally:
        db.set_progress_handler(None, 0)


def search_sessions(
    db: sqlite3.Connection, query: str, limit: int, cwd: str | None = None
) -> list[SearchHit]:
    """The ``limit`` sessions whose conversation best matches ``query`` (none for a blank
    query), only those of working directory ``cwd`` when it is given."""
    words = query_words(query)
    if not words:
        return []
    return [
        found_hit(row, snippet(best_unit(row.units(), words), words))
        for row in _hit_rows(db, words, limit, cwd)
    ]


def _as_stored(label: Any) -> Any:
    """A label as candidates have it (no redaction)."""
    return label


def found_hit(row: HitRow, shown: str, shown_label: Callable[[Any], Any] = _as_stored) -> SearchHit:
    """The hit of a row with the snippet ``shown``: labelled as candidates are (its title,
    else its id) as ``shown_label`` shows that label, its mention written with it.

    >>> row = HitRow(b"s", '{"id":"s","createdAt":1,"cwd":"/w"}', '"Fix CI"', -1.5, "", b"")
    >>> found_hit(row, "«fix» ci")
    SearchHit(session_id='s', label='Fix CI', cwd='/w', created_at=1, score=-1.5, \
snippet='«fix» ci', mention='@[Fix CI](dsh-session:InMi)')
    >>> found_hit(row._replace(title=None), "", str.upper).label
    'S'
    """
    header = decode_header(row.header)
    title = title_of(row.title)
    label = shown_label(header.id if title is None else title)
    return SearchHit(
        session_id=text_of(row.id),
        label=label,
        cwd=header.cwd,
        created_at=header.created_at,
        score=float(row.score),
        snippet=shown,
        mention=label_mention(header.id, label),
    )
