"""Statting a store's remembered walk in a child process while this one does something else.

A warm command over several roots spends most of its time statting what each root's index
remembers (``restat.restat_tree``: some 6,700 entries a root of 3,333 DSH sessions), one root
after another, on one core. :func:`stat_ahead` forks a child that stats one root's remembered
walk and hands back what changed, while this process refreshes another root; the next refresh
of that root takes the child's answer if the index still holds the walk the child compared
against (the same stamp), and stats itself otherwise, or when the child failed.

Only a process with one thread forks (a child of several copies their locks in any state), only
where ``os.fork`` exists, and only from an index database that exists: it is read, never
written, to find the walk (:func:`~sessionref.index.reading.reading`: nothing is left beside
it). The child writes nothing but its answer and ends with ``os._exit``.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sqlite3
import threading
from pathlib import Path
from typing import Final, cast

from sessionref.index.cursors import rows_of
from sessionref.index.reading import reading
from sessionref.index.restat import Changed, WalkStats, read_walk_stats, restat_tree

_FAILED: Final = object()


class StatsAhead:
    """The look at one root under way in a child process: what :func:`restat_tree` of the walk
    stamped ``stamp`` gives, at ``racy_after``."""

    def __init__(self, root: Path, racy_after: int, stamp: str, child: tuple[int, int]) -> None:
        self.root, self.racy_after, self.stamp = root, racy_after, stamp
        self._pid: int | None = child[0]
        self._answer = child[1]
        self._found: object = _FAILED

    def close(self) -> None:
        """Wait for the child, keeping its answer (nothing once it was waited for)."""
        self._collect()

    def _collect(self) -> object:
        """The child's answer (:data:`_FAILED` when it has none), waited for once."""
        if self._pid is None:
            return self._found
        chunks = []
        try:
            while chunk := os.read(self._answer, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(self._answer)
            _, status = os.waitpid(self._pid, 0)
            self._pid = None
        if status == 0:
            with contextlib.suppress(EOFError, ValueError, TypeError):
                self._found = marshal.loads(b"".join(chunks))
        return self._found

    def changed(self, stamp: str, remembered: WalkStats) -> Changed:
        """What changed since the walk ``remembered`` stamped ``stamp`` (the index's, read
        now): the child's answer when it looked at that walk, else statted here."""
        found = self._collect()
        if found is _FAILED or stamp != self.stamp:
            return restat_tree(self.root, self.racy_after, remembered)
        return cast(Changed, found)


def _remembered(path: Path) -> tuple[str, WalkStats] | None:
    """The stamped walk of the index database at ``path`` and its stats, read (``None``
    when there is no such database, no stamp or no stats)."""
    with reading(path) as db:
        rows = dict(rows_of(db, "SELECT key, value FROM meta WHERE key IN ('tree', 'stats')"))
    stamp, encoded = rows.get("tree"), rows.get("stats")
    if not isinstance(stamp, str) or not isinstance(encoded, bytes):
        return None
    remembered = read_walk_stats(encoded, stamp)
    return None if remembered is None else (stamp, remembered)


def _answer(write: int, root: Path, racy_after: int, remembered: WalkStats) -> None:
    """In the child: write what changed (marshalled) and end, 0 when it was all written."""
    status = 1
    try:
        view = memoryview(marshal.dumps(restat_tree(root, racy_after, remembered)))
        while view:
            view = view[os.write(write, view) :]
        status = 0
    finally:
        os._exit(status)


def stat_ahead(root: Path, path: Path, racy_after: int) -> StatsAhead | None:
    """Stat the walk the index database at ``path`` remembers of the store at ``root`` in a
    child process; ``None`` when that cannot be done here (see the module's docstring).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     stat_ahead(Path(folder), Path(folder, "none.sqlite"), 0) is None
    True
    """
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    try:
        found = _remembered(path)
    except (sqlite3.Error, OSError, ValueError):
        return None
    if found is None:
        return None
    stamp, remembered = found
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: it ends in _answer
        os.close(read)
        _answer(write, root, racy_after, remembered)
    os.close(write)
    return StatsAhead(root, racy_after, stamp, (pid, read))
