"""Batch snapshots of a directory store as a dask bag (needs the ``dask`` extra).

The bag holds the same result dicts as :func:`sessionref.batch.build_snapshots`, in the same
listing order, partitioned by session files; every scheduler gives identical results.
:func:`result_lines_bag` holds them as the JSON lines the workers encoded (what the CLI writes).

>>> from pathlib import Path
>>> sample = Path(__file__).parent.parent / "sample"  # the store the demo reads
>>> [result["sessionId"] for result in snapshots_bag(sample).compute(scheduler="synchronous")]
['7f3c1e2a-auth-refactor', 'c2e8a7d5-docs-dark-mode', 'e5a90c11-scratch', 'b91d04f0-flaky-ci']
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import uuid
from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

import msgspec

try:
    import cloudpickle  # type: ignore[import-untyped]
    import dask
    import dask.bag as db
except ImportError as exc:  # pragma: no cover - exercised with dask hidden
    raise ImportError(
        "sessionref.batch.dask needs dask and distributed: pip install 'sessionref[dask]'"
    ) from exc

from sessionref.batch.arguments import BatchArguments, batch_arguments
from sessionref.batch.core import (
    DirectoryRecipe,
    Label,
    ResultLine,
    Snapshotter,
    StoreFactory,
    fresh_target,
    listing_order,
    portable_store,
)
from sessionref.errors import (
    INVALID_CONFIG,
    SessionReferenceError,
    describe,
    instance,
    positive_count,
    string,
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

__all__ = [
    "DEFAULT_PARTITION_SIZE",
    "iter_bag",
    "iter_partitions",
    "result_lines_bag",
    "snapshots_bag",
]

DEFAULT_PARTITION_SIZE: Final = 16
WINDOW_PER_WORKER: Final = 4
"""Partitions per local worker computed together (each window ends when its slowest does)."""
CONNECT_SECONDS: Final = 5.0
"""How long reaching a ``distributed`` scheduler may take before the batch gives up."""


Located = tuple[str, str]
"""A session id and where the listing found its log (``""``: not found, the worker looks)."""


class Shipped:
    """A store's recipe in a dask task: pickled with cloudpickle when a scheduler sends it to
    worker processes, where a store that does not pickle is INVALID_CONFIG saying so (dask's
    own pickling raised a bare ``TypeError``; threads need no pickling).

    >>> import pickle, threading; from sessionref.log.store import MemoryStore
    >>> pickle.loads(pickle.dumps(Shipped(lambda: MemoryStore([]))))().headers()
    []
    >>> pickle.dumps(Shipped(functools.partial(id, threading.Lock())))
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: the store does not pickle, and the scheduler sends \
it to worker processes (cannot pickle '_thread.lock' object): give a store that pickles, a \
root path, or the threads scheduler
    """

    def __init__(self, recipe: StoreFactory) -> None:
        self.recipe = recipe
        self.token = uuid.uuid4().hex  # dask's name for it, made without pickling it

    def __call__(self) -> Store:
        return self.recipe()

    def __dask_tokenize__(self) -> str:
        return self.token

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        try:
            data = cloudpickle.dumps(self.recipe)
        except Exception as exc:
            sent = "the store does not pickle, and the scheduler sends it to worker processes"
            advice = "give a store that pickles, a root path, or the threads scheduler"
            raise SessionReferenceError(
                f"{sent} ({describe(exc)}): {advice}", INVALID_CONFIG
            ) from None
        return (_unshipped, (data,))


def _unshipped(data: bytes) -> Shipped:
    """A :class:`Shipped` recipe again, in a worker."""
    return Shipped(cloudpickle.loads(data))


def _partition(
    sessions: Iterable[Located],
    store: StoreFactory,
    max_bytes: int,
    label: Label,
    target: str,
    redaction: Redaction | None,
) -> list[ResultLine]:
    """The results of one partition's sessions, in order, read where the listing found them
    (the worker does not list the root again): a directory store's partition carries where
    its logs are; any other store's recipe says it itself."""
    sessions = list(sessions)
    if isinstance(store, DirectoryRecipe):
        listed = tuple((session_id, path) for session_id, path in sessions if path)
        store = msgspec.structs.replace(store, listed=listed)
    resolver = SessionReferenceResolver(
        store(), max_reference_bytes=max_bytes, redact=redaction or False
    )
    snapshot = Snapshotter(resolver, Target(target), label)
    return [snapshot(session_id) for session_id, _ in sessions]


