"""JSONL lines to records: in bulk where msgspec takes them, one line alone where it does not.

A piece of whole lines (256 KiB or so) goes through msgspec's ``decode_lines`` at once. When
that fails, the lines it refuses are found where its errors point and each is decoded ALONE, as
``JSON.parse`` would (lone-surrogate escapes, integral floats, any JSON value); the rest of the
piece still goes through the bulk decoder. Invalid UTF-8 is replaced by U+FFFD first, as the
harness decodes each line.

msgspec also takes what ``JSON.parse`` of each line does not: two values on one line, one value
over two lines, blank lines. So a whole piece is decoded with each line wrapped
(:func:`decode_whole`), and a bulk decode of lines is kept only when it is one value per line
(:func:`_one_per_line`); otherwise their lines are decoded as if refused.
"""

from __future__ import annotations

import json
import operator
import re
from codecs import utf_8_decode
from typing import Any, Final

import msgspec

from sessionref.log.jsvalue import has_exact_keys, is_safe_int, js_int
from sessionref.log.rows import MalformedRow, check_row_value
from sessionref.log.structs import PACKED_CHUNK_TYPES, DecodedLogRecord, LogRecord

Line = LogRecord | None
"""A decoded line: its record, or ``None`` for a line the harness cannot parse."""

_DECODER: Final = msgspec.json.Decoder(LogRecord)
_ANY: Final = msgspec.json.Decoder()
_UTF8_WINDOW: Final = 1 << 16
_WINDOW: Final = 1 << 13
"""Bytes of lines decoded at once after a piece was refused: a refused line costs up to
that much decoded twice, a window a call."""
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
    if piece.isascii() or _is_utf8(piece):
        return piece
    return piece.decode("utf-8", "replace").encode("utf-8")


def _is_utf8(piece: bytes | bytearray) -> bool:
    """Whether ``piece`` is valid UTF-8, decoded a window at a time so the check never holds
    more than a window's text (a whole piece as text can take four times its bytes).

    >>> _is_utf8("é".encode() * 40000), _is_utf8(b"a\\xc3")
    (True, False)
    """
    view, size, start = memoryview(piece), len(piece), 0
    while start < size:
        stop = start + _UTF8_WINDOW
        try:  # a sequence cut by the window's end is left for the next window
            start += utf_8_decode(view[start:stop], "strict", stop >= size)[1]
        except UnicodeDecodeError:
            return False
    return True


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


_JSON: Final = json.JSONDecoder(parse_constant=_reject_constant)
"""What ``json.loads(text, parse_constant=_reject_constant)`` builds on every call."""


