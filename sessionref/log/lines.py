"""JSONL lines to records: in bulk where msgspec takes them, one line alone where it does not.

A piece of whole lines (256 KiB or so) goes through msgspec's ``decode_lines`` at once. When
that fails, the lines it refuses are found where its errors point and each is decoded ALONE, as
``JSON.parse`` would (lone-surrogate escapes, integral floats, any JSON value); the rest of the
piece still goes through the bulk decoder. The harness decodes each line with U+FFFD for invalid
UTF-8. msgspec refuses invalid UTF-8 in a string it builds, so such a line is decoded alone,
with U+FFFD (:func:`parse_json`). What msgspec skips (a record's ``data`` kept raw) it does
not check: those bytes are repaired when they are decoded
(:func:`~sessionref.log.structs.decode_raw`), so a log pays for the check only where it has
invalid UTF-8.

msgspec also takes what ``JSON.parse`` of each line does not: two values on one line, one value
over two lines, blank lines. So each line is decoded wrapped in ``[`` … ``]``
(:func:`wrap_lines`), and a bulk decode is kept only when it gives one value per line
(:func:`decode_whole`); otherwise the piece's lines are decoded alone.
"""

from __future__ import annotations

import json
import operator
import re
from codecs import utf_8_decode
from typing import Any, Final

import msgspec

from sessionref.codecs.jsjson import parse_json, reject_constant
from sessionref.log.frames import newline_count
from sessionref.log.jsvalue import has_exact_keys, is_safe_int, js_int
from sessionref.log.rows import MalformedRow, check_row_value
from sessionref.log.structs import PACKED_CHUNK_TYPES, DecodedLogRecord, LogRecord

Line = LogRecord | None
"""A decoded line: its record, or ``None`` for a line the harness cannot parse."""

_DECODER: Final = msgspec.json.Decoder(LogRecord)
_WINDOW: Final = 1 << 13
"""Bytes of lines decoded at once after a piece was refused: a refused line costs up to
that much decoded twice, a window a call."""
_ENVELOPE_KEYS: Final = ("type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable")
_JSON_SPACE: Final = b" \t\r"
NULL_RECORD: Final = "a JSON null line"
"""The problem of a line that parses to ``null``: the harness fails on it wherever it is
("Cannot read properties of null"), so the whole log is unreadable."""


def _js_integer(literal: str) -> int | float:
    """An integer literal as ``JSON.parse`` reads it: ``-0`` is negative zero, a float here.

    >>> _js_integer("-0"), _js_integer("-12")
    (-0.0, -12)
    """
    return -0.0 if literal == "-0" else int(literal)


_JS_NUMBERS: Final = json.JSONDecoder(parse_constant=reject_constant, parse_int=_js_integer)


def parse_json_signed_zero(line: bytes) -> Any:
    """:func:`parse_json`, but the integer literal ``-0`` is read as ``JSON.parse`` reads it,
    negative zero (``-0.0``), where Python reads the integer 0. For a header line: the
    harness's listing skips a header whose ``createdAt`` or ``delegationDepth`` is -0
    (``Object.is(value, -0)``); event fields it never checks for -0.

    >>> parse_json_signed_zero(b'{"a":-0,"b":"-0","c":[0,-0.5]}'), parse_json(b'-0')
    ({'a': -0.0, 'b': '-0', 'c': [0, -0.5]}, 0)
    """
    if b"-0" not in line:
        return parse_json(line)
    return _JS_NUMBERS.decode(line.decode("utf-8", "replace"))


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


def decode_piece(piece: bytes | bytearray, count: int | None = None) -> list[Line]:
    """One entry per line of ``piece`` (whole lines, each ending with a newline; ``count`` of
    them, counted here when not given): :meth:`PieceDecoder.decode` of a piece alone.

    >>> [r and r.type for r in decode_piece(b'{"type":"a","seq":0}\\n\\n5\\n')]
    ['a', None, '']
    """
    return PieceDecoder().decode(piece, count)