def snapshots_bag(
    store: str | os.PathLike[str] | Store,
    *,
    max_reference_bytes: int = DEFAULT_MAX_REFERENCE_BYTES,
    label: Label = "id",
    partition_size: int = DEFAULT_PARTITION_SIZE,
    session_ids: Iterable[str] | None = None,
    redact: bool | Redaction = False,
    redact_patterns: Sequence[str] = (),
) -> db.Bag:
    """A bag of every stored session's batch result, in listing order: see
    :func:`result_lines_bag`; each line is decoded where it is made.

    >>> from sessionref.log.store import MemoryStore
    >>> snapshots_bag(MemoryStore([]), partition_size=4, session_ids=[]).npartitions
    1
    """
    options = (max_reference_bytes, label, partition_size, "partition_size")
    checked = batch_arguments("snapshots_bag", store, options, session_ids, redact, redact_patterns)
    lines = _lines_bag(checked)
    bag: db.Bag = lines.map(ResultLine.decoded)  # type: ignore[no-untyped-call]
    return bag


def result_lines_bag(
    store: str | os.PathLike[str] | Store,
    *,
    max_reference_bytes: int = DEFAULT_MAX_REFERENCE_BYTES,
    label: Label = "id",
    partition_size: int = DEFAULT_PARTITION_SIZE,
    session_ids: Iterable[str] | None = None,
    redact: bool | Redaction = False,
    redact_patterns: Sequence[str] = (),
) -> db.Bag:
    """A bag of every stored session's :class:`~sessionref.batch.core.ResultLine`, in order.

    ``store`` is any store (:class:`~sessionref.log.protocol.Store`), or a root path of any
    harness, read with the default limits (:func:`~sessionref.batch.arguments.batch_store`). It is
    listed now, once, and rebuilt where each partition of ``partition_size`` sessions runs
    (:func:`~sessionref.batch.core.portable_store`): a :class:`DirectoryStore`'s partitions
    carry where their logs are (its size and line limits go to the workers); a store over
    several roots is told where each session is. Its roots
    must be reachable from every worker, at the same absolute paths (the paths sent are
    absolute). ``session_ids`` replaces the listing, as in
    :func:`~sessionref.batch.build_snapshots`, and so do ``redact`` and ``redact_patterns``.

    >>> from sessionref.log.store import MemoryStore
    >>> result_lines_bag(MemoryStore([]), partition_size=4, session_ids=[]).npartitions
    1
    """
    options = (max_reference_bytes, label, partition_size, "partition_size")
    caller = "result_lines_bag"
    return _lines_bag(batch_arguments(caller, store, options, session_ids, redact, redact_patterns))


def _lines_bag(checked: BatchArguments) -> db.Bag:
    """The bag of :func:`result_lines_bag` of checked arguments (its count: the partition
    size)."""
    given = checked.session_ids
    ids = listing_order(checked.store) if given is None else given
    target = fresh_target(ids).id
    recipe = portable_store(checked.store, ids)
    paths = dict(recipe.listed) if isinstance(recipe, DirectoryRecipe) else {}
    located = [(session_id, paths.get(session_id, "")) for session_id in ids]
    size = min(checked.engine_count, max(1, len(located)))  # dask allocates per unit of size
    sessions = db.from_sequence(located, partition_size=size)  # type: ignore[no-untyped-call]
    shared = (
        msgspec.structs.replace(recipe, listed=())
        if isinstance(recipe, DirectoryRecipe)
        else dask.delayed(Shipped(recipe), pure=True)  # type: ignore[attr-defined]
    )
    bag: db.Bag = sessions.map_partitions(
        _partition, shared, checked.max_bytes, checked.label, target, checked.redaction
    )
    return bag


