"""What a worker process that dies while its pool is in use (``kill -9``, the OOM killer, a
crash) does to the pool (:mod:`sessionref.pool`): the pool ends, and one coded error,
:class:`WorkerDied`, names the worker and how it ended.

>>> print(worker_died(7, -9))
worker process 7 died (killed by SIGKILL) while it worked
"""

from __future__ import annotations

import signal
import sys
from types import ModuleType
from typing import Final

from sessionref.errors import INVALID_CONFIG, READ_FAILED, SessionReferenceError

ENDED_STATUS: Final = 128 + signal.SIGTERM
"""How a worker the pool ends exits."""
RERAN_MAIN_STATUS: Final = 86
"""How a worker that was not forked exits when the main module, which it runs again as it
starts, asks it for a pool of its own there (:func:`sessionref.pool_start.refuse_rerun`)."""


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
    main = main_rerun()
    if status == RERAN_MAIN_STATUS and main is not None:
        return WorkerDied(
            f"worker process {pid} ended as it started: {unguarded(main)}", INVALID_CONFIG
        )
    how = "" if status is None else f" ({ending(status)})"
    return WorkerDied(f"worker process {pid} died{how} while it worked")


def main_rerun(main: ModuleType | None = None) -> str | None:
    """The file of the main module (``sys.modules["__main__"]`` unless ``main`` is given),
    which a worker that is not forked runs again as it starts; ``None`` when there is none
    (an interactive session, ``python -c``): then nothing is run again.

    >>> main_rerun(ModuleType("__main__")) is None
    True
    """
    module = sys.modules["__main__"] if main is None else main
    found = getattr(module, "__file__", None)
    return found if isinstance(found, str) else None


def unguarded(main: str) -> str:
    """What is wrong, and what to do, when the main module ``main`` starts worker processes
    as it is run again in each worker (a script that starts them at its top level): the
    multiprocessing docs' "safe importing of main module".

    >>> print(unguarded("/w/api6.py"))  # doctest: +NORMALIZE_WHITESPACE
    this process runs several threads, so its workers are not forked: each runs the main
    module /w/api6.py again as it starts, which must not start workers itself; guard the
    script's top level with if __name__ == '__main__': (the multiprocessing docs' safe
    importing of main module)
    """
    return (
        "this process runs several threads, so its workers are not forked: each runs the main"
        f" module {main} again as it starts, which must not start workers itself; guard the"
        " script's top level with if __name__ == '__main__': (the multiprocessing docs' safe"
        " importing of main module)"
    )


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
