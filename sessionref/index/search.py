"""Full-text search over the indexed conversations, ranked per session.

Each whitespace-separated word of a query must occur (case-insensitively, as a substring)
somewhere in a session's conversation units. Words of 3 characters or more go through the
trigram index and rank by bm25 over the session's text; shorter words filter by a substring scan
of the indexed text, which is also the whole search when every word is short (then all hits rank
equal, score 0.0). Ties go to the newest. The snippet comes from the unit holding the most query
words. Short words fold case as the trigram index does (:func:`fold`): SQLite's ``LIKE`` for
words with no case beyond ASCII, a Python function for the others. A query may hold any
number of words.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import unicodedata
from collections.abc import Iterable
from typing import Final

import msgspec

from sessionref.codecs.uri import format_session_reference_mention, label_text
from sessionref.index.refresh import decode_header, indexable, unit_texts
from sessionref.index.tables import blob, title_of
from sessionref.index.tables import text as text_of

TRIGRAM: Final = 3
SNIPPET_CHARS: Final = 160
SNIPPET_LEAD: Final = 50
MARK_OPEN: Final = "«"
MARK_CLOSE: Final = "»"
_SPACE: Final = re.compile(r"\s+")
#: What the trigram tokenizer folds, beyond ``str.lower``: letters whose lower case is not
#: their case fold (SQLite's fold table, checked by tests/test_index_search.py).
_FOLDS: Final = {
    "µ": "μ", "ſ": "s", "\u0345": "ι", "ς": "σ", "ϐ": "β", "ϑ": "θ", "ϕ": "φ",
    "ϖ": "π", "ϰ": "κ", "ϱ": "ρ", "ϵ": "ε", "ẛ": "ṡ", "\u1fbe": "ι",
}  # fmt: skip
_FOLDED_BY: Final = {
    target: [c for c, t in _FOLDS.items() if t == target] for target in set(_FOLDS.values())
}
FOLDED: Final = "sessionref_folded_has"
"""The SQL function ``FOLDED(text, words)``: whether ``text`` holds each of ``words``
(folded, NUL-separated)."""


class SearchHit(msgspec.Struct, frozen=True, rename="camel"):
    """One session found by a search, with its best matching unit's snippet."""

    session_id: str
    label: str
    cwd: str | None
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


def like_pattern(word: str) -> str:
    r"""A LIKE pattern (escape ``\``) matching any text that contains ``word``.

    >>> like_pattern("50%_a\\")
    '%50\\%\\_a\\\\%'
    """
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def fold(text: str, targets: Iterable[str] | None = None) -> str:
    """``text`` case-folded as the trigram index folds it: ``str.lower``, then the letters of
    ``_FOLDS`` (only those folding to one of ``targets``, when given).

    >>> fold("ÄRGER"), fold("ΟΔΟΣ µs"), fold("ΟΔΟΣ µs", {"σ"})
    ('ärger', 'οδοσ μs', 'οδοσ µs')
    """
    text = text.lower()
    for target in _FOLDED_BY if targets is None else targets:
        for letter in _FOLDED_BY[target]:
            text = text.replace(letter, target)
    return text


@functools.lru_cache(maxsize=4)
def _needles(words: str) -> tuple[list[str], list[str]]:
    """The NUL-separated ``words`` and the fold targets among their characters."""
    return words.split("\x00"), [target for target in _FOLDED_BY if target in words]


def folded_has(text: str, words: str) -> bool:
    r"""The function :data:`FOLDED`: whether the fold of ``text`` holds every one of the
    NUL-separated ``words`` (each already folded). The text is folded only as far as the
    words need: a letter that folds to none of theirs cannot take part in a match.

    >>> folded_has("Ärger über ΟΔΟΣ", "är\x00σ"), folded_has("Ärger", "är\x00ü")
    (True, False)
    """
    needles, targets = _needles(words)
    folded = fold(text, targets)
    return all(needle in folded for needle in needles)


