"""DSH session log records: JSONL lines, zstd frames and packed chunk rows (docs/format.md).

Each line is decoded into a :class:`LogRecord` envelope whose ``data`` stays undecoded
(``msgspec.Raw``) until a later stage asks for it with :func:`decode_data`. Lines that msgspec
refuses because they hold lone-surrogate escapes are decoded by the standard library instead,
one line at a time, into a :class:`DecodedLogRecord` whose ``data`` is already built.
"""

from __future__ import annotations

import codecs
import functools
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, BinaryIO, Final, Generic, Literal, Protocol, TypeVar

import msgspec
import zstandard

from sessionref.codecs.jsjson import js_json
from sessionref.errors import SessionLogError

T = TypeVar("T")
M = TypeVar("M")
Buffer = bytes | bytearray
Chunk = bytes | bytearray | memoryview

PACKED_CHUNK_TYPES: Final = {
    "text-chunks": ("text-delta", "texts"),
    "reasoning-chunks": ("reasoning-delta", "texts"),
    "tool-call-chunks": ("tool-call-delta", "args"),
}
DEFAULT_MAX_DECOMPRESSED_BYTES: Final = 1 << 30
DEFAULT_MAX_LINE_BYTES: Final = 64 << 20
_ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"
_CHUNK_SIZE: Final = 1 << 18
_TAIL_WINDOW: Final = 1 << 20
_UTF8_CHECK_SIZE: Final = 1 << 16


class ReplaceOp(msgspec.Struct, frozen=True, gc=False, tag_field="op", tag="replace"):
    """``{"op":"replace","start":S,"end":E}``: nodes S through E become this event."""

    start: int
    end: int


SurfaceOp = Literal["append"] | ReplaceOp


class SessionHeader(msgspec.Struct, frozen=True, rename="camel"):
    """Line 1 of a session log. Unknown fields are ignored."""

    id: str
    created_at: int | float
    type: Literal["session"] = "session"
    version: int = 0
    cwd: str | None = None
    parent_session: str | None = None
    delegation_depth: int = 0


