"""Stage 1: fold a session log into its current model surface (SPEC §2)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Final

import msgspec

from sessionref.codecs.jsjson import js_json
from sessionref.codecs.records import LogRecord, ReplaceOp, contiguous, decode_data
from sessionref.errors import SessionLogError

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


def _without_first_content(data: Any) -> Any:
    """``data`` of a tool result without ``message.content[0].content``, the part a prune edits.

    >>> _without_first_content({"message": {"content": [{"type": "t", "content": 1}]}})
    {'message': {'content': [{'type': 't'}]}}
    """
    try:
        message = data["message"]
        first, *rest = message["content"]
        kept = {key: value for key, value in first.items() if key != "content"}
        return {**data, "message": {**message, "content": [kept, *rest]}}
    except (TypeError, KeyError, ValueError, AttributeError):
        raise SessionLogError("tool result without message.content[0]") from None


class _Surface:
    """The current surface as a doubly linked list of seqs, so a replace costs what it removes."""

    def __init__(self) -> None:
        self.records: dict[int, LogRecord] = {}
        self.next: dict[int, int | None] = {}
        self.prev: dict[int, int | None] = {}
        self.head: int | None = None
        self.tail: int | None = None

    def __iter__(self) -> Iterator[LogRecord]:
        node = self.head
        while node is not None:
            yield self.records[node]
            node = self.next[node]

    def _link(self, seq: int, record: LogRecord, before: int | None, after: int | None) -> None:
        self.records[seq] = record
        self.prev[seq], self.next[seq] = before, after
        if before is None:
            self.head = seq
        else:
            self.next[before] = seq
        if after is None:
            self.tail = seq
        else:
            self.prev[after] = seq

    def append(self, seq: int, record: LogRecord) -> None:
        self._link(seq, record, self.tail, None)

    def span(self, start: int, end: int) -> list[int]:
        """The seqs from ``start`` through ``end`` in surface order."""
        if start not in self.records or end not in self.records:
            raise SessionLogError(f"replace of {start}..{end}: not on the current surface")
        nodes = [start]
        while nodes[-1] != end:
            following = self.next[nodes[-1]]
            if following is None:
                raise SessionLogError(f"replace of {start}..{end}: start is after end")
            nodes.append(following)
        return nodes

    def replace(self, nodes: list[int], seq: int, record: LogRecord) -> None:
        before, after = self.prev[nodes[0]], self.next[nodes[-1]]
        for node in nodes:
            del self.records[node], self.next[node], self.prev[node]
        self._link(seq, record, before, after)


def _check_prune(surface: _Surface, nodes: list[int], record: LogRecord) -> None:
    """A replacing tool result replaces one tool result and edits only its first content."""
    replaced = surface.records[nodes[0]]
    if len(nodes) != 1 or replaced.type != "tool/result":
        raise SessionLogError(f"tool result {record.seq} must replace exactly one tool result")
    old, new = (_without_first_content(decode_data(r, Any)) for r in (replaced, record))
    if old != new:
        raise SessionLogError(f"tool result {record.seq} changes more than its content")


def _apply(surface: _Surface, record: LogRecord) -> None:
    seq = record.seq
    if seq is None:  # packed chunk rows are never on the surface
        return
    _check_source_event_seqs(record, seq)
    op = record.surface_op
    if record.type not in SURFACE_TYPES:
        if op is not msgspec.UNSET:
            raise SessionLogError(f"event {seq}: surfaceOp on {_kind(record)}")
        return
    if op == "append":
        surface.append(seq, record)
        return
    if not isinstance(op, ReplaceOp):
        raise SessionLogError(f"event {seq}: {_kind(record)} without surfaceOp")
    nodes = surface.span(op.start, op.end)
    sources = record.source_event_seqs
    if sources is msgspec.UNSET or not set(nodes) <= set(sources):
        raise SessionLogError(f"event {seq}: sourceEventSeqs must list every replaced node")
    if record.type == "tool/result":
        _check_prune(surface, nodes, record)
    surface.replace(nodes, seq, record)


def read_surface(records: Iterable[LogRecord]) -> Iterator[LogRecord]:
    """The events on the current surface, in surface order; the whole log is validated first.

    >>> appended = [LogRecord("user/message", seq=s, surface_op="append") for s in (0, 1)]
    >>> compaction = LogRecord("user/message", seq=2, surface_op=ReplaceOp(0, 1),
    ...                        source_event_seqs=[0, 1])
    >>> [r.seq for r in read_surface([*appended, compaction])]
    [2]
    """
    surface = _Surface()
    unset = msgspec.UNSET
    for record in contiguous(records):
        # Most events are neither on the surface nor cite sources: skip them cheaply.
        if (
            record.type in SURFACE_TYPES
            or record.surface_op is not unset
            or record.source_event_seqs is not unset
        ):
            _apply(surface, record)
    yield from surface
