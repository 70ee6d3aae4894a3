"""Policy: which references a prompt may make, reading them, and the context they yield."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, Literal, Protocol, TypeVar

import msgspec

from sessionref.codecs.uri import (
    Reference,
    format_session_reference_mention,
    parse_session_reference_text,
)
from sessionref.errors import (
    CANCELLED,
    INVALID_CONFIG,
    INVALID_REFERENCE,
    READ_FAILED,
    SELF_REFERENCE,
    TOO_MANY,
    SessionLogError,
    SessionReferenceError,
)
from sessionref.log.records import SessionHeader, latest_title
from sessionref.log.store import SessionStore
from sessionref.snapshot import SourceSnapshot, context_message, snapshot_source
from sessionref.types import (
    Candidate,
    ContextMessage,
    JsonObject,
    MentionCandidate,
    PreparedContent,
    Target,
)

T = TypeVar("T")
Placement = Literal["before", "after"]
TargetLike = Target | str | Mapping[str, Any]

MAX_REFERENCES_LIMIT: Final = 3
DEFAULT_CANDIDATE_LIMIT: Final = 50
DEFAULT_MAX_REFERENCE_BYTES: Final = 65536

FittedSource = SourceSnapshot | SessionReferenceError
"""A source read and fitted to its budget, or the BUDGET_EXCEEDED error it gave."""


class CancelToken(Protocol):
    """Anything with ``is_set()``; a :class:`threading.Event` works."""

    def is_set(self) -> bool:
        """Whether the caller asked to stop."""
        ...


def is_count(value: object, minimum: int = 1) -> bool:
    """Whether ``value`` is an integer (not a bool) of at least ``minimum``.

    >>> is_count(2), is_count(0), is_count(True), is_count(2.0)
    (True, False, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def check_config(
    *,
    max_references: object = MAX_REFERENCES_LIMIT,
    candidate_limit: object = DEFAULT_CANDIDATE_LIMIT,
    max_reference_bytes: object = DEFAULT_MAX_REFERENCE_BYTES,
) -> None:
    """Raise ``SESSION_REFERENCE_INVALID_CONFIG`` unless these are settings a resolver takes.

    >>> check_config(max_reference_bytes=0)
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: maxReferenceBytes must be a positive integer
    """
    if not is_count(max_references) or is_count(max_references, MAX_REFERENCES_LIMIT + 1):
        raise SessionReferenceError(
            f"maxReferences must be an integer from 1 to {MAX_REFERENCES_LIMIT}", INVALID_CONFIG
        )
    if not is_count(candidate_limit, 1):
        raise SessionReferenceError("candidateLimit must be a positive integer", INVALID_CONFIG)
    if not is_count(max_reference_bytes, 1):
        raise SessionReferenceError("maxReferenceBytes must be a positive integer", INVALID_CONFIG)


def as_target(target: TargetLike) -> Target:
    """A :class:`Target` from a target, an id, or ``{"id", "cwd"?}``.

    >>> as_target("s"), as_target({"id": "s", "cwd": "/w"})
    (Target(id='s', cwd=None), Target(id='s', cwd='/w'))
    """
    if isinstance(target, Target):
        return target
    if isinstance(target, str):
        return Target(target)
    try:
        return msgspec.convert(target, Target)
    except msgspec.ValidationError as exc:
        raise SessionReferenceError(f"invalid target: {exc}", INVALID_REFERENCE) from None


def as_reference(value: object) -> Reference:
    """A reference from ``{"sessionId", "label"?}`` (label defaults to the id).

    >>> as_reference({"sessionId": "s"})
    Reference(session_id='s', label='s')
    """
    if isinstance(value, Reference):
        return value
    if isinstance(value, Mapping):
        session_id, label = value.get("sessionId"), value.get("label", value.get("sessionId"))
        if isinstance(session_id, str) and isinstance(label, str):
            return Reference(session_id, label)
    raise SessionReferenceError(
        "a reference must be an object with a string sessionId and an optional string label",
        INVALID_REFERENCE,
    )


def distinct_references(
    target: Target, references: Iterable[object], max_references: int
) -> list[Reference]:
    """Check references in order; drop later duplicates (the first label wins).

    >>> refs = [{"sessionId": "a", "label": "A"}, {"sessionId": "a"}, {"sessionId": "b"}]
    >>> [r.label for r in distinct_references(Target("t"), refs, 3)]
    ['A', 'b']
    """
    kept: dict[str, Reference] = {}
    for value in references:
        reference = as_reference(value)
        if reference.session_id == target.id:
            raise SessionReferenceError("a session cannot reference itself", SELF_REFERENCE)
        kept.setdefault(reference.session_id, reference)
    if len(kept) > max_references:
        raise SessionReferenceError(
            f"at most {max_references} sessions may be referenced at once", TOO_MANY
        )
    return list(kept.values())


def _check_cancel(cancel: CancelToken | None) -> None:
    if cancel is not None and cancel.is_set():
        raise SessionReferenceError("session reference preparation was cancelled", CANCELLED)


def _read_failed(cause: Exception) -> SessionReferenceError:
    return SessionReferenceError(f"failed to read referenced session: {cause}", READ_FAILED)


def listing_order(headers: Iterable[SessionHeader]) -> list[SessionHeader]:
    """Newest ``createdAt`` first; equal times by case-folded id, then id.

    >>> [h.id for h in listing_order([SessionHeader("b", 1), SessionHeader("a", 1),
    ...                               SessionHeader("c", 2)])]
    ['c', 'a', 'b']
    """
    ordered = sorted(headers, key=lambda h: (h.id.casefold(), h.id))
    ordered.sort(key=lambda h: h.created_at, reverse=True)
    return ordered


def _rank(header: SessionHeader, target: Target) -> int:
    if header.cwd is None:
        return 1
    return 0 if header.cwd == target.cwd else 2


class SessionReferenceResolver:
    """Turns ``@[label](dsh-session:…)`` references into one bounded context message.

    >>> from sessionref.log.store import MemoryStore
    >>> resolver = SessionReferenceResolver(MemoryStore([]), max_references=2)
    >>> resolver.config
    {'maxReferences': 2, 'candidateLimit': 50, 'maxReferenceBytes': 65536}
    """

    def __init__(
        self,
        store: SessionStore,
        *,
        max_references: int = MAX_REFERENCES_LIMIT,
        candidate_limit: int = DEFAULT_CANDIDATE_LIMIT,
        max_reference_bytes: int = DEFAULT_MAX_REFERENCE_BYTES,
    ) -> None:
        check_config(
            max_references=max_references,
            candidate_limit=candidate_limit,
            max_reference_bytes=max_reference_bytes,
        )
        self.store = store
        self.max_references = max_references
        self.candidate_limit = candidate_limit
        self.max_reference_bytes = max_reference_bytes

    @property
    def config(self) -> dict[str, int]:
        """The settings, in their wire names."""
        return {
            "maxReferences": self.max_references,
            "candidateLimit": self.candidate_limit,
            "maxReferenceBytes": self.max_reference_bytes,
        }

    def _read(self, reference: Reference, label_from_title: bool) -> FittedSource:
        """Read one source and fit it to the budget, a failure to fit returned, not raised.

        The units stream from the fold into the drop phase, so a source never holds more
        unit text than its budget (plus its checkpoints).
        """
        try:
            log = self.store.read(reference.session_id)
            label = (latest_title(log) if label_from_title else None) or reference.label
            return snapshot_source(log, label, self.max_reference_bytes)
        except SessionReferenceError as exc:
            return exc
        except (SessionLogError, OSError, RecursionError, MemoryError) as exc:
            raise _read_failed(exc) from None

    def read_sources(
        self,
        references: Sequence[Reference],
        cancel: CancelToken | None = None,
        *,
        label_from_title: bool = False,
    ) -> list[FittedSource]:
        """Read and fit every source once, in parallel; the first read failure in order wins.

        A source that cannot fit its budget is returned as its error, which
        :meth:`render_sources` raises: every read failure comes before any budget failure.
        With ``label_from_title`` a source's label is its latest title, when it has one.
        """
        _check_cancel(cancel)
        if len(references) == 1:
            return [self._read(references[0], label_from_title)]
        with ThreadPoolExecutor(max_workers=len(references)) as pool:
            futures = [pool.submit(self._read, ref, label_from_title) for ref in references]
            return [future.result() for future in futures]

    def snapshot(
        self,
        target: TargetLike,
        references: Iterable[object],
        cancel: CancelToken | None = None,
        *,
        message_id: str | None = None,
    ) -> ContextMessage | None:
        """The context message for ``references`` (``None`` when there are none).

        ``message_id`` defaults to a fresh uuid4.
        """
        target = as_target(target)
        distinct = distinct_references(target, references, self.max_references)
        if not distinct:
            return None
        return self.render_sources(self.read_sources(distinct, cancel), cancel, message_id)

    def render_sources(
        self,
        sources: Sequence[FittedSource],
        cancel: CancelToken | None = None,
        message_id: str | None = None,
    ) -> ContextMessage:
        """Render sources read by :meth:`read_sources`; the first that did not fit raises."""
        _check_cancel(cancel)
        snapshots: list[SourceSnapshot] = []
        for source in sources:
            if isinstance(source, SessionReferenceError):
                raise source
            snapshots.append(source)
        return context_message(snapshots, message_id or str(uuid.uuid4()))

    def prepare(
        self,
        target: TargetLike,
        content: Sequence[Any],
        references: Iterable[object],
        cancel: CancelToken | None = None,
    ) -> PreparedContent:
        """A deep copy of ``content`` and the context for ``references`` (docs/api.md §Prepare)."""
        copied = copy.deepcopy(list(content))
        return PreparedContent(copied, self.snapshot(target, references, cancel))

    def prepare_direct_messages(
        self,
        target: TargetLike,
        messages: Sequence[JsonObject],
        placement: Placement = "before",
        cancel: CancelToken | None = None,
    ) -> list[JsonObject | ContextMessage]:
        """Resolve the mentions in direct user messages; each context sits next to its message.

        Every message is parsed before any is prepared; the first failure fails the call.
        """
        if placement not in ("before", "after"):
            raise SessionReferenceError(f"unknown placement {placement!r}", INVALID_CONFIG)
        parsed = [_parse_direct(message) for message in messages]
        out: list[JsonObject | ContextMessage] = []
        for message, found in zip(messages, parsed, strict=True):
            if found is None:
                out.append(message)
                continue
            content, references = found
            prepared = self.prepare(target, content, references, cancel)
            rewritten = {**message, "content": prepared.content}
            context = prepared.additional_context
            pair: list[JsonObject | ContextMessage] = [rewritten]
            if context is not None:
                pair.insert(0 if placement == "before" else 1, context)
            out.extend(pair)
        return out

    def _labelled(self, headers: list[SessionHeader]) -> list[tuple[SessionHeader, str]]:
        return [(header, self.store.title(header.id) or header.id) for header in headers]

    def list_candidates(
        self, target: TargetLike, query: str = "", limit: int | None = None
    ) -> list[Candidate]:
        """Sessions a user may reference: newest first, same project first
        (docs/api.md §Candidates)."""
        return self._candidates(target, query, limit, _candidate)

    def mention_candidates(
        self, target: TargetLike, query: str = "", limit: int | None = None
    ) -> list[MentionCandidate]:
        """:meth:`list_candidates`, each with the mention a user would type."""
        return self._candidates(target, query, limit, _mention_candidate)

    def _candidates(
        self,
        target: TargetLike,
        query: str,
        limit: int | None,
        build: Callable[[SessionHeader, str], T],
    ) -> list[T]:
        target = as_target(target)
        limit = self.candidate_limit if limit is None else limit
        if not is_count(limit, 1):
            raise SessionReferenceError("limit must be a positive integer", INVALID_REFERENCE)
        headers = listing_order(h for h in self.store.headers() if h.id != target.id)
        if query:
            needle = query.lower()
            labelled = [
                (header, label)
                for header, label in self._labelled(headers)
                if any(needle in text.lower() for text in (header.id, header.cwd or "", label))
            ]
            labelled.sort(key=lambda item: _rank(item[0], target))
        else:
            headers.sort(key=lambda header: _rank(header, target))
            labelled = self._labelled(headers[:limit])
        return [build(header, label) for header, label in labelled[:limit]]


def _candidate(header: SessionHeader, label: str) -> Candidate:
    return Candidate(
        session_id=header.id, label=label, cwd=header.cwd, created_at=header.created_at
    )


def _mention_candidate(header: SessionHeader, label: str) -> MentionCandidate:
    mention = format_session_reference_mention(header.id, label)
    return MentionCandidate(
        session_id=header.id,
        label=label,
        cwd=header.cwd,
        created_at=header.created_at,
        mention=mention,
    )


def _parse_direct(message: JsonObject) -> tuple[list[Any], list[Reference]] | None:
    """A direct user message's content with readable texts and its references, if any."""
    source = message.get("source")
    if not isinstance(source, Mapping) or source.get("kind") != "user":
        return None
    content: list[Any] = []
    references: list[Reference] = []
    for block in message.get("content") or []:
        if isinstance(block, Mapping) and block.get("type") == "text":
            parsed = parse_session_reference_text(block["text"])
            references.extend(parsed.references)
            content.append({"type": "text", "text": parsed.text})
        else:
            content.append(block)
    return (content, references) if references else None