def iter_partitions(bag: db.Bag, window: int, **compute: Any) -> Iterator[Any]:
    """The bag's items in order, computing ``window`` partitions at a time (bounded memory).

    ``compute`` goes to :func:`dask.compute` (``scheduler=…``, ``pool=…``).

    >>> list(iter_partitions(db.from_sequence(range(5), npartitions=3), 2, scheduler="sync"))
    [0, 1, 2, 3, 4]
    """
    parts = bag.to_delayed()  # type: ignore[no-untyped-call]
    for start in range(0, len(parts), window):
        window_parts = parts[start : start + window]
        for items in dask.compute(*window_parts, **compute):  # type: ignore[attr-defined,no-untyped-call]
            yield from items


def check_reachable(address: str, seconds: float = CONNECT_SECONDS) -> None:
    """Raise ``SESSION_REFERENCE_INVALID_CONFIG`` unless a scheduler address answers.

    ``distributed`` itself retries a refused connection for 30 seconds; this fails at once.
    In-process and UCX addresses are left to ``distributed``.

    >>> try:
    ...     check_reachable("tcp://127.0.0.1:9")
    ... except SessionReferenceError as exc:
    ...     print(exc.message)
    cannot reach the dask scheduler tcp://127.0.0.1:9: Connection refused
    """
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme not in ("tcp", "tls", "ws", "wss"):
        return
    try:
        with socket.create_connection((parts.hostname or "", parts.port or 8786), seconds):
            pass
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        message = f"cannot reach the dask scheduler {address}: {reason}"
        raise SessionReferenceError(message, INVALID_CONFIG) from None


async def _handshake(address: str, seconds: float) -> None:
    """Connect to ``address`` as ``distributed`` does, handshake included, then hang up."""
    # Imported here: distributed is heavy, and only a --scheduler run needs it.
    from distributed.comm.core import connect

    comm = await connect(address, timeout=seconds)  # type: ignore[no-untyped-call]
    await comm.close()


def check_scheduler(address: str, seconds: float = CONNECT_SECONDS) -> None:
    """Raise ``SESSION_REFERENCE_INVALID_CONFIG`` unless a dask scheduler answers at
    ``address`` within about ``seconds``.

    ``distributed`` waits for the handshake without a time limit: a server that accepts and
    says nothing would hang the batch, and one speaking another protocol (HTTP) fails in
    odd ways (a timeout, a MemoryError). Here the whole handshake is bounded.
    """
    check_reachable(address, seconds)
    try:
        asyncio.run(asyncio.wait_for(_handshake(address, seconds), seconds))
    except TimeoutError:
        reason = f"no dask handshake within {seconds:g} s (is it a dask scheduler?)"
    except Exception as exc:  # anything the far end made distributed raise
        reason = f"it does not answer as a dask scheduler ({type(exc).__name__})"
    else:
        return
    message = f"cannot connect to the dask scheduler {address}: {reason}"
    raise SessionReferenceError(message, INVALID_CONFIG) from None


def _ignoring(
    kind: type[BaseException], loop: asyncio.AbstractEventLoop, context: dict[str, Any]
) -> None:
    """An asyncio exception handler that drops exceptions of ``kind`` and passes on the rest.

    An interrupted ``compute`` leaves a gather that ends with ``AllExit`` when the client
    closes; nobody awaits it, and asyncio would print its traceback.
    """
    if not isinstance(context.get("exception"), kind):
        loop.default_exception_handler(context)


