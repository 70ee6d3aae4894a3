"""The one worker process pool (the batch engines and the index build use it): workers that
stop at once on Ctrl-C and never outlive the process that started them.

A terminal sends SIGINT to the whole process group. The workers ignore it: the parent alone
decides, and ends its workers with SIGTERM. A worker must never die while it talks to the
parent (a half-written result leaves the pool's manager thread waiting forever, and the
interpreter waits for that thread at exit), so SIGTERM ends a worker only while it runs a
task; between tasks it is remembered, and the worker exits as it takes its next task or the
pool's end-of-work marker.

A parent that dies without ending its workers (``kill -9``, the OOM killer) takes them with
it (:func:`die_with_parent`): on Linux the kernel kills each worker as its parent ends
(``PR_SET_PDEATHSIG``), and everywhere a thread of the worker sees it orphaned within
:data:`PARENT_WATCH_SECONDS`. (Children of a fork server watch the fork server, which ends
when the process that started it ends.)

A worker that dies while the pool is in use (``kill -9``, the OOM killer) breaks it: the pool
is ended and :class:`~sessionref.worker_deaths.WorkerDied` raised, one coded error naming the
worker and how it ended, never a bare ``BrokenProcessPool`` nor a hang
(:mod:`sessionref.worker_deaths`).

>>> with worker_pool(1) as pool:
...     pool.submit(pow, 2, 5).result()
32
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import FrameType
from typing import Any, Final, TypeVar

from sessionref.errors import INVALID_CONFIG, SessionReferenceError, describe
from sessionref.worker_deaths import ENDED_STATUS, DeathWatch, Withdrawable, worker_died

R = TypeVar("R")

WORKER_EXIT_SECONDS: Final = 10.0
"""How long an ended worker may take to go before it is killed outright."""
ORPHANED_STATUS: Final = 128 + signal.SIGKILL
"""How a worker whose parent is gone exits (as the kernel's SIGKILL would end it)."""
PARENT_WATCH_SECONDS: Final = 0.5
"""How often a worker checks that its parent is still there."""
PR_SET_PDEATHSIG: Final = 1
"""Linux ``prctl`` option: the signal the kernel sends a process when its parent ends."""

_running_task = False
_ended = False


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """In a worker: exit now if a task runs, else as soon as the next one is taken."""
    global _ended
    _ended = True
    if _running_task:
        os._exit(ENDED_STATUS)


def _set_parent_death_signal(signum: int) -> None:
    """Have the kernel send ``signum`` to this process when its parent ends (Linux
    ``prctl(PR_SET_PDEATHSIG)``; elsewhere, or if refused, nothing happens).

    The kernel's parent is the *thread* that started the process: a pool is used from the
    thread that made it (as every ``with worker_pool(...)`` block is).
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # only a worker process on Linux loads it

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return


def _watch_parent(parent: int) -> None:
    """In a worker's own thread: exit the worker as soon as ``parent`` is no longer its
    parent (it died, and the worker was handed to another process)."""
    while os.getppid() == parent:
        time.sleep(PARENT_WATCH_SECONDS)
    os._exit(ORPHANED_STATUS)


def die_with_parent(parent: int) -> None:
    """In a worker process started by ``parent``: end with it, whatever ends it.

    The kernel's signal (where there is one) ends the worker at once; a thread that checks
    every :data:`PARENT_WATCH_SECONDS` is the fallback. A parent already gone when this
    runs ends the worker here.
    """
    _set_parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent:  # it went before the signal was set
        os._exit(ORPHANED_STATUS)
    watch = threading.Thread(target=_watch_parent, args=(parent,), name="parent-watch")
    watch.daemon = True
    watch.start()


def _start_worker(
    owner: int, method: str, initializer: Callable[..., None] | None, *initargs: Any
) -> None:
    """Pool initializer: die with the pool's ``owner`` (or, started by ``method``
    ``forkserver``, with the fork server), ignore Ctrl-C, end cleanly on SIGTERM, then the
    engine's own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # one that came since the fork is dropped
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked by _spawn_process
    die_with_parent(os.getppid() if method == "forkserver" else owner)
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
    """A :class:`ProcessPoolExecutor` whose workers ignore SIGINT and can be :meth:`end`-ed,
    watched while it is in use (:class:`DeathWatch`)."""

    watch: DeathWatch | None = None

    def __init__(
        self,
        workers: int,
        initializer: Callable[..., None] | None = None,
        initargs: tuple[Any, ...] = (),
    ) -> None:
        context = process_context()
        self.workers = workers
        if context.get_start_method() != "fork":
            check_pickles(initargs)
        super().__init__(
            workers,
            mp_context=context,
            initializer=_start_worker,
            initargs=(os.getpid(), context.get_start_method(), initializer, *initargs),
        )

    def _spawn_process(self) -> None:
        """Start a worker with SIGINT blocked: a Ctrl-C before its initializer ignores it
        would end it with a traceback on stderr. The worker unblocks it once it ignores it
        (:func:`_start_worker`); here, one that came meanwhile is taken after the start."""
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            super()._spawn_process()  # type: ignore[misc]
        except OSError as exc:  # out of processes or open files: say so, and how many
            raise cannot_start(self.workers, len(self._processes or {}), exc) from None
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> Future[R]:
        """Run ``fn(*args, **kwargs)`` in a worker (see :func:`_run_task`); the future may
        be cancelled whatever then befalls the pool (:class:`Withdrawable`)."""
        future = super().submit(_run_task, fn, *args, **kwargs)
        future.__class__ = Withdrawable  # nothing has seen it yet: made here, not yet cancelled
        if self.watch is None:  # once the workers are started (all of them, when forked)
            self.watch = DeathWatch(self)
        return future

    def processes(self) -> list[multiprocessing.process.BaseProcess]:
        """The worker processes started so far."""
        return list((self._processes or {}).values())

    def unstick(self, dead: multiprocessing.process.BaseProcess) -> None:
        """After the death of worker ``dead``: kill the others (the pool is broken, their work
        lost) and close this process's end of the result pipe, so that a manager thread
        waiting for the rest of a result ``dead`` was sending reads its end instead."""
        for process in self.processes():
            if process is not dead:
                process.kill()
        with contextlib.suppress(OSError, AttributeError):
            self._result_queue._writer.close()  # type: ignore[attr-defined]

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop watching the workers, then shut down as a :class:`ProcessPoolExecutor` does."""
        if self.watch is not None:
            self.watch.stop()
        super().shutdown(wait, cancel_futures=cancel_futures)

    def ended(self) -> list[tuple[int, int | None]]:
        """The process id and exit status (as :attr:`multiprocessing.Process.exitcode` gives
        it, ``-N`` for signal N; ``None`` when another thread is reaping it) of the worker
        whose death :class:`DeathWatch` saw, else of each worker that has ended, once the
        pool's manager thread, which ends and reaps them as the pool breaks, and the watch
        are done (within :data:`WORKER_EXIT_SECONDS`)."""
        manager = getattr(self, "_executor_manager_thread", None)
        if manager is not None:
            manager.join(WORKER_EXIT_SECONDS)
        if self.watch is not None:
            self.watch.stop(WORKER_EXIT_SECONDS)  # it sees a dead worker's sentinel at once
            if self.watch.dead is not None:
                return [(self.watch.dead.pid or 0, self.watch.dead.exitcode)]
        return [(p.pid or 0, p.exitcode) for p in self.processes() if p.exitcode is not None]

    def end(self) -> None:
        """Shut down without waiting for the work in flight, and end the worker processes.

        A plain ``shutdown(wait=True)`` would wait for every session in flight.
        """
        if self.watch is not None:
            self.watch.stop()  # its workers are ended here: none dies on its own
        processes = self.processes()
        # A pool that broke as it started its workers sent them nothing, and has no thread to
        # wake them: they wait for work, which no SIGTERM ends, and may be killed at once.
        started = getattr(self, "_executor_manager_thread", None) is not None
        self.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if started:
                process.terminate()
            else:
                process.kill()
        deadline = time.monotonic() + WORKER_EXIT_SECONDS  # one for all, not one each
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in processes:
            if process.is_alive():  # idle, and never woken (the pool broke as it started)
                process.kill()
                process.join()


@contextlib.contextmanager
def worker_pool(
    workers: int, initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()
) -> Iterator[WorkerPool]:
    """A :class:`WorkerPool`, shut down normally if the block completes (work not begun by
    then is dropped) and ended at once if it does not (an interrupt, an error, an iterator
    closed early)."""
    pool = WorkerPool(workers, initializer, initargs)
    try:
        yield pool
    except BrokenProcessPool:
        dead = pool.ended()  # before end() ends the others
        pool.end()
        raise worker_died(dead) from None
    except BaseException:
        pool.end()
        raise
    pool.shutdown(wait=True, cancel_futures=True)


def cannot_start(workers: int, started: int, cause: OSError) -> SessionReferenceError:
    """The error of a pool of ``workers`` whose worker ``started + 1`` could not start (each
    holds a few open files and a process of the user's).

    >>> print(cannot_start(40, 25, OSError(24, "Too many open files")))
    cannot start 40 worker processes (started 25): Too many open files; ask for fewer
    """
    reason = cause.strerror or describe(cause)
    return SessionReferenceError(
        f"cannot start {workers} worker processes (started {started}): {reason}; ask for fewer",
        INVALID_CONFIG,
    )


def check_pickles(initargs: tuple[Any, ...]) -> None:
    """Raise INVALID_CONFIG when what workers that are not forked start with does not pickle
    (a store of the caller's holding a lock, say), rather than a bare error from deep inside
    the pool as its first worker starts.

    >>> check_pickles(("/root", 3))
    >>> check_pickles((threading.Lock(),))
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: worker processes cannot be started: this process \
runs several threads, so they are not forked, and what they are sent does not pickle \
(cannot pickle '_thread.lock' object); give a store that pickles, or a root path
    """
    try:
        pickle.dumps(initargs)
    except Exception as exc:
        raise SessionReferenceError(
            "worker processes cannot be started: this process runs several threads, so they"
            f" are not forked, and what they are sent does not pickle ({describe(exc)});"
            " give a store that pickles, or a root path",
            INVALID_CONFIG,
        ) from None


def process_context() -> multiprocessing.context.BaseContext:
    """The start method of worker pools: ``fork`` while this process runs a single thread
    (workers start in milliseconds, with every module already imported), else
    ``forkserver`` where there is one, else ``spawn``.

    A multi-threaded parent (a thread pool, a dask client, a progress bar's monitor) is never
    forked: a lock another thread held would stay locked in the child. (Before it forks,
    ``multiprocessing`` flushes stdout and stderr, which a worker flushes again as it exits.)
    """
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and single_threaded():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def single_threaded(tasks: str = "/proc/self/task", patience: float = 0.05) -> bool:
    """Whether this process runs one thread as the kernel counts them (native threads too);
    ``False`` where it cannot tell (no ``tasks`` directory: not Linux).

    A thread Python has joined (a pool's manager thread) leaves the kernel's count a moment
    later: while Python knows of no other thread, the count is given ``patience`` seconds.

    >>> single_threaded("/nonexistent")
    False
    """
    deadline = time.monotonic() + patience
    while True:
        try:
            threads = len(os.listdir(tasks))
        except OSError:
            return False
        if threads == 1:
            return True
        if threading.active_count() > 1 or time.monotonic() > deadline:
            return False
        time.sleep(0.001)
