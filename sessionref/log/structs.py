"""The structs a DSH session log decodes to (docs/format.md).

Each line is decoded into a :class:`LogRecord` whose envelope is checked by its type and whose
``data`` stays undecoded (``msgspec.Raw``) until a stage asks for it with :func:`decode_data`.
A line the fast decoder refuses (a lone-surrogate escape, an integral float, an odd key) is
decoded alone by :mod:`sessionref.log.lines` into a :class:`DecodedLogRecord`, whose ``data``
is already built and which carries what is wrong with its envelope, if anything.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, TypeVar

import msgspec

from sessionref.codecs.jsjson import js_json, parse_json
from sessionref.codecs.jsstring import repair_utf8
from sessionref.errors import SessionLogError
from sessionref.log.jsvalue import MAX_SAFE_INTEGER
from sessionref.transcript import Harness
from sessionref.types import Cwd

PACKED_CHUNK_TYPES: Final = {
    "text-chunks": ("text-delta", "texts"),
    "reasoning-chunks": ("reasoning-delta", "texts"),
    "tool-call-chunks": ("tool-call-delta", "args"),
}
KNOWN_EVENT_TYPES: Final = frozenset(
    {
        "agent-preset/selected",
        "agent/inbox/spliced",
        "approval/asked",
        "approval/decided",
        "approval/policy",
        "assistant/chunk",
        "assistant/message",
        "command/done",
        "command/run",
        "compaction/end",
        "compaction/prune",
        "compaction/start",
        "compaction/summary",
        "feedback/record",
        "goal/change",
        "hook/invoked",
        "hook/result",
        "llm/retry",
        "llm/retry-started",
        "permission/preset",
        "plan/mode",
        "request/context",
        "request/header",
        "sandbox/mode",
        "schedule/change",
        "session/end-seed",
        "session/title",
        "session/title-llm-request",
        "step/end",
        "step/start",
        "subagent/descriptor",
        "team/member",
        "team/message/delivered",
        "team/message/queued",
        "team/task",
        "todo/write",
        "tool-workflow/agent-end",
        "tool-workflow/agent-start",
        "tool-workflow/run-end",
        "tool-workflow/run-start",
        "tool/call",
        "tool/code-dispatch",
        "tool/code-dispatch-start",
        "tool/result",
        "turn/end",
        "turn/start",
        "user/message",
        "web/deepseek-search-llm-request",
    }
)
"""Every event type the harness (rc.8) knows; others load only when ``ignorable: true``."""
SafeInt = Annotated[int, msgspec.Meta(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]
Seq = Annotated[int, msgspec.Meta(ge=0, le=MAX_SAFE_INTEGER)]
ABSENT: Final = msgspec.Raw()
"""``data`` of a record whose line has no ``data`` key."""


T = TypeVar("T")


class SessionHeader(msgspec.Struct, frozen=True, rename="camel"):
    """Line 1 of a session log, as the harness's listing reads it."""

    id: str
    created_at: int
    type: str = "session"
    version: int | float = 0
    cwd: Cwd = None
    parent_session: Any = None
    delegation_depth: int = 0

    @property
    def loaded_cwd(self) -> str | None:
        """The cwd of a header a log was loaded with: a string or none, as loading refuses
        any other value (a listed header may hold one: :data:`~sessionref.types.Cwd`).

        >>> SessionHeader("s", 1, cwd="/w").loaded_cwd, SessionHeader("s", 1, cwd=5).loaded_cwd
        ('/w', None)
        """
        return self.cwd if isinstance(self.cwd, str) else None