class LogRecord(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """A storage record: an event (``seq``) or a packed chunk row (``seq0``), data undecoded.

    Not tracked by the cyclic garbage collector (``gc=False``): a log has a million of these
    and none can be part of a cycle, so full collections no longer walk them.
    """

    type: str
    seq: int | None = None
    seq0: int | None = None
    data: msgspec.Raw = msgspec.Raw(b"null")
    surface_op: SurfaceOp | msgspec.UnsetType = msgspec.UNSET
    source_event_seqs: list[int] | msgspec.UnsetType = msgspec.UNSET


class DecodedLogRecord(LogRecord, frozen=True):
    """A :class:`LogRecord` read by the fallback decoder, its ``data`` already built."""

    data: Any = None


class PackedRow(msgspec.Struct, Generic[M], frozen=True, gc=False):
    """``data`` of a packed chunk row, its members decoded as ``M``.

    ``PackedRow[str]`` checks every member; the fold only counts them, as
    ``PackedRow[msgspec.Raw]`` (fast path) or ``PackedRow[Any]`` (fallback path).
    """

    turn: int
    step: int
    index: int
    dt: list[int | float]
    texts: list[M] | None = None
    args: list[M] | None = None
    id: str | None = None
    name: str | None = None


_PACKED_COUNT_DECODER: Final = msgspec.json.Decoder(PackedRow[msgspec.Raw])
_RECORD_DECODER: Final = msgspec.json.Decoder(LogRecord)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _stdlib_json(line: bytes) -> object:
    """Parse JSON the way ``JSON.parse`` does, lone-surrogate escapes included.

    Bytes must be strict UTF-8, as msgspec wants them: ``json.loads`` on bytes would also take
    a BOM, UTF-16 or UTF-8-encoded surrogates.
    """
    return json.loads(line.decode("utf-8"), parse_constant=_reject_constant)


def _decode_line(line: bytes, kind: type[T], fallback: type[T]) -> T:
    """One JSON line as ``kind``; lines msgspec refuses go through the standard library.

    Raises ``ValueError`` (``msgspec.DecodeError`` or ``ValidationError`` included) when the
    line is not JSON of that shape.
    """
    try:
        return msgspec.json.decode(line, type=kind)
    except msgspec.DecodeError:
        return msgspec.convert(_stdlib_json(line), fallback)


def decode_header(line: bytes) -> SessionHeader:
    """The session header in a JSONL line; the whole line must be UTF-8, as a log must.

    >>> decode_header(b'{"type":"session","version":0,"id":"s","createdAt":5}').id
    's'
    """
    try:
        line.decode("utf-8")  # msgspec skips unknown keys without checking them
        return _decode_line(line, SessionHeader, SessionHeader)
    except RecursionError:
        raise SessionLogError("session header nests too deeply") from None
    except ValueError as exc:
        raise SessionLogError(f"bad session header: {exc}") from None


def _decode_record_line(line: bytes, number: int) -> LogRecord:
    try:
        return _decode_line(line, LogRecord, DecodedLogRecord)
    except RecursionError:
        raise SessionLogError(f"record on line {number} nests too deeply") from None
    except ValueError as exc:
        raise SessionLogError(f"unparsable record on line {number}: {exc}") from None


def _line_count(buffer: Buffer, start: int) -> int:
    """Lines in ``buffer[start:]``, a last line without its newline included."""
    newlines = buffer.count(b"\n", start)
    return newlines + (0 if buffer.endswith(b"\n") or len(buffer) <= start else 1)


def decode_records(buffer: Buffer, start: int = 0, first_line_number: int = 2) -> list[LogRecord]:
    """Decode every record line of ``buffer[start:]``; blank lines are skipped.

    A final line without its newline that does not parse is a torn write and is dropped; any
    other line that does not parse raises :class:`SessionLogError`. The lines are tried all at
    once first, without copying the buffer (each record's ``data`` points into it); when that
    fails, or does not give one record per line, they are decoded one by one.

    >>> [r.type for r in decode_records(b'{"type":"a","seq":0}\\n{"type":"b","se')]
    ['a']
    """
    try:
        records = _RECORD_DECODER.decode_lines(memoryview(buffer)[start:])
        if len(records) == _line_count(buffer, start):
            return records
    except (msgspec.DecodeError, RecursionError):
        pass
    lines = bytes(buffer[start:]).split(b"\n")
    last = len(lines) - 1
    records = []
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            records.append(_decode_record_line(line, first_line_number + index))
        except SessionLogError:
            if index == last:
                break
            raise
    return records


def split_header(buffer: Buffer) -> tuple[bytes, int]:
    """The header line of a decompressed log and the offset where its records start.

    >>> split_header(b'{"id":"s"}\\n{"type":"a"}\\n')
    (b'{"id":"s"}', 11)
    """
    end = buffer.find(b"\n")
    return (bytes(buffer), len(buffer)) if end < 0 else (bytes(buffer[:end]), end + 1)


_DATA_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def _data_decoder(kind: type[T]) -> msgspec.json.Decoder[T]:
    """One decoder per target type, built on first use."""
    decoder = _DATA_DECODERS.get(kind)
    if decoder is None:
        decoder = _DATA_DECODERS.setdefault(kind, msgspec.json.Decoder(kind))
    return decoder


def decode_data(record: LogRecord, kind: type[T]) -> T:
    """Decode a record's ``data`` as ``kind``; raises :class:`SessionLogError` on a mismatch.

    >>> rec = decode_records(b'{"type":"x","seq":0,"data":{"turn":1}}\\n')[0]
    >>> decode_data(rec, dict)
    {'turn': 1}
    """
    try:
        if type(record) is not LogRecord:
            return msgspec.convert(record.data, kind)
        return _data_decoder(kind).decode(record.data)
    except (ValueError, RecursionError) as exc:
        raise SessionLogError(f"bad data in {_where(record)}: {exc}") from None


def _where(record: LogRecord) -> str:
    """A record named for an error message; its type is quoted, as it may be anything.

    >>> _where(LogRecord("x\\ny", seq=3))
    'event 3 ("x\\\\ny")'
    """
    position = f"event {record.seq}" if record.seq is not None else f"row {record.seq0}"
    return f"{position} ({js_json(record.type).decode('utf-8')})"


def record_span(record: LogRecord) -> tuple[int, int]:
    """``(first seq, number of events)`` a storage record stands for.

    >>> record_span(LogRecord("turn/start", seq=4))
    (4, 1)
    """
    if record.type in PACKED_CHUNK_TYPES:
        return _packed_span(record)
    if record.seq is None:
        raise SessionLogError(f"{_where(record)} has no seq")
    return record.seq, 1


def _packed_span(record: LogRecord) -> tuple[int, int]:
    """A packed row's seqs. Members are only counted here (the hot path of every read);
    they are decoded, strings checked, where a row is expanded."""
    if record.seq0 is None:
        raise SessionLogError(f"{_where(record)} has no seq0")
    row: PackedRow[Any]
    if type(record) is LogRecord:
        try:
            row = _PACKED_COUNT_DECODER.decode(record.data)
        except (ValueError, RecursionError):
            row = decode_data(record, PackedRow[msgspec.Raw])  # raises, saying what is wrong
    else:
        row = decode_data(record, PackedRow[Any])
    return record.seq0, len(_packed_members(record, row))


def _packed_members(record: LogRecord, row: PackedRow[Any]) -> Sequence[object]:
    """The ``texts`` or ``args`` a row's type calls for, with enough ``dt`` entries."""
    field = PACKED_CHUNK_TYPES[record.type][1]
    members: Sequence[object] | None = getattr(row, field)
    if members is None:
        raise SessionLogError(f"{_where(record)} has no {field}")
    if len(row.dt) < len(members) - 1:
        raise SessionLogError(f"{_where(record)} has too few dt entries")
    return members


def expand_packed_row(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``assistant/chunk`` events a packed chunk row stands for (docs/format.md §Packed rows).

    >>> row = {"type": "text-chunks", "seq0": 7, "time0": 100,
    ...        "data": {"turn": 1, "step": 1, "index": 0, "dt": [5], "texts": ["a", "b"]}}
    >>> [(e["seq"], e["time"], e["data"]["chunk"]["text"]) for e in expand_packed_row(row)]
    [(7, 100, 'a'), (8, 105, 'b')]
    """
    record = msgspec.convert(row, DecodedLogRecord)
    data = msgspec.convert(row["data"], PackedRow[str])
    members = _packed_members(record, data)
    chunk_type = PACKED_CHUNK_TYPES[record.type][0]
    time = row["time0"]
    events = []
    for k, member in enumerate(members):
        if k:
            time += data.dt[k - 1]
        chunk: dict[str, Any] = {"type": chunk_type, "index": data.index}
        if record.type == "tool-call-chunks":
            chunk["id"] = data.id
            if data.name is not None:
                chunk["name"] = data.name
            chunk["argumentsDelta"] = member
        else:
            chunk["text"] = member
        events.append(
            {
                "type": "assistant/chunk",
                "seq": row["seq0"] + k,
                "time": time,
                "data": {"turn": data.turn, "step": data.step, "chunk": chunk},
            }
        )
    return events


def contiguous(records: Iterable[LogRecord]) -> Iterator[LogRecord]:
    """Pass records through, checking that event seqs run 0, 1, 2, … after expansion.

    >>> [r.seq for r in contiguous([LogRecord("a", seq=0), LogRecord("b", seq=1)])]
    [0, 1]
    >>> list(contiguous([LogRecord("a", seq=1)]))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: seq gap: expected 0, found 1
    """
    expected = 0
    for record in records:
        # The common case inline: this loop runs once per line of the log.
        if record.seq == expected and record.type not in PACKED_CHUNK_TYPES:
            expected += 1
            yield record
            continue
        first, count = record_span(record)
        if first != expected:
            raise SessionLogError(f"seq gap: expected {expected}, found {first}")
        expected += count
        yield record


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def _file_chunks(file: _Readable) -> Iterator[bytes]:
    """What ``file.read(_CHUNK_SIZE)`` gives, call after call, until it gives nothing."""
    return iter(functools.partial(file.read, _CHUNK_SIZE), b"")


def _at_most(chunks: Iterable[bytes], limit: int, what: str) -> Iterator[bytes]:
    """``chunks``, raising :class:`SessionLogError` once more than ``limit`` bytes passed.

    >>> list(_at_most([b"ab", b"c"], 2, "log"))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: log exceeds 2 bytes
    """
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > limit:
            raise SessionLogError(f"{what} exceeds {limit} bytes")
        yield chunk


def _held_back(chunks: Iterable[bytes], count: int) -> Iterator[bytes]:
    """``chunks`` without their last ``count`` bytes.

    >>> list(_held_back([b"abc", b"de"], 3))
    [b'ab']
    """
    held = b""
    for chunk in chunks:
        if count:
            held += chunk
            cut = max(0, len(held) - count)
            chunk, held = held[:cut], held[cut:]
        if chunk:
            yield chunk


def zstd_chunks(file: BinaryIO, limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> Iterator[bytes]:
    """The decompressed bytes of the zstd frames in ``file`` (from where it stands), in
    chunks of at most 256 KiB; what a torn final frame decompresses to is left out.

    A damaged complete frame, or output beyond ``limit`` bytes, raises
    :class:`SessionLogError`.

    >>> import zstandard
    >>> frames = b"".join(zstandard.ZstdCompressor().compress(x) for x in (b"a\\n", b"b\\n"))
    >>> list(zstd_chunks(io.BytesIO(frames))), list(zstd_chunks(io.BytesIO(frames[:-2])))
    ([b'a\\nb\\n'], [b'a\\n'])
    """
    first = file.tell()
    torn = _torn_tail_length(file, first, file.seek(0, io.SEEK_END))
    file.seek(first)
    reader = zstandard.ZstdDecompressor().stream_reader(
        file, read_across_frames=True, closefd=False
    )
    try:
        yield from _held_back(_at_most(_file_chunks(reader), limit, "decompressed log"), torn)
    except zstandard.ZstdError as exc:
        raise SessionLogError(f"damaged zstd frame: {exc}") from None


def plain_chunks(file: BinaryIO, limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> Iterator[bytes]:
    """The bytes of ``file`` in chunks of at most 256 KiB; more than ``limit`` raises.

    >>> list(plain_chunks(io.BytesIO(b"ab"))), list(plain_chunks(io.BytesIO(b"abc"), 2))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: log exceeds 2 bytes
    """
    return _at_most(_file_chunks(file), limit, "log")


def decompress_frames(compressed: bytes, limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> bytearray:
    """:func:`zstd_chunks` of ``compressed`` as one buffer.

    >>> import zstandard
    >>> decompress_frames(zstandard.ZstdCompressor().compress(b"a\\n"))
    bytearray(b'a\\n')
    """
    return bytearray().join(zstd_chunks(io.BytesIO(compressed), limit))


def _torn_tail_length(file: BinaryIO, first: int, end: int) -> int:
    """Decompressed length of an incomplete final frame among bytes ``first:end`` of
    ``file`` (0 when the last frame is whole). Looks at the last ``_TAIL_WINDOW`` bytes
    first, and at all of them only when no frame starts there."""
    start = max(first, end - _TAIL_WINDOW)
    while True:
        file.seek(start)
        found = _torn_tail_in(file.read(end - start))
        if found is not None or start == first:
            return found or 0
        start = first


def _torn_tail_in(compressed: bytes) -> int | None:
    """:func:`_torn_tail_length` of ``compressed``; ``None`` when no frame starts in it.

    >>> import zstandard
    >>> frame = zstandard.ZstdCompressor().compress(b"abc")
    >>> _torn_tail_in(b"x" + frame), _torn_tail_in(b"x")
    (0, None)
    """
    start = compressed.rfind(_ZSTD_MAGIC)
    while start >= 0:
        decompressor = zstandard.ZstdDecompressor().decompressobj()
        try:
            partial = decompressor.decompress(compressed[start:])
        except zstandard.ZstdError:
            start = compressed.rfind(_ZSTD_MAGIC, 0, start)
            continue
        return 0 if decompressor.eof else len(partial)
    return None


def line_pieces(chunks: Iterable[Chunk], max_line_bytes: int) -> Iterator[tuple[int, bytearray]]:
    """Regroup ``chunks`` into pieces of whole lines: ``(number of its first line, piece)``.

    Every piece but the last ends with a newline; a line longer than ``max_line_bytes``
    raises :class:`SessionLogError` as soon as it is seen.

    >>> list(line_pieces([b"a\\nb", b"c\\nd"], 10))
    [(1, bytearray(b'a\\n')), (2, bytearray(b'bc\\n')), (3, bytearray(b'd'))]
    """
    carry = bytearray()
    line = 1
    for chunk in chunks:
        piece = carry
        piece += chunk
        cut = piece.rfind(b"\n") + 1
        carry = piece[cut:]
        del piece[cut:]
        if len(carry) > max_line_bytes:
            number = line + piece.count(b"\n")
            raise SessionLogError(f"line {number} is longer than {max_line_bytes} bytes")
        if piece:
            yield line, piece
            line += piece.count(b"\n")
    if carry:
        yield line, carry


class SessionLog(msgspec.Struct, frozen=True):
    """A whole session: its header and its storage records in file order."""

    header: SessionHeader
    records: list[LogRecord]


class _Title(msgspec.Struct, frozen=True):
    title: Any = None


def latest_title(log: SessionLog) -> str | None:
    """``data.title`` of the last ``session/title`` event, if it is a string
    (docs/format.md §Titles).

    >>> titled = decode_records(b'{"type":"session/title","seq":0,"data":{"title":"a"}}\\n'
    ...                         b'{"type":"session/title","seq":1,"data":{"title":7}}\\n')
    >>> latest_title(SessionLog(SessionHeader("s", 0), titled[:1])), latest_title(
    ...     SessionLog(SessionHeader("s", 0), titled))
    ('a', None)
    """
    title: object = None
    for record in log.records:
        if record.type == "session/title":
            title = decode_data(record, _Title).title
    return title if isinstance(title, str) else None


def check_line_lengths(buffer: Buffer, limit: int, first_line: int = 1) -> None:
    """Raise :class:`SessionLogError` if a line of ``buffer`` is longer than ``limit`` bytes.

    >>> check_line_lengths(b"ab\\ncd\\n", 2)
    >>> check_line_lengths(b"ab\\ncde\\n", 2)
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: line 2 is longer than 2 bytes
    """
    start = 0
    while len(buffer) - start > limit:
        # The last newline within the next limit + 1 bytes: none means a line that long.
        newline = buffer.rfind(b"\n", start, start + limit + 1)
        if newline < 0:
            number = first_line + buffer.count(b"\n", 0, start)
            raise SessionLogError(f"line {number} is longer than {limit} bytes")
        start = newline + 1


def check_utf8(buffer: Buffer, first_line: int = 1) -> None:
    """Raise :class:`SessionLogError` unless ``buffer`` is UTF-8 throughout.

    msgspec checks the strings it decodes but not the values it keeps raw, so the whole log
    is checked once, 64 KiB at a time, so the text it decodes to and drops stays small.

    >>> check_utf8(b'{"a":"\\xc3\\xa9"}\\n')
    >>> check_utf8(b'ok\\n\\xff\\n')
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: line 2 is not valid UTF-8
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(buffer)
    try:
        for start in range(0, len(buffer), _UTF8_CHECK_SIZE):
            decoder.decode(view[start : start + _UTF8_CHECK_SIZE])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        failed_at = start + exc.start if len(buffer) else 0
        line = first_line + buffer.count(b"\n", 0, max(failed_at, 0))
        raise SessionLogError(f"line {line} is not valid UTF-8") from None


def parse_chunks(
    chunks: Iterable[Chunk], max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> SessionLog:
    """A JSONL log given in chunks: header line, then records (torn last line dropped).

    Each piece of whole lines is checked (line lengths, UTF-8) and decoded while it is
    fresh; its records' ``data`` point into it.

    >>> log = parse_chunks([b'{"id":"s","createdAt":1}\\n{"type":"tur', b'n/start","seq":0}\\n'])
    >>> log.header.id, [r.type for r in log.records]
    ('s', ['turn/start'])
    """
    header: SessionHeader | None = None
    records: list[LogRecord] = []
    for line, piece in line_pieces(chunks, max_line_bytes):
        check_line_lengths(piece, max_line_bytes, line)
        check_utf8(piece, line)
        start = 0
        if header is None:
            head, start = split_header(piece)
            if not head.strip():
                break
            header = decode_header(head)
            line += 1
        records += decode_records(piece, start, line)
    if header is None:
        raise SessionLogError("empty session log: no header line")
    return SessionLog(header, records)


def captured_through_seq(records: list[LogRecord]) -> int | None:
    """The seq of the last event of the log, or ``None`` for an empty log.

    >>> captured_through_seq([LogRecord("a", seq=0), LogRecord("b", seq=1)])
    1
    """
    if not records:
        return None
    first, count = record_span(records[-1])
    return first + count - 1
