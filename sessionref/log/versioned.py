"""What a store remembers, safe to share between threads: answers per version of what they
were computed from (a file's path, size and modification time: each session's title, each
file's header, until the file changes), and its last listing."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class VersionedCache(Generic[K, V]):
    """One remembered answer per key, good while the key's version is the same.

    >>> cache: VersionedCache[str, int] = VersionedCache()
    >>> cache.get("a", 1, lambda: 10), cache.get("a", 1, lambda: 20), cache.get("a", 2, lambda: 30)
    (10, 10, 30)
    """

    def __init__(self) -> None:
        self._known: dict[K, tuple[object, V]] = {}
        self._lock = threading.Lock()

    def get(self, key: K, version: object, compute: Callable[[], V]) -> V:
        """The answer for ``key`` at ``version``: remembered, or computed (outside the lock,
        so a slow computation blocks no other key) and remembered."""
        with self._lock:
            known = self._known.get(key)
        if known is not None and known[0] == version:
            return known[1]
        value = compute()
        with self._lock:
            self._known[key] = (version, value)
        return value


L = TypeVar("L")
T = TypeVar("T")


class LastListing(Generic[L]):
    """The last listing a store made (each listing is a fresh walk of its root), shared
    between threads: what ``problems()`` reports, and where a session is looked up first.

    >>> listing = LastListing({})
    >>> walks = iter([{"a": 1}, {"a": 1, "b": 2}])
    >>> def scan():
    ...     return listing.remember(next(walks))
    >>> listing.last(), listing.find(lambda found: found.get("a"), scan)
    ({}, 1)
    >>> listing.find(lambda found: found.get("b"), scan), listing.last()
    (2, {'a': 1, 'b': 2})
    """

    def __init__(self, empty: L) -> None:
        self._last = empty
        self._lock = threading.Lock()

    def remember(self, listing: L) -> L:
        """Keep ``listing`` as the last one made; returns it."""
        with self._lock:
            self._last = listing
        return listing

    def last(self) -> L:
        """The last listing made (an empty one before the first)."""
        with self._lock:
            return self._last

    def find(self, pick: Callable[[L], T | None], scan: Callable[[], L]) -> T | None:
        """What ``pick`` finds in the last listing, else in a fresh one made by ``scan`` (a
        session may have come since)."""
        found = pick(self.last())
        return found if found is not None else pick(scan())