def caseless(word: str) -> bool:
    """Whether ``LIKE`` matches ``word`` as the trigram index would: ``LIKE`` folds ASCII
    letters, and the other characters of ``word`` have no case (CJK, digits, signs). (The
    index also folds the Kelvin sign to ``k`` and the long s to ``s``, which ``LIKE`` leaves:
    a small price for keeping ASCII words on the fast path.)

    >>> caseless("ok"), caseless("令牌"), caseless("är"), caseless("σ")
    (True, True, False, False)
    """
    return all(c.isascii() or (c.lower() == c == c.upper() and c not in _FOLDS) for c in word)


def all_of(clauses: list[str]) -> str:
    """``clauses`` joined by ``AND`` as a balanced tree, so that thousands of them stay well
    below SQLite's expression depth limit (1000).

    >>> all_of(["a", "b", "c"])
    '(a AND (b AND c))'
    """
    if len(clauses) == 1:
        return clauses[0]
    half = len(clauses) // 2
    return f"({all_of(clauses[:half])} AND {all_of(clauses[half:])})"


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
    r"""The WHERE clause over ``texts`` and its named parameters (every short word with case
    beyond ASCII in one :data:`FOLDED` call).

    >>> where, params = match_clause(["auth", "ok", "Är", "ΣΑ"])
    >>> print(where)
    (texts MATCH :match AND (text LIKE :w1 ESCAPE '\' AND sessionref_folded_has(text, :folded)))
    >>> params
    {'match': '"auth"', 'w1': '%ok%', 'folded': 'är\x00σα'}
    """
    long_words = [w for w in words if len(w) >= TRIGRAM]
    clauses = ["texts MATCH :match"] if long_words else []
    params = {"match": " ".join(fts_phrase(w) for w in long_words)} if long_words else {}
    folded = []
    for n, word in enumerate(words):
        if len(word) >= TRIGRAM:
            continue
        if caseless(word):
            clauses.append(f"text LIKE :w{n} ESCAPE '\\'")
            params[f"w{n}"] = like_pattern(word)
        else:
            folded.append(fold(word))
    if folded:
        clauses.append(f"{FOLDED}(text, :folded)")
        params["folded"] = "\x00".join(folded)
    return all_of(clauses), params


def best_unit(units: list[str], words: list[str]) -> str:
    """The unit holding the most of ``words`` (case-insensitively), the first of equals.

    >>> best_unit(["auth", "auth token", "token auth"], ["auth", "token"])
    'auth token'
    """
    folded = [word.casefold() for word in words]
    return max(units, key=lambda unit: sum(w in unit.casefold() for w in folded), default="")


def search_sessions(
    db: sqlite3.Connection, query: str, limit: int, cwd: str | None = None
) -> list[SearchHit]:
    """The ``limit`` sessions whose conversation best matches ``query`` (none for a blank
    query), only those of working directory ``cwd`` when it is given."""
    words = query_words(query)
    if not words:
        return []
    where, params = match_clause(words)
    db.create_function(FOLDED, 2, folded_has, deterministic=True)
    score = "bm25(texts)" if any(len(w) >= TRIGRAM for w in words) else "0.0"
    rows = db.execute(
        f"""
        WITH hits AS MATERIALIZED (SELECT rowid AS sid, {score} AS score FROM texts WHERE {where}),
        top AS MATERIALIZED (
            SELECT hits.sid, hits.score FROM hits JOIN sessions AS s ON s.sid = hits.sid
            WHERE :cwd IS NULL OR s.cwd = :cwd
            ORDER BY hits.score, s.created_at DESC, s.id
            LIMIT :limit
        )
        SELECT s.id, s.header, s.title, top.score, texts.text, s.bounds
        FROM top
        JOIN sessions AS s ON s.sid = top.sid
        JOIN texts ON texts.rowid = top.sid
        ORDER BY top.score, s.created_at DESC, s.id
        """,
        {**params, "cwd": None if cwd is None else blob(cwd), "limit": limit},
    ).fetchall()
    hits = []
    for raw_id, header_text, raw_title, rank, text, bounds in rows:
        header = decode_header(header_text)
        title = title_of(raw_title)
        label = header.id if title is None else label_text(title)
        hits.append(
            SearchHit(
                session_id=text_of(raw_id),
                label=label,
                cwd=header.cwd,
                created_at=header.created_at,
                score=float(rank),
                snippet=snippet(best_unit(unit_texts(text, bounds), words), words),
                mention=format_session_reference_mention(header.id, label),
            )
        )
    return hits
