"""Stage 1: read the events that bear on the current surface (docs/snapshot.md §Surface).

The log's events must run 0, 1, 2, … (packed chunk rows expanded); each event's own surface
fields are checked here, so the fold sees only well-formed surface events.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

import msgspec

from sessionref.codecs.jsjson import js_json
from sessionref.errors import SessionLogError
from sessionref.log.records import LogRecord, contiguous

SURFACE_TYPES: Final = frozenset({"user/message", "assistant/message", "tool/result"})


def _kind(record: LogRecord) -> str:
    """A record's type for an error message, quoted: it comes from the log.

    >>> _kind(LogRecord("a\\nb"))
    '"a\\\\nb"'
    """
    return js_json(record.type).decode("utf-8")


def _check_source_event_seqs(record: LogRecord, seq: int) -> None:
    """``sourceEventSeqs``, when present: distinct non-negative ints below the event's seq."""
    sources = record.source_event_seqs
    if sources is msgspec.UNSET:
        return
    if not sources and record.type != "assistant/message":
        raise SessionLogError(f"event {seq}: empty sourceEventSeqs on {_kind(record)}")
    if sources and (min(sources) < 0 or max(sources) >= seq or len(set(sources)) != len(sources)):
        raise SessionLogError(f"event {seq}: sourceEventSeqs must be distinct seqs below {seq}")


def read_surface(records: Iterable[LogRecord]) -> Iterator[LogRecord]:
    """The surface-eligible events of a log in seq order, each event's surface fields checked.

    >>> events = [LogRecord("turn/start", seq=0), LogRecord("user/message", seq=1,
    ...           surface_op="append")]
    >>> [r.seq for r in read_surface(events)]
    [1]
    >>> list(read_surface([LogRecord("turn/start", seq=0, surface_op="append")]))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: event 0: surfaceOp on "turn/start"
    """
    unset = msgspec.UNSET
    for record in contiguous(records):
        # Most events are neither on the surface nor cite sources: skip them cheaply.
        if (
            record.type not in SURFACE_TYPES
            and record.surface_op is unset
            and record.source_event_seqs is unset
        ):
            continue
        seq = record.seq
        if seq is None:  # packed chunk rows are never on the surface
            continue
        _check_source_event_seqs(record, seq)
        if record.type not in SURFACE_TYPES:
            if record.surface_op is not unset:
                raise SessionLogError(f"event {seq}: surfaceOp on {_kind(record)}")
            continue
        yield record
