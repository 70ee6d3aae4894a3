"""The local batch engine: one process, or a pool of worker processes.

>>> from sessionref.log.store import MemoryStore
>>> header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
>>> store = MemoryStore([{"header": header, "events": []}])
>>> [result["sessionId"] for result in build_snapshots(store)]
['s']
>>> [line.failed for line in build_result_lines(store)]
[False]
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any, Final, TypeVar

from sessionref.batch.arguments import batch_arguments
from sessionref.batch.core import (
    Label,
    ResultLine,
    Snapshotter,
    StoreFactory,
    fresh_target,
    listing_order,
    portable_store,
)
from sessionref.log.protocol import Store
from sessionref.pool import worker_pool
from sessionref.pool_start import pool_size
from sessionref.redact import Redaction
from sessionref.resolver import (
    DEFAULT_MAX_REFERENCE_BYTES,
    SessionReferenceResolver,
)
from sessionref.types import Target

T = TypeVar("T")
R = TypeVar("R")

IN_FLIGHT_PER_WORKER: Final = 4
"""Chunks submitted to a pool per worker before the oldest result is taken."""
MAX_CHUNK: Final = 16
"""Sessions a worker snapshots per task at most: one task costs the parent about as much
as a session costs a worker ten times over (a future, two pickles, two pipe messages)."""
CHUNKS_LEFT_PER_WORKER: Final = 4
"""A chunk is at most the sessions left over this many per worker: chunks shrink towards the
end, so that the workers finish together."""

_worker: Snapshotter | None = None


def _start_worker(
    factory: StoreFactory,
    max_bytes: int,
    target: Target,
    label: Label,
    redaction: Redaction | None,
) -> None:
    """Pool initializer: one store and resolver per worker process."""
    global _worker
    resolver = SessionReferenceResolver(
        factory(), max_reference_bytes=max_bytes, redact=redaction or False
    )
    _worker = Snapshotter(resolver, target, label)


def _run_in_worker(session_ids: list[str]) -> list[ResultLine]:
    assert _worker is not None, "worker used without _start_worker"
    return [_worker(session_id) for session_id in session_ids]


def chunks(items: Sequence[T], workers: int) -> Iterator[Sequence[T]]:
    """``items`` in consecutive chunks of at most :data:`MAX_CHUNK`, shrinking as the end
    nears (at most the items left / (:data:`CHUNKS_LEFT_PER_WORKER` × ``workers``), at
    least one).

    >>> [len(chunk) for chunk in chunks(range(100), 1)]
    [16, 16, 16, 13, 9, 7, 5, 4, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1]
    """
    start, total = 0, len(items)
    while start < total:
        size = max(1, min(MAX_CHUNK, (total - start) // (CHUNKS_LEFT_PER_WORKER * workers)))
        yield items[start : start + size]
        start += size


def ordered_window(
    submit: Callable[[T], Future[R]], items: Iterable[T], window: int
) -> Iterator[R]:
    """Results of ``submit(item)`` in input order, with at most ``window`` futures pending.

    Items are submitted lazily, one as each result is taken, so memory stays bounded.

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:
    ...     list(ordered_window(lambda x: pool.submit(pow, x, 2), range(5), 2))
    [0, 1, 4, 9, 16]
    """
    pending: deque[Future[R]] = deque()
    try:
        for item in items:
            if len(pending) >= window:
                yield pending.popleft().result()
            pending.append(submit(item))
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()


def _pooled(
    factory: StoreFactory,
    session_ids: list[str],
    max_bytes: int,
    label: Label,
    workers: int,
    redaction: Redaction | None,
) -> Iterator[ResultLine]:
    """Results from a process pool of ``workers``, sent a chunk of sessions at a time (see
    :func:`chunks`), at most :data:`IN_FLIGHT_PER_WORKER` chunks per worker in flight: results
    are taken in order, so with one each a worker that finished early would wait for a slower
    one's chunk before it got the next."""
    target = fresh_target(session_ids)
    initargs = (factory, max_bytes, target, label, redaction)
    with worker_pool(workers, _start_worker, initargs) as pool:

        def submit(chunk: Sequence[str]) -> Future[list[ResultLine]]:
            return pool.submit(_run_in_worker, chunk)

        window = IN_FLIGHT_PER_WORKER * workers
        for lines in ordered_window(submit, chunks(session_ids, workers), window):
            yield from lines


