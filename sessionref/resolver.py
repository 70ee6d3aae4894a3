"""Policy: which references a prompt may make, reading them, and the context they yield.

Errors are those of the published package, worded as it words them (docs/api.md §Errors);
the checks of what a caller passes are in :mod:`sessionref.rules`. Reads run in threads
settled against the caller's cancel token (:mod:`sessionref.cancellation`).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec

from sessionref.cancellation import CancelToken, check_cancel, settle
from sessionref.codecs.uri import Reference, parse_session_reference_text
from sessionref.errors import (
    INVALID_CONFIG,
    INVALID_REFERENCE,
    SessionLogError,
    SessionReferenceError,
    copied,
    listed,
    mapping,
    message_id_arg,
    positive_safe_integer,
    read_failed,
    string,
    wrong_kind,
)
from sessionref.log.protocol import Store, checked_store, store_log
from sessionref.log.records import SessionHeader, latest_title
from sessionref.rules import (
    DEFAULT_CANDIDATE_LIMIT,
    DEFAULT_MAX_REFERENCE_BYTES,
    MAX_REFERENCES_LIMIT,
    ResolverConfig,
    as_reference,
    check_config,
    distinct_references,
    is_direct,
    one_of,
)
from sessionref.snapshot import SourceSnapshot, context_message, snapshot_source
from sessionref.types import (
    Candidate,
    ContextMessage,
    JsonObject,
    MentionCandidate,
    PreparedContent,
    TargetLike,
    as_target,
)

if TYPE_CHECKING:  # imported where used: a snapshot needs neither redaction nor the listing
    from sessionref.redact import Redaction

__all__ = [
    "DEFAULT_CANDIDATE_LIMIT",
    "DEFAULT_MAX_REFERENCE_BYTES",
    "MAX_REFERENCES_LIMIT",
    "CancelToken",
    "FittedSource",
    "ResolverConfig",
    "SessionReferenceResolver",
    "as_reference",
    "as_target",
    "check_config",
    "distinct_references",
    "redaction_of",
]

T = TypeVar("T")
Message = TypeVar("Message", bound=Mapping[str, Any])
"""A direct message as the caller gives it: a dict, a ``TypedDict``, any mapping."""
Placement = Literal["before", "after"]
PLACEMENTS: tuple[Placement, ...] = ("before", "after")

FittedSource = SourceSnapshot | SessionReferenceError
"""A source read and fitted to its budget, or the BUDGET_EXCEEDED error it gave."""


class SessionReferenceResolver:
    """Turns ``@[label](dsh-session:…)`` references into one bounded context message.

    Every call that reads takes a ``cancel`` token (anything with ``is_set()``; see
    :mod:`sessionref.cancellation`) and settles as soon as it is set, even while a read hangs.

    >>> from sessionref.log.store import MemoryStore
    >>> resolver = SessionReferenceResolver(MemoryStore([]), max_references=2.0)
    >>> resolver.config
    {'maxReferences': 2, 'candidateLimit': 50, 'maxReferenceBytes': 65536}
    """

    def __init__(
        self,
        store: Store,
        *,
        max_references: float | None = None,
        candidate_limit: float | None = None,
        max_reference_bytes: float | None = None,
        redact: bool | Redaction = False,
        redact_patterns: Sequence[str] = (),
    ) -> None:
        """``store`` is any :class:`~sessionref.log.protocol.Store` (anything with
        ``headers()``, ``read()`` and ``title()``), else INVALID_CONFIG. For the counts ``None``
        means the default; integral floats are integers (docs/api.md §Configuration).

        ``redact=True`` replaces the secrets of every snapshot's text by ``[REDACTED:<kind>]``
        before the budget (docs/redaction.md); ``redact_patterns`` adds regular expressions
        of the caller's own, and turns redaction on by itself (or pass a
        :class:`~sessionref.redact.Redaction` as ``redact``).
        A pattern that does not compile, a ``redact`` neither a bool nor a ``Redaction``, or
        redaction without detect-secrets installed, is INVALID_CONFIG.
        """
        self.store = checked_store(store, "SessionReferenceResolver store")
        self.settings = check_config(
            max_references=max_references,
            candidate_limit=candidate_limit,
            max_reference_bytes=max_reference_bytes,
        )
        self.redaction = redaction_of(redact, redact_patterns)

    @classmethod
    def from_config(
        cls, store: Store, config: Mapping[str, object] | None = None
    ) -> SessionReferenceResolver:
        """A resolver from the package's config object (a mapping, or ``None`` for every
        default); keys it does not know are ignored.

        >>> from sessionref.log.store import MemoryStore
        >>> SessionReferenceResolver.from_config(MemoryStore([]), {"maxReferences": None}).config
        {'maxReferences': 3, 'candidateLimit': 50, 'maxReferenceBytes': 65536}
        """
        name = "SessionReferenceResolver.from_config config"
        config = {} if config is None else mapping(config, name, "a mapping or None")
        settings = check_config(
            max_references=config.get("maxReferences"),
            candidate_limit=config.get("candidateLimit"),
            max_reference_bytes=config.get("maxReferenceBytes"),
        )
        return cls(
            store,
            max_references=settings.max_references,
            candidate_limit=settings.candidate_limit,
            max_reference_bytes=settings.max_reference_bytes,
        )

    @property
    def max_references(self) -> int:
        """Distinct references one message may make (1…3)."""
        return self.settings.max_references

    @property
    def candidate_limit(self) -> int:
        """Candidates listed when no limit is given."""
        return self.settings.candidate_limit

    @property
    def max_reference_bytes(self) -> int:
        """UTF-8 bytes of one source's JSON in a context message."""
        return self.settings.max_reference_bytes

    @property
    def config(self) -> dict[str, int]:
        """The settings, in their wire names."""
        wire: dict[str, int] = msgspec.to_builtins(self.settings)
        return wire

    def _read(self, reference: Reference, label_from_title: bool) -> FittedSource:
        """Read one source and fit it to the budget, a failure to fit returned, not raised.

        Whatever the store raises or gives that is no SessionLog is READ_FAILED, as is a log the
        pipeline cannot read (a :class:`SessionLogError` a stage raises: other errors, as
        BUDGET_EXCEEDED, are the source's own), its text redacted as the log's, raised outside
        the handler (whose ``__context__`` would keep the unredacted error). With
        ``label_from_title`` the label is the log's latest title, when it has one."""
        try:
            log = store_log(self.store, reference.session_id)
        except Exception as exc:
            failed = exc
        else:
            try:
                title = latest_title(log) if label_from_title else None
                label = reference.label if title is None else title
                if self.redaction is None:
                    return snapshot_source(log, label, self.max_reference_bytes)
                return self.redaction.snapshot(log, label, self.max_reference_bytes)
            except Exception as exc:
                if isinstance(exc, SessionReferenceError) and not isinstance(exc, SessionLogError):
                    return exc  # BUDGET_EXCEEDED: raised once every read is done
                failed = exc
        raise read_failed(failed if self.redaction is None else self.redaction.failure(failed))

    def read_sources(
        self,
        references: Sequence[Reference],
        cancel: CancelToken | None = None,
        *,
        label_from_title: bool = False,
    ) -> list[FittedSource]:
        """Read and fit every source once, in parallel; the first read failure in time wins.

        A source that cannot fit its budget is returned as its error, which
        :meth:`render_sources` raises: every read failure comes before any budget failure.
        Settles against ``cancel`` (see :func:`sessionref.cancellation.settle`).
        """
        read = functools.partial(self._read, label_from_title=label_from_title)
        return settle([functools.partial(read, reference) for reference in references], cancel)

    def render_sources(
        self,
        sources: Sequence[FittedSource],
        cancel: CancelToken | None = None,
        message_id: str | None = None,
    ) -> ContextMessage:
        """Render sources read by :meth:`read_sources` (the first that did not fit raises) as
        the context message ``message_id`` (:func:`message_id_arg`; by default a fresh uuid4)."""
        check_cancel(cancel)
        snapshots: list[SourceSnapshot] = []
        for source in sources:
            if isinstance(source, SessionReferenceError):
                raise source
            snapshots.append(source)
        return context_message(snapshots, message_id_arg(message_id) or str(uuid.uuid4()))

    def snapshot(
        self,
        target: TargetLike,
        references: Iterable[object],
        cancel: CancelToken | None = None,
        *,
        message_id: str | None = None,
    ) -> ContextMessage | None:
        """The context message for ``references`` (``None`` when there are none), its id
        ``message_id`` (a non-empty string, as every message id in a log the harness loads
        is; by default a fresh uuid4). References are checked before the token is looked at;
        with none it is not looked at."""
        message_id_arg(message_id)  # before anything is read
        distinct = distinct_references(as_target(target), references, self.max_references)
        if not distinct:
            return None
        return self.render_sources(self.read_sources(distinct, cancel), cancel, message_id)

    def prepare(
        self,
        target: TargetLike,
        content: Sequence[Any],
        references: Iterable[object],
        cancel: CancelToken | None = None,
    ) -> PreparedContent:
        """A deep copy of ``content`` and the context for ``references`` (docs/api.md §Prepare)."""
        given = copied(listed(content, "content", INVALID_CONFIG), "content")
        return PreparedContent(given, self.snapshot(target, references, cancel))

    def prepare_direct_messages(
        self,
        target: TargetLike,
        messages: Sequence[Message],
        placement: Placement = "before",
        cancel: CancelToken | None = None,
    ) -> list[Message | JsonObject | ContextMessage]:
        """Resolve the mentions in direct user messages; each context sits next to its message.

        ``messages`` is a list of mappings, which are only read: a message passed through is
        the one given, a message whose mentions were resolved a new dict. Failures are the
        package's, which handles every message at once: first a malformed mention in any
        message; then, message by message, an invalid, self or excess reference, or the token
        already set; then the first read failure in time (every message's reads are done
        before any budget failure, as the package answers); then a budget failure.
        """
        placement = one_of(placement, PLACEMENTS, "prepare_direct_messages placement")
        messages = listed(messages, "messages", INVALID_CONFIG)
        for index, message in enumerate(messages):
            mapping(message, f"messages[{index}]")
        target = as_target(target)
        parsed = [_parse_direct(message, index) for index, message in enumerate(messages)]
        cited: dict[int, tuple[list[Any], list[Reference]]] = {}
        for index, found in enumerate(parsed):
            if found is not None:
                content, references = found
                distinct = distinct_references(target, references, self.max_references)
                check_cancel(cancel)
                cited[index] = (copied(content, f"messages[{index}].content"), distinct)
        reads = [functools.partial(self.read_sources, refs, cancel) for _, refs in cited.values()]
        read = dict(zip(cited, settle(reads, cancel), strict=True))  # every message's, as one
        contexts = {index: self.render_sources(sources, cancel) for index, sources in read.items()}
        out: list[Message | JsonObject | ContextMessage] = []
        for index, message in enumerate(messages):
            if index not in cited:
                out.append(message)
                continue
            pair: list[Message | JsonObject | ContextMessage] = [
                {**message, "content": cited[index][0]}
            ]
            pair.insert(0 if placement == "before" else 1, contexts[index])
            out.extend(pair)
        return out

    def list_candidates(
        self,
        target: TargetLike,
        query: str = "",
        limit: float | None = None,
        cancel: CancelToken | None = None,
    ) -> list[Candidate]:
        """Sessions a user may reference: newest first, same project first
        (docs/api.md §Candidates).

        ``limit`` defaults to the configured one; ``cancel`` is checked first, then raced
        against the listing and the title reads. With redaction on, labels are redacted and a
        query matches what is shown, never a title's secret (docs/redaction.md §Labels).
        """
        from sessionref.listing import candidate  # with collation: no snapshot needs it

        return self._candidates(target, query, limit, cancel, candidate)

    def mention_candidates(
        self,
        target: TargetLike,
        query: str = "",
        limit: float | None = None,
        cancel: CancelToken | None = None,
    ) -> list[MentionCandidate]:
        """:meth:`list_candidates`, each with the mention a user would type."""
        from sessionref.listing import mention_candidate

        return self._candidates(target, query, limit, cancel, mention_candidate)

    def _candidates(
        self,
        target: TargetLike,
        query: str,
        limit: float | None,
        cancel: CancelToken | None,
        build: Callable[[SessionHeader, str], T],
    ) -> list[T]:
        count = self.candidate_limit
        if limit is not None:
            message = "candidate limit must be a positive safe integer"
            count = positive_safe_integer(limit, message, INVALID_REFERENCE)
        from sessionref.listing import shown_candidates

        found = shown_candidates(
            self.store, as_target(target), query, count, self.redaction, cancel
        )
        return [build(header, label) for header, label in found]


