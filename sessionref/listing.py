"""The listing order of a store, and the candidates a user may reference (docs/api.md §Candidates).

Listing and title reads are settled against the caller's cancel token, as the package races
them against its signal.
"""

from __future__ import annotations

import functools
import itertools
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from sessionref.cancellation import CancelToken, settle
from sessionref.codecs.jsstring import has_surrogates, js_includes, js_lower
from sessionref.codecs.uri import format_session_reference_mention
from sessionref.errors import READ_FAILED, SessionReferenceError, describe
from sessionref.log.records import SessionHeader
from sessionref.log.store import SessionStore
from sessionref.types import Candidate, MentionCandidate, Target

_ASCII_ORDER: Final = (
    "\t\n\x0b\x0c\r\x85 _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
)
"""The printable ASCII characters and the whitespace controls (U+0085 too) in ICU's root
collation order, a letter's capital equal to it but at the third level (``localeCompare`` in
Node 22)."""
_PRIMARY: Final = {
    **{c: n for n, c in enumerate(_ASCII_ORDER, 1)},
    **{c.upper(): n for n, c in enumerate(_ASCII_ORDER, 1) if c.isalpha()},
}
_OTHER: Final = len(_ASCII_ORDER) + 1
_MARK_ORDER: Final = (
    "\u0332 \u0313\u0343 \u0314 \u0301\u0341 \u0300\u0340 \u0306 \u0302 \u030c \u030a "
    "\u0342 \u0308 \u0344 \u030b \u0303 \u0307 \u0338 \u0327 \u0328 \u0304 \u030d\u030e"
    "\u0312\u0315\u031a\u033d\u033e\u033f\u0346\u034a\u034b\u034c\u0350\u0351\u0352\u0357"
    "\u035b\u035d\u035e \u0316\u0317\u0318\u0319\u031c\u031d\u031e\u031f\u0320\u0329"
    "\u032a\u032b\u032c\u032f\u0333\u033a\u033b\u033c\u0347\u0348\u0349\u034d\u034e\u0353"
    "\u0354\u0355\u0356\u0359\u035a\u035c\u035f\u0362 \u0336\u0337 \u0335 \u0305 \u0309 "
    "\u030f \u0310 \u0311 \u031b \u0321 \u0322 \u0323 \u0324 \u0325 \u0326 \u032d \u032e "
    "\u0330 \u0331 \u0334 \u0339 \u0345 \u0358 \u0360 \u0361"
)
"""The combining diacritics U+0300–U+0362 (U+034F aside, which is ignored) in ICU's root
order at the second level; those grouped together weigh the same."""
_SECONDARY: Final = {mark: n for n, group in enumerate(_MARK_ORDER.split(), 1) for mark in group}
_IGNORABLE_CONTROLS: Final = frozenset(
    chr(c) for c in range(0xA0) if unicodedata.category(chr(c)) == "Cc"
) - set(_ASCII_ORDER)


def _ignorable(char: str) -> bool:
    """Whether ICU's root collation ignores ``char`` altogether: controls other than
    whitespace, format characters (U+FEFF, U+200B, U+00AD, tags), the grapheme joiner,
    variation selectors."""
    return (
        char in _IGNORABLE_CONTROLS
        or unicodedata.category(char) == "Cf"
        or char == "\u034f"
        or "\ufe00" <= char <= "\ufe0f"
        or "\U000e0100" <= char <= "\U000e01ef"
    )


def collation_key(text: str) -> tuple[list[int], list[int], list[int]]:
    """A key that orders ids as JavaScript's ``a.localeCompare(b)`` (ICU root collation, three
    levels) orders them: exactly for ids of ASCII, ignorable characters and letters with
    combining accents (compared after their base letter); any other character sorts after
    the ASCII letters by code point, where ICU has its own order (docs/differences.md).

    >>> sorted(["b", "B", "\ufeff", "..", "A", "a_b", "a-b", "é", "e", "E"], key=collation_key)
    ['\ufeff', '..', 'A', 'a_b', 'a-b', 'b', 'B', 'e', 'E', 'é']
    """
    primaries: list[int] = []
    secondaries: list[int] = []
    tertiaries: list[int] = []
    for char in unicodedata.normalize("NFD", text):
        if _ignorable(char):
            continue
        if char in _SECONDARY or unicodedata.combining(char):
            secondaries.append(_SECONDARY.get(char, len(_SECONDARY) + ord(char)))
            tertiaries.append(0)
            continue
        primaries.append(_PRIMARY.get(char, _OTHER + ord(char)))
        secondaries.append(0)
        tertiaries.append(int("A" <= char <= "Z"))
    return primaries, secondaries, tertiaries


