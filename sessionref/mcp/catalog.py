"""What an MCP client can reach: the sessions of the roots, from indexes kept warm.

A :class:`Catalog` holds each root's :class:`~sessionref.index.SessionIndex` open for the
server's life, whatever the root's harness, and the listing of every root as MCP resources.
The roots are looked at at most once per request, and not again while the last look is under
:data:`FRESH_SECONDS` old (nor under :data:`LOOK_SPACING` times what it took); a look that
finds sessions added, changed or removed rebuilds the listing and says so (the server then
sends ``notifications/resources/list_changed``). A session is read only when the listing holds
it (after one more look for one it does not), or passed over a log named for it (its store then
says why, opening no file): anything else is an error before any file is opened.
"""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Final, NamedTuple
from urllib.parse import quote, unquote

from sessionref import listing
from sessionref.cancellation import CancelToken
from sessionref.cli.candidates import created_minute
from sessionref.cli.common import OpenStore, printable, quoted
from sessionref.cli.failures import read_failure
from sessionref.cli.snapshot import context_for
from sessionref.codecs.jsstring import has_surrogates, js_lower
from sessionref.codecs.uri import (
    SCHEME,
    Reference,
    decode_session_reference_uri,
    encode_session_reference_uri,
    label_text,
)
from sessionref.errors import (
    INVALID_REFERENCE,
    MAX_SAFE_INTEGER,
    SessionReferenceError,
    read_failed,
)
from sessionref.index import SessionIndex, is_indexed_store
from sessionref.log.discovery import StoreProblem
from sessionref.log.harness_store import HarnessStore
from sessionref.log.multi import MultiStore
from sessionref.log.protocol import Store, harness_of
from sessionref.log.records import SessionHeader
from sessionref.log.store import SessionNotFound
from sessionref.redact import Redaction
from sessionref.types import Target

FRESH_SECONDS: Final = 0.5
"""How long one look at the store answers requests before the next request looks again."""
LOOK_SPACING: Final = 4
"""A look is also not taken again before this many times what the last one took (a look
stats every log: 0.1 s over 10,000 sessions on an idle machine, many times that on a busy
one), so looking takes at most a fifth of the server's time."""
MIME_TYPE: Final = "text/plain"
TEMPLATE_PREFIX: Final = "sessionref:session/"
TEMPLATE_ARGUMENT: Final = "id"
"""The resource template's one argument: the session's id."""
TEMPLATE: Final = TEMPLATE_PREFIX + "{" + TEMPLATE_ARGUMENT + "}"
"""The resource template: a session by its id, which completion finds by title or id."""
BAD_ESCAPE: Final = re.compile("%(?![0-9A-Fa-f]{2})")
"""A ``%`` that starts no percent-escape (RFC 3986: ``%`` and two hex digits)."""
HARNESS: Final = "dsh"
"""The harness of the sessions a DSH store serves."""


def describe(header: SessionHeader, harness: str = HARNESS) -> str:
    """A resource's description: the session's cwd, harness and creation time (UTC).

    >>> describe(SessionHeader("s", 1_764_513_900_000, cwd="/home/dev/api"))
    '/home/dev/api · dsh · 2025-11-30 14:45 UTC'
    >>> describe(SessionHeader("s", 0))
    'no cwd · dsh · 1970-01-01 00:00 UTC'

    A log may say a time past the year 9999 (:func:`created_minute`):

    >>> describe(SessionHeader("s", 2**53 - 1))
    'no cwd · dsh · 287396-10-12 08:59 UTC'
    """
    cwd = "no cwd" if header.cwd is None or header.cwd == "" else label_text(header.cwd)
    return f"{printable(cwd)} · {harness} · {created_minute(header.created_at)} UTC"


def resource(header: SessionHeader, label: Any, harness: str = HARNESS) -> dict[str, Any]:
    """The MCP resource of a listed session of ``harness`` (wire form): its ``dsh-session:``
    URI, its label as candidates give it (a title that is not a string as its JSON text) as
    its ``title`` (what a picker shows) and its ``name`` (what a client older than titles
    shows), its description.

    A picker shows the name on one line: a line break, a control or a bidi control in a
    title is a space there, as in the ``candidates`` table (:func:`printable`).

    >>> resource(SessionHeader("s-beta", 0, cwd="/w"), "Fix CI")["uri"]
    'dsh-session:InMtYmV0YSI'
    >>> resource(SessionHeader("s", 0), "Fix\\n\\u202eCI")["name"]
    'Fix  CI'
    """
    shown = printable(label_text(label))
    return {
        "uri": encode_session_reference_uri(header.id),
        "name": shown,
        "title": shown,
        "description": describe(header, harness),
        "mimeType": MIME_TYPE,
    }


def template_uri(session_id: str) -> str:
    """The URI the resource template gives for a session (RFC 6570 simple expansion).

    >>> template_uri("sess/α b")
    'sessionref:session/sess%2F%CE%B1%20b'
    """
    return TEMPLATE_PREFIX + quote(session_id, safe="")


