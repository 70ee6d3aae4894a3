"""Stage 1: the events that bear on the current surface (docs/snapshot.md §Surface).

The reader has already made the log's seqs run 0, 1, 2, … and checked every envelope; this
stage keeps the surface-eligible events and fails on surface fields anywhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sessionref.log.records import LogRecord
from sessionref.log.surface import surface_events


def read_surface(records: Iterable[LogRecord]) -> Iterator[LogRecord]:
    """The surface-eligible events of a log in seq order.

    >>> [r.seq for r in read_surface([LogRecord("turn/start", seq=0),
    ...                               LogRecord("tool/result", seq=1, surface_op="append")])]
    [1]
    """
    return surface_events(records)
