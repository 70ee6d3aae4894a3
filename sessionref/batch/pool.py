"""Worker process pools that stop at once on Ctrl-C, for the local and the Dask engines.

A terminal sends SIGINT to the whole process group. The workers ignore it: the parent alone
decides, and ends its workers with SIGTERM. A worker must never die while it talks to the
parent (a half-written result leaves the pool's manager thread waiting forever, and the
interpreter waits for that thread at exit), so SIGTERM ends a worker only while it runs a
task; between tasks it is remembered, and the worker exits as it takes its next task or the
pool's end-of-work marker.

>>> with worker_pool(1) as pool:
...     pool.submit(pow, 2, 5).result()
32
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from types import FrameType
from typing import Any, Final, TypeVar

from sessionref.batch.core import process_context

R = TypeVar("R")

WORKER_EXIT_SECONDS: Final = 10.0
"""How long an ended worker may take to go before it is killed outright."""
ENDED_STATUS: Final = 128 + signal.SIGTERM

_running_task = False
_ended = False


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """In a worker: exit now if a task runs, else as soon as the next one is taken."""
    global _ended
    _ended = True
    if _running_task:
        os._exit(ENDED_STATUS)


def _start_worker(initializer: Callable[..., None] | None, *initargs: Any) -> None:
    """Pool initializer: ignore Ctrl-C, end cleanly on SIGTERM, then the engine's own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_sigterm)
    if initializer is not None:
        initializer(*initargs)


def _run_task(fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """In a worker: run one task, marked as running so SIGTERM may end it at once."""
    global _running_task
    _running_task = True
    try:
        if _ended:
            os._exit(ENDED_STATUS)
        return fn(*args, **kwargs)
    finally:
        _running_task = False


class WorkerPool(ProcessPoolExecutor):
    """A :class:`ProcessPoolExecutor` whose workers ignore SIGINT and can be :meth:`end`-ed."""

    def __init__(
        self,
        workers: int,
        initializer: Callable[..., None] | None = None,
        initargs: tuple[Any, ...] = (),
    ) -> None:
        super().__init__(
            workers,
            mp_context=process_context(),
            initializer=_start_worker,
            initargs=(initializer, *initargs),
        )

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> Future[R]:
        """Run ``fn(*args, **kwargs)`` in a worker (see :func:`_run_task`)."""
        return super().submit(_run_task, fn, *args, **kwargs)

    def end(self) -> None:
        """Shut down without waiting for the work in flight, and end the worker processes.

        A plain ``shutdown(wait=True)`` would wait for every session in flight.
        """
        processes = list((self._processes or {}).values())
        self.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(WORKER_EXIT_SECONDS)
            if process.is_alive():  # pragma: no cover - a worker stuck in the kernel
                process.kill()
                process.join()


@contextlib.contextmanager
def worker_pool(
    workers: int, initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()
) -> Iterator[WorkerPool]:
    """A :class:`WorkerPool`, shut down normally if the block completes and ended at once if
    it does not (an interrupt, an error, an iterator closed early)."""
    pool = WorkerPool(workers, initializer, initargs)
    try:
        yield pool
    except BaseException:
        pool.end()
        raise
    pool.shutdown(wait=True)
