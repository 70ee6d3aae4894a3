"""What a worker process that dies while its pool is in use (``kill -9``, the OOM killer, a
crash) does to the pool (:mod:`sessionref.pool`): the pool ends, and one coded error,
:class:`WorkerDied`, names the worker and how it ended.

>>> print(worker_died(7, -9))
worker process 7 died (killed by SIGKILL) while it worked
"""

from __future__ import annotations

import signal
from typing import Final

from sessionref.errors import READ_FAILED, SessionReferenceError

ENDED_STATUS: Final = 128 + signal.SIGTERM
"""How a worker the pool ends exits."""


class WorkerDied(SessionReferenceError):
    """A worker process ended while its pool was in use (``kill -9``, the OOM killer, a
    crash): the work it had is lost, and the pool with it."""

    def __init__(self, message: str, code: str = READ_FAILED) -> None:
        super().__init__(message, code)


def worker_died(pid: int, status: int | None) -> WorkerDied:
    """The error of a pool broken by the death of its worker ``pid``, which ended with exit
    status ``status`` (as :attr:`multiprocessing.Process.exitcode` gives it, ``-N`` for
    signal N; ``None`` when another thread reaped it first).

    >>> print(worker_died(12, 3))
    worker process 12 died (exit status 3) while it worked
    >>> print(worker_died(11, None))
    worker process 11 died while it worked
    """
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
