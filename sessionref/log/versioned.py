"""Answers remembered per version of what they were computed from (a file's path, size and
modification time), safe to share between threads: a store remembers each session's title,
and each file's header, until the file changes."""

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
