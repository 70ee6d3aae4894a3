"""The current surface: a validated log folded in seq order (docs/snapshot.md §Surface).

Only ``user/message``, ``assistant/message`` and ``tool/result`` may (and must) carry
``surfaceOp``; an append pushes the event, a replace swaps a range for it. Every rule the
harness checks on the way makes the log unreadable. A session whose fold fails cannot be
loaded, so its title does not count either.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Final

import msgspec

from sessionref.codecs.jsjson import js_json
from sessionref.errors import SessionLogError
from sessionref.log.jsvalue import has_exact_keys, is_safe_int, js_equal, js_int
from sessionref.log.structs import LogRecord, Seq, raw_data, source_event_seqs

SURFACE_TYPES: Final = frozenset({"user/message", "assistant/message", "tool/result"})


def _kind(record: LogRecord) -> str:
    """A record's type for an error message, quoted: it comes from the log.

    >>> _kind(LogRecord("a\\nb"))
    '"a\\\\nb"'
    """
    return js_json(record.type).decode("utf-8")


def surface_events(records: Iterable[LogRecord]) -> Iterator[LogRecord]:
    """The surface-eligible events of a log in seq order; an event of another type that
    carries ``surfaceOp`` or ``sourceEventSeqs`` fails.

    >>> events = [LogRecord("turn/start", seq=0), LogRecord("user/message", seq=1,
    ...           surface_op="append")]
    >>> [r.seq for r in surface_events(events)]
    [1]
    >>> list(surface_events([LogRecord("turn/start", seq=0, surface_op="append")]))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: event 0: "turn/start" cannot carry surfaceOp
    """
    unset = msgspec.UNSET
    for record in records:
        if record.type in SURFACE_TYPES:
            yield record
        elif record.surface_op is not unset:
            raise SessionLogError(f"event {record.seq}: {_kind(record)} cannot carry surfaceOp")
        elif record.source_event_seqs is not unset:
            raise SessionLogError(
                f"event {record.seq}: {_kind(record)} cannot carry sourceEventSeqs"
            )


def _replace_range(op: Any, seq: int, record: LogRecord) -> tuple[int, int]:
    """``(start, end)`` of a replace op shaped exactly ``{op, start, end}``."""
    if type(op) is not dict:
        raise SessionLogError(f"event {seq}: {_kind(record)} carries an invalid surfaceOp")
    if not (
        has_exact_keys(op, ("op", "start", "end"))
        and op["op"] == "replace"
        and is_safe_int(op["start"], 0)
        and is_safe_int(op["end"], 0)
    ):
        raise SessionLogError(f"event {seq}: {_kind(record)} carries an invalid replace surfaceOp")
    return js_int(op["start"]) or 0, js_int(op["end"]) or 0


def _sources(record: LogRecord, seq: int) -> set[int]:
    """``sourceEventSeqs``: distinct non-negative integers below the event's own seq, empty
    only on an assistant message."""
    raw = source_event_seqs(record)
    if raw is msgspec.UNSET:
        return set()
    if type(raw) is not list:
        raise SessionLogError(f"event {seq}: sourceEventSeqs must be an array when present")
    if not raw and record.type != "assistant/message":
        raise SessionLogError(f"event {seq}: empty sourceEventSeqs on {_kind(record)}")
    if set(map(type, raw)) <= {int}:  # the common case: plain integers
        sources = set(raw)
        if sources and min(sources) < 0:
            raise SessionLogError(
                f"event {seq}: sourceEventSeqs must be non-negative safe integers"
            )
    elif all(is_safe_int(source, 0) for source in raw):
        sources = {js_int(source) or 0 for source in raw}
    else:
        raise SessionLogError(f"event {seq}: sourceEventSeqs must be non-negative safe integers")
    if len(sources) != len(raw):
        raise SessionLogError(f"event {seq}: sourceEventSeqs must not contain duplicates")
    if sources and max(sources) >= seq:
        raise SessionLogError(f"event {seq}: sourceEventSeqs must reference earlier events")
    return sources


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
        tail = self.tail  # _link(seq, record, tail, None), inline: nearly every event appends
        self.records[seq] = record
        self.prev[seq], self.next[seq] = tail, None
        if tail is None:
            self.head = seq
        else:
            self.next[tail] = seq
        self.tail = seq

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


def _without_first_content(data: Any) -> Any:
    """``data`` of a tool result with ``message.content[0].content`` set to null: what a prune
    may not change (later blocks are not compared).

    >>> _without_first_content({"message": {"content": [{"type": "t", "content": 1}, 2]}})
    {'message': {'content': [{'type': 't', 'content': None}]}}
    """
    message = data["message"]
    first = message["content"][0]
    return {**data, "message": {**message, "content": [{**first, "content": None}]}}


def _check_prune(surface: _Surface, nodes: list[int], record: LogRecord) -> None:
    """A replacing tool result replaces one tool result and edits only its first content."""
    replaced = surface.records[nodes[0]]
    if len(nodes) != 1 or replaced.type != "tool/result":
        raise SessionLogError(f"tool result {record.seq} must replace exactly one tool result")
    old, new = (_without_first_content(raw_data(r)) for r in (replaced, record))
    if not js_equal(old, new):  # compared as the harness compares: true is not 1
        raise SessionLogError(f"tool result {record.seq} changes more than its content")


def _apply(surface: _Surface, record: LogRecord) -> None:
    seq = record.seq
    assert isinstance(seq, int), "surface events have seqs"
    op = record.surface_op
    if op == "append":
        _sources(record, seq)
        surface.append(seq, record)
        return
    if op is msgspec.UNSET:
        raise SessionLogError(f"event {seq}: {_kind(record)} requires a surfaceOp")
    start, end = _replace_range(op, seq, record)
    nodes = surface.span(start, end)
    if not set(nodes) <= _sources(record, seq):
        raise SessionLogError(f"event {seq}: sourceEventSeqs must include every replaced node")
    if record.type == "tool/result":
        _check_prune(surface, nodes, record)
    surface.replace(nodes, seq, record)


def fold_surface(events: Iterable[LogRecord]) -> list[LogRecord]:
    """The current surface: appends push, replaces swap a range for one event, in order.

    >>> appended = [LogRecord("user/message", seq=s, surface_op="append") for s in (0, 1)]
    >>> compaction = LogRecord("user/message", seq=2,
    ...     surface_op={"op": "replace", "start": 0, "end": 1}, source_event_seqs=[0, 1])
    >>> [r.seq for r in fold_surface([*appended, compaction])]
    [2]
    """
    surface = _Surface()
    records, following, preceding = surface.records, surface.next, surface.prev
    unset = msgspec.UNSET
    tail = None  # surface.tail, kept in a local while events append (nearly all of them)
    for record in events:
        if record.surface_op == "append" and (
            record.source_event_seqs is unset or _plain_sources(record)
        ):
            seq: int = record.seq  # type: ignore[assignment]  # surface events have seqs
            records[seq] = record  # surface.append(seq, record), inline
            preceding[seq], following[seq] = tail, None
            if tail is None:
                surface.head = seq
            else:
                following[tail] = seq
            tail = seq
        else:
            surface.tail = tail
            _apply(surface, record)
            tail = surface.tail
    surface.tail = tail
    return list(surface)


_SEQS: Final = msgspec.json.Decoder(list[Seq])


def _plain_sources(record: LogRecord) -> bool:
    """Whether an event's ``sourceEventSeqs`` are surely valid: none, or distinct
    non-negative safe integers below its seq, some unless it is an assistant message;
    ``False`` means "look again with :func:`_sources`", which says what is wrong, if anything.

    >>> _plain_sources(LogRecord("tool/result", seq=5, source_event_seqs=msgspec.Raw(b"[3,4]")))
    True
    >>> _plain_sources(LogRecord("tool/result", seq=5, source_event_seqs=msgspec.Raw(b"[]")))
    False
    """
    raw = record.source_event_seqs
    if raw is msgspec.UNSET:
        return True
    if type(raw) is not msgspec.Raw:
        return False
    if is_seq_run(bytes(raw), record.seq):  # type: ignore[arg-type]  # surface events have seqs
        return True
    try:
        seqs = _SEQS.decode(raw)
    except msgspec.DecodeError:  # a ValidationError is a DecodeError
        return False
    if not seqs:
        return record.type == "assistant/message"
    return len(set(seqs)) == len(seqs) and max(seqs) < record.seq  # type: ignore[operator]


def current_surface(records: Iterable[LogRecord]) -> list[LogRecord]:
    """:func:`fold_surface` of :func:`surface_events`: the surface a loaded log shows."""
    return fold_surface(surface_events(records))


RUN_LIMIT: Final = 1 << 16
"""Runs of seqs are matched against a text kept below this seq (the text of 0…limit is some
380 KB); a run beyond it is written by msgspec to be matched."""
_run_text = b"0,"
"""``0,1,2,…,n-1,``: every run of seqs below ``n`` as ``JSON.stringify`` writes it is a
slice of it. Grown as larger seqs come, never beyond :data:`RUN_LIMIT` numbers."""


_FIRSTS: Final[list[int]] = [0, 0, *(10 ** (digits - 1) for digits in range(2, 18))]
"""The first number of each width in digits (the index); 0 is the first of width 1."""
_OFFSETS: Final[list[int]] = [
    0,
    0,
    *(20 + sum(9 * 10 ** (d - 1) * (d + 1) for d in range(2, digits)) for digits in range(2, 18)),
]
"""Where the numbers of each width in digits (the index) start in ``0,1,2,…``."""


def _run_offset(number: int) -> int:
    """Where ``number`` starts in ``0,1,2,…``: numbers below 10 take 2 bytes, then 3 …

    >>> [_run_offset(n) for n in (0, 9, 10, 11, 100)]
    [0, 18, 20, 23, 290]
    """
    digits = len(str(number))
    return _OFFSETS[digits] + (number - _FIRSTS[digits]) * (digits + 1)


def _grown_runs(last: int) -> bytes:
    """The text of the runs of seqs, grown to hold ``last`` (below :data:`RUN_LIMIT`),
    written by msgspec: some 7 times faster than joining each number's text, which cost a
    cold process about 30 ms at the limit.

    >>> _grown_runs(3)[:12], _grown_runs(3)[-6:]
    (b'0,1,2,3,4,5,', b',1023,')
    """
    global _run_text
    numbers = list(range(min(max(2 * (last + 1), 1024), RUN_LIMIT)))
    _run_text = js_json(numbers)[1:-1] + b","
    return _run_text


def is_seq_run(raw: bytes, below: int) -> bool:
    """Whether ``raw`` is the JSON of a run of integers ``[a,a+1,…,b]``, ``0 <= a <= b <
    below``, written as ``JSON.stringify`` writes it: distinct non-negative integers below
    ``below``, some. An assistant message cites the deltas it was streamed from so, and
    this says it without building a number.

    >>> is_seq_run(b"[8,9,10]", 11), is_seq_run(b"[8,9,10]", 10), is_seq_run(b"[8,10]", 11)
    (True, False, False)
    >>> is_seq_run(b"[7]", 8), is_seq_run(b"[]", 8), is_seq_run(b"[ 7]", 8)
    (True, False, False)
    >>> is_seq_run(b"[99999,100000]", 100001), is_seq_run(b"[99999,100001]", 100002)
    (True, False)
    """
    comma = raw.find(b",")
    try:  # int() takes spaces and underscores too: such text is not the run's below
        start = int(raw[1:comma] if comma > 0 else raw[1:-1])
    except ValueError:
        return False
    end = start + raw.count(b",")  # the run has one comma fewer than numbers
    if start < 0 or end >= below or raw[:1] != b"[" or raw[-1:] != b"]":
        return False
    begin, stop = _run_offset(start), _run_offset(end + 1)  # stop: after the last comma
    if len(raw) != stop - begin + 1:
        return False
    if end >= RUN_LIMIT:  # beyond the text kept: the run written by msgspec, in C
        return raw == js_json(list(range(start, end + 1)))
    text = _run_text  # read once: another thread may grow it meanwhile
    if stop > len(text):
        text = _grown_runs(end)
    return text.startswith(raw[1:-1], begin)