def session_of_uri(uri: str) -> str:
    """The session a resource URI names: a ``dsh-session:`` URI or one of the template;
    anything else is ``SESSION_REFERENCE_INVALID_REFERENCE``.

    >>> session_of_uri("dsh-session:InMtYmV0YSI"), session_of_uri("sessionref:session/a%2Fb")
    ('s-beta', 'a/b')
    >>> session_of_uri("file:///etc/passwd")
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: not a session URI: "file:///etc/passwd"

    A malformed percent-escape (not two hex digits, or no UTF-8) names no session:

    >>> for uri in ("sessionref:session/%ff", "sessionref:session/%zz", "sessionref:session/a%"):
    ...     try:
    ...         session_of_uri(uri)
    ...     except SessionReferenceError as exc:
    ...         print(exc)
    not a session URI: "sessionref:session/%ff"
    not a session URI: "sessionref:session/%zz"
    not a session URI: "sessionref:session/a%"
    """
    if uri.startswith(SCHEME):
        return decode_session_reference_uri(uri)
    quoted_id = uri[len(TEMPLATE_PREFIX) :]
    if uri.startswith(TEMPLATE_PREFIX) and quoted_id and not BAD_ESCAPE.search(quoted_id):
        try:
            return unquote(quoted_id, errors="strict")
        except UnicodeDecodeError:
            pass
    raise SessionReferenceError(f"not a session URI: {quoted(uri)}", INVALID_REFERENCE)


def passed_over(
    named_by: Callable[[Path], str | None], problems: list[StoreProblem], session_id: str
) -> bool:
    """Whether one of ``problems`` (what a store's listing passed over) is a log whose name
    says it holds ``session_id`` (``named_by``: the store's reading of a log's name). Reading
    that session from the store then fails saying why, naming the log, as the command line
    prints it, and opens no file (:meth:`~sessionref.log.harness_store.HarnessStore.paths_of`);
    or, for a thread Codex's listing hides (a problem saying so), reads it by its id.

    >>> from sessionref.claude_code.store import ClaudeCodeStore
    >>> problems = [StoreProblem("/c/projects/-a/s1.jsonl", 'session "s1" is also in …')]
    >>> [passed_over(ClaudeCodeStore.named_by, problems, i) for i in ("s1", "../-a/s1", "s2")]
    [True, False, False]
    """
    return any(named_by(Path(problem.path)) == session_id for problem in problems)


def first_of_each(items: Iterable[str]) -> Iterator[str]:
    """``items`` without those seen before, in order (lazily).

    >>> list(first_of_each(["s-a", "s-b", "s-a", "s-c", "s-b"]))
    ['s-a', 's-b', 's-c']
    """
    seen: set[str] = set()
    for item in items:
        if item not in seen:
            seen.add(item)
            yield item


def index_at(path: str | os.PathLike[str] | None) -> Callable[[Store], Store]:
    """The lister of a served :class:`OpenStore` (opened with ``live=True``): each root's store,
    whatever its harness, through its index at ``path`` (see
    :func:`~sessionref.index.schema.default_index_path`), made once; any other store as it is."""
    return lambda store: SessionIndex(store, path, once=True) if is_indexed_store(store) else store


class Listing(NamedTuple):
    """The sessions of one look at the store: resources in candidates order (their names
    redacted with redaction on), their ids in that order and as a set, and the texts
    completion looks for a query in, in that order (the titles as shown, redacted with
    redaction on, as a query of candidates finds them)."""

    resources: list[dict[str, Any]]
    order: list[str]
    ids: frozenset[str]
    texts: listing.SearchedTexts


