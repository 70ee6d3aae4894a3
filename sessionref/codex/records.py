"""Codex CLI rollout lines decoded as far as the reader needs them (docs/harnesses.md §Codex).

A line is ``{"timestamp", "type", "payload"}``; the oldest rollouts have no envelope (a first
line with the session's ``id``, then bare response items), and :func:`decode` gives both as an
``(item type, payload)`` pair. Every field is optional and of any JSON type; the reader checks
the types of what it uses. Content, tool input and output are kept raw where msgspec takes
the line, and built when asked for (:func:`~sessionref.log.jsonl.built`).
"""

from __future__ import annotations

from typing import Any, Final, Literal, NamedTuple

import msgspec

from sessionref.log.jsonl import built, decode_line, decode_lines, iso_millis

RESPONSE_ITEM_TYPES: Final = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)
"""The bare items of a rollout without envelope."""


class Payload(msgspec.Struct, frozen=True, gc=False):
    """A ``payload``: whatever fields its kind has that the reader uses."""

    type: Any = None
    id: Any = None
    timestamp: Any = None
    cwd: Any = None
    source: Any = None
    message: Any = None
    role: Any = None
    content: Any = None
    summary: Any = None
    name: Any = None
    arguments: Any = None
    input: Any = None
    action: Any = None
    call_id: Any = None
    output: Any = None
    item: Any = None


_NULL = msgspec.Raw(b"null")


class _RawPayload(Payload, frozen=True, gc=False):
    """A payload as msgspec takes it: what only some readers need kept raw
    (:func:`~sessionref.log.jsonl.built` builds it)."""

    source: msgspec.Raw = _NULL
    content: msgspec.Raw = _NULL
    summary: msgspec.Raw = _NULL
    arguments: msgspec.Raw = _NULL
    input: msgspec.Raw = _NULL
    action: msgspec.Raw = _NULL
    output: msgspec.Raw = _NULL
    item: msgspec.Raw = _NULL


class _Rollout(Payload, frozen=True, gc=False):
    """A line: the envelope, or (without one) the item itself; built values."""

    payload: Payload | None = None


class _RawRollout(_RawPayload, frozen=True, gc=False):
    """A line as msgspec takes it."""

    payload: _RawPayload | None = None


class _MetaPayload(_RawPayload, frozen=True, gc=False):
    """A payload read for the session's fields: its message kept raw."""

    message: msgspec.Raw = _NULL


class _MetaRollout(_MetaPayload, frozen=True, gc=False):
    payload: _MetaPayload | None = None


class Kind(msgspec.Struct, frozen=True, gc=False):
    """A payload read only for what :func:`outline` tells by: its kind, who says it, a
    checkpoint's summary, a completed event's item; built values. Decoding these four fields
    alone (:class:`_RawKind`) costs a third less than decoding a :class:`Payload`'s."""

    type: Any = None
    role: Any = None
    message: Any = None
    item: Any = None


class _RawKind(Kind, frozen=True, gc=False):
    """A :class:`Kind` as msgspec takes it: the summary and the item kept raw."""

    message: msgspec.Raw = _NULL
    item: msgspec.Raw = _NULL


class _KindLine(msgspec.Struct, frozen=True, gc=False):
    """A line read only for its kind: the envelope's ``type`` and payload, or (without
    envelope) the item's ``type`` and ``role`` and the session's ``id``."""

    type: Any = None
    id: Any = None
    role: Any = None
    payload: Kind | None = None


class _RawKindLine(_KindLine, frozen=True, gc=False):
    payload: _RawKind | None = None


class Item(NamedTuple):
    """A line as the reader takes it: its kind (``session_meta``, ``response_item``,
    ``event_msg``, ``compacted``, ``turn_context`` …), payload and time text."""

    kind: Any
    payload: Payload
    timestamp: Any


_ROLLOUT: Final = msgspec.json.Decoder(_RawRollout)
_META: Final = msgspec.json.Decoder(_MetaRollout)
_KINDS: Final = msgspec.json.Decoder(_RawKindLine)


def _item(rollout: _Rollout | None) -> Item | None:
    """A decoded line as the reader takes it."""
    if rollout is None:
        return None
    if rollout.payload is not None:
        return Item(rollout.type, rollout.payload, rollout.timestamp)
    if rollout.type is None and type(rollout.id) is str:
        return Item("session_meta", rollout, rollout.timestamp)
    if type(rollout.type) is str and rollout.type in RESPONSE_ITEM_TYPES:
        return Item("response_item", rollout, rollout.timestamp)
    return None


Speaker = Literal["user", "assistant"]
"""Who says what the person saw."""


