"""Reading logs in several processes while this one writes what is read.

Children take pieces of the work from the front; this process reads one item from the back
(or takes back a piece no child has started) whenever no child's result waits. So no more than
``workers`` processes run at once, and the one that writes never idles while there is reading
to do. A cold build starts its children on the walk's log files before the store is listed
(:func:`early_reads`); the listing then says which of those reads it keeps
(:func:`kept_reads`). The children are :mod:`sessionref.pool`'s workers: they ignore Ctrl-C
and die with this process.
"""

from __future__ import annotations

import collections
import contextlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from sessionref.errors import SessionLogError
from sessionref.index.refresh import CachedHeaderStore, SessionData, read_session
from sessionref.log.discovery import LOG_NAMES, LogFile, listed_header_of
from sessionref.log.store import DirectoryStore

if TYPE_CHECKING:
    from concurrent.futures import Future

    from sessionref.pool import WorkerPool

T = TypeVar("T")
R = TypeVar("R")

FileRead = tuple[str | None, SessionData]
"""A log read by path: the session its header names (``None``: none the listing takes)."""


class Pieces(Generic[T, R]):
    """``items`` read in ``workers`` processes: the ``workers - 1`` children of ``pool`` take
    pieces of ``chunk`` items from the front (``read_there``; up to ``ahead`` items each, so
    they keep reading while this process writes), ``read_here`` reads one item here. The
    first pieces are handed out at once: the children start before the results are asked for.
    """

    def __init__(
        self,
        pool: WorkerPool,
        items: Iterable[T],
        read_here: Callable[[T], R],
        read_there: Callable[[list[T]], list[R]],
        sizes: tuple[int, int, int],
    ) -> None:
        self.pool, self.read_here, self.read_there = pool, read_here, read_there
        self.workers, self.chunk, self.ahead = sizes
        self.todo, self.mine = collections.deque(items), list[T]()
        self.queued: dict[Future[list[R]], list[T]] = {}  # in the order handed out
        self._hand_out()

    def _hand_out(self) -> None:
        todo = self.todo
        while todo and len(self.queued) * self.chunk < self.ahead * (self.workers - 1):
            piece = [todo.popleft() for _ in range(min(self.chunk, len(todo)))]
            self.queued[self.pool.submit(self.read_there, piece)] = piece

    def _stolen(self) -> list[T]:
        """The last piece handed out, if no child has taken it yet (it is then withdrawn);
        none otherwise (pieces are taken in order, so neither is any other)."""
        last = next(reversed(self.queued), None)
        return self.queued.pop(last) if last is not None and last.cancel() else []

    def __iter__(self) -> Iterator[R]:
        """Every item's result, in order of completion."""
        import concurrent.futures

        while self.todo or self.mine or self.queued:
            self._hand_out()
            done = [future for future in self.queued if future.done()]
            for future in done:
                del self.queued[future]
                yield from future.result()
            if done:
                continue
            self.mine = self.mine or ([] if self.todo else self._stolen())
            if self.mine or self.todo:
                yield self.read_here((self.mine or self.todo).pop())
            elif self.queued:
                concurrent.futures.wait(self.queued, return_when=concurrent.futures.FIRST_COMPLETED)


_worker_store: CachedHeaderStore | None = None


def _start_worker(
    root: Path, limits: tuple[int, int], placed: dict[str, str], racy_after: int
) -> None:
    """Build the worker's store once: it finds each session where the caller listed it (or,
    reading files, where their header places them), so it never lists the store itself."""
    global _worker_store
    _worker_store = CachedHeaderStore(root, limits, {}, racy_after, placed)


def _read_in_worker(session_ids: list[str]) -> list[tuple[str, SessionData]]:
    assert _worker_store is not None
    return [(session_id, read_session(_worker_store, session_id)) for session_id in session_ids]


def _read_files_in_worker(paths: list[str]) -> list[FileRead]:
    assert _worker_store is not None
    return [read_file(_worker_store, path) for path in paths]


def _placed(store: CachedHeaderStore, session_ids: list[str]) -> dict[str, str]:
    """Where the store's listing put each session (those it cannot place are left out)."""
    placed = {}
    for session_id in session_ids:
        try:
            placed[session_id] = str(store.path_of(session_id))
        except SessionLogError:
            continue
    return placed