class PieceDecoder:
    """Decodes the pieces of one log, in order.

    A piece is wrapped (:func:`wrap_lines`) and goes through msgspec at once. When msgspec
    refuses it, the lines before the one it refused are decoded in bulk, that line alone, and
    the rest by windows of about 8 KiB, each in bulk and handled the same way when refused: a
    refused line costs at most a window decoded twice. A log that has such lines usually has
    them every piece or so, and a piece tried at once is decoded up to its first one for
    nothing, so once a piece had one every later piece is decoded by windows from its start.
    Nothing is counted on the way: the values add up to the piece's lines only when each line
    holds one (see :func:`decode_whole`). When they do not, which takes ``][`` between two
    values on a line, every line of the piece is decoded alone.
    """

    def __init__(self) -> None:
        self.windows = False
        """Whether pieces are decoded by windows from their start: once msgspec refused a line."""

    def decode(self, piece: bytes | bytearray, count: int | None = None) -> list[Line]:
        """One entry per line of ``piece`` (``count`` lines, counted here when not given)."""
        if count is None:
            count = newline_count(piece)
        if not count:
            return []
        wrapped = wrap_lines(piece)
        out, refused = _decode_wrapped(wrapped, _WINDOW if self.windows else len(wrapped))
        self.windows = self.windows or refused
        if len(out) == count:
            return out
        return [_decode_alone(bytes(line)) for line in piece.split(b"\n")[:-1]]


def wrap_lines(piece: bytes | bytearray) -> bytearray:
    """The whole lines of ``piece``, each wrapped in ``[`` … ``]``.

    >>> wrap_lines(b'{"a":1}\\n\\n')
    bytearray(b'[{"a":1}]\\n[]\\n')
    """
    wrapped = bytearray(b"[") + piece.replace(b"\n", b"]\n[")
    del wrapped[-1]
    return wrapped


def decode_whole(piece: bytes | bytearray, count: int) -> list[LogRecord] | None:
    """The records of the ``count`` whole lines of ``piece`` at once when each line is one
    record msgspec takes, else ``None``. Each line is decoded as ``[line]``, a one-element
    array: ``]`` then ``[`` is JSON nowhere inside a value, so every newline falls between
    two values, and as many arrays as lines means one value per line.

    >>> [r.type for r in decode_whole(b'{"type":"a"}\\n {"type":"b"}\\r\\n', 2)]
    ['a', 'b']
    >>> decode_whole(b'{"type":"a"}{"type":"b"}\\n{"type":"c","data":{}\\n}\\n', 3)
    """
    if not count:
        return []
    try:
        records = _WRAPPED.decode_lines(wrap_lines(piece))
    except (msgspec.DecodeError, RecursionError):  # a ValidationError is a DecodeError
        return None
    return list(map(_FIRST, records)) if len(records) == count else None


_WRAPPED: Final = msgspec.json.Decoder(tuple[LogRecord])
_FIRST: Final = operator.itemgetter(0)


