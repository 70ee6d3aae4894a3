"""JSONL lines to records: in bulk where msgspec takes them, one line alone where it does not.

A piece of whole lines (256 KiB or so) goes through msgspec's ``decode_lines`` at once. When
that fails, the lines it refuses are found by bisection and each is decoded ALONE, as
``JSON.parse`` would (lone-surrogate escapes, integral floats, any JSON value); the rest of the
piece still goes through the bulk decoder. Invalid UTF-8 is replaced by U+FFFD first, as the
harness decodes each line.
"""

from __future__ import annotations

import json
from typing import Any, Final

import msgspec

from sessionref.log.jsvalue import has_exact_keys, is_safe_int, js_int
from sessionref.log.rows import MalformedRow, check_row_value
from sessionref.log.structs import PACKED_CHUNK_TYPES, DecodedLogRecord, LogRecord

Line = LogRecord | None
"""A decoded line: its record, or ``None`` for a line the harness cannot parse."""

_DECODER: Final = msgspec.json.Decoder(LogRecord)
_ANY: Final = msgspec.json.Decoder()
_MAX_BISECTIONS: Final = 8
_ENVELOPE_KEYS: Final = ("type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable")
_JSON_SPACE: Final = b" \t\r"
NULL_RECORD: Final = "a JSON null line"
"""The problem of a line that parses to ``null``: the harness fails on it wherever it is
("Cannot read properties of null"), so the whole log is unreadable."""


def repair_utf8(piece: bytes | bytearray) -> bytes | bytearray:
    """``piece`` with every invalid UTF-8 sequence replaced by U+FFFD.

    >>> repair_utf8(b'{"a":"\\xff"}\\n')
    b'{"a":"\\xef\\xbf\\xbd"}\\n'
    """
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return piece.decode("utf-8", "replace").encode("utf-8")
    return piece


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def parse_json(line: bytes) -> Any:
    """``JSON.parse`` of one line: msgspec where it can, the standard library for the lone
    surrogates msgspec refuses. Raises ``ValueError`` for what is not JSON.

    >>> parse_json(b'{"a":"\\\\ud800"}')
    {'a': '\\ud800'}
    """
    try:
        return _ANY.decode(line)
    except msgspec.DecodeError:
        return json.loads(line.decode("utf-8"), parse_constant=_reject_constant)


def envelope_problem(value: dict[str, Any]) -> str | None:
    """What makes a parsed event line's envelope one the harness refuses, if anything.

    >>> envelope_problem({"type": "a", "seq": 0, "time": 1.0, "data": None})
    >>> envelope_problem({"type": "a", "seq": 0, "time": 1, "data": {}, "ignorable": False})
    'invalid event envelope'
    """
    valid = (
        has_exact_keys(value, ("type", "seq", "time", "data"), _ENVELOPE_KEYS)
        and type(value["type"]) is str
        and is_safe_int(value["seq"], 0)
        and is_safe_int(value["time"])
        and value.get("ignorable", True) is True
    )
    return None if valid else "invalid event envelope"


def _as_int(value: object) -> Any:
    number = js_int(value)
    return msgspec.UNSET if number is None else number


def record_from_value(value: Any) -> Line:
    """The record a parsed line stands for; ``None`` for a malformed packed row.

    >>> record_from_value({"type": "a", "seq": 1.0, "time": 2, "data": 3}).seq
    1
    >>> record_from_value([1]).problem
    'not an object'
    >>> record_from_value(None).problem == NULL_RECORD
    True
    """
    if value is None:
        return DecodedLogRecord("", problem=NULL_RECORD)
    if type(value) is not dict:
        return DecodedLogRecord("", problem="not an object")
    kind = value.get("type")
    if type(kind) is str and kind in PACKED_CHUNK_TYPES:
        try:
            check_row_value(value)
        except MalformedRow:
            return None
        return DecodedLogRecord(
            kind, seq0=_as_int(value["seq0"]), time0=_as_int(value["time0"]), data=value["data"]
        )
    return DecodedLogRecord(
        kind if type(kind) is str else "",
        seq=_as_int(value.get("seq")),
        time=_as_int(value.get("time")),
        data=value.get("data", msgspec.UNSET),
        surface_op=value.get("surfaceOp", msgspec.UNSET),
        source_event_seqs=value.get("sourceEventSeqs", msgspec.UNSET),
        ignorable=value.get("ignorable", msgspec.UNSET),
        problem=envelope_problem(value),
    )


def decode_line(line: bytes) -> Line:
    """One line decoded alone: its record, or ``None`` when the harness cannot parse it.

    >>> decode_line(b'{"type":"a","seq":0,"time":0,"data":"\\\\udc00"}').data
    '\\udc00'
    >>> decode_line(b"  \\r") is None, decode_line(b"{") is None
    (True, True)
    """
    if not line.strip(_JSON_SPACE):
        return None
    try:
        value = parse_json(line)
    except (ValueError, RecursionError):
        return None
    return record_from_value(value)


def _bulk(view: memoryview, expected: int) -> list[LogRecord] | None:
    """The records of ``expected`` lines at once, or ``None`` if any line is not one."""
    try:
        records = _DECODER.decode_lines(view)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return records if len(records) == expected else None


def decode_piece(piece: bytes | bytearray) -> list[Line]:
    """One entry per line of ``piece`` (whole lines, each ending with a newline).

    >>> [r and r.type for r in decode_piece(b'{"type":"a","seq":0}\\n\\n5\\n')]
    ['a', None, '']
    """
    piece = repair_utf8(piece)
    count = piece.count(b"\n")
    view = memoryview(piece)
    records: list[Line] | None = _bulk(view, count)  # type: ignore[assignment]
    if records is not None:
        return records
    starts = [0]
    for _ in range(count):
        starts.append(piece.index(b"\n", starts[-1]) + 1)
    return _decode_runs(view, starts)


def _decode_runs(view: memoryview, starts: list[int]) -> list[Line]:
    """Lines ``starts[i]:starts[i+1]``: runs in bulk, each refused line found by bisection
    and decoded alone; after a few refusals in one piece, line by line."""
    count = len(starts) - 1
    out: list[Line] = []
    first = 0
    refusals = 0
    while first < count:
        if refusals >= _MAX_BISECTIONS:
            out.extend(_alone(view, starts, index) for index in range(first, count))
            break
        whole = _bulk(view[starts[first] : starts[count]], count - first)
        if whole is not None:
            out.extend(whole)
            break
        good, bad = first, count
        while bad - good > 1:
            middle = (good + bad) // 2
            run = _bulk(view[starts[good] : starts[middle]], middle - good)
            if run is None:
                bad = middle
            else:
                out.extend(run)
                good = middle
        out.append(_alone(view, starts, good))
        first = good + 1
        refusals += 1
    return out


def _alone(view: memoryview, starts: list[int], index: int) -> Line:
    return decode_line(bytes(view[starts[index] : starts[index + 1] - 1]))
