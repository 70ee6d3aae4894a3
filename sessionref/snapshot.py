"""The spine: one log to one fitted source, and fitted sources to one context message.

read surface → fold compaction → filter roles → unitize → retain under budget →
truncate head/tail → escape and serialize. Each stage is a small pure function in
:mod:`sessionref.pipeline`; this module is the only place that composes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import toolz

from sessionref.log.records import LogRecord, SessionLog, captured_through_seq
from sessionref.pipeline.escape_and_serialize import escape_and_serialize
from sessionref.pipeline.filter_roles import filter_roles
from sessionref.pipeline.fold_compaction import fold_compaction
from sessionref.pipeline.messages import Unit
from sessionref.pipeline.read_surface import read_surface
from sessionref.pipeline.retain_budget import SourceFields, retain_budget
from sessionref.pipeline.truncate import SourceSnapshot, truncate
from sessionref.pipeline.unitize import unitize
from sessionref.types import ContextMessage

__all__ = ["SourceSnapshot", "Unit", "context_message", "fit_source", "project_units"]


def project_units(records: Iterable[LogRecord]) -> Iterator[Unit]:
    """Stages 1–4: the units a snapshot of a log shows (SPEC §2–§3), in surface order.

    >>> from sessionref.log.records import decode_records
    >>> list(project_units(decode_records(b'{"type":"assistant/message","seq":0,'
    ...     b'"surfaceOp":"append","data":{"message":{"content":[{"type":"text","text":"hi"}],'
    ...     b'"source":{"kind":"model"}}}}\\n')))
    [Unit(role='assistant', text='hi', checkpoint=False)]
    """
    units: Iterator[Unit] = toolz.pipe(
        records, read_surface, fold_compaction, filter_roles, unitize
    )
    return units


def fit_source(log: SessionLog, label: str, max_bytes: int) -> SourceSnapshot:
    """Stages 1–6: one source read, folded, projected and fitted into ``max_bytes`` (SPEC §4).

    Raises BUDGET_EXCEEDED when even the cut cannot make it fit.

    >>> from sessionref.log.records import SessionHeader
    >>> fit_source(SessionLog(SessionHeader("s", 0), []), "s", 1000).data_json
    b'{"sessionId":"s","label":"s","cwd":null,"capturedThroughSeq":null,"conversation":[]}'
    """
    fields = SourceFields(log.header.id, label, log.header.cwd, captured_through_seq(log.records))
    fitted: SourceSnapshot = toolz.pipe(
        project_units(log.records),
        lambda units: retain_budget(units, fields, max_bytes),
        lambda retained: truncate(retained, max_bytes),
    )
    return fitted


def context_message(sources: Sequence[SourceSnapshot], message_id: str) -> ContextMessage:
    """Stage 7: the fitted sources, escaped and serialized into one context message (SPEC §5).

    >>> context_message([], "m1").prompt.endswith("[]\\n</referenced-sessions>")
    True
    """
    return escape_and_serialize(sources, message_id)