def read_sessions(
    store: CachedHeaderStore,
    session_ids: list[str],
    workers: int,
    chunk: int = 16,
    ahead: int = 256,
) -> Iterator[tuple[str, SessionData]]:
    """Read the listed sessions in order of completion, in ``workers`` processes, at most 2
    per CPU (:func:`~sessionref.pool_start.pool_size`; :class:`Pieces`: one piece of
    ``chunk`` ids at a time, up to ``ahead`` per child)."""
    if workers <= 1 or len(session_ids) < 2 * chunk:
        for session_id in session_ids:
            yield session_id, read_session(store, session_id)
        return
    from sessionref.pool import worker_pool  # only a parallel build loads it (multiprocessing)
    from sessionref.pool_start import pool_size

    workers = pool_size(workers, len(session_ids))
    args = (store.root, store.limits, _placed(store, session_ids), store.racy_after)
    with worker_pool(workers - 1, _start_worker, args) as pool:
        yield from Pieces(
            pool,
            session_ids,
            lambda session_id: (session_id, read_session(store, session_id)),
            _read_in_worker,
            (workers, chunk, ahead),
        )


def log_paths(root: Path, entries: Mapping[bytes, str]) -> list[str]:
    """The regular files of a walk (:mod:`sessionref.index.walk`) that a listing may read as
    logs, in walk order, named as the listing names them (never a FIFO: opening one waits).

    >>> log_paths(Path("/r"), {b"p/s/session.jsonl": "33188:2", b"p/s/x": "33188:2",
    ...                        b"p/t/session.jsonl": "4516:2", b"p/u": "d:1"})
    ['/r/p/s/session.jsonl']
    """
    names = {os.fsencode(name) for name in LOG_NAMES}
    return [
        os.path.join(str(root), os.fsdecode(key))
        for key in sorted(entries)
        if key.count(b"/") == 2
        and key.rpartition(b"/")[2] in names
        and _is_regular(entries[key].partition(":")[0])
    ]


def _is_regular(mode: str) -> bool:
    """Whether a walk's recorded mode is a regular file's.

    >>> _is_regular("33188"), _is_regular("4516"), _is_regular("d")
    (True, False, False)
    """
    return mode.isdigit() and stat.S_ISREG(int(mode))


def read_file(store: CachedHeaderStore, path: str) -> FileRead:
    """Read the log at ``path`` as the session its header names (as :func:`read_session`
    reads it where the listing places it), before any listing: the header is read here and
    not remembered.

    >>> read_file(CachedHeaderStore(Path("/"), (1, 1), {}, 0), "/nonexistent/x")
    (None, SessionData(path='/nonexistent/x', revision=None, failure='no header', \
title=None, text='', bounds=b''))
    """
    head, name = os.path.split(path)
    folder, session = os.path.split(head)
    file = LogFile(os.path.basename(folder), session, name, path)
    try:  # the store's own read: this line is not remembered
        line = DirectoryStore.first_line(store, file)
        header = None if line is None else listed_header_of(line)
    except (SessionLogError, OSError, RecursionError):
        header = None
    if header is None or type(header.id) is not str:
        return None, SessionData(path, None, "no header", None)  # not kept: no session
    one = CachedHeaderStore(store.root, store.limits, {}, store.racy_after, {header.id: path})
    return header.id, read_session(one, header.id)


@contextlib.contextmanager
def early_reads(
    store: CachedHeaderStore, paths: list[str], workers: int, chunk: int = 16, ahead: int = 1024
) -> Iterator[Pieces[str, FileRead] | None]:
    """Children reading the logs at ``paths`` (:func:`read_file`) from now on, while this
    process lists the store (``workers`` processes in all, at most 2 per CPU); ``None`` with
    one process (or too few logs to share)."""
    if workers <= 1 or len(paths) < 2 * chunk:
        yield None
        return
    from sessionref.pool import worker_pool  # only a parallel build loads it (multiprocessing)
    from sessionref.pool_start import pool_size

    workers = pool_size(workers, len(paths))
    nothing_placed: dict[str, str] = {}
    args = (store.root, store.limits, nothing_placed, store.racy_after)
    with worker_pool(workers - 1, _start_worker, args) as pool:
        yield Pieces(
            pool,
            paths,
            lambda path: read_file(store, path),
            _read_files_in_worker,
            (workers, chunk, ahead),
        )


def kept_reads(
    reads: Iterable[FileRead],
    expected: Mapping[str, tuple[str, str | None]],
    wanted: list[str],
    store: CachedHeaderStore,
) -> Iterator[tuple[str, SessionData]]:
    """The ``wanted`` sessions: as ``reads`` read them when the listing placed them in the
    same file, at the same (settled) revision (``expected``: id → (path, revision)); read
    again (here) otherwise.

    >>> data = SessionData("/p", "1:2", None, None)
    >>> list(kept_reads([("a", data), (None, data)], {"a": ("/p", "1:2")}, ["a"], None))
    [('a', SessionData(path='/p', revision='1:2', failure=None, title=None, text='', \
bounds=b''))]
    """
    left = dict.fromkeys(wanted)
    for session_id, data in reads:
        if (
            session_id is not None
            and session_id in left
            and data.revision is not None
            and expected.get(session_id) == (data.path, data.revision)
        ):
            del left[session_id]
            yield session_id, data
    for session_id in left:
        yield session_id, read_session(store, session_id)
