"""The committed prefix of a log: which records the harness keeps after a crash (docs/format.md).

Records are taken in order while their seqs run 0, 1, 2, … (a packed row counts for its
members). The first line that does not parse (a blank line and a malformed packed row
included) or that breaks the run is an *issue*: the prefix ends there, unless a LATER line that
parses holds a ``turn/end``, which makes the log corrupt. A final fragment without its newline
is a torn write and is never looked at. A whole line that is JSON ``null`` makes the log
unreadable wherever it is: the harness fails reading a property of it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sessionref.errors import SessionLogError
from sessionref.log.lines import NULL_RECORD, Line, PieceDecoder
from sessionref.log.rows import MalformedRow, check_fast_row, check_row_value
from sessionref.log.structs import (
    PACKED_CHUNK_TYPES,
    DecodedLogRecord,
    LogRecord,
    raw_data,
    record_span,
)


def _row_value(record: LogRecord) -> dict[str, Any]:
    """A fast-decoded row as the parsed line it came from."""
    value = {
        name: getattr(record, attr)
        for name, attr in (
            ("type", "type"),
            ("seq", "seq"),
            ("time", "time"),
            ("seq0", "seq0"),
            ("time0", "time0"),
            ("surfaceOp", "surface_op"),
            ("sourceEventSeqs", "source_event_seqs"),
            ("ignorable", "ignorable"),
        )
    }
    value["data"] = raw_data(record)
    return {key: item for key, item in value.items() if item is not msgspec.UNSET}


def _span(record: LogRecord) -> int:
    """How many events a record stands for; 0 for a packed row the harness cannot expand (a
    fast-decoded row is checked here, one decoded alone was checked then)."""
    if record.type not in PACKED_CHUNK_TYPES:
        return 1
    count = check_fast_row(record) if type(record) is LogRecord else None
    return _row_span(record) if count is None else count


def _row_span(record: LogRecord) -> int:
    """:func:`_span` of a packed row the fast check did not take (or that was decoded alone:
    checked then)."""
    if type(record) is not LogRecord:
        return record_span(record)[1]
    try:
        return check_row_value(_row_value(record))
    except MalformedRow:
        return 0


class PrefixScanner:
    """Feed it pieces of whole lines in order; :attr:`records` is the committed prefix."""

    def __init__(self) -> None:
        self.records: list[LogRecord] = []
        self.decoder = PieceDecoder()
        self.expected = 0
        self.issue: str | None = None
        self.committed = True
        """Whether every line fed so far is in the prefix (no issue yet)."""

    def feed(self, piece: bytes | bytearray, first_line: int, count: int | None = None) -> None:
        """Take the ``count`` lines of ``piece`` (each ending with a newline; counted here when
        not given); the first is line ``first_line`` of the file. Raises
        :class:`SessionLogError` when the log is corrupt."""
        lines = self.decoder.decode(piece, count)
        if self.issue is None and self._take_all(lines):
            return
        for offset, line in enumerate(lines):
            self._take(line, first_line + offset)

    def _take_all(self, lines: list[Line]) -> bool:
        """The common case, inline: every line a record continuing the run (an event at the
        expected seq, or a row at the expected seq0 that a fast check finds well-formed). An
        event's ``seq0`` counts for nothing: the harness reads an event's ``seq``."""
        expected = self.expected
        rows = PACKED_CHUNK_TYPES
        for line in lines:
            if line is None:
                return False
            if line.type not in rows:
                if line.seq != expected:
                    return False
                expected += 1
                continue
            if line.seq0 != expected:
                return False
            span = check_fast_row(line) if type(line) is LogRecord else None
            if span is None:
                span = _row_span(line)
                if not span:
                    return False
            expected += span
        self.records += lines  # type: ignore[arg-type]  # no None among them
        self.expected = expected
        return True

    def _take(self, line: Line, number: int) -> None:
        if isinstance(line, DecodedLogRecord) and line.problem == NULL_RECORD:
            raise SessionLogError(f"unreadable session log: line {number} is null")
        span = 0 if line is None else _span(line)
        if line is None or not span:
            if self.issue is None:
                self.issue = f"unparsable committed event at line {number}"
                self.committed = False
            return
        if self.issue is not None:
            if line.type == "turn/end":
                raise SessionLogError(f"corrupt session log: {self.issue}")
            return
        first = line.seq if line.type not in PACKED_CHUNK_TYPES else line.seq0
        if first != self.expected:
            self.issue = (
                f"seq gap in committed region at line {number} "
                f"(expected {self.expected}, got {'none' if first is msgspec.UNSET else first})"
            )
            self.committed = False
            if line.type == "turn/end":
                raise SessionLogError(f"corrupt session log: {self.issue}")
            return
        self.records.append(line)
        self.expected += span
