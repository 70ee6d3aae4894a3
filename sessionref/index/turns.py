"""Taking turns: a method of an object shared by threads, run while holding its lock; and
answers that stand only while the cache they come from is still the object's own."""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar


class Shared(Protocol):
    """An object whose threads take turns on its lock."""

    @property
    def _lock(self) -> AbstractContextManager[Any]:
        """The lock its threads take turns on."""
        ...


class Cached(Shared, Protocol):
    """A shared object that answers from a cache another process may change under it."""

    def _unchanged(self) -> bool:
        """Whether the cache is still the one the object answers from."""
        ...

    def _give_up(self) -> None:
        """Answer without the cache from now on (it changed under the object)."""
        ...


S = TypeVar("S", bound=Shared)
C = TypeVar("C", bound=Cached)
P = ParamSpec("P")
R = TypeVar("R")


def in_turn(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """``method`` run while holding the object's lock: the resolver reads from several
    threads at once (:func:`sessionref.cancellation.settle`), and an index's share one
    connection and one refreshed state.

    >>> import threading
    >>> class Counter:
    ...     def __init__(self):
    ...         self._lock, self.count = threading.RLock(), 0
    ...     @in_turn
    ...     def add(self):
    ...         self.count += 1
    ...         return self.count
    >>> Counter().add()
    1
    """

    @functools.wraps(method)
    def in_turn(shared: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with shared._lock:
            return method(shared, *args, **kwargs)

    return in_turn


def answered(method: Callable[Concatenate[C, P], R]) -> Callable[Concatenate[C, P], R]:
    """``method`` run in turn (:func:`in_turn`), whose answer stands only if the object's
    cache is still its own once it has answered: else the object gives the cache up and
    ``method`` answers again, without it (what it read may be another's).

    >>> import threading
    >>> class Doubled:
    ...     def __init__(self):
    ...         self._lock, self.cache = threading.RLock(), {"x": 1}
    ...     def _unchanged(self):
    ...         return self.cache == {"x": 1}
    ...     def _give_up(self):
    ...         self.cache = None
    ...     @answered
    ...     def double(self):
    ...         return 2 * (1 if self.cache is None else self.cache["x"])
    >>> shared = Doubled()
    >>> shared.double()
    2
    >>> shared.cache["x"] = 5  # another changed it
    >>> shared.double(), shared.cache
    (2, None)
    """

    @functools.wraps(method)
    def answered(cached: C, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with cached._lock:
            answer = method(cached, *args, **kwargs)
            if cached._unchanged():
                return answer
            cached._give_up()
            return method(cached, *args, **kwargs)

    return answered
