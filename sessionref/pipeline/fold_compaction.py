"""Stage 2: fold compactions and prunes into the current surface (docs/snapshot.md §Surface)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sessionref.log.records import LogRecord
from sessionref.log.surface import fold_surface


def fold_compaction(events: Iterable[LogRecord]) -> Iterator[LogRecord]:
    """The current surface of the surface events, each rule the harness checks applied.

    >>> appended = [LogRecord("user/message", seq=s, surface_op="append") for s in (0, 1)]
    >>> [r.seq for r in fold_compaction(appended)]
    [0, 1]
    """
    yield from fold_surface(events)
