"""The one worker process pool (the batch engines and the index build use it): workers that
stop at once on Ctrl-C, never outlive the process that started them, and whose death is
seen the moment it happens.

The pool owns its pipes. Each worker (:mod:`sessionref.pool_worker`) has a task pipe and a
result pipe of its own, and one thread of this process, the collector, waits on every
result pipe, every worker's sentinel and a wake-up pipe at once: it completes each future as
its result comes, hands the queued tasks out (to each worker one to run and, when it is
small, one more to take next, so that no worker waits between tasks), and ends the workers.
This process keeps no writing end of a result pipe: a worker that dies as it sends a result
leaves the collector the end of that pipe, never a wait for the rest.

A worker that dies while the pool is in use (``kill -9``, the OOM killer) breaks it: its
sentinel names it, the others are ended, and every future not done fails with
:class:`~sessionref.worker_deaths.WorkerDied`, one coded error naming the worker and how it
ended, never a hang. What a task raised, or returned, comes back pickled; one that does not
pickle fails that future alone.

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
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import BrokenExecutor, Executor, Future
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from sessionref.pool_start import cannot_start, check_pickles, process_context, refuse_rerun
from sessionref.pool_worker import HELD_AT_START, serve
from sessionref.worker_deaths import WorkerDied, worker_died

if TYPE_CHECKING:
    from sessionref.pool_start import StartContext

R = TypeVar("R")

WORKER_EXIT_SECONDS: Final = 10.0
"""How long an ended worker may take to go before it is killed outright."""
AHEAD_BYTES: Final = 4096 - 4
"""A task at most this long (pickled) may wait in the pipe of a worker that runs another:
with the 4 bytes that give its length it fits in the smallest pipe (a page, when the user's
pipes are over the kernel's soft limit), so handing it over never waits for that worker. A
longer one goes to a worker that runs none."""

State = Literal["open", "closing", "ending"]
"""A pool takes tasks (``open``), finishes those it has (``closing``: shut down), or ends
its workers at once (``ending``: ended, or broken)."""


@dataclass(eq=False)
class _Worker:
    """One worker process, this process's ends of its pipes, and the futures of the tasks
    handed to it, oldest first (its results come in that order)."""

    process: BaseProcess
    tasks: Connection
    results: Connection
    running: deque[Future[Any]] = field(default_factory=deque)
    gone: bool = False
    """Its result pipe is at its end: the worker is gone, or going."""


def _start_worker(context: StartContext, args: tuple[Any, ...]) -> _Worker:
    """Start one worker (:func:`~sessionref.pool_worker.serve` with ``args``), its ends of
    its pipes closed here once it has them."""
    take, hand = context.Pipe(duplex=False)
    try:
        collect, give = context.Pipe(duplex=False)
    except OSError:
        take.close()
        hand.close()
        raise
    try:
        process = context.Process(target=serve, args=(take, give, *args), daemon=True)
        process.start()
    except BaseException:
        hand.close()
        collect.close()
        raise
    finally:
        take.close()
        give.close()
    return _Worker(process, hand, collect)


def _kill(workers: list[_Worker]) -> None:
    """Kill workers that have done nothing yet (their pool could not start), and close this
    process's ends of their pipes."""
    for worker in workers:
        worker.process.kill()
    for worker in workers:
        worker.process.join()
        worker.tasks.close()
        worker.results.close()


class WorkerPool(Executor):
    """An :class:`~concurrent.futures.Executor` of ``workers`` processes, all started as it
    is made (forked while this process runs one thread: :func:`process_context`), each
    running ``initializer(*initargs)`` first; the pool can be :meth:`end`-ed at once."""

    def __init__(
        self,
        workers: int,
        initializer: Callable[..., None] | None = None,
        initargs: tuple[Any, ...] = (),
    ) -> None:
        refuse_rerun()
        context = process_context()
        method = context.get_start_method()
        if method != "fork":
            check_pickles(initargs)
        self.workers = self._max_workers = workers  # dask's processes scheduler reads the latter
        self._lock = threading.Lock()
        self._queue: deque[tuple[Future[Any], bytes]] = deque()
        self._state: State = "open"
        self._broken: WorkerDied | None = None
        self._in_flight = 0
        self._woken = False
        try:
            self._wake, self._waker = multiprocessing.Pipe(duplex=False)
        except OSError as exc:
            raise cannot_start(workers, 0, exc) from None
        self._collector = threading.Thread(target=self._collect, name="worker-pool", daemon=True)
        # Held as the workers start, until each handles them as a worker; held for good in
        # the collector, so that they go to the caller's threads.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_AT_START)
        try:
            self._workers = self._start(context, (os.getpid(), method, initializer, initargs))
            try:
                self._collector.start()
            except BaseException:
                _kill(self._workers)
                raise
        except BaseException:
            self._wake.close()
            self._waker.close()
            raise
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

    def _start(self, context: StartContext, args: tuple[Any, ...]) -> list[_Worker]:
        """Start every worker; none at all if one cannot start."""
        started: list[_Worker] = []
        try:
            for _ in range(self.workers):
                started.append(_start_worker(context, args))
        except BaseException as exc:
            _kill(started)
            if isinstance(exc, OSError):  # out of processes or open files: say so, how many
                method = context.get_start_method()
                raise cannot_start(self.workers, len(started), exc, method) from None
            raise
        return started

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> Future[R]:
        """Run ``fn(*args, **kwargs)`` in a worker; what it returns or raises comes back
        pickled. After the pool broke, this raises its :class:`WorkerDied`."""
        future: Future[R] = Future()
        try:
            task = pickle.dumps((fn, args, kwargs), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # as a task that raised: its future says why
            future.set_exception(exc)
            return future
        with self._lock:
            if self._broken is not None:
                raise WorkerDied(self._broken.message, self._broken.code)
            if self._state != "open":
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._queue.append((future, task))
            if self._in_flight < 2 * len(self._workers):  # else a result hands it out
                self._wake_collector()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Finish the tasks handed out (and, unless ``cancel_futures``, those queued), then
        end the workers; ``wait``: until they are gone."""
        self._stop("closing", cancel_futures)
        if wait:
            self._collector.join()

    def end(self) -> None:
        """End the workers at once (SIGTERM, then SIGKILL after :data:`WORKER_EXIT_SECONDS`),
        the queued tasks cancelled, and wait until they are gone; the futures of tasks handed
        out and not done fail (:class:`~concurrent.futures.BrokenExecutor`).

        A plain ``shutdown(wait=True)`` would wait for every session in flight.
        """
        self._stop("ending", True)
        self._collector.join()

    def _stop(self, state: State, cancel: bool) -> None:
        """Take no more tasks: go to ``state`` (``ending`` comes after ``closing``, never the
        other way), the queued tasks cancelled if ``cancel``."""
        with self._lock:
            if self._state != "ending":
                self._state = state
            queued = list(self._queue) if cancel else []
            if cancel:
                self._queue.clear()
            self._wake_collector()
        for future, _ in queued:
            future.cancel()
            future.set_running_or_notify_cancel()  # a wait() on it returns

    def _wake_collector(self) -> None:
        """(With the lock held.) Have the collector look again, if it was not asked already.

        The wake-up counts as sent once it is: a Ctrl-C raised in the send (the caller's
        thread runs the handler) leaves it to be sent by the next call, where counting it
        first left the next :meth:`end` waiting for a collector never woken.
        """
        if not self._woken and not self._waker.closed:
            self._waker.send_bytes(b"")
            self._woken = True

    def _collect(self) -> None:
        """The collector thread: serve the tasks, then end the workers (as the pool was shut
        down, ended, or broke), fail what is left, and close this process's pipes."""
        live = list(self._workers)
        try:
            self._serve(live)
        finally:
            self._finish(live)

    def _serve(self, live: list[_Worker]) -> None:
        """Hand out tasks and complete futures until the pool is ended, broken, or shut down
        with nothing left to do."""
        while True:
            with self._lock:
                if self._state == "ending" or (
                    self._state == "closing" and not self._queue and not self._in_flight
                ):
                    return
            for worker, task in self._hand_out(live):
                with contextlib.suppress(OSError):  # it died: its sentinel says so
                    worker.tasks.send_bytes(task)
            ready = self._wait(live, None)
            for worker in [worker for worker in live if worker.process.sentinel in ready]:
                self._reap(worker, live)
                self._break(worker_died(worker.process.pid or 0, worker.process.exitcode))
                return

    def _hand_out(self, live: list[_Worker]) -> list[tuple[_Worker, bytes]]:
        """The queued tasks to send now, and to which worker: first one to each worker that
        runs none, then one more to each worker that runs one (a short one only:
        :data:`AHEAD_BYTES`). A cancelled task is dropped."""
        sends = []
        with self._lock:
            for limit in (1, 2):
                for worker in live:
                    while not worker.gone and len(worker.running) < limit and self._queue:
                        future, task = self._queue[0]
                        if limit == 2 and len(task) > AHEAD_BYTES:
                            break
                        self._queue.popleft()
                        if future.set_running_or_notify_cancel():
                            worker.running.append(future)
                            self._in_flight += 1
                            sends.append((worker, task))
        return sends

    def _wait(self, live: list[_Worker], timeout: float | None) -> set[Any]:
        """Wait up to ``timeout`` seconds for a wake-up or a worker's end, reading each
        result that came meanwhile; what was ready."""
        results = [worker.results for worker in live if not worker.gone]
        sentinels = [worker.process.sentinel for worker in live]
        ready = set(wait([self._wake, *results, *sentinels], timeout))
        if self._wake in ready:
            self._wake.recv_bytes()
            with self._lock:
                self._woken = False
        for worker in live:
            if worker.results in ready:
                self._receive(worker)
        return ready

    def _receive(self, worker: _Worker) -> None:
        """Read one result of ``worker`` (it comes whole, or its worker is gone) and complete
        the future of its oldest task with it."""
        try:
            message = worker.results.recv_bytes()
        except (EOFError, OSError):  # its sentinel says how it ended
            worker.gone = True
            return
        if not worker.running:  # its future failed already, as the pool broke
            return
        future = worker.running.popleft()
        with self._lock:
            self._in_flight -= 1
        try:
            succeeded, outcome = pickle.loads(message)
        except Exception as exc:  # a result that does not unpickle here
            succeeded, outcome = False, exc
        if succeeded:
            future.set_result(outcome)
        else:
            future.set_exception(outcome)

    def _reap(self, worker: _Worker, live: list[_Worker]) -> None:
        """``worker`` has ended: read the results it sent whole before, and its exit status."""
        while not worker.gone and worker.results.poll():
            self._receive(worker)
        worker.process.join()
        live.remove(worker)

    def _break(self, error: WorkerDied) -> None:
        """A worker died: the pool is broken, and every future not done fails with ``error``."""
        with self._lock:
            self._broken, self._state = error, "ending"
        self._fail_left(lambda: WorkerDied(error.message, error.code))

    def _fail_left(self, error: Callable[[], BaseException]) -> None:
        """Fail the futures of the tasks queued or handed out and not done, each with a new
        ``error()`` (a cancelled one stays cancelled)."""
        with self._lock:
            queued = [future for future, _ in self._queue]
            self._queue.clear()
            self._in_flight = 0
        for future in queued:
            if future.set_running_or_notify_cancel():
                future.set_exception(error())
        for worker in self._workers:
            while worker.running:
                worker.running.popleft().set_exception(error())

    def _finish(self, live: list[_Worker]) -> None:
        """End the workers still there: at once when the pool is ended or broken (SIGTERM),
        else with the end of the work; SIGKILL after :data:`WORKER_EXIT_SECONDS`. Then fail
        what they left undone, and close this process's pipes."""
        with self._lock:
            ending = self._state == "ending"
        for worker in live:
            if ending:
                worker.process.terminate()
            else:
                with contextlib.suppress(OSError):
                    worker.tasks.send_bytes(b"")
        deadline: float | None = time.monotonic() + WORKER_EXIT_SECONDS
        while live:
            ready = self._wait(live, None if deadline is None else deadline - time.monotonic())
            for worker in [worker for worker in live if worker.process.sentinel in ready]:
                self._reap(worker, live)
            if not ready and deadline is not None:  # it is past: kill those left
                for worker in live:
                    worker.process.kill()
                deadline = None
        self._fail_left(lambda: BrokenExecutor("the worker pool ended before this task"))
        with self._lock:
            self._waker.close()
        self._wake.close()
        for worker in self._workers:
            worker.tasks.close()
            worker.results.close()


@contextlib.contextmanager
def worker_pool(
    workers: int, initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()
) -> Iterator[WorkerPool]:
    """A :class:`WorkerPool`, shut down normally if the block completes (work not begun by
    then is dropped) and ended at once if it does not (an interrupt, an error, a worker's
    death, an iterator closed early)."""
    pool = WorkerPool(workers, initializer, initargs)
    try:
        yield pool
    except BaseException:
        pool.end()
        raise
    pool.shutdown(wait=True, cancel_futures=True)
