"""What a worker process that dies while its pool is in use (``kill -9``, the OOM killer, a
crash) does to the pool (:mod:`sessionref.pool`): the pool ends, and one coded error,
:class:`WorkerDied`, names the worker and how it ended.

Three things stood in the way in :class:`~concurrent.futures.ProcessPoolExecutor`: it raised a
bare ``BrokenProcessPool``; a worker killed while it sent a result left the pool's manager
thread reading the rest of it forever, so the pool never broke (:class:`DeathWatch`); and
before Python 3.12 a future cancelled as the pool broke failed that thread
(:class:`Withdrawable`).

>>> print(worker_died([(7, -9)]))
worker process 7 died (killed by SIGKILL) while it worked
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import multiprocessing.process
import signal
import threading
from concurrent.futures import Future, InvalidStateError
from typing import Any, Final, Protocol

from sessionref.errors import READ_FAILED, SessionReferenceError

ENDED_STATUS: Final = 128 + signal.SIGTERM
"""How a worker the pool ends exits."""
WATCH_SECONDS: Final = 0.5
"""How soon :class:`DeathWatch` sees a worker started after it began to watch."""


class Watched(Protocol):
    """What :class:`DeathWatch` asks of the pool it watches."""

    def processes(self) -> list[multiprocessing.process.BaseProcess]:
        """The worker processes started so far."""
        ...

    def unstick(self, dead: multiprocessing.process.BaseProcess) -> None:
        """End the others after the death of ``dead``, and unblock the pool's thread."""
        ...


class Withdrawable(Future[Any]):
    """A pool's future that may be cancelled before a worker takes it, however the pool ends.

    Before Python 3.12, a pool broken by a dying worker set its error on every future it
    still held, a cancelled one too, which raised :class:`InvalidStateError` in the pool's
    manager thread (gh-107219): a traceback on stderr, and the other workers never ended.

    >>> future = Withdrawable()
    >>> future.cancel(), future.set_exception(RuntimeError("broken")), future.cancelled()
    (True, None, True)
    """

    def set_exception(self, exception: BaseException | None) -> None:
        """Set the error, unless the future was cancelled (then it has none)."""
        try:
            super().set_exception(exception)
        except InvalidStateError:
            if not self.cancelled():
                raise


class DeathWatch:
    """A thread of the pool's process that sees the first of its workers to die while the pool
    is in use (:attr:`dead`), then kills the others and closes this process's end of the
    result pipe (:meth:`~sessionref.pool.WorkerPool.unstick`).

    A worker killed as it sent a result leaves the pool's manager thread waiting for the rest
    of that result, forever: the pool never broke, and the batch hung. With every writer of
    the pipe gone, that read ends, and the pool breaks as it should."""

    def __init__(self, pool: Watched) -> None:
        self.pool = pool
        self.dead: multiprocessing.process.BaseProcess | None = None
        self._wake, self._waker = multiprocessing.Pipe(duplex=False)
        self._thread = threading.Thread(target=self._watch, name="worker-watch", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        """Wait for a worker's end, or to be stopped; workers started since are seen within
        :data:`WATCH_SECONDS`."""
        while True:
            workers = {p.sentinel: p for p in self.pool.processes()}
            ready = multiprocessing.connection.wait([self._wake, *workers], WATCH_SECONDS)
            if self._wake in ready:
                return
            dead = [workers[sentinel] for sentinel in workers if sentinel in ready]
            if len(dead) == 1:
                self.dead = dead[0]
                self.pool.unstick(dead[0])
            if dead:  # several: the pool broke, and its thread ended the others
                return

    def stop(self, patience: float = 0.0) -> None:
        """Stop watching (before the pool ends its workers itself), once the watch has
        looked at the workers for ``patience`` seconds."""
        self._thread.join(patience)
        with contextlib.suppress(OSError):
            self._waker.send_bytes(b"")
        self._thread.join()
        self._wake.close()
        self._waker.close()


class WorkerDied(SessionReferenceError):
    """A worker process ended while its pool was in use (``kill -9``, the OOM killer, a
    crash): the work it had is lost, and the pool with it."""

    def __init__(self, message: str, code: str = READ_FAILED) -> None:
        super().__init__(message, code)


def worker_died(ended: list[tuple[int, int | None]]) -> WorkerDied:
    """The error of a pool broken by the death of one of its workers, given the process id
    and exit status of those that had ended (:meth:`~sessionref.pool.WorkerPool.ended`):
    the first that neither finished nor was ended by the pool as it broke.

    >>> print(worker_died([(11, ENDED_STATUS), (12, -9)]))
    worker process 12 died (killed by SIGKILL) while it worked
    >>> print(worker_died([(11, 0), (12, 3)]))
    worker process 12 died (exit status 3) while it worked
    >>> print(worker_died([(11, None)]))
    worker process 11 died while it worked
    >>> print(worker_died([(11, 0)]))
    a worker process died while it worked
    """
    ended_by_pool = {0, ENDED_STATUS, -signal.SIGTERM}
    dead = [(pid, status) for pid, status in ended if status not in ended_by_pool]
    if not dead:
        return WorkerDied("a worker process died while it worked")
    pid, status = dead[0]
    how = "" if status is None else f" ({ending(status)})"
    return WorkerDied(f"worker process {pid} died{how} while it worked")


def ending(status: int) -> str:
    """How a process ended, from its exit status (``-N``: signal N).

    >>> ending(-9), ending(2), ending(-99)
    ('killed by SIGKILL', 'exit status 2', 'killed by signal 99')
    """
    if status >= 0:
        return f"exit status {status}"
    try:
        return f"killed by {signal.Signals(-status).name}"
    except ValueError:
        return f"killed by signal {-status}"
