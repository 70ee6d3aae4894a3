"""A store over several roots, of any harnesses: :class:`MultiStore`."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeVar, cast

from sessionref.controls import quoted
from sessionref.errors import (
    INVALID_CONFIG,
    SessionLogError,
    SessionReferenceError,
    mapping,
    session_id_of,
)
from sessionref.log.discovery import StoreProblem
from sessionref.log.protocol import (
    CountingStore,
    Store,
    checked_store,
    store_harness,
    store_problems,
    store_transcript,
)
from sessionref.log.store import SessionNotFound
from sessionref.log.structs import SessionHeader, SessionLog
from sessionref.transcript import Transcript

T = TypeVar("T")

MIXED: Final = "mixed"
"""The ``harness`` of a :class:`MultiStore` whose stores are of more than one harness."""


class AmbiguousSession(SessionLogError):
    """One session id in more than one root: which session is meant cannot be told.

    >>> print(AmbiguousSession("s", ["/a", "/b"]))
    session "s" is in 2 roots: /a and /b; read it from one of them alone
    """

    def __init__(self, session_id: str, roots: Sequence[str]) -> None:
        named = f"{', '.join(roots[:-1])} and {roots[-1]}"
        super().__init__(
            f"session {quoted(session_id)} is in {len(roots)} roots: {named}; "
            "read it from one of them alone"
        )
        self.session_id = session_id
        self.roots = list(roots)

    def __reduce__(self) -> tuple[type[AmbiguousSession], tuple[str, list[str]]]:
        """Made again from its id and roots, as it was made (it crosses to a process pool's
        caller pickled)."""
        return (type(self), (self.session_id, self.roots))


class MultiStore:
    """The sessions of several stores as one store; ``stores`` maps a name for each (its
    root, as the user gave it) to the store, in the order the listing gives them.

    Each session is read from the store that lists it, so every harness reads its own. An id
    listed by two stores is an error when it is read (:class:`AmbiguousSession`, naming both);
    say which one is meant by reading it from that store alone (``stores[name]``; on the
    command line, by giving that ``--root`` alone). An id no store lists is read as the
    first store to answer other than :class:`SessionNotFound` reads it, so a file a store
    passed over fails with its reason, as from that store alone (:meth:`_answer`).
    ``stores`` that is not a mapping, names none, or maps a name to what is not a store is
    INVALID_CONFIG when it is made.
    ``homes`` (id → names) may say where sessions are, so that a worker process reads them
    without listing every root again.

    >>> from sessionref.log.store import MemoryStore
    >>> def one(session_id):
    ...     head = {"version": 0, "id": session_id, "createdAt": 1, "delegationDepth": 0}
    ...     return MemoryStore([{"header": head}])
    >>> both = MultiStore({"/a": one("s"), "/b": one("t")})
    >>> [h.id for h in both.headers()], both.read("t").records, both.harness_of("t")
    (['s', 't'], [], 'dsh')
    >>> both.read("u")
    Traceback (most recent call last):
    sessionref.log.store.SessionNotFound: session "u" not found
    """

    def __init__(
        self, stores: Mapping[str, Store], homes: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        named = mapping(stores, "MultiStore stores", "a mapping of names to stores")
        if not named:
            message = "MultiStore stores must name at least one store"
            raise SessionReferenceError(message, INVALID_CONFIG)
        self.stores = {
            name: checked_store(store, f"MultiStore stores[{name!r}]")
            for name, store in named.items()
        }
        self._homes = {session_id: list(names) for session_id, names in (homes or {}).items()}
        self._lock = threading.Lock()

    @property
    def harness(self) -> str:
        """The stores' harness when they share one, else ``"mixed"``."""
        harnesses = {store_harness(store) for store in self.stores.values()}
        return harnesses.pop() if len(harnesses) == 1 else MIXED

    def headers(self) -> list[SessionHeader]:
        """Every store's headers, store after store (an id in two stores comes twice)."""
        listed = [(name, store.headers()) for name, store in self.stores.items()]
        homes: dict[str, list[str]] = {}
        for name, headers in listed:
            for header in headers:
                homes.setdefault(header.id, []).append(name)
        with self._lock:
            self._homes = homes
        return [header for _, headers in listed for header in headers]

    def problems(self) -> list[StoreProblem]:
        """What every store's last listing passed over."""
        return [problem for store in self.stores.values() for problem in store_problems(store)]

    def homes(self, session_id: str) -> list[str]:
        """The names of the stores that list ``session_id`` (they are listed again when the
        last listing did not see it; stores that count are asked instead, when all do)."""
        with self._lock:
            names = self._homes.get(session_id)
        if names is None and all(isinstance(s, CountingStore) for s in self.stores.values()):
            return [
                name for name, s in self.stores.items() if cast(CountingStore, s).holds(session_id)
            ]
        if names is None:
            self.headers()
            with self._lock:
                names = self._homes.get(session_id, [])
        return list(names)

    def store_of(self, session_id: str) -> Store:
        """The store that holds ``session_id``; raises :class:`SessionNotFound` or
        :class:`AmbiguousSession`."""
        names = self.homes(session_id)
        if not names:
            raise SessionNotFound(session_id)
        if len(names) > 1:
            raise AmbiguousSession(session_id, names)
        return self.stores[names[0]]

    def harness_of(self, session_id: str) -> str:
        """The harness of the store that lists ``session_id`` (the first one's, when several
        do; ``harness`` when none does)."""
        names = self.homes(session_id)
        return store_harness(self.stores[names[0]]) if names else self.harness

    def _answer(self, session_id: str, ask: Callable[[Store], T]) -> T:
        """What ``ask`` gives of the store that lists ``session_id``. When none lists it, what
        the first store that does not answer :class:`SessionNotFound` gives: a store that
        passed over a file bearing the id (a line over its limit) fails with the file and
        why, as it does alone; :class:`SessionNotFound` when every store says so."""
        try:
            listing = self.store_of(session_id)
        except SessionNotFound:
            for store in self.stores.values():
                with contextlib.suppress(SessionNotFound):
                    return ask(store)
            raise
        return ask(listing)

    def read(self, session_id: str) -> SessionLog:
        """The session's log, read by the store that holds it (:meth:`_answer`)."""
        session_id_of(self, "read", session_id)
        return self._answer(session_id, lambda store: store.read(session_id))

    def transcript(self, session_id: str) -> Transcript:
        """The session as a person reads it, from the store that holds it (:meth:`_answer`)."""
        session_id_of(self, "transcript", session_id)
        return self._answer(session_id, lambda store: store_transcript(store, session_id))

    def title(self, session_id: str) -> Any:
        """The session's latest title; ``None`` when no one store holds it."""
        session_id_of(self, "title", session_id)
        try:
            store = self.store_of(session_id)
        except SessionLogError:
            return None
        return store.title(session_id)

    def homes_of(self, session_ids: Iterable[str]) -> dict[str, list[str]]:
        """Where each of ``session_ids`` is, as far as the last listing saw."""
        with self._lock:
            return {sid: list(self._homes[sid]) for sid in session_ids if sid in self._homes}