def _decode_wrapped(wrapped: bytearray, first: int) -> tuple[list[Line], bool]:
    """The lines of ``wrapped`` (see :func:`wrap_lines`), run by run, and whether msgspec
    refused any: the first run is the lines in about ``first`` bytes, each later one those in
    about :data:`_WINDOW`. When msgspec refuses a run, the lines before the one its error
    points to (see :func:`_split`) are decoded again in bulk, then that line alone. One entry
    per line when each line msgspec took is one value; more entries otherwise.

    >>> wrapped = wrap_lines(b'{"type":"a"}\\n{"type":"b","data":"\\\\ud800"}\\n{"type":"c"}\\n')
    >>> out, refused = _decode_wrapped(wrapped, len(wrapped))
    >>> [(type(r).__name__, r.type) for r in out], refused
    ([('LogRecord', 'a'), ('DecodedLogRecord', 'b'), ('LogRecord', 'c')], True)
    """
    view, size = memoryview(wrapped), len(wrapped)
    out: list[Line] = []
    ends: list[int] = []  # of the runs split off, the next last
    start, window, refused = 0, first, -1
    while start < size:
        if start == refused:  # the line msgspec's last error points to
            stop = wrapped.index(b"\n", start) + 1
            out.append(decode_line(bytes(view[start + 1 : stop - 2])))
        else:
            stop = ends[-1] if ends else wrapped.find(b"\n", start + window - 1) + 1 or size
            try:
                out += map(_FIRST, _WRAPPED.decode_lines(view[start:stop]))
            except (msgspec.DecodeError, RecursionError) as error:  # a ValidationError too
                window, refused = _WINDOW, _split(wrapped, start, stop, error)
                if refused > start:  # the lines before it first
                    ends.append(refused)
                continue
        start = stop
        if ends and ends[-1] == start:
            ends.pop()
    return out, refused >= 0


def _decode_alone(line: bytes) -> Line:
    """One line decoded alone as it would be in bulk: a :class:`LogRecord` when msgspec
    takes it, else :func:`decode_line`.

    >>> type(_decode_alone(b'{"type":"a"}')).__name__, _decode_alone(b'{"type":"a"}]')
    ('LogRecord', None)
    """
    try:
        return _DECODER.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return decode_line(line)


_DECODE_ERROR_BYTE: Final = re.compile(r"\(byte (\d+)\)$")
_VALIDATION_ITEM: Final = re.compile(r"`\$\[(\d+)\]")
_TRUNCATED: Final = "Input data was truncated"
_INVALID_UTF8: Final = "Invalid UTF-8 encoded string"


def _split(piece: bytes | bytearray, start: int, stop: int, error: Exception | None) -> int:
    """Where to split the run ``piece[start:stop]`` that msgspec refused with ``error``: the
    start of the line the error points to, or of the middle line when it points nowhere in
    the run; ``start`` when that is the run's first line. msgspec runs out of input, with no
    offset, when a lone high surrogate escape ends a string a few bytes before the end: the
    last line is taken for the one it refused. Nor does it say where invalid UTF-8 is: the
    first invalid byte of the run is.

    >>> lines = b'{"a":1}\\n{"a":"\\\\ud800"}\\n{"a":2}\\n'
    >>> def at(n):
    ...     return msgspec.DecodeError(f"JSON is malformed: invalid escape (byte {n})")
    >>> _split(lines, 0, len(lines), at(14)), _split(lines, 8, len(lines), at(6))
    (8, 8)
    >>> _split(lines, 0, len(lines), msgspec.DecodeError("Input data was truncated"))
    23
    >>> bad = b'{"a":1}\\n{"\\xff":2}\\n'
    >>> _split(bad, 0, len(bad), msgspec.DecodeError("Invalid UTF-8 encoded string"))
    8
    """
    at = None
    if isinstance(error, msgspec.ValidationError):  # ``$[i]``: the i-th record of the run
        item = _VALIDATION_ITEM.search(str(error))
        if item is not None:
            at = start
            for _ in range(int(item[1])):
                at = piece.find(b"\n", at, stop) + 1 or stop
    elif isinstance(error, msgspec.DecodeError):  # ``(byte n)``: an offset in the run
        offset = _DECODE_ERROR_BYTE.search(str(error))
        if offset is not None:
            at = start + int(offset[1])
        elif str(error) == _TRUNCATED:  # a lone ``\\udXXX`` near the end: the last line
            at = stop - 1
        elif str(error) == _INVALID_UTF8:
            try:
                utf_8_decode(piece[start:stop], "strict", True)
            except UnicodeDecodeError as invalid:
                at = start + invalid.start
    if at is None or not start <= at < stop:
        at = (start + stop) // 2
    return max(start, piece.rfind(b"\n", start, at) + 1)