class TurnItem(msgspec.Struct, frozen=True, gc=False):
    """An ``item_completed`` event's ``item`` (Codex's ``TurnItem``, tagged ``type`` with its
    variant's name) as far as the reader reads it: its kind and ``content``."""

    type: Any = None
    content: Any = None


_TURN_ITEM: Final = msgspec.json.Decoder(TurnItem)
_NO_ITEM: Final = TurnItem()
_SPOKEN: Final[dict[str, tuple[Speaker, str]]] = {
    "UserMessage": ("user", "text"),
    "AgentMessage": ("assistant", "Text"),
}
"""The kinds of completed item that say what the person saw: who says it, and the ``type`` of
a content part that holds text (a ``UserInput::Text``, an ``AgentMessageContent::Text``)."""


def turn_item(value: Any) -> TurnItem:
    """A completed event's ``item`` (kept raw by a decoder, or built; empty when it is no
    object).

    >>> event = b'{"type":"event_msg","payload":{"type":"item_completed","item":%s}}'
    >>> turn_item(decode(event % b'{"type":"Plan","id":"p","text":"x"}').payload.item).type
    'Plan'
    >>> turn_item(decode(event % b'[1]').payload.item), turn_item({"type": 1}).type
    (TurnItem(type=None, content=None), 1)
    """
    if type(value) is msgspec.Raw:
        try:
            return _TURN_ITEM.decode(value)
        except (msgspec.DecodeError, RecursionError):  # no object, or a lone surrogate
            value = built(value)
    if type(value) is dict:
        return TurnItem(value.get("type"), value.get("content"))
    return _NO_ITEM


def _spoken(item: TurnItem) -> tuple[Speaker, str] | None:
    """Who says a completed item, and the type of its text parts; ``None`` for an item that
    says nothing the person saw."""
    kind = item.type
    return _SPOKEN.get(kind) if type(kind) is str else None


def speaks(payload: Kind) -> bool:
    """Whether an event records what the person saw: a ``user_message`` or ``agent_message``
    (a legacy rollout's), or a completed user or agent message (a paginated rollout's: Codex's
    ``should_persist_event_msg``, ``codex-rs/rollout/src/policy.rs``, writes each kind in one
    history mode only).

    >>> speaks(Kind(type="agent_message")), speaks(Kind(type="item_completed"))
    (True, False)
    """
    kind = payload.type
    if kind == "user_message" or kind == "agent_message":
        return True
    return kind == "item_completed" and _spoken(turn_item(payload.item)) is not None


def said(payload: Payload) -> list[tuple[Speaker, str]]:
    """What an event says that the person saw, as Codex's legacy events say it
    (``codex-rs/protocol/src/legacy_events.rs``): a ``user_message``'s or ``agent_message``'s
    text; a completed user message's text inputs joined (``UserMessageItem::message``); each
    text part of a completed agent message (``AgentMessageItem::as_legacy_events``).

    >>> def event(payload): return decode(b'{"type":"event_msg","payload":%s}' % payload).payload
    >>> said(event(b'{"type":"user_message","message":"hi"}'))
    [('user', 'hi')]
    >>> said(event(b'{"type":"item_completed","item":{"type":"UserMessage","content":['
    ...     b'{"type":"text","text":"a"},{"type":"local_image","path":"p"},'
    ...     b'{"type":"text","text":"b"}]}}'))
    [('user', 'ab')]
    >>> said(event(b'{"type":"item_completed","item":{"type":"AgentMessage","content":['
    ...     b'{"type":"Text","text":"a"},{"type":"Text","text":"b"}]}}'))
    [('assistant', 'a'), ('assistant', 'b')]
    """
    kind, message = payload.type, payload.message
    if kind == "user_message" or kind == "agent_message":
        speaker: Speaker = "user" if kind == "user_message" else "assistant"
        return [(speaker, message)] if type(message) is str else []
    return item_said(turn_item(payload.item) if kind == "item_completed" else _NO_ITEM)


def item_said(item: TurnItem) -> list[tuple[Speaker, str]]:
    """What a completed item says that the person saw (see :func:`said`): nothing for an item
    of another kind.

    >>> item_said(TurnItem("UserMessage", [{"type": "text", "text": "a"}, {"type": "text"}]))
    [('user', 'a')]
    >>> item_said(TurnItem("Plan", [{"type": "text", "text": "a"}]))
    []
    """
    spoken = _spoken(item)
    if spoken is None:
        return []
    speaker, text_type = spoken
    parts = item.content if type(item.content) is list else []
    texts = [
        part["text"]
        for part in parts
        if type(part) is dict and part.get("type") == text_type and type(part.get("text")) is str
    ]
    return [("user", "".join(texts))] if speaker == "user" else [(speaker, t) for t in texts]


