"""Stage 2: fold compactions and prunes into the current surface (docs/snapshot.md §Surface)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from sessionref.errors import SessionLogError
from sessionref.log.records import LogRecord, ReplaceOp, decode_data
from sessionref.pipeline.read_surface import _kind


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
    assert seq is not None, "read_surface passes events only"
    op = record.surface_op
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


def fold_compaction(events: Iterable[LogRecord]) -> Iterator[LogRecord]:
    """The current surface: appends push, replaces swap a range for one event, in order.

    >>> appended = [LogRecord("user/message", seq=s, surface_op="append") for s in (0, 1)]
    >>> compaction = LogRecord("user/message", seq=2, surface_op=ReplaceOp(0, 1),
    ...                        source_event_seqs=[0, 1])
    >>> [r.seq for r in fold_compaction([*appended, compaction])]
    [2]
    """
    surface = _Surface()
    for record in events:
        _apply(surface, record)
    yield from surface
