"""What runs in a worker process of :mod:`sessionref.pool`: its start (signals, its parent,
the engine's initializer), then its loop: take a task from its task pipe, run it, send what
came of it back on its result pipe.

A terminal sends SIGINT to the whole process group. The workers ignore it: the parent alone
decides, and ends its workers with SIGTERM. SIGTERM ends a worker at once while it runs a
task or waits for one; while it sends a result it is remembered, and the worker exits as it
takes its next task (a result is sent whole, or its worker is gone).

A parent that dies without ending its workers (``kill -9``, the OOM killer) takes them with
it (:func:`die_with_parent`): on Linux the kernel kills each worker as its parent ends
(``PR_SET_PDEATHSIG``), and everywhere a thread of the worker sees it orphaned within
:data:`PARENT_WATCH_SECONDS`. (Children of a fork server watch the fork server, which ends
when the process that started it ends.)

Each message is one pickle: a task is ``(fn, args, kwargs)``, what came of it ``(True,
value)`` or ``(False, exception)`` (:func:`run`); an empty message ends the work.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from types import FrameType
from typing import Any, Final

from sessionref.errors import describe
from sessionref.worker_deaths import ENDED_STATUS

ORPHANED_STATUS: Final = 128 + signal.SIGKILL
"""How a worker whose parent is gone exits (as the kernel's SIGKILL would end it)."""
PARENT_WATCH_SECONDS: Final = 0.5
"""How often a worker checks that its parent is still there."""
PR_SET_PDEATHSIG: Final = 1
"""Linux ``prctl`` option: the signal the kernel sends a process when its parent ends."""
HELD_AT_START: Final = frozenset({signal.SIGINT, signal.SIGTERM})
"""The signals held while a worker starts, until it handles them as a worker (a Ctrl-C or a
SIGTERM that came meanwhile is then taken): before, it would run its parent's handlers, and
end with a traceback on stderr."""

_giving = False
_ended = False


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """In a worker: exit now, unless a result is being sent (then as the next task is taken)."""
    global _ended
    _ended = True
    if not _giving:
        os._exit(ENDED_STATUS)


def _set_parent_death_signal(signum: int) -> None:
    """Have the kernel send ``signum`` to this process when its parent ends (Linux
    ``prctl(PR_SET_PDEATHSIG)``; elsewhere, or if refused, nothing happens).

    The kernel's parent is the *thread* that started the process: a pool is made in the
    thread that uses it (as every ``with worker_pool(...)`` block is), and starts its workers
    there.
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
    every :data:`PARENT_WATCH_SECONDS` is the fallback (it never takes a SIGTERM: that goes
    to the thread that takes and runs the tasks). A parent already gone when this runs ends
    the worker here.
    """
    _set_parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent:  # it went before the signal was set
        os._exit(ORPHANED_STATUS)
    watch = threading.Thread(target=_watch_parent, args=(parent,), name="parent-watch")
    watch.daemon = True
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # the thread's own mask
    try:
        watch.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _start(
    owner: int, method: str, initializer: Callable[..., None] | None, initargs: tuple[Any, ...]
) -> BaseException | None:
    """Die with the pool's ``owner`` (or, started by ``method`` ``forkserver``, with the fork
    server), ignore Ctrl-C, end on SIGTERM, then the engine's initializer: what it raised,
    if it did (every task is then answered with it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # one that came since the fork is dropped
    die_with_parent(os.getppid() if method == "forkserver" else owner)
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_AT_START)  # held as the pool started it
    if initializer is not None:
        try:
            initializer(*initargs)
        except BaseException as exc:
            return exc
    return None


def run(task: bytes) -> bytes:
    """What came of a pickled task ``(fn, args, kwargs)``, pickled: ``(True, value)``, or
    ``(False, exception)`` when it raised, or when what came of it does not pickle (a
    :class:`pickle.PicklingError` saying so).

    >>> pickle.loads(run(pickle.dumps((pow, (2, 5), {}))))
    (True, 32)
    >>> pickle.loads(run(pickle.dumps((int, ("x",), {}))))
    (False, ValueError("invalid literal for int() with base 10: 'x'"))
    >>> print(pickle.loads(run(pickle.dumps((threading.Lock, (), {}))))[1])
    the task's result does not pickle: cannot pickle '_thread.lock' object
    """
    outcome: tuple[bool, Any]
    try:
        fn, args, kwargs = pickle.loads(task)
        outcome = (True, fn(*args, **kwargs))
    except BaseException as exc:  # a task's SystemExit is its own error, not its worker's end
        outcome = (False, exc)
    return reply(outcome)


def reply(outcome: tuple[bool, Any]) -> bytes:
    """``outcome`` pickled, or, when it does not pickle, the error that says so.

    >>> ok, error = pickle.loads(reply((False, threading.Lock())))
    >>> ok, type(error).__name__
    (False, 'PicklingError')
    """
    try:
        return pickle.dumps(outcome, pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        what = "result" if outcome[0] else "error"
        failure = pickle.PicklingError(f"the task's {what} does not pickle: {describe(exc)}")
        return pickle.dumps((False, failure), pickle.HIGHEST_PROTOCOL)


def _give(results: Connection, message: bytes) -> None:
    """Send what came of a task whole, then exit if a SIGTERM came meanwhile (or the parent
    no longer reads)."""
    global _giving
    _giving = True
    try:
        results.send_bytes(message)
    except OSError:  # the pool's end is closed: it has gone
        os._exit(ENDED_STATUS)
    _giving = False
    if _ended:
        os._exit(ENDED_STATUS)


def serve(
    tasks: Connection,
    results: Connection,
    owner: int,
    method: str,
    initializer: Callable[..., None] | None,
    initargs: tuple[Any, ...],
) -> None:
    """A worker process's life: start (:func:`_start`), then run each task from ``tasks``
    and send what came of it on ``results``, until the end of the work (an empty message,
    or the pool's end of the pipe closed)."""
    failed = _start(owner, method, initializer, initargs)
    while True:
        try:
            task = tasks.recv_bytes()
        except EOFError:
            return
        if not task:
            return
        _give(results, run(task) if failed is None else reply((False, failed)))
