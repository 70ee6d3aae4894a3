"""What a session store is: the one :class:`Store` protocol, and the optional capabilities a
store may add beside it.

Every store implements :class:`Store`: a DSH directory or memory store
(:mod:`sessionref.log.store`), the stores of other harnesses (``sessionref.claude_code``,
``sessionref.codex``), a store over several roots (:mod:`sessionref.log.multi`) and the index
(:class:`sessionref.index.SessionIndex`). The resolver, the candidates, the batch engines and
the command line take any of them. A store may also offer, and callers check with
``isinstance``:

- :class:`CandidateSource`: it finds candidates itself (an index answers from SQL);
- :class:`CountingStore`: it counts its sessions, and says whether it holds one, without
  listing them (an index made with ``once``).
"""

from __future__ import annotations

from typing import Any, Final, Protocol, cast, runtime_checkable

from sessionref.errors import positive_count, wrong_kind
from sessionref.log.discovery import StoreProblem
from sessionref.log.structs import SessionHeader, SessionLog
from sessionref.transcript import Transcript
from sessionref.types import Target

DSH: Final = "dsh"
"""The ``harness`` of the DeepSeek Harness stores."""


def read_limits(max_bytes: object, max_line_bytes: object) -> tuple[int, int]:
    """A store's read limits, checked when it is made: each a positive safe integer, else
    INVALID_CONFIG naming it (a limit of the wrong type failed only at the first read, as a
    READ_FAILED in Python's words).

    >>> read_limits(1 << 20, 4096.0)
    (1048576, 4096)
    >>> read_limits("x", 1)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: max_bytes must be a positive safe integer, not 'x'
    """
    return positive_count(max_bytes, "max_bytes"), positive_count(max_line_bytes, "max_line_bytes")


class Store(Protocol):
    """A session store: what the resolver, the candidates and the batch read.

    ``read`` raises :class:`~sessionref.log.store.SessionNotFound` for an id it does not hold,
    and :class:`~sessionref.errors.SessionLogError` for a log it cannot read: each a
    :class:`~sessionref.errors.SessionReferenceError` with code READ_FAILED.
    """

    @property
    def harness(self) -> str:
        """The harness that wrote the sessions: ``"dsh"``, ``"claude-code"`` or ``"codex"``
        (``"mixed"`` for a store over several harnesses, whose :func:`harness_of` says each
        session's)."""
        ...

    def headers(self) -> list[SessionHeader]:
        """The header of every stored session (reads nothing else)."""
        ...

    def read(self, session_id: str) -> SessionLog:
        """The whole log, as the surface the snapshot stages take."""
        ...

    def title(self, session_id: str) -> Any:
        """The latest title (see :func:`~sessionref.log.records.latest_title`); ``None`` when
        there is none or the log cannot be loaded."""
        ...

    def problems(self) -> list[StoreProblem]:
        """What the last listing passed over although the harness would look at it."""
        ...

    def transcript(self, session_id: str) -> Transcript:
        """The session as a person reads it (the views read only this); raises what
        :meth:`read` raises, or :class:`~sessionref.errors.SessionLogError` when its surface
        cannot be folded."""
        ...


SessionStore = Store
"""The name :class:`Store` had before other harnesses' stores joined it."""

READ_METHODS: Final = ("headers", "read", "title")
"""What a store must have for the resolver, the candidates and the batch to read it (anything
with them will do, docs/differences.md §API)."""
A_STORE: Final = "a store (with headers(), read() and title())"


def checked_store(value: object, name: str, wanted: str = A_STORE) -> Store:
    """``value``, when it has the :data:`READ_METHODS` of a store; else INVALID_CONFIG naming
    ``name`` and the kind given, when it is passed rather than at its first read (a path
    given as a store failed every later call as READ_FAILED).

    >>> from sessionref.log.store import MemoryStore
    >>> checked_store(MemoryStore([]), "store").harness
    'dsh'
    >>> checked_store("/path/to/store", "store")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: store must be a store (with headers(), ...), not str
    """
    if all(callable(getattr(value, method, None)) for method in READ_METHODS):
        return cast(Store, value)
    raise wrong_kind(name, wanted, value)


@runtime_checkable
class CandidateSource(Protocol):
    """Optional: a store that finds candidates itself (:class:`sessionref.index.SessionIndex`)."""

    def candidates(
        self, target: Target, needle: str, limit: int
    ) -> list[tuple[SessionHeader, Any]] | None:
        """What :func:`sessionref.listing.candidates` gives for the query whose lower case is
        ``needle``, or ``None`` when the store cannot say (the caller then filters the
        listing)."""
        ...


@runtime_checkable
class CountingStore(Protocol):
    """Optional: a store that takes one look and answers from it, so it counts its sessions,
    and says whether it serves one, without listing them (an index made with ``once``)."""

    def session_count(self) -> int:
        """How many sessions the store serves."""
        ...

    def holds(self, session_id: str) -> bool:
        """Whether the store serves ``session_id``."""
        ...


def harness_of(store: Store, session_id: str) -> str:
    """The harness of one session of ``store``: a store over several roots knows each
    session's (``harness_of``); any other store has one harness.

    >>> from sessionref.log.store import MemoryStore
    >>> harness_of(MemoryStore([]), "any")
    'dsh'
    """
    per_session = getattr(store, "harness_of", None)
    return str(per_session(session_id)) if callable(per_session) else store_harness(store)


def store_harness(store: Store) -> str:
    """``store``'s harness; a store that does not say (anything with ``headers()``, ``read()``
    and ``title()`` will do as a store) is DSH's, as a log is by default.

    >>> class Minimal:
    ...     def headers(self): return []
    ...     def read(self, session_id): ...
    ...     def title(self, session_id): return None
    >>> store_harness(Minimal())
    'dsh'
    """
    return str(getattr(store, "harness", DSH))


def store_problems(store: Store) -> list[StoreProblem]:
    """What ``store``'s last listing passed over; none for a store that does not say."""
    problems = getattr(store, "problems", None)
    return list(problems()) if callable(problems) else []


def store_log(store: Store, session_id: str) -> SessionLog:
    """``store``'s log of a session; a ``TypeError`` saying so when what a custom store's
    ``read`` gave is something else.

    >>> class Loose:
    ...     def read(self, session_id): return {"id": session_id}
    >>> store_log(Loose(), "s")
    Traceback (most recent call last):
    TypeError: the store's read gave a dict, not a SessionLog
    """
    log = store.read(session_id)
    if not isinstance(log, SessionLog):
        raise TypeError(f"the store's read gave a {type(log).__name__}, not a SessionLog")
    return log


def store_transcript(store: Store, session_id: str) -> Transcript:
    """``store``'s transcript of a session; for a store that has none, that of the DSH log it
    reads (:func:`~sessionref.log.transcript.log_transcript`)."""
    transcript = getattr(store, "transcript", None)
    if callable(transcript):
        return cast(Transcript, transcript(session_id))
    from sessionref.log.transcript import log_transcript  # the views' reader: only when asked

    return log_transcript(store.read(session_id))
