"""The snapshot pipeline, composed in one place.

read_surface → fold_compaction → filter_roles → unitize → retain_budget → truncate → render
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

import toolz

from sessionref.codecs.records import LogRecord, SessionLog, captured_through_seq
from sessionref.pipeline.filter_roles import filter_roles
from sessionref.pipeline.fold_compaction import fold_compaction
from sessionref.pipeline.messages import Unit
from sessionref.pipeline.read_surface import read_surface
from sessionref.pipeline.render import PROMPT_PREFIX, PROMPT_SUFFIX, render, render_prompt
from sessionref.pipeline.retain_budget import SourceFields, retain_budget
from sessionref.pipeline.truncate import SourceSnapshot, cut_text, truncate
from sessionref.pipeline.unitize import unitize

__all__ = [
    "PROMPT_PREFIX",
    "PROMPT_SUFFIX",
    "SourceSnapshot",
    "Unit",
    "cut_text",
    "fit_source",
    "project_units",
    "render",
    "render_prompt",
]

_PROJECT: Final = toolz.compose_left(read_surface, fold_compaction, filter_roles, unitize)


def project_units(records: Iterable[LogRecord]) -> Iterator[Unit]:
    """Fold the log and yield the units a snapshot shows (SPEC §2–§3), in surface order.

    The fold reads every record first; units are then decoded one at a time.

    >>> from sessionref.codecs.records import decode_records
    >>> list(project_units(decode_records(b'{"type":"assistant/message","seq":0,'
    ...     b'"surfaceOp":"append","data":{"message":{"content":[{"type":"text","text":"hi"}],'
    ...     b'"source":{"kind":"model"}}}}\\n')))
    [Unit(role='assistant', text='hi', checkpoint=False)]
    """
    units: Iterator[Unit] = _PROJECT(records)
    return units


def fit_source(
    log: SessionLog, units: Iterable[Unit], label: str, max_bytes: int
) -> SourceSnapshot:
    """Fit one source's units into ``max_bytes`` (SPEC §4): drop oldest, then cut.

    >>> from sessionref.codecs.records import SessionHeader
    >>> log = SessionLog(SessionHeader("s", 0), [])
    >>> fit_source(log, [Unit("user", "hello")], "s", 1000).data_json
    b'{"sessionId":"s","label":"s","cwd":null,"capturedThroughSeq":null,"conversation":[{"role":"user","text":"hello"}]}'
    """
    fields = SourceFields(log.header.id, label, log.header.cwd, captured_through_seq(log.records))
    return truncate(retain_budget(units, fields, max_bytes), max_bytes)