class LogRecord(msgspec.Struct, frozen=True, gc=False, rename="camel", forbid_unknown_fields=True):
    """A storage record: an event (``seq``) or a packed chunk row (``seq0``), data undecoded.

    The fast decoder takes only lines whose keys are envelope keys and whose numbers are safe
    integers; which keys an event or a row must have is checked later. ``sourceEventSeqs``
    stays undecoded too (:func:`source_event_seqs`): an assistant message cites every delta
    it was streamed from, and as a list of ints they took a fifth of a log's size in memory.
    Not tracked by the cyclic garbage collector (``gc=False``): a log has a million of these,
    none in a cycle.
    """

    type: str
    seq: Seq | msgspec.UnsetType = msgspec.UNSET
    time: SafeInt | msgspec.UnsetType = msgspec.UNSET
    seq0: Seq | msgspec.UnsetType = msgspec.UNSET
    time0: SafeInt | msgspec.UnsetType = msgspec.UNSET
    data: msgspec.Raw = ABSENT
    surface_op: Any = msgspec.UNSET
    source_event_seqs: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    ignorable: Any = msgspec.UNSET


class DecodedLogRecord(LogRecord, frozen=True):
    """A record decoded alone, its ``data`` (``UNSET`` when the line has none) and
    ``source_event_seqs`` already built.

    ``problem`` says why its envelope is not one the harness accepts; such a record still
    takes its place in the log, and the log fails validation when it is reached.
    """

    data: Any = msgspec.UNSET
    source_event_seqs: Any = msgspec.UNSET
    problem: str | None = None


class SessionLog(msgspec.Struct, frozen=True):
    """A whole session as the harness loads it: its header and its storage records in order,
    migrated and validated, the closers of an interrupted last turn included at the end.

    ``harness`` names the harness that wrote it: a log of another harness is the DSH-shaped
    log :mod:`sessionref.log.synthetic` derives from its transcript (docs/harnesses.md).
    """

    header: SessionHeader
    records: list[LogRecord]
    harness: Harness = "dsh"


def split_header(buffer: bytes | bytearray) -> tuple[bytes, int]:
    """The header line of a decompressed log and the offset where its records start.

    >>> split_header(b'{"id":"s"}\\n{"type":"a"}\\n')
    (b'{"id":"s"}', 11)
    """
    end = buffer.find(b"\n")
    return (bytes(buffer), len(buffer)) if end < 0 else (bytes(buffer[:end]), end + 1)


_DATA_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def _data_decoder(kind: Any) -> msgspec.json.Decoder[Any]:
    """One decoder per target type, built on first use."""
    decoder = _DATA_DECODERS.get(kind)
    if decoder is None:
        decoder = _DATA_DECODERS.setdefault(kind, msgspec.json.Decoder(kind))
    return decoder


def decode_raw(decoder: msgspec.json.Decoder[T], raw: msgspec.Raw) -> T:
    """``decoder.decode(raw)`` of bytes as the harness reads them, invalid UTF-8 as U+FFFD.

    A record's raw parts were skipped, not checked, when its line was decoded: msgspec checks
    UTF-8 only in the strings it builds. So they are repaired here, when msgspec refuses them.
    ``JSON.parse`` keeps the last of a member given twice, where msgspec checks every one: a
    value refused for what it holds is decoded again with each object's last members only
    (:func:`_last_members`).

    >>> decode_raw(msgspec.json.Decoder(), msgspec.Raw(b'"a\\\\u00e9\\xff"'))
    'aé\\ufffd'
    >>> decode_raw(msgspec.json.Decoder(list[int]), msgspec.Raw(b'[{"a":1}]'))
    Traceback (most recent call last):
    msgspec.ValidationError: Expected `int`, got `object` - at `$[0]`
    """
    data: bytes | bytearray
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError:
        data = bytes(raw)
    except msgspec.DecodeError:
        data = bytes(raw)
        repaired = repair_utf8(data)
        if repaired is data:  # valid UTF-8: refused for what it holds
            raise
        try:
            return decoder.decode(repaired)
        except msgspec.ValidationError:
            data = repaired
    try:
        return decoder.decode(_last_members(data))
    except (ValueError, RecursionError):  # a DecodeError is a ValueError
        pass
    return decoder.decode(data)  # raises what it held against the value


