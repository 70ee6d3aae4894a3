"""Codex CLI rollout lines decoded as far as the reader needs them (docs/harnesses.md §Codex).

A line is ``{"timestamp", "type", "payload"}``; the oldest rollouts have no envelope (a first
line with the session's ``id``, then bare response items), and :func:`decode` gives both as an
``(item type, payload)`` pair. Every field is optional and of any JSON type; the reader checks
the types of what it uses. Content, tool input and output are kept raw where msgspec takes
the line, and built when asked for (:func:`~sessionref.log.jsonl.built`).
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

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


class _Rollout(Payload, frozen=True, gc=False):
    """A line: the envelope, or (without one) the item itself; built values."""

    payload: Payload | None = None


class _RawRollout(_RawPayload, frozen=True, gc=False):
    """A line as msgspec takes it."""

    payload: _RawPayload | None = None


class _KindPayload(_RawPayload, frozen=True, gc=False):
    """A payload read only for its kind and the session's fields: its message kept raw."""

    message: msgspec.Raw = _NULL


class _KindRollout(_KindPayload, frozen=True, gc=False):
    payload: _KindPayload | None = None


class Item(NamedTuple):
    """A line as the reader takes it: its kind (``session_meta``, ``response_item``,
    ``event_msg``, ``compacted``, ``turn_context`` …), payload and time text."""

    kind: Any
    payload: Payload
    timestamp: Any


_ROLLOUT: Final = msgspec.json.Decoder(_RawRollout)
_KINDS: Final = msgspec.json.Decoder(_KindRollout)


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


class Outline(NamedTuple):
    """What a rollout says of itself, read line by line only for each line's kind."""

    meta: Payload
    """The first ``session_meta``'s payload (empty when there is none)."""
    events_from: int
    """The index of the line from which texts come from what the person saw (``event_msg``
    user and agent messages) rather than from the response items: 0 when its turns record
    both from the first, the first event when older turns record none (a rollout that a newer
    Codex resumed), and past its last line when none does."""
    checkpoint: int
    """The index of its latest checkpoint line (a ``compacted`` with a summary), 0 if none."""
    created_at: int | None
    """The meta's time, else the first line's time that reads."""


def _answer(kind: Any, payload: Payload) -> bool:
    """Whether a response item is an assistant message."""
    return bool(kind == "message" and payload.role == "assistant")


def outline(lines: list[bytes]) -> Outline:
    """The :class:`Outline` of a rollout's lines, decoded all at once where msgspec takes them.

    >>> outline([b'{"type":"session_meta","payload":{"id":"x"}}', b'{"timestamp":'
    ...          b'"2025-01-01T00:00:00Z","type":"compacted","payload":{"message":"m"}}'])[1:]
    (2, 1, 1735689600000)
    >>> outline([b'{"id":"x"}', b'{"type":"message","role":"assistant"}',
    ...          b'{"type":"event_msg","payload":{"type":"user_message"}}']).events_from
    2
    """
    meta: Payload | None = None
    first_event, answered, checkpoint, first = len(lines), False, 0, None
    for index, rollout in enumerate(decode_lines(_KINDS, _Rollout, lines)):
        if rollout is None:
            continue
        if first is None:
            first = iso_millis(rollout.timestamp)
        payload, kind = rollout.payload, rollout.type
        if payload is None:
            if meta is None and kind is None and type(rollout.id) is str:
                meta = rollout  # the first line of a rollout without envelope
            answered = answered or (index < first_event and _answer(kind, rollout))
        elif kind == "event_msg":
            if payload.type in ("user_message", "agent_message"):
                first_event = min(first_event, index)
        elif kind == "response_item":
            answered = answered or (index < first_event and _answer(payload.type, payload))
        elif kind == "compacted":
            message = built(payload.message)
            if type(message) is str and message:
                checkpoint = index
        elif kind == "session_meta" and meta is None:
            meta = payload
    meta = meta or Payload()
    created = iso_millis(meta.timestamp)
    events_from = first_event if answered or first_event == len(lines) else 0
    return Outline(meta, events_from, checkpoint, first if created is None else created)


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
