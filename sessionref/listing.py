"""The listing order of a store, and the candidates a user may reference (docs/api.md §Candidates).

Listing and title reads are settled against the caller's cancel token, as the package races
them against its signal.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from sessionref.cancellation import CancelToken, settle
from sessionref.codecs.collation import ties_collated
from sessionref.codecs.jsstring import has_surrogates, js_includes, js_lower
from sessionref.codecs.uri import format_session_reference_mention
from sessionref.errors import MAX_SAFE_INTEGER, READ_FAILED, SessionReferenceError, describe, string
from sessionref.log.multi import MultiStore
from sessionref.log.protocol import CandidateSource, Store
from sessionref.log.records import SessionHeader, title_label
from sessionref.types import Candidate, MentionCandidate, Target

if TYPE_CHECKING:  # a listing imports redaction only when it is given one
    from sessionref.redact import Redaction

T = TypeVar("T")


def ordered_headers(headers: Iterable[SessionHeader]) -> list[SessionHeader]:
    """The listing order: newest ``createdAt`` first; equal times by their id's
    :func:`~sessionref.codecs.collation.collation_key`, as the package sorts them with
    ``localeCompare``; ids it finds equal keep the store's order (the harness's sort is
    stable over its listing).

    >>> [h.id for h in ordered_headers([SessionHeader("b", 1), SessionHeader("a", 1),
    ...                                 SessionHeader("c", 2)])]
    ['c', 'a', 'b']
    """
    return _ordered(headers, _itself)


def _itself(header: SessionHeader) -> SessionHeader:
    return header


def _ordered(items: Iterable[T], header_of: Callable[[T], SessionHeader]) -> list[T]:
    """``items`` in the listing order of their headers (:func:`ordered_headers`)."""
    newest_first = sorted(items, key=lambda item: header_of(item).created_at, reverse=True)
    return ties_collated(
        newest_first, lambda item: header_of(item).created_at, lambda item: header_of(item).id
    )


def listing_order(store: Store) -> list[str]:
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


Searched = tuple[str, str, str]
"""What a query is looked for in: a candidate's id, cwd and label lower-cased as JavaScript
does (``""`` for a cwd or label that is not a string: the package never finds a query in one,
it throws on it)."""


def _lowered(text: object) -> str:
    return js_lower(text) if isinstance(text, str) else ""


def searched(header: SessionHeader, label: object) -> Searched:
    """The texts of a candidate a query is looked for in (:data:`Searched`).

    >>> searched(SessionHeader("S-1", 0, cwd="/Work"), 7)
    ('s-1', '/work', '')
    """
    return (js_lower(header.id), _lowered(header.cwd), _lowered(label))


def matching(needle: str) -> Callable[[Searched], bool]:
    """Whether a candidate's :func:`searched` texts contain ``needle`` (a query lower-cased),
    as JavaScript's ``includes`` finds it (a lone surrogate may match half a character).

    >>> keep = matching("work")
    >>> keep(("s", "/work", "")), keep(("s", "", "home")), matching("\\ud83d")(("🙂", "", ""))
    (True, False, True)
    """
    if has_surrogates(needle):
        return lambda texts: any(js_includes(text, needle) for text in texts)
    return lambda texts: needle in texts[0] or needle in texts[1] or needle in texts[2]


class SearchedTexts:
    """The :func:`searched` texts of candidates, in order, also joined into one string (each
    text and each candidate's end marked by a NUL), so that a query is looked for in all of
    them by one scan: a query holds no NUL, so it never spans two texts (one that does, or
    holds a lone surrogate, is tested candidate by candidate).

    >>> texts = SearchedTexts([("a", "/w", "fix ci"), ("b", "/w", "fix docs"), ("c", "", "")])
    >>> list(texts.matching("fix")), list(texts.matching("w\\x00fix d")), list(texts.matching(""))
    ([0, 1], [], [0, 1, 2])
    """

    SEPARATOR = "\x00"

    def __init__(self, texts: Iterable[Searched]) -> None:
        self.texts = list(texts)
        blocks = [self.SEPARATOR.join(texts) + self.SEPARATOR for texts in self.texts]
        self.joined = "".join(blocks)
        self.starts = [0, *itertools.accumulate(len(block) for block in blocks)]
        """Where each candidate's texts start in :attr:`joined` (and where the last ends)."""

    def matching(self, needle: str) -> Iterator[int]:
        """The positions of the candidates whose texts contain ``needle`` (a query
        lower-cased, see :func:`matching`), in order."""
        if self.SEPARATOR in needle or has_surrogates(needle):
            keep = matching(needle)
            yield from (n for n, texts in enumerate(self.texts) if keep(texts))
            return
        if not needle:
            yield from range(len(self.texts))
            return
        found = self.joined.find(needle)
        while found >= 0:
            position = bisect.bisect_right(self.starts, found) - 1
            yield position
            found = self.joined.find(needle, self.starts[position + 1])


def _ranked(items: Iterable[T], target: Target, header_of: Callable[[T], SessionHeader]) -> list[T]:
    """``items`` in the order candidates are listed: the target's cwd first, then no cwd,
    then other cwds, each group in listing order (:func:`ordered_headers`; items already in
    that order keep it).

    >>> headers = [SessionHeader("a", 2, cwd="/x"), SessionHeader("b", 1, cwd="/w"),
    ...            SessionHeader("c", 3)]
    >>> [h.id for h in _ranked(headers, Target("t", "/w"), _itself)]
    ['b', 'c', 'a']
    """
    return sorted(_ordered(items, header_of), key=lambda item: _rank(header_of(item), target))


def _listing(read: Callable[[], T]) -> T:
    """What ``read`` gives; a store failure is READ_FAILED."""
    try:
        return read()
    except Exception as exc:
        message = f"failed to list sessions: {describe(exc)}"
        raise SessionReferenceError(message, READ_FAILED) from exc


def _listed(store: Store) -> list[SessionHeader]:
    """Every stored session's header in listing order; a store failure is READ_FAILED."""
    return _listing(lambda: ordered_headers(store.headers()))


def _label(store: Store, header: SessionHeader) -> str:
    """The latest title (``""`` included), or the id when there is none or it cannot be read."""
    try:
        title = store.title(header.id)
    except Exception:
        title = None
    return title_label(header.id, title)


def _labels(store: Store, headers: Sequence[SessionHeader]) -> list[str]:
    return [_label(store, header) for header in headers]


def candidates(
    store: Store,
    target: Target,
    query: str,
    limit: int,
    cancel: CancelToken | None = None,
) -> list[tuple[SessionHeader, str]]:
    """Every session but the target with its label: same cwd first, then none, then others,
    each group in listing order; a query keeps those whose id, cwd or label contains it
    (JavaScript lower-casing; a query that is not a string is INVALID_CONFIG, as the index
    says it); the first ``limit``. Only the titles needed are read; a
    :class:`CandidateSource` finds them itself.

    >>> from sessionref.log.store import MemoryStore
    >>> store = MemoryStore([
    ...     {"header": {"version": 0, "id": i, "createdAt": 1, "cwd": c, "delegationDepth": 0}}
    ...     for i, c in (("a", "/x"), ("b", "/w"), ("t", "/w"))])
    >>> [header.id for header, _ in candidates(store, Target("t", "/w"), "", 5)]
    ['b', 'a']
    """
    string(query, "query")
    if isinstance(store, MultiStore):
        merged = [
            pair
            for part in store.stores.values()
            for pair in candidates(part, target, query, limit, cancel)
        ]
        return _ranked(merged, target, lambda pair: pair[0])[:limit]
    needle = js_lower(query)
    if isinstance(store, CandidateSource):
        find = functools.partial(store.candidates, target, needle, limit)
        [found] = settle([functools.partial(_listing, find)], cancel)
        if found is not None:
            return found
    [headers] = settle([functools.partial(_listed, store)], cancel)
    ranked = sorted(
        (header for header in headers if header.id != target.id),
        key=lambda header: _rank(header, target),
    )
    inspected = ranked if needle else ranked[:limit]
    [labels] = settle([functools.partial(_labels, store, inspected)], cancel)
    return holding(list(zip(inspected, labels, strict=True)), needle)[:limit]


Labelled = list[tuple[SessionHeader, Any]]
"""Listed sessions, each with its label (a title may be any JSON value)."""


def holding(labelled: Labelled, needle: str) -> Labelled:
    """The labelled sessions whose id, cwd or label holds ``needle`` (a query lower-cased, as
    :func:`matching` looks for it); all of them for an empty one.

    >>> found = [(SessionHeader("a", 0), "Fix CI"), (SessionHeader("b", 0), "docs")]
    >>> [header.id for header, _ in holding(found, "ci")], len(holding(found, ""))
    (['a'], 2)
    """
    if not needle:
        return labelled
    keep = matching(needle)
    return [(header, label) for header, label in labelled if keep(searched(header, label))]


def shown_candidates(
    store: Store,
    target: Target,
    query: str,
    limit: int,
    redaction: Redaction | None,
    cancel: CancelToken | None = None,
) -> list[tuple[SessionHeader, Any]]:
    """:func:`candidates` as a listing shows them: with ``redaction`` on, each label redacted
    (docs/redaction.md §Labels), and a query looked for in the redacted labels (with the ids
    and cwds): a query that found a session by its title's secret would confirm the secret.

    >>> from sessionref.log.store import MemoryStore
    >>> from sessionref.redact import Redaction
    >>> header = {"version": 0, "createdAt": 1, "delegationDepth": 0}
    >>> log = {"type": "session/title", "seq": 0, "time": 0,
    ...        "data": {"title": "fix TK-7", "messageSeqs": [], "source": {"kind": "user"}}}
    >>> store = MemoryStore([{"header": {**header, "id": "s"}, "events": [log]}])
    >>> hide = Redaction(("TK-[0-9]+",))
    >>> shown_candidates(store, Target("t"), "", 5, hide)[0][1]
    'fix [REDACTED:custom]'
    >>> shown_candidates(store, Target("t"), "tk-7", 5, hide)
    []
    >>> [label for _, label in candidates(store, Target("t"), "tk-7", 5)]  # as stored
    ['fix TK-7']
    """
    if redaction is None:
        return candidates(store, target, query, limit, cancel)
    string(query, "query")
    everyone = candidates(store, target, "", limit if not query else MAX_SAFE_INTEGER, cancel)
    shown = [(header, redaction.label(label)[0]) for header, label in everyone]
    return holding(shown, js_lower(query))[:limit]


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