def _last_members(data: bytes | bytearray) -> bytes:
    """The JSON ``data`` written again as ``JSON.parse`` reads it: an object that gives a
    member twice keeps the last (lone surrogates and all).

    >>> _last_members(b'{"a":5,"b":[{"c":1,"c":"\\\\ud800"}],"a":[1]}')
    b'{"a":[1],"b":[{"c":"\\\\ud800"}]}'
    """
    return js_json(parse_json(data))


def raw_data(record: LogRecord) -> Any:
    """A record's ``data`` as a plain JSON value (``UNSET`` when the line has none).

    >>> raw_data(LogRecord("x", data=msgspec.Raw(b'{"a":[1]}')))
    {'a': [1]}
    """
    if type(record) is not LogRecord:
        return record.data
    if not len(record.data):
        return msgspec.UNSET
    return decode_raw(_data_decoder(Any), record.data)


def source_event_seqs(record: LogRecord) -> Any:
    """A record's ``sourceEventSeqs`` as a plain JSON value (``UNSET`` when the line has none).

    A value nested too deeply to be built here although the line decoded (the stack is deeper
    now than when it did) stands for itself by a value of its kind: an array holding no
    integer, or an object.

    >>> source_event_seqs(LogRecord("x", source_event_seqs=msgspec.Raw(b"[1,2]")))
    [1, 2]
    >>> deep = msgspec.Raw(b"[" * 5000 + b"]" * 5000)
    >>> source_event_seqs(LogRecord("x", source_event_seqs=deep))
    [None]
    """
    raw = record.source_event_seqs
    if type(raw) is not msgspec.Raw:
        return raw
    try:
        return decode_raw(_data_decoder(Any), raw)
    except RecursionError:
        return [None] if memoryview(raw)[:1].tobytes() == b"[" else {}


def where(record: LogRecord) -> str:
    """A record named for an error message; its type is quoted, as it may be anything.

    >>> where(LogRecord("x\\ny", seq=3))
    'event 3 ("x\\\\ny")'
    """
    position = f"row {record.seq0}" if record.seq is msgspec.UNSET else f"event {record.seq}"
    return f"{position} ({js_json(record.type).decode('utf-8')})"


def is_packed_row(record: LogRecord) -> bool:
    """Whether ``record`` is a packed chunk row (it stands for several events).

    >>> is_packed_row(LogRecord("text-chunks", seq0=1)), is_packed_row(LogRecord("a", seq=1))
    (True, False)
    """
    return record.type in PACKED_CHUNK_TYPES


class _Members(msgspec.Struct, frozen=True):
    texts: list[msgspec.Raw] | None = None
    args: list[msgspec.Raw] | None = None


_MEMBERS: Final = msgspec.json.Decoder(_Members)


def record_span(record: LogRecord) -> tuple[int, int]:
    """``(first seq, number of events)`` a storage record stands for; a row has been checked
    when it was read, so its members are only counted here.

    >>> record_span(LogRecord("turn/start", seq=4))
    (4, 1)
    >>> record_span(LogRecord("text-chunks", seq0=2, data=msgspec.Raw(b'{"texts":["a","b"]}')))
    (2, 2)
    """
    if record.type not in PACKED_CHUNK_TYPES:
        if record.seq is msgspec.UNSET:
            raise SessionLogError(f"{where(record)} has no seq")
        return record.seq, 1
    if record.seq0 is msgspec.UNSET:
        raise SessionLogError(f"{where(record)} has no seq0")
    field = PACKED_CHUNK_TYPES[record.type][1]
    if type(record) is LogRecord:
        members: Any = getattr(decode_raw(_MEMBERS, record.data), field)
    else:
        members = raw_data(record).get(field)
    return record.seq0, len(members or ())


def captured_through_seq(records: list[LogRecord]) -> int | None:
    """The seq of the last event of the log, or ``None`` for an empty log.

    >>> captured_through_seq([LogRecord("a", seq=0), LogRecord("b", seq=1)])
    1
    """
    if not records:
        return None
    first, count = record_span(records[-1])
    return first + count - 1
