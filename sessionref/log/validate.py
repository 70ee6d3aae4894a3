"""Event validation as the harness loads a log (docs/format.md): envelopes, message shapes, event
types, request headers, legacy migrations.

Message events are checked through small msgspec Structs that accept only well-formed
messages (built once, decoding no text); an event they do not accept is decoded whole and
checked by the plain rules below, which say what is wrong (or migrate a legacy shape).
"""

from __future__ import annotations

import bisect
from typing import Annotated, Any, Final, Generic, Literal, TypeVar

import msgspec

from sessionref.errors import SessionLogError
from sessionref.log.jsvalue import MAX_SAFE_INTEGER, UNDEFINED, JsTypeError, is_record, js_get
from sessionref.log.migrate import (
    Subject,
    check_turn_end,
    migrate_message,
    migrate_steering,
    migrate_turn_start,
)
from sessionref.log.structs import (
    KNOWN_EVENT_TYPES,
    PACKED_CHUNK_TYPES,
    DecodedLogRecord,
    LogRecord,
    raw_data,
    record_span,
)

RETIRED_EVENT_TYPES: Final = frozenset({"request/header-delta", "mode/set"})
_M = TypeVar("_M")


class _Source(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    kind: str
    provider: Any = None
    model: Any = None
    call_id: Any = None


class _Block(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    type: Any = None
    tool_call_id: Any = None
    content: list[msgspec.Raw] | None = None


class _Message(msgspec.Struct, frozen=True, gc=False):
    id: str
    role: str
    source: _Source
    content: list[_Block]


class _AnyBlock(msgspec.Struct, frozen=True, gc=False):
    """Any object: all an assistant message's block must be (not ``null``); nothing is built."""


class _ModelMessage(msgspec.Struct, frozen=True, gc=False):
    id: str
    role: str
    source: _Source
    content: list[_AnyBlock]


class _Wrapped(msgspec.Struct, Generic[_M], frozen=True, gc=False):
    message: _M


class _UserMessage(msgspec.Struct, frozen=True, gc=False):
    id: str
    role: str
    source: _Source
    content: list[msgspec.Raw]


class _PlainReason(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    kind: Literal["completed", "blocked", "max-tokens", "interrupted", "disposed", "aborted"]


class _TurnEnd(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    turn: Annotated[int, msgspec.Meta(ge=1, le=MAX_SAFE_INTEGER)]
    reason: _PlainReason


_USER: Final = msgspec.json.Decoder(_UserMessage)
_WRAPPED: Final = msgspec.json.Decoder(_Wrapped[_Message])
_WRAPPED_MODEL: Final = msgspec.json.Decoder(_Wrapped[_ModelMessage])
_TURN_END: Final = msgspec.json.Decoder(_TurnEnd)


def _plain_turn_end(data: msgspec.Raw) -> bool:
    """Whether a ``turn/end``'s raw data is surely one :func:`check_turn_end` accepts: exactly
    ``{turn, reason: {kind}}`` with a reason that needs nothing more (``False``: look closer).

    >>> _plain_turn_end(msgspec.Raw(b'{"turn":2,"reason":{"kind":"completed"}}'))
    True
    >>> _plain_turn_end(msgspec.Raw(b'{"turn":2,"reason":{"kind":"aborted","reason":"x"}}'))
    False
    """
    try:
        _TURN_END.decode(data)
    except msgspec.DecodeError:  # a ValidationError is a DecodeError
        return False
    return True


def _named(value: Any) -> bool:
    return type(value) is str and value != ""


def _fast_message_ok(kind: str, data: msgspec.Raw) -> bool:
    """Whether a message event's raw data is surely well-formed (``False``: look closer)."""
    try:
        if kind == "user/message":
            user = _USER.decode(data)
            return user.id != "" and user.role == "user" and user.source.kind != ""
        if kind == "assistant/message":
            model = _WRAPPED_MODEL.decode(data).message
            return (
                model.id != ""
                and model.role == "assistant"
                and model.source.kind == "model"
                and _named(model.source.provider)
                and _named(model.source.model)
            )
        message = _WRAPPED.decode(data).message
    except (msgspec.ValidationError, msgspec.DecodeError):
        return False
    source, block = message.source, message.content[0] if len(message.content) == 1 else None
    return (
        block is not None
        and message.id != ""
        and message.role == "user"
        and source.kind == "tool"
        and _named(source.call_id)
        and block.type == "tool-result"
        and block.content is not None
        and block.tool_call_id == source.call_id
    )


def check_message(kind: str, data: Any, subject: object) -> None:
    """The harness's message-event rules on parsed ``data``; raises :class:`SessionLogError`.

    >>> check_message("user/message", {"id": "", "role": "user"}, "event 1")
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: event 1 lacks an identified message
    """
    message = data if kind == "user/message" else (data.get("message") if is_record(data) else None)
    if type(message) is not dict or not _named(message.get("id")):
        raise SessionLogError(f"{subject} lacks an identified message")
    role = "assistant" if kind == "assistant/message" else "user"
    if message.get("role") != role:
        raise SessionLogError(f'{subject} message must have role "{role}"')
    source = message.get("source")
    if type(source) is not dict or not _named(source.get("kind")):
        raise SessionLogError(f"{subject} message has invalid source")
    content = message.get("content")
    if type(content) is not list:
        raise SessionLogError(f"{subject} message has invalid content")
    if kind == "assistant/message":
        if source["kind"] != "model" or not (
            _named(source.get("provider")) and _named(source.get("model"))
        ):
            raise SessionLogError(f"{subject} message must have model source")
        if any(block is None for block in content):
            raise SessionLogError(f"{subject} message has a null content block")
    elif kind == "tool/result":
        if source["kind"] != "tool" or not _named(source.get("callId")):
            raise SessionLogError(f"{subject} message must have tool source")
        block = content[0] if len(content) == 1 else None
        if (
            type(block) is not dict
            or block.get("type") != "tool-result"
            or type(block.get("content")) is not list
        ):
            raise SessionLogError(f"{subject} message must contain one tool-result block")
        if block.get("toolCallId", UNDEFINED) != source["callId"]:
            raise SessionLogError(f"{subject} message has mismatched tool call ids")


def check_request_header(data: Any, subject: object) -> None:
    """A ``request/header`` must name a provider and model, with valid adapter defaults."""
    header = js_get_safe(data, "header")
    config = header.get("config") if is_record(header) else UNDEFINED
    if not (
        type(config) is dict and _named(config.get("provider")) and _named(config.get("model"))
    ):
        raise SessionLogError(f"{subject} lacks provider/model")
    effort = config.get("reasoningEffort", UNDEFINED)
    if effort is not UNDEFINED and not _named(effort):
        raise SessionLogError(f"{subject} has an invalid reasoningEffort")
    defaults = header.get("adapterDefaults", UNDEFINED)
    if defaults is UNDEFINED:
        return
    if (
        type(defaults) is not dict
        or any(key not in ("reasoningEffort", "maxTokens") for key in defaults)
        or any(marker is not True for marker in defaults.values())
        or any(key not in config for key in defaults)
    ):
        raise SessionLogError(f"{subject} has invalid adapterDefaults")


def _envelope_ok(record: LogRecord) -> bool:
    """A fast-decoded event's envelope: a safe-integer time, data, no row keys, and
    ``ignorable`` only ``true``."""
    unset = msgspec.UNSET
    return (
        record.time is not unset
        and len(record.data) > 0
        and record.seq0 is unset
        and record.time0 is unset
        and (record.ignorable is unset or record.ignorable is True)
    )


class _Log:
    """The records being validated, with what a legacy replacing tool result needs: the
    message id of the event at a given seq."""

    def __init__(self, records: list[LogRecord], session_id: str) -> None:
        self.records = records
        self.session_id = session_id
        self._firsts: list[int] | None = None

    def message_id_at(self, seq: Any) -> Any:
        if self._firsts is None:
            self._firsts = [record_span(record)[0] for record in self.records]
        index = bisect.bisect_right(self._firsts, seq) - 1 if type(seq) is int else -1
        if index < 0 or self._firsts[index] != seq:
            return UNDEFINED
        record = self.records[index]
        data = raw_data(record)
        message = data if record.type == "user/message" else js_get_safe(data, "message")
        found = js_get_safe(message, "id")
        return found if type(found) is str else UNDEFINED


def js_get_safe(value: Any, key: str) -> Any:
    """``value?.[key]``.

    >>> js_get_safe(None, "a")
    undefined
    """
    return value.get(key, UNDEFINED) if type(value) is dict else UNDEFINED


def _replaced_start(record: LogRecord) -> Any:
    op = record.surface_op
    if is_record(op) and op.get("op") == "replace" and type(op.get("start")) in (int, float):
        return op["start"]
    return None


def _check_event(log: _Log, index: int, record: LogRecord) -> None:
    """One event: envelope, type, and the rules of its kind; a legacy shape is replaced in
    ``log.records`` by its migration."""
    kind = record.type
    if type(record) is LogRecord:
        if not _envelope_ok(record):
            raise SessionLogError(f"session event at index {index} has an invalid event envelope")
    elif record.problem is not None:  # type: ignore[attr-defined]
        raise SessionLogError(f"session event at index {index} has an invalid event envelope")
    if kind in RETIRED_EVENT_TYPES:
        raise SessionLogError(f"unsupported legacy {kind} event at seq {record.seq}")
    seq = record.seq
    assert isinstance(seq, int), "the scanner passes events with seqs only"
    subject = Subject(kind, seq)
    if kind in ("user/message", "assistant/message", "tool/result"):
        if type(record) is LogRecord and _fast_message_ok(kind, record.data):
            return
        data = raw_data(record)
        migrated = migrate_message(
            kind, data, seq, log.session_id, _replaced_start(record), log.message_id_at
        )
        check_message(kind, migrated, subject)
        if migrated is not data:
            log.records[index] = msgspec.structs.replace(_decoded(record), data=migrated)
        return
    if kind == "steering/message":
        migrated = migrate_steering(raw_data(record), seq, log.session_id)
        check_message("user/message", migrated, subject)
        log.records[index] = msgspec.structs.replace(
            _decoded(record), type="user/message", data=migrated
        )
        return
    if kind not in KNOWN_EVENT_TYPES and record.ignorable is not True:
        raise SessionLogError(
            f"event type {kind!r} (seq {seq}) is unknown to this harness and not marked ignorable"
        )
    if kind in ("turn/start", "step/start", "tool/call", "turn/end", "request/header"):
        _check_small(log, index, record, subject)


def _is_null(record: LogRecord) -> bool:
    """Whether a record's data is ``null``, decoding nothing."""
    if type(record) is LogRecord:
        return len(record.data) == 4 and bytes(record.data) == b"null"
    return record.data is None


def _check_small(log: _Log, index: int, record: LogRecord, subject: object) -> None:
    """The events whose data the harness reads while loading (closers, migrations)."""
    kind = record.type
    if kind in ("step/start", "tool/call"):  # the closers read data.step, data.callId
        if _is_null(record):
            raise SessionLogError(f"{subject} has null data")
        return
    if kind == "turn/start" and type(record) is LogRecord and b"trigger" not in bytes(record.data):
        if _is_null(record):
            raise SessionLogError(f"{subject} has null data")
        return
    data = raw_data(record)
    if kind == "turn/end":
        check_turn_end(data, record.seq)  # type: ignore[arg-type]
        return
    if kind == "request/header":
        try:
            if js_get(data, "reason") == "fallback":
                raise SessionLogError(
                    f'{subject}: unsupported legacy request/header reason "fallback"'
                )
        except JsTypeError:
            raise SessionLogError(f"{subject} has null data") from None
        check_request_header(data, subject)
        return
    if data is None:  # the closers read data.turn
        raise SessionLogError(f"{subject} has null data")
    if kind == "turn/start":
        migrated = migrate_turn_start(data, record.seq)  # type: ignore[arg-type]
        if migrated is not data:
            log.records[index] = msgspec.structs.replace(_decoded(record), data=migrated)


def _decoded(record: LogRecord) -> DecodedLogRecord:
    """``record`` with its data built, so a migration can replace it."""
    if type(record) is DecodedLogRecord:
        return record
    fields = {field: getattr(record, field) for field in record.__struct_fields__}
    fields["data"] = raw_data(record)
    return DecodedLogRecord(**fields)


def validate_events(records: list[LogRecord], session_id: str) -> None:
    """Check every event of a scanned log as the harness does, migrating legacy shapes in
    place; raises :class:`SessionLogError` naming the event at fault."""
    log = _Log(records, session_id)
    rows, special, known, unset = PACKED_CHUNK_TYPES, _SPECIAL, KNOWN_EVENT_TYPES, msgspec.UNSET
    for index, record in enumerate(records):
        kind = record.type
        if kind in rows:
            continue
        if (  # the common cases inline: a known event with a well-formed envelope
            type(record) is LogRecord
            and kind in known
            and record.time is not unset
            and record.seq0 is unset
            and record.time0 is unset
            and record.ignorable is unset
        ):
            data = record.data
            if kind not in special:
                if data:
                    continue
            elif kind in _MESSAGES:
                if data and _fast_message_ok(kind, data):
                    continue
            elif kind in _NOT_NULL and data and (len(data) != 4 or bytes(data) != b"null"):
                continue
            elif kind == "turn/start" and data and bytes(data) != b"null":
                if b"trigger" not in bytes(data):
                    continue
            elif kind == "turn/end" and data and _plain_turn_end(data):
                continue
        _check_event(log, index, record)


_MESSAGES: Final = frozenset({"user/message", "assistant/message", "tool/result"})
_NOT_NULL: Final = frozenset({"step/start", "tool/call"})
"""Event types whose data only has to be there and not be ``null`` (the closers read it)."""
_SPECIAL: Final = frozenset(
    {
        "user/message",
        "assistant/message",
        "tool/result",
        "steering/message",
        "turn/start",
        "step/start",
        "tool/call",
        "turn/end",
        "request/header",
    }
)
"""Event types whose data the harness reads while loading (shapes, migrations, closers)."""