def _sequential(
    store: Store,
    session_ids: list[str],
    max_bytes: int,
    label: Label,
    redaction: Redaction | None,
) -> Iterator[ResultLine]:
    resolver = SessionReferenceResolver(
        store, max_reference_bytes=max_bytes, redact=redaction or False
    )
    return map(Snapshotter(resolver, fresh_target(session_ids), label), session_ids)


def _results(
    store: Store,
    session_ids: Iterable[str] | None,
    max_bytes: int,
    label: Label,
    workers: int,
    redaction: Redaction | None,
) -> Generator[ResultLine, None, None]:
    ids = listing_order(store) if session_ids is None else list(session_ids)
    processes = pool_size(workers, len(ids))
    if processes == 1:
        yield from _sequential(store, ids, max_bytes, label, redaction)
    else:
        factory = portable_store(store, ids)
        yield from _pooled(factory, ids, max_bytes, label, processes, redaction)


def build_result_lines(
    store: str | os.PathLike[str] | Store,
    *,
    max_reference_bytes: int = DEFAULT_MAX_REFERENCE_BYTES,
    label: Label = "id",
    workers: int = 1,
    session_ids: Iterable[str] | None = None,
    redact: bool | Redaction = False,
    redact_patterns: Sequence[str] = (),
) -> Generator[ResultLine, None, None]:
    """:func:`build_snapshots`' results as the JSON lines the workers encoded, in listing order.

    What ``sessionref batch`` writes: each result is encoded once, where it is made.
    """
    options = (max_reference_bytes, label, workers, "workers")
    caller = "build_result_lines"
    return _results(*batch_arguments(caller, store, options, session_ids, redact, redact_patterns))


def _decoded(
    lines: Generator[ResultLine, None, None],
) -> Generator[dict[str, Any], None, None]:
    """Each line's wire form; closing this closes ``lines`` (and so ends a pool)."""
    with contextlib.closing(lines):
        for line in lines:
            yield line.decoded()


def build_snapshots(
    store: str | os.PathLike[str] | Store,
    *,
    max_reference_bytes: int = DEFAULT_MAX_REFERENCE_BYTES,
    label: Label = "id",
    workers: int = 1,
    session_ids: Iterable[str] | None = None,
    redact: bool | Redaction = False,
    redact_patterns: Sequence[str] = (),
) -> Generator[dict[str, Any], None, None]:
    """A lazy iterator of every stored session's batch result, in listing order.

    ``store`` is any store, or a root path of any harness, as ``snapshots_bag`` takes it
    (:func:`~sessionref.batch.arguments.batch_store`). Each result is ``{"sessionId", "label",
    "context"}`` or ``{"sessionId", "error": {"code", "message"}}``; a bad session never
    stops the batch. ``label="title"`` labels a session by its latest title (its id when it
    has none), ``"id"`` by its id. ``workers > 1`` runs a process pool fed chunks of up to 16
    sessions, at most 4 per worker in flight, of at most ``workers`` processes, never more than
    the sessions nor than 2 per CPU this process may use
    (:func:`~sessionref.pool_start.pool_size`; the store must pickle, unless
    :func:`~sessionref.batch.core.portable_store` knows it; a script that asks for them must
    guard its top level with ``if __name__ == "__main__":``, as workers that are not forked
    run the main module again). ``session_ids`` replaces the
    listing (a list of ids, taken in that order; a string is INVALID_CONFIG). Options, the
    store and ``session_ids`` are checked at once; the store is listed on the first
    ``next()``. ``redact`` and ``redact_patterns`` are the resolver's (docs/redaction.md).
    Pool workers ignore Ctrl-C; closing the iterator early (or an interrupt while it waits)
    ends them; one that dies (``kill -9``) ends the others and raises
    :class:`~sessionref.worker_deaths.WorkerDied` (``READ_FAILED``).

    >>> from sessionref.log.builder import LogBuilder
    >>> from sessionref.log.store import MemoryStore
    >>> log = LogBuilder()
    >>> log.title("Hello")
    0
    >>> header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    >>> store = MemoryStore([{"header": header, "events": log.events}])
    >>> [(r["sessionId"], r["label"]) for r in build_snapshots(store)]
    [('s', 's')]
    >>> [(r["sessionId"], r["label"]) for r in build_snapshots(store, label="title")]
    [('s', 'Hello')]
    """
    options = (max_reference_bytes, label, workers, "workers")
    checked = batch_arguments(
        "build_snapshots", store, options, session_ids, redact, redact_patterns
    )
    return _decoded(_results(*checked))