def ordered_headers(headers: Iterable[SessionHeader]) -> list[SessionHeader]:
    """The listing order: newest ``createdAt`` first; equal times by :func:`collation_key`,
    as the package sorts them with ``localeCompare``; ids it finds equal keep the store's
    order (the harness's sort is stable over its listing).

    >>> [h.id for h in ordered_headers([SessionHeader("b", 1), SessionHeader("a", 1),
    ...                                 SessionHeader("c", 2)])]
    ['c', 'a', 'b']
    """
    ordered: list[SessionHeader] = []
    newest_first = sorted(headers, key=lambda h: h.created_at, reverse=True)  # stable
    for _, tied in itertools.groupby(newest_first, key=lambda h: h.created_at):
        group = list(tied)
        ordered += sorted(group, key=lambda h: collation_key(h.id)) if len(group) > 1 else group
    return ordered


def listing_order(store: SessionStore) -> list[str]:
    """Every stored session id in listing order (:func:`ordered_headers`), each once.

    >>> from sessionref.log.store import MemoryStore
    >>> def log(session_id, created_at, **cwd):
    ...     return {"header": {"version": 0, "id": session_id, "createdAt": created_at,
    ...                        "delegationDepth": 0, **cwd}}
    >>> listing_order(MemoryStore([log("b", 1, cwd="/w"), log("a", 1), log("c", 2, cwd="/x")]))
    ['c', 'a', 'b']
    """
    return list(dict.fromkeys(header.id for header in ordered_headers(store.headers())))


def _rank(header: SessionHeader, target: Target) -> int:
    """0 for the target's own cwd, 1 for no cwd, 2 for another one."""
    if header.cwd is None:
        return 1
    return 0 if header.cwd == target.cwd else 2


def _contains(needle: str) -> Callable[[object], bool]:
    """Whether a text contains ``needle`` (lower-cased) once lower-cased, as JavaScript finds
    it; a text that is not a string never does (the package throws on one). A text seen
    before (cwds repeat) is lower-cased once.

    >>> contains = _contains("work")
    >>> contains("/Work"), contains(7), contains("home")
    (True, False, False)
    """
    lowered: dict[str, str] = {}
    plain = not has_surrogates(needle)  # then a plain substring test of the lowered text

    def contains(text: object) -> bool:
        if not isinstance(text, str):
            return False
        low = lowered.get(text)
        if low is None:
            low = lowered[text] = js_lower(text)
        return needle in low if plain else js_includes(low, needle)

    return contains


def _listed(store: SessionStore) -> list[SessionHeader]:
    """Every stored session's header in listing order; a store failure is READ_FAILED."""
    try:
        return ordered_headers(store.headers())
    except Exception as exc:
        message = f"failed to list sessions: {describe(exc)}"
        raise SessionReferenceError(message, READ_FAILED) from exc


def _label(store: SessionStore, header: SessionHeader) -> str:
    """The latest title (``""`` included), or the id when there is none or it cannot be read."""
    try:
        title = store.title(header.id)
    except Exception:
        title = None
    return header.id if title is None else title


def _labels(store: SessionStore, headers: Sequence[SessionHeader]) -> list[str]:
    return [_label(store, header) for header in headers]


def candidates(
    store: SessionStore,
    target: Target,
    query: str,
    limit: int,
    cancel: CancelToken | None = None,
) -> list[tuple[SessionHeader, str]]:
    """Every session but the target with its label: same cwd first, then none, then others,
    each group in listing order; a query keeps those whose id, cwd or label contains it
    (JavaScript lower-casing); the first ``limit``. Only the titles needed are read.

    >>> from sessionref.log.store import MemoryStore
    >>> store = MemoryStore([
    ...     {"header": {"version": 0, "id": i, "createdAt": 1, "cwd": c, "delegationDepth": 0}}
    ...     for i, c in (("a", "/x"), ("b", "/w"), ("t", "/w"))])
    >>> [header.id for header, _ in candidates(store, Target("t", "/w"), "", 5)]
    ['b', 'a']
    """
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, not {type(query).__name__}")
    needle = js_lower(query)
    [headers] = settle([functools.partial(_listed, store)], cancel)
    ranked = sorted(
        (header for header in headers if header.id != target.id),
        key=lambda header: _rank(header, target),
    )
    inspected = ranked if needle else ranked[:limit]
    [labels] = settle([functools.partial(_labels, store, inspected)], cancel)
    labelled = list(zip(inspected, labels, strict=True))
    if needle:
        contains = _contains(needle)
        labelled = [
            (header, label)
            for header, label in labelled
            if contains(header.id) or contains(header.cwd) or contains(label)
        ]
    return labelled[:limit]


def candidate(header: SessionHeader, label: str) -> Candidate:
    """The candidate of a listed session."""
    return Candidate(
        session_id=header.id, label=label, cwd=header.cwd, created_at=header.created_at
    )


def mention_candidate(header: SessionHeader, label: str) -> MentionCandidate:
    """The candidate of a listed session with the mention a user would type."""
    mention = format_session_reference_mention(header.id, label)
    return MentionCandidate(
        session_id=header.id,
        label=label,
        cwd=header.cwd,
        created_at=header.created_at,
        mention=mention,
    )
