"""Cancel tokens, and work run in threads that settles against one (docs/api.md §Cancellation).

A call that reads sessions must settle at once when its caller cancels, even while a read
hangs (a slow disk, a hung network mount). So :func:`settle` runs each read in a daemon
thread of its own and waits for the first of: every read done, a read failing, the token set.
A read still pending then is left behind in its thread, never awaited (a daemon thread does
not hold up the interpreter's exit either).

How the wait works, without spinning. The caller blocks on one private :class:`threading.Event`,
``settled``, which the reads set when they are all done or one fails. A *watcher* thread sets
it when the token is set:

- a token with a blocking ``wait(timeout)`` (:class:`threading.Event`,
  :class:`multiprocessing.Event`…) is waited on, so cancellation is seen the moment it happens;
  the wait is cut into slices of :data:`WATCH_SLICE_SECONDS` only so that the watcher ends soon
  after the call does (a never-set token must not pin a thread);
- any other object with ``is_set()`` is polled every :data:`POLL_SECONDS`.

Completion is never delayed by either: the reads wake the caller themselves.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Final, Generic, TypeVar

from sessionref.errors import CancelToken, check_cancel

__all__ = ["CancelToken", "check_cancel", "settle"]

T = TypeVar("T")

WATCH_SLICE_SECONDS: Final = 0.25
"""How long a watcher blocks in a token's ``wait`` before it checks the call is still open."""
POLL_SECONDS: Final = 0.01
"""How often a token without a blocking ``wait`` is asked ``is_set()``."""


def _pause(cancel: CancelToken, settled: threading.Event) -> Callable[[], object]:
    """How the watcher waits between two looks at ``cancel``: in its ``wait``, or a short poll."""
    wait = getattr(cancel, "wait", None)
    if callable(wait):
        return functools.partial(wait, WATCH_SLICE_SECONDS)
    return functools.partial(settled.wait, POLL_SECONDS)


def _watch(cancel: CancelToken, settled: threading.Event) -> None:
    """Set ``settled`` when ``cancel`` is set; return once ``settled`` is set anyway."""
    pause = _pause(cancel, settled)
    try:
        while not cancel.is_set():
            if settled.is_set():
                return
            try:
                waited = pause()
            except Exception:  # a `wait` that does not take a timeout: poll instead
                waited = None
                pause = functools.partial(settled.wait, POLL_SECONDS)
            if isinstance(waited, Coroutine):  # an asyncio.Event's `wait` does not block
                waited.close()
                pause = functools.partial(settled.wait, POLL_SECONDS)
    finally:
        settled.set()  # also when is_set() raised: the caller asks it again and sees why


class _Race(Generic[T]):
    """The outcome of jobs running in threads: their results, or the first failure in time."""

    def __init__(self, count: int) -> None:
        self.results: dict[int, T] = {}
        self.failure: BaseException | None = None
        self.count = count
        self.lock = threading.Lock()
        self.settled = threading.Event()

    def run(self, index: int, job: Callable[[], T]) -> None:
        """Run one job (in its thread) and record what it gave."""
        try:
            result = job()
        except BaseException as exc:  # recorded for the caller, who re-raises it
            with self.lock:
                if self.failure is None:
                    self.failure = exc
        else:
            with self.lock:
                self.results[index] = result
                if len(self.results) < self.count:
                    return
        self.settled.set()


def _start(target: Callable[..., None], *args: object) -> None:
    threading.Thread(target=target, args=args, name="sessionref-settle", daemon=True).start()


def settle(jobs: Sequence[Callable[[], T]], cancel: CancelToken | None = None) -> list[T]:
    """Run ``jobs`` at once and give their results in order; settle as soon as the outcome is known.

    No jobs: ``[]``, without looking at the token. Otherwise a set token raises CANCELLED
    before any job starts; then the first job to fail (in time) fails the call, and a token
    set before every job is done raises CANCELLED at once (also when a job failed meanwhile),
    leaving pending jobs behind. One job and no token run in the calling thread.

    >>> settle([lambda: 1, lambda: 2], threading.Event())
    [1, 2]
    >>> settle([lambda: 1, lambda: 1 / 0])
    Traceback (most recent call last):
    ZeroDivisionError: division by zero
    """
    if not jobs:
        return []
    check_cancel(cancel)
    if cancel is None and len(jobs) == 1:
        return [jobs[0]()]
    race: _Race[T] = _Race(len(jobs))
    for index, job in enumerate(jobs):
        _start(race.run, index, job)
    if cancel is not None:
        _start(_watch, cancel, race.settled)
    race.settled.wait()
    check_cancel(cancel)
    with race.lock:
        if race.failure is not None:
            raise race.failure
        results = race.results
    return [results[index] for index in range(len(jobs))]
