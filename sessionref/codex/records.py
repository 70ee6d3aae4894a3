"""Codex CLI rollout lines decoded as far as the reader needs them (docs/harnesses.md §Codex).

A line is ``{"timestamp", "type", "payload"}``; the oldest rollouts have no envelope (a first
line with the session's ``id``, then bare response items), and :func:`decode` gives both as an
``(item type, payload)`` pair. Every field is optional and of any JSON type; the reader checks
the types of what it uses.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

import msgspec

from sessionref.log.jsonl import decode_line

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


class _Rollout(Payload, frozen=True, gc=False):
    """A line: the envelope, or (without one) the item itself."""

    payload: Payload | None = None


class Item(NamedTuple):
    """A line as the reader takes it: its kind (``session_meta``, ``response_item``,
    ``event_msg``, ``compacted``, ``turn_context`` …), payload and time text."""

    kind: Any
    payload: Payload
    timestamp: Any


_ROLLOUT: Final = msgspec.json.Decoder(_Rollout)


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
    rollout = decode_line(_ROLLOUT, _Rollout, line)
    if rollout is None:
        return None
    if rollout.payload is not None:
        return Item(rollout.type, rollout.payload, rollout.timestamp)
    if rollout.type is None and type(rollout.id) is str:
        return Item("session_meta", rollout, rollout.timestamp)
    if type(rollout.type) is str and rollout.type in RESPONSE_ITEM_TYPES:
        return Item("response_item", rollout, rollout.timestamp)
    return None
