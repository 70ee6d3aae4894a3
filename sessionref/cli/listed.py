"""A store listed once for a command: its listing taken when the command opens it, and not
taken again (:func:`listed_once`)."""

from __future__ import annotations

from typing import Any

from sessionref.log.discovery import StoreProblem
from sessionref.log.protocol import CountingStore, Store
from sessionref.log.records import SessionHeader, SessionLog
from sessionref.transcript import Transcript


class HeadersOnce:
    """A store whose listing was taken once: ``headers()`` does not scan the root again.

    >>> from sessionref.log.store import MemoryStore
    >>> header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    >>> memory = MemoryStore([{"header": header}])
    >>> listed = HeadersOnce(memory, memory.headers())
    >>> [h.id for h in listed.headers()], listed.title("s")
    (['s'], None)
    """

    def __init__(self, store: Store, headers: list[SessionHeader]) -> None:
        self.store = store
        self.harness = store.harness
        self._headers = headers

    def headers(self) -> list[SessionHeader]:
        """The headers listed when the store was opened."""
        return list(self._headers)

    def read(self, session_id: str) -> SessionLog:
        """The session's log, from the store."""
        return self.store.read(session_id)

    def title(self, session_id: str) -> Any:
        """The session's latest title, from the store (any JSON value a log holds there)."""
        return self.store.title(session_id)

    def transcript(self, session_id: str) -> Transcript:
        """The session as a person reads it, from the store."""
        return self.store.transcript(session_id)

    def problems(self) -> list[StoreProblem]:
        """What the store's listing passed over."""
        return self.store.problems()


def listed_once(store: Store, *, live: bool = False) -> Store:
    """``store`` listed now, once (:class:`HeadersOnce`; with ``live``, the store itself,
    which lists again when asked); a :class:`CountingStore` is only counted, and answers from
    its one look."""
    if isinstance(store, CountingStore):
        store.session_count()
        return store
    headers = store.headers()
    return store if live else HeadersOnce(store, headers)