def redaction_of(redact: bool | Redaction, patterns: Sequence[str] | None = ()) -> Redaction | None:
    """The redaction ``redact`` (exactly a bool or a :class:`Redaction`, else INVALID_CONFIG:
    ``2`` or ``[]`` would be a guess) and ``patterns`` ask for, checked; ``None`` when it is
    off (``redact`` false and no patterns). Patterns of the caller's own turn it on,
    as ``--redact-pattern`` implies ``--redact``, and join those of a :class:`Redaction`.

    >>> redaction_of(False) is None, redaction_of(False, ["x"]), redaction_of(True, None)
    (True, Redaction(patterns=('x',)), Redaction(patterns=()))
    >>> redaction_of(True, "an")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: redact_patterns must be a list, not str
    """
    chosen = [] if patterns is None else listed(patterns, "redact_patterns", INVALID_CONFIG)
    added = tuple(string(pattern, "each of redact_patterns") for pattern in chosen)
    if type(redact) is bool and not (redact or added):  # not isinstance: 2 is no bool
        return None
    from sessionref.redact import Redaction  # its detectors and patterns: only when asked

    if type(redact) is bool:
        return Redaction(added).check()
    if isinstance(redact, Redaction):
        return (msgspec.structs.replace(redact, patterns=(*redact.patterns, *added))).check()
    raise wrong_kind("redact", "a bool or a Redaction", redact)


def _parse_direct(
    message: Mapping[str, Any], index: int
) -> tuple[list[Any], list[Reference]] | None:
    """A direct user message's content (message ``index`` of those given) with readable texts
    and its references, if any; content that is no list (``content.map`` throws in the package)
    or a text block's text that is no string is INVALID_CONFIG naming where it is, as is a
    missing or ``None`` source (:func:`sessionref.rules.is_direct`)."""
    if not is_direct(message, index):
        return None
    content: list[Any] = []
    references: list[Reference] = []
    for position, block in enumerate(listed(message.get("content"), f"messages[{index}].content")):
        if isinstance(block, Mapping) and block.get("type") == "text":
            text = string(block.get("text"), f"messages[{index}].content[{position}].text")
            parsed = parse_session_reference_text(text)
            references.extend(parsed.references)
            content.append({"type": "text", "text": parsed.text})
        else:
            content.append(block)
    return (content, references) if references else None