class Outline(NamedTuple):
    """What a rollout says of itself, read line by line only for each line's kind."""

    meta: Payload
    """The first ``session_meta``'s payload (empty when there is none)."""
    events_from: int
    """The index of the line from which texts come from what the person saw (the events
    :func:`speaks` tells) rather than from the response items: 0 when its turns record
    both from the first, the first event when older turns record none (a rollout that a newer
    Codex resumed), and past its last line when none does."""
    checkpoint: int
    """The index of its latest checkpoint line (a ``compacted`` with a summary), 0 if none."""
    created_at: int | None
    """The meta's time, else the first line's time that reads."""


def _answer(kind: Any, role: Any) -> bool:
    """Whether a response item of ``kind`` said by ``role`` is an assistant message."""
    return bool(kind == "message" and role == "assistant")


def _whole(line: bytes) -> _Rollout | None:
    """A line decoded with every field the reader uses, for the few :func:`outline` takes
    more than their kind from: the first ``session_meta``, and the first whose time reads."""
    return decode_line(_META, _Rollout, line)


def _first_time(lines: list[bytes]) -> int | None:
    """The time of the first line whose time reads (:func:`~sessionref.log.jsonl.iso_millis`),
    the lines decoded whole one by one up to it.

    >>> _first_time([b"oops", b'{"id":"x"}', b'{"timestamp":"1970-01-01T00:00:00Z"}', b"{"])
    0
    """
    times = (iso_millis(whole.timestamp) for whole in map(_whole, lines) if whole is not None)
    return next((time for time in times if time is not None), None)


def outline(lines: list[bytes]) -> Outline:
    """The :class:`Outline` of a rollout's lines, decoded all at once where msgspec takes them,
    each only for its kind (:class:`Kind`): the first ``session_meta`` is decoded again, whole
    (:func:`_whole`), and, when its time does not read, the lines up to the first whose time
    does. Each line is ``None`` for both decodings or for
    neither: the fields one leaves out the other skips, and msgspec checks a skipped value as
    it checks one it keeps.

    >>> outline([b'{"type":"session_meta","payload":{"id":"x"}}', b'{"timestamp":'
    ...          b'"2025-01-01T00:00:00Z","type":"compacted","payload":{"message":"m"}}'])[1:]
    (2, 1, 1735689600000)
    >>> outline([b'{"id":"x"}', b'{"type":"message","role":"assistant"}',
    ...          b'{"type":"event_msg","payload":{"type":"user_message"}}']).events_from
    2
    >>> outline([b"oops", b'{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta",'
    ...          b'"payload":{"id":"x","cwd":"/p"}}']).meta.cwd
    '/p'
    """
    meta: Payload | None = None
    first_event, answered, checkpoint = len(lines), False, 0
    for index, rollout in enumerate(decode_lines(_KINDS, _KindLine, lines)):
        if rollout is None:
            continue
        payload, kind = rollout.payload, rollout.type
        if payload is None:
            if meta is None and kind is None and type(rollout.id) is str:
                meta = _whole(lines[index])  # the first line of a rollout without envelope
            answered = answered or (index < first_event and _answer(kind, rollout.role))
        elif kind == "event_msg":
            if speaks(payload):
                first_event = min(first_event, index)
        elif kind == "response_item":
            answered = answered or (index < first_event and _answer(payload.type, payload.role))
        elif kind == "compacted":
            message = built(payload.message)
            if type(message) is str and message:
                checkpoint = index
        elif kind == "session_meta" and meta is None:
            whole = _whole(lines[index])
            meta = None if whole is None else whole.payload
    meta = meta or Payload()
    created = iso_millis(meta.timestamp)
    if created is None:
        created = _first_time(lines)
    events_from = first_event if answered or first_event == len(lines) else 0
    return Outline(meta, events_from, checkpoint, created)


def decode(line: bytes) -> Item | None:
    """A line as an :class:`Item`; ``None`` for a line that is not one.

    >>> decode(b'{"timestamp":"t","type":"event_msg","payload":{"type":"agent_message",'
    ...        b'"message":"hi"}}').payload.message
    'hi'
    >>> decode(b'{"id":"x","timestamp":"t"}').kind, decode(b'{"type":"message"}').kind
    ('session_meta', 'response_item')
    >>> decode(b'{"type":"event_msg","payload":7}'), decode(b'{"type":{}}')
    (None, None)
    """
    return _item(decode_line(_ROLLOUT, _Rollout, line))