def root_problem(root: str) -> str | None:
    """Why the directory ``root`` cannot be read here (``None``: it can).

    >>> root_problem("/"), root_problem("/nonexistent")
    (None, 'No such file or directory')
    """
    try:
        with os.scandir(root) as entries:
            next(entries, None)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def check_root_on_a_worker(client: Any, root: str) -> None:
    """Raise ``SESSION_REFERENCE_INVALID_CONFIG`` unless one worker of ``client``'s cluster
    reads ``root`` (every worker reads the logs below it where the listing found them)."""
    workers: dict[str, int] = client.nthreads()
    if not workers:  # none yet: the run waits for one, as distributed does
        return
    (worker, problem), *_ = client.run(root_problem, root, workers=[next(iter(workers))]).items()
    if problem is not None:
        message = f"the store {root} cannot be read on the dask worker {worker}: {problem}"
        raise SessionReferenceError(message, INVALID_CONFIG)


def _iter_distributed(
    bag: db.Bag, address: str, workers: int, roots: Sequence[str]
) -> Iterator[Any]:
    # Imported here: distributed is heavy, and only a --scheduler run needs it.
    from distributed import Client
    from distributed.client import AllExit

    check_scheduler(address)
    try:
        client = Client(address, set_as_default=False, timeout=CONNECT_SECONDS)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError, ValueError) as exc:
        message = f"cannot connect to the dask scheduler {address}: {exc}"
        raise SessionReferenceError(message, INVALID_CONFIG) from None
    io_loop: Any = client.loop  # tornado's AsyncIOLoop, around the asyncio loop
    io_loop.asyncio_loop.set_exception_handler(functools.partial(_ignoring, AllExit))
    with client:
        for root in roots:
            check_root_on_a_worker(client, root)
        threads: dict[str, int] = client.nthreads()  # type: ignore[no-untyped-call]
        window = max(workers, sum(threads.values()))
        yield from iter_partitions(bag, window, scheduler=client)


def iter_bag(
    bag: db.Bag, *, workers: int = 1, scheduler: str | None = None, roots: Sequence[str] = ()
) -> Generator[Any, None, None]:
    """The bag's items in order, on a local scheduler or the ``distributed`` one at ``scheduler``
    (where, given the ``roots`` of the stores the bag reads, one worker is first asked to read
    each: :func:`check_root_on_a_worker`).

    Locally, one worker computes in this process; more run a pool of ``workers`` processes
    (at most one per partition and 2 per CPU: :func:`~sessionref.pool_start.pool_size`),
    which ignore Ctrl-C and are ended at once if the iteration stops early (an interrupt);
    one that dies raises :class:`~sessionref.worker_deaths.WorkerDied`. ``bag`` (a dask bag),
    ``workers`` (a positive safe integer) and ``scheduler`` (an address or ``None``) are
    checked at once: INVALID_CONFIG naming them.

    >>> list(iter_bag(db.from_sequence(["a", "b"])))
    ['a', 'b']
    >>> iter_bag(db.from_sequence(["a", "b"]), workers=0)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: iter_bag workers must be a positive safe integer, not 0
    >>> iter_bag(["a", "b"])
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: iter_bag bag must be a dask bag, not list
    """
    bag = instance(bag, db.Bag, "iter_bag bag", "a dask bag")
    workers = positive_count(workers, "iter_bag workers")
    if scheduler is not None:
        scheduler = string(scheduler, "iter_bag scheduler")
    return _iter_bag(bag, workers, scheduler, roots)


def _iter_bag(
    bag: db.Bag, workers: int, scheduler: str | None, roots: Sequence[str]
) -> Generator[Any, None, None]:
    """:func:`iter_bag` of checked arguments."""
    processes = pool_size(workers, bag.npartitions)  # local ones: none with a scheduler
    if scheduler is not None:
        yield from _iter_distributed(bag, scheduler, workers, roots)
    elif processes == 1:
        yield from iter_partitions(bag, 1, scheduler="synchronous")
    else:
        with worker_pool(processes) as pool:
            window = WINDOW_PER_WORKER * processes
            # chunksize 1: dask's default batches 6 ready tasks into one submission, which ran
            # a window's partitions one after the other in a single worker
            yield from iter_partitions(bag, window, scheduler="processes", pool=pool, chunksize=1)
