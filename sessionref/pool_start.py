"""How a pool's worker processes start (:mod:`sessionref.pool`): forked while this process
runs one thread, else by a fork server or spawned, and what stops them from starting, as one
coded error.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from sessionref.errors import INVALID_CONFIG, SessionReferenceError, describe
from sessionref.worker_deaths import RERAN_MAIN_STATUS, main_rerun, unguarded

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext, ForkServerContext, SpawnContext

    StartContext = ForkContext | ForkServerContext | SpawnContext

WORKERS_PER_CPU: Final = 2
"""The most worker processes a batch starts per CPU it may use (:func:`pool_size`): its
work is CPU-bound (a batch's CPU time is its wall time), so one per CPU keeps every CPU busy
and a second lets one run while another waits on a disk; more only cost their start and
memory."""


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity where the system keeps one (Linux:
    ``taskset``, a container's cpuset), else every CPU of the machine; one when unknown.

    >>> 1 <= usable_cpus() <= (os.cpu_count() or 1)
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity here (macOS, Windows)
        return os.cpu_count() or 1


def pool_size(asked: int, tasks: int, cpus: int | None = None) -> int:
    """How many worker processes to start when ``asked`` for ``tasks`` tasks: never more
    than the tasks (the others would have nothing to do), nor than :data:`WORKERS_PER_CPU`
    per CPU (``cpus``, by default :func:`usable_cpus`); at least one (then no pool at all).

    >>> pool_size(500, 1000, cpus=2), pool_size(3, 1000, cpus=2), pool_size(500, 3, cpus=64)
    (4, 3, 3)
    >>> pool_size(4, 0, cpus=2)
    1
    """
    return max(1, min(asked, tasks, WORKERS_PER_CPU * (usable_cpus() if cpus is None else cpus)))


def cannot_start(
    workers: int, started: int, cause: OSError, method: str = "fork"
) -> SessionReferenceError:
    """The error of a pool of ``workers`` whose worker ``started + 1`` could not start (each
    holds a few open files and a process of the user's). A worker started by ``method``
    ``forkserver`` or ``spawn`` that ended before it read what it was sent (a broken pipe)
    failed in the main module, which it runs again first: asking for fewer does not help.

    >>> print(cannot_start(40, 25, OSError(24, "Too many open files")))
    cannot start 40 worker processes (started 25): Too many open files; ask for fewer
    """
    reason = cause.strerror or describe(cause)
    main = main_rerun()
    if method != "fork" and isinstance(cause, BrokenPipeError) and main is not None:
        return SessionReferenceError(
            f"cannot start {workers} worker processes (started {started}): worker"
            f" {started + 1} ended as it started ({reason}); {unguarded(main)}",
            INVALID_CONFIG,
        )
    return SessionReferenceError(
        f"cannot start {workers} worker processes (started {started}): {reason}; ask for fewer",
        INVALID_CONFIG,
    )


def refuse_rerun() -> None:
    """In a worker that is not forked, as it starts, running the main module again (a script
    that starts a pool at its top level, with no ``if __name__ == '__main__':``): end it at
    once with :data:`~sessionref.worker_deaths.RERAN_MAIN_STATUS`, which its pool reads as
    that, rather than start workers there (multiprocessing refuses, with a traceback on the
    user's terminal for every worker). Anywhere else, nothing.

    >>> refuse_rerun()
    """
    if rerunning_main():
        os._exit(RERAN_MAIN_STATUS)


def rerunning_main(modules: Mapping[str, object] = sys.modules) -> bool:
    """Whether this process is running the main module again, as a worker that is not forked
    (or a fork server) does as it starts: multiprocessing runs it as a module named
    ``__mp_main__`` (the docs' "safe importing of main module"), apart from ``__main__``
    until it has run; then it is ``__main__`` too, and what the worker does later is no
    rerun. Importing multiprocessing makes ``__mp_main__`` the ``__main__`` of that time, so
    a launcher that imports it and then runs a script as ``__main__`` (runpy, a debugger,
    ``coverage run``) has the two apart too: its ``__mp_main__`` is named ``__main__``.

    >>> import types
    >>> launcher, rerun = types.ModuleType("__main__"), types.ModuleType("__mp_main__")
    >>> rerunning_main({"__main__": launcher})
    False
    >>> rerunning_main({"__main__": launcher, "__mp_main__": rerun})  # as it runs
    True
    >>> rerunning_main({"__main__": rerun, "__mp_main__": rerun})  # once it has run
    False
    >>> rerunning_main({"__main__": types.ModuleType("__main__"), "__mp_main__": launcher})
    False
    """
    rerun = modules.get("__mp_main__")
    return (
        rerun is not None
        and getattr(rerun, "__name__", None) == "__mp_main__"
        and rerun is not modules.get("__main__")
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


def process_context() -> StartContext:
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
    if "forkserver" in methods:
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


def single_threaded(tasks: str = "/proc/self/task", patience: float = 0.05) -> bool:
    """Whether this process runs one thread as the kernel counts them (native threads too);
    ``False`` where it cannot tell (no ``tasks`` directory: not Linux).

    A thread Python has joined (a pool's collector thread) leaves the kernel's count a moment
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
