"""Taking turns: a method of an object shared by threads, run while holding its lock."""

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


S = TypeVar("S", bound=Shared)
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
