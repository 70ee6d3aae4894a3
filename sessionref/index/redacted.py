"""Search with redaction on (docs/redaction.md §Search): a session is found only by what its
redacted conversation says, so that no query confirms a secret.

The full-text index holds the stored text, so it finds the candidates; each is then kept only
if every query word is still found once the units holding it are redacted. Hits come newest
first, each with score 0.0: a rank by bm25 over the stored text would tell, by the order,
how often a word occurs inside a secret. A hit's label is redacted, its mention written with
that label, and its snippet empty (a snippet is a window of a message, which could cut a
secret short of what a detector recognises).
"""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
from collections.abc import Generator
from typing import TYPE_CHECKING, Final

from sessionref.errors import CancelToken, check_cancel
from sessionref.index.casefold import fold_text
from sessionref.index.cursors import row_of
from sessionref.index.search import (
    HIT_COLUMNS,
    HitRow,
    SearchHit,
    found_hit,
    match_clause,
    query_words,
)
from sessionref.index.tables import blob

if TYPE_CHECKING:  # the caller has one: the redact package is loaded by then
    from sessionref.redact import Redaction

_MATCHING: Final = """
SELECT hits.sid FROM (SELECT rowid AS sid FROM texts WHERE {where}) AS hits
JOIN sessions AS s ON s.sid = hits.sid
WHERE :cwd IS NULL OR s.cwd = :cwd
ORDER BY s.created_at DESC, s.id
"""
"""Every session the full-text index finds for a query, newest first (ties by id)."""
_ROW: Final = f"""
SELECT {HIT_COLUMNS.format(score="0.0")}
FROM sessions AS s JOIN texts ON texts.rowid = s.sid WHERE s.sid = ?
"""
"""One found session as a :class:`~sessionref.index.search.HitRow`, scored 0.0."""


def redacted_search(
    db: sqlite3.Connection,
    query: str,
    limit: int,
    cwd: str | None,
    redaction: Redaction,
    cancel: CancelToken | None = None,
) -> list[SearchHit]:
    """The ``limit`` newest sessions whose redacted conversation holds every word of
    ``query`` (none for a blank query), only those of ``cwd`` when it is given; each read
    from the database when its turn comes, so a search stops as soon as it has enough, or
    (raising CANCELLED) before the next session once ``cancel`` is set."""
    words = query_words(query)
    if not words:
        return []
    with contextlib.closing(_kept(db, words, cwd, redaction, cancel)) as kept:
        return list(itertools.islice(kept, limit))


def _kept(
    db: sqlite3.Connection,
    words: list[str],
    cwd: str | None,
    redaction: Redaction,
    cancel: CancelToken | None,
) -> Generator[SearchHit, None, None]:
    """The hits of :func:`redacted_search`, in order, as far as the caller takes them."""
    where, params = match_clause(words)
    named: dict[str, object] = {**params, "cwd": None if cwd is None else blob(cwd)}
    found = db.cursor()  # ids read as the search goes, not kept in a list of a million
    try:
        for (sid,) in found.execute(_MATCHING.format(where=where), named):
            check_cancel(cancel)
            row = HitRow._make(row_of(db, _ROW, (sid,)))
            if still_found(row.units(), words, redaction):
                yield found_hit(row, "", lambda label: redaction.label(label)[0])
    finally:  # an open statement would hold its read of the database, whatever stopped it
        found.close()


def still_found(units: list[str], words: list[str], redaction: Redaction) -> bool:
    """Whether each of ``words`` is in some unit once the unit is redacted, the markers
    (``[REDACTED:<kind>]``) taken for spaces: a word the marker holds (``act``, ``hub`` in
    ``[REDACTED:github-token]``) would otherwise be found exactly where the secret held it
    too. A unit is folded (as the index folds case) when a word is first looked for in it,
    and redacted only if it holds a word, once (a word holds no space, so none is found
    across two units, or across a marker): redacting a whole conversation takes seconds.

    >>> from sessionref.redact import Redaction
    >>> hide = Redaction(("TK-[0-9]+",))
    >>> still_found(["see TK-42", "TK-42 again"], ["tk-4"], hide)
    False
    >>> still_found(["see TK-42", "a tk-4 note"], ["tk-4", "see"], hide)
    True
    >>> still_found(["the key TK-7 is custom"], ["cus"], hide)  # not in the marker
    True
    >>> still_found(["the key TK-7"], ["cus"], hide), still_found(["the key TK-7"], ["red"], hide)
    (False, False)
    """
    from sessionref.redact.scan import MARKER  # loaded already: a redaction was given

    folded: dict[int, str] = {}
    shown: dict[int, str] = {}
    for word in map(fold_text, words):
        for n, unit in enumerate(units):
            if n not in folded:
                folded[n] = fold_text(unit)
            if word not in folded[n]:
                continue
            if n not in shown:
                shown[n] = fold_text(MARKER.sub(" ", redaction.redact(unit)[0]))
            if word in shown[n]:
                break
        else:
            return False
    return True