def parse_json(line: bytes) -> Any:
    """``JSON.parse`` of one line: msgspec where it can, the standard library for the lone
    surrogates msgspec refuses. Raises ``ValueError`` for what is not JSON.

    >>> parse_json(b'{"a":"\\\\ud800"}')
    {'a': '\\ud800'}
    """
    try:
        return _ANY.decode(line)
    except msgspec.DecodeError:
        return _JSON.decode(line.decode("utf-8"))


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

    A piece goes through msgspec at once. When msgspec refuses it, the lines before the one
    it refused are decoded in bulk, that line alone, and the rest by windows of about 8 KiB,
    each in bulk and handled the same way when refused: a refused line costs at most a
    window decoded twice. A log that has such lines usually has them in every piece, so the
    piece after one that had is decoded by windows from its start. Should the records not
    add up to one per line (a blank line in a window), the piece is decoded as
    :func:`_decode_range` does, counting every run's lines.
    """

    def __init__(self) -> None:
        self.windows = False
        """Whether the next piece is decoded by windows from its start."""

    def decode(self, piece: bytes | bytearray, count: int | None = None) -> list[Line]:
        """One entry per line of ``piece`` (``count`` lines, counted here when not given)."""
        piece = repair_utf8(piece)
        if count is None:
            count = piece.count(b"\n")
        view = memoryview(piece)
        if self.windows:
            out, self.windows = _by_windows(piece, view, None)
        else:
            records = decode_whole(piece, count)
            if records is not None:
                return records  # type: ignore[return-value]  # no None in it
            out, self.windows = _by_windows(piece, view, None)
        return out if len(out) == count else _decode_range(piece, view, 0, len(piece), count)


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
    wrapped = bytearray(b"[") + piece.replace(b"\n", b"]\n[")
    del wrapped[-1]
    try:
        records = _WRAPPED.decode_lines(wrapped)
    except (msgspec.DecodeError, RecursionError):  # a ValidationError is a DecodeError
        return None
    return list(map(_FIRST, records)) if len(records) == count else None


_WRAPPED: Final = msgspec.json.Decoder(tuple[LogRecord])
_FIRST: Final = operator.itemgetter(0)


def _by_windows(
    piece: bytes | bytearray, view: memoryview, error: Exception | None
) -> tuple[list[Line], bool]:
    """The lines of ``piece`` by windows (see :class:`PieceDecoder`), the first being the
    whole piece when msgspec just refused it with ``error``; and whether it refused any.
    A window msgspec takes but not as one value per line is decoded by :func:`_decode_range`."""
    out: list[Line] = []
    size = len(piece)
    start, stop = 0, size if error is not None else piece.find(b"\n", _WINDOW) + 1 or size
    refusals = error is not None
    while start < size:
        if error is None:  # the window from start to stop has not been tried yet
            lines = piece.count(b"\n", start, stop)
            records, error = _decode_bulk(piece, view, start, stop, lines)
            refusals = refusals or records is None
            if error is None:  # taken, one value per line or not
                out += (
                    _decode_range(piece, view, start, stop, lines) if records is None else records
                )
                start = stop
                stop = piece.find(b"\n", start + _WINDOW) + 1 or size
                continue
        refused = _split(piece, start, stop, error)
        if refused > start:  # the lines before it, again
            out += _decode_range(piece, view, start, refused, piece.count(b"\n", start, refused))
        start = piece.index(b"\n", refused) + 1
        out.append(decode_line(bytes(view[refused : start - 1])))
        stop, error = piece.find(b"\n", start + _WINDOW) + 1 or size, None
    return out, refusals


def _decode_bulk(
    piece: bytes | bytearray, view: memoryview, start: int, stop: int, lines: int
) -> tuple[list[LogRecord] | None, Exception | None]:
    """The records of the ``lines`` lines of ``piece[start:stop]`` (``view`` is ``piece``'s)
    at once, or ``None`` and why msgspec refused them (no reason when it took them but not as
    one value per line).

    >>> piece = b'{"type":"a"}{"type":"b"}\\n\\n'
    >>> _decode_bulk(piece, memoryview(piece), 0, len(piece), 2)
    (None, None)
    """
    try:
        records = _DECODER.decode_lines(view[start:stop])
    except (msgspec.DecodeError, RecursionError) as exc:  # a ValidationError is a DecodeError
        return None, exc
    return (
        (records, None) if _one_per_line(piece, start, stop, lines, len(records)) else (None, None)
    )


def _one_per_line(piece: bytes | bytearray, start: int, stop: int, lines: int, values: int) -> bool:
    """Whether the ``values`` values msgspec found in the ``lines`` whole lines of
    ``piece[start:stop]`` are one per line, as ``JSON.parse`` of each line finds them: there
    are as many, and every line is ``{`` … ``}`` (JSON whitespace around). Then every newline
    is between two values (``}`` then ``{`` is not JSON inside a value, and a string holds no
    newline), so each line holds at least one value, hence exactly one. Counted with
    ``bytes.count`` for lines without whitespace around (what the harness writes), matched
    line by line otherwise.

    >>> def check(piece, values):
    ...     return _one_per_line(piece, 0, len(piece), piece.count(b"\\n"), values)
    >>> check(b'{"a":1}\\n {"b":2}\\r\\n', 2), check(b'{"a":1}{"b":2}\\n{"c":\\n3}\\n', 3)
    (True, False)
    """
    if values != lines:
        return False
    if (
        lines
        and piece[start] == _OPEN
        and piece[stop - 2] == _CLOSE
        and piece.count(b"}\n{", start, stop) == lines - 1
    ):
        return True
    return _OBJECT_LINES.fullmatch(piece, start, stop) is not None


_OPEN: Final = ord("{")
_CLOSE: Final = ord("}")
_OBJECT_LINES: Final = re.compile(rb"(?:[ \t\r]*\{[^\n]*\}[ \t\r]*\n)*")


def _decode_range(
    piece: bytes | bytearray, view: memoryview, start: int, stop: int, count: int
) -> list[Line]:
    """The ``count`` lines of ``piece[start:stop]``, each run of them in bulk, checked to hold
    one record per line: a run refused is split at the line msgspec's error points to (in
    the middle when it points nowhere), and a line refused at the start of a run is decoded
    alone. A refused line costs about one more bulk decode of the lines before it.
    """
    out: list[Line] = []
    todo = [(stop, count)]  # (end, lines) of the runs still to decode, the next last
    while todo:
        stop, lines = todo[-1]
        records, error = _decode_bulk(piece, view, start, stop, lines)
        if records is not None:
            out += records
            start = stop
            todo.pop()
            continue
        split = _split(piece, start, stop, error) if lines > 1 else start
        if split == start:  # the run's first line is refused: decode it alone
            end = piece.index(b"\n", start) + 1
            out.append(decode_line(bytes(view[start : end - 1])))
            start = end
            todo[-1] = (stop, lines - 1)
            if lines == 1:
                todo.pop()
        else:
            before = piece.count(b"\n", start, split)
            todo[-1] = (stop, lines - before)
            todo.append((split, before))
    return out


_DECODE_ERROR_BYTE: Final = re.compile(r"\(byte (\d+)\)$")
_VALIDATION_ITEM: Final = re.compile(r"`\$\[(\d+)\]")


def _split(piece: bytes | bytearray, start: int, stop: int, error: Exception | None) -> int:
    """Where to split the run ``piece[start:stop]`` that msgspec refused with ``error``: the
    start of the line the error points to, or of the middle line when it points nowhere in
    the run; ``start`` when that is the run's first line.

    >>> lines = b'{"a":1}\\n{"a":"\\\\ud800"}\\n{"a":2}\\n'
    >>> def at(n):
    ...     return msgspec.DecodeError(f"JSON is malformed: invalid escape (byte {n})")
    >>> _split(lines, 0, len(lines), at(14)), _split(lines, 8, len(lines), at(6))
    (8, 8)
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
        at = None if offset is None else start + int(offset[1])
    if at is None or not start <= at < stop:
        at = (start + stop) // 2
    return max(start, piece.rfind(b"\n", start, at) + 1)