class Catalog:
    """The sessions of the stores ``opened`` serves (opened live, each through its index:
    :func:`index_at`), listed and read on request.

    ``cwd`` is the project whose sessions come first (candidates order); ``max_bytes`` the
    budget of each session's snapshot; ``redaction`` redacts every snapshot's secrets
    (docs/redaction.md). Every method may be called from any thread.
    """

    def __init__(
        self,
        opened: OpenStore,
        *,
        cwd: str,
        max_bytes: int,
        redaction: Redaction | None = None,
        fresh_for: float = FRESH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.opened = opened
        parts = (
            opened.listed.stores if isinstance(opened.listed, MultiStore) else {"": opened.listed}
        )
        self.indexes = [part for part in parts.values() if isinstance(part, SessionIndex)]
        """The index of each root, in the order of the roots."""
        self._unindexed = len(self.indexes) < len(parts)
        self.target = Target(f"mcp-{uuid.uuid4()}", cwd)
        self.max_bytes = max_bytes
        self.redaction = redaction
        self._fresh_for = fresh_for
        self._clock = clock
        self._lock = threading.Lock()
        self._looked_at: float | None = None
        self._counts = [-1] * len(self.indexes)
        self._changed = False
        self._look_cost = 0.0
        self._listing: Listing | None = None

    def refresh(self) -> None:
        """Look at the store now (:meth:`changed` says whether that found changes)."""
        with self._lock:
            self._refresh()

    def fresh(self) -> None:
        """:meth:`refresh` unless the last look is under ``fresh_for`` seconds old, or under
        :data:`LOOK_SPACING` times what it took: what one request does before it answers."""
        with self._lock:
            looked_at, spacing = self._looked_at, max(self._fresh_for, self._look_cost)
            if looked_at is None or self._clock() - looked_at >= spacing:
                self._refresh()

    def changed(self) -> bool:
        """Whether a look found sessions added, changed or removed since this was last asked
        (the first look only lists)."""
        with self._lock:
            changed, self._changed = self._changed, False
            return changed

    def _refresh(self) -> None:
        start = self._clock()
        reports = [index.refresh() for index in self.indexes]
        self._looked_at = self._clock()
        self._look_cost = LOOK_SPACING * (self._looked_at - start)
        # another process using an index (sessionref search…) may have read the new logs
        changed = any(
            report.read or report.removed or report.sessions != count
            for report, count in zip(reports, self._counts, strict=True)
        )
        self._counts = [report.sessions for report in reports]
        if self._listing is None or changed or self._unindexed:
            listed = self._list()
            changed |= self._listing is not None and listed.resources != self._listing.resources
            self._changed |= self._listing is not None and changed
            self._listing = listed

    def _list(self) -> Listing:
        store = self.opened.listed
        shown = listing.shown_candidates(store, self.target, "", MAX_SAFE_INTEGER, self.redaction)
        resources = [
            resource(header, label, harness_of(store, header.id)) for header, label in shown
        ]
        return Listing(
            resources,
            [header.id for header, _ in shown],
            frozenset(header.id for header, _ in shown),
            listing.SearchedTexts(listing.searched(header, label) for header, label in shown),
        )

    def listed(self) -> Listing:
        """The listing of the last look (the first look takes one)."""
        with self._lock:
            if self._listing is None:
                self._refresh()
            assert self._listing is not None
            return self._listing

    def resources(self, start: int = 0, count: int = MAX_SAFE_INTEGER) -> list[dict[str, Any]]:
        """The sessions as MCP resources (wire form), this project's first: ``count`` of
        them from the ``start``-th."""
        return self.listed().resources[start : start + count]

    def complete(self, typed: str, limit: int) -> tuple[list[str], bool]:
        """The ids of up to ``limit`` sessions whose id, cwd or title contains ``typed``
        (ignoring case, as candidates do), in candidates order, and whether there are more:
        found in the listing of the last look, which candidates with the query would give.
        An id with a lone surrogate is left out: no text the client sends back holds it (its
        listed resource, whose URI is ASCII, reads the session); an id listed twice (in two
        roots) is given once."""
        current = self.listed()
        ids = (current.order[n] for n in current.texts.matching(js_lower(typed)))
        offered = first_of_each(itertools.filterfalse(has_surrogates, ids))
        found = list(itertools.islice(offered, limit + 1))
        return found[:limit], len(found) > limit

    def check_reachable(self, session_id: str) -> None:
        """Raise the command line's not-found error unless the listing holds the session
        (looking at the store again first when it does not: it may be new) or passed over a
        log of it (:meth:`passes_over`: the read then says why, as the command line does, or
        reads a thread Codex's listing hides, which is a problem of the listing: a harness
        store reads by its id no session its listing neither holds nor passes over). Nothing
        else is asked of the store: a session not found opens no file."""
        if session_id not in self.listed().ids:
            self.refresh()
        if not (session_id in self.listed().ids or self.passes_over(session_id)):
            raise read_failure(read_failed(SessionNotFound(session_id)), session_id, self.opened)

    def passes_over(self, session_id: str) -> bool:
        """Whether the last listing of a root of another harness's files passed over a log
        whose name says it holds ``session_id`` (:func:`passed_over`), or such a root holds
        an empty file of it, which it does not list (:meth:`HarnessStore.empty_file`)."""
        store, listed = self.opened.store, self.opened.listed
        stores = store.stores if isinstance(store, MultiStore) else {"": store}
        shown = listed.stores if isinstance(listed, MultiStore) else {"": listed}
        harnesses = {name: part for name, part in stores.items() if isinstance(part, HarnessStore)}
        return any(
            passed_over(harnesses[name].named_by, part.problems(), session_id)
            or harnesses[name].empty_file(session_id) is not None
            for name, part in shown.items()
            if name in harnesses
        )

    def prompt(
        self,
        session_ids: list[str],
        cancel: CancelToken | None,
        max_bytes: int | None = None,
        budget: str = "--max-bytes",
    ) -> str:
        """The prompt of the context message ``sessionref snapshot --label-from title``
        gives for these sessions (checked reachable first, then read in order), each cut to
        ``max_bytes`` (default: the catalog's), a budget too small for one named ``budget``
        (:func:`~sessionref.cli.snapshot.context_for`). The logs themselves are read, so the
        store is looked at only for a session the listing does not hold."""
        for session_id in session_ids:
            self.check_reachable(session_id)
        context = context_for(
            self.opened,
            [Reference(session_id, session_id) for session_id in session_ids],
            max_bytes=self.max_bytes if max_bytes is None else max_bytes,
            label_from_title=True,
            cancel=cancel,
            redaction=self.redaction,
            budget=budget,
        )
        return "" if context is None else context.prompt
