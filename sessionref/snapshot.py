"""The spine: one session log to one serialized source, and sources to one context message.

:func:`snapshot_source` is the whole path of a snapshot, one stage per line, in order: read
the surface → fold compaction → filter roles → unitize → retain under the budget → truncate
head/tail → escape and serialize. Each stage is a small pure function in
:mod:`sessionref.pipeline` that returns a new value; this module is the only place that
composes them. The resolver reads every referenced log, calls :func:`snapshot_source` on
each and :func:`context_message` (stage 7's framing) on the results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import msgspec
from toolz import curry, pipe

from sessionref.collector import collection_paused
from sessionref.log.records import LogRecord, SessionLog, captured_through_seq
from sessionref.pipeline.escape_and_serialize import (
    SourceSnapshot,
    context_message,
    escape_and_serialize,
)
from sessionref.pipeline.filter_roles import filter_roles
from sessionref.pipeline.fold_compaction import fold_compaction
from sessionref.pipeline.messages import SourceData, Unit
from sessionref.pipeline.read_surface import read_surface
from sessionref.pipeline.retain_budget import retain_budget
from sessionref.pipeline.truncate import truncate
from sessionref.pipeline.unitize import unitize

__all__ = [
    "SourceSnapshot",
    "Unit",
    "UnitTransform",
    "context_message",
    "keep_units",
    "project_units",
    "snapshot_source",
]

UnitTransform = Callable[[Iterable[Unit], SourceData, int], Iterable[Unit]]
"""What may change the units before the budget sees them, given what the budget is given
(the source's fields and ``max_bytes``): redaction (docs/redaction.md)."""


def keep_units(units: Iterable[Unit], source: SourceData, max_bytes: int) -> Iterable[Unit]:
    """The default :data:`UnitTransform`: the units as they are."""
    return units


def snapshot_source(
    log: SessionLog, label: str, max_bytes: int, transform: UnitTransform = keep_units
) -> SourceSnapshot:
    """One source read, projected, fitted into ``max_bytes`` and serialized (docs/snapshot.md).

    Raises BUDGET_EXCEEDED when even the cut cannot make it fit. ``transform`` sees the
    units before the budget does (by default it keeps them as they are).

    >>> from sessionref.log.records import SessionHeader
    >>> snapshot_source(SessionLog(SessionHeader("s", 0), []), "s", 1000).data_json
    b'{"sessionId":"s","label":"s","cwd":null,"capturedThroughSeq":null,"conversation":[]}'
    """
    source = SourceData(
        log.header.id,
        label,
        log.header.loaded_cwd,
        captured_through_seq(log.records),
        harness=msgspec.UNSET if log.harness == "dsh" else log.harness,
    )
    with collection_paused():  # no collector walks meanwhile (sessionref/collector.py)
        snapshot: SourceSnapshot = pipe(
            log.records,  # the log's records, in file order
            read_surface,  # 1. the surface-eligible events in seq order, checked
            fold_compaction,  # 2. the current surface: compactions folded in
            filter_roles,  # 3. KeptMessage: direct user text, assistant text, checkpoints
            unitize,  # 4. Unit: one text per message
            curry(transform, source=source, max_bytes=max_bytes),  # 4½. Unit: as transformed
            curry(retain_budget, source=source, max_bytes=max_bytes),  # 5. Retained: oldest gone
            curry(truncate, max_bytes=max_bytes),  # 6. Fitted: the largest texts cut head/tail
            escape_and_serialize,  # 7. SourceSnapshot: the data object's tag-safe JSON
        )
    return snapshot


def project_units(records: Iterable[LogRecord]) -> Iterator[Unit]:
    """Stages 1–4 alone: the units a snapshot of a log shows, in surface order, before any
    budget (what the tests hold against an independent model; docs/snapshot.md §Projection).

    >>> from sessionref.log.records import decode_records
    >>> list(project_units(decode_records(b'{"type":"assistant/message","seq":0,'
    ...     b'"surfaceOp":"append","data":{"message":{"content":[{"type":"text","text":"hi"}],'
    ...     b'"source":{"kind":"model"}}}}\\n')))
    [Unit(role='assistant', text='hi', checkpoint=False)]
    """
    units: Iterator[Unit] = pipe(records, read_surface, fold_compaction, filter_roles, unitize)
    return (unit.built() for unit in units)
