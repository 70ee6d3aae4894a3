"""Claude Code transcript lines decoded as far as the reader needs them (docs/harnesses.md
§Claude Code).

Every field is optional and of any JSON type, so a line of an unknown type, or with odd
values, still decodes and keeps its place in the ``parentUuid`` chain; the reader checks
the types of what it uses. A ``message`` that is not an object is dropped (the line keeps
its links).
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from sessionref.log.jsonl import decode_line


class Block(msgspec.Struct, frozen=True, gc=False):
    """A content block: ``text``, ``thinking``, ``tool_use``, ``tool_result``, ``image`` …"""

    type: Any = None
    text: Any = None
    thinking: Any = None
    id: Any = None
    name: Any = None
    input: Any = None
    tool_use_id: Any = None
    content: Any = None


Content = str | list[Block | str | int | float | bool | list[Any] | None] | None
"""``message.content``: a string, or blocks (anything else in the list shows nothing)."""


class Message(msgspec.Struct, frozen=True, gc=False):
    """``message``: the Anthropic Messages API shape."""

    id: Any = None
    role: Any = None
    content: Content = None


class Line(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """One line of a transcript, any type."""

    type: Any = None
    uuid: Any = None
    parent_uuid: Any = None
    logical_parent_uuid: Any = None
    session_id: Any = None
    timestamp: Any = None
    cwd: Any = None
    is_sidechain: Any = None
    is_meta: Any = None
    is_compact_summary: Any = None
    is_api_error_message: Any = None
    subtype: Any = None
    content: Any = None
    message: Message | None = None
    attachment: Any = None
    custom_title: Any = None
    ai_title: Any = None
    summary: Any = None


class _Links(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """What a line whose ``message`` or ``attachment`` has a shape :class:`Line` refuses
    still gives: its place in the chain."""

    type: Any = None
    uuid: Any = None
    parent_uuid: Any = None
    logical_parent_uuid: Any = None
    session_id: Any = None
    timestamp: Any = None
    cwd: Any = None
    is_sidechain: Any = None


_LINE: Final = msgspec.json.Decoder(Line)
_LINKS: Final = msgspec.json.Decoder(_Links)


def decode(line: bytes) -> Line | None:
    """A line as a :class:`Line`, ``None`` when it is not a JSON object.

    >>> decode(b'{"type":"user","uuid":"u","message":{"content":"hi"}}').message.content
    'hi'
    >>> decode(b'{"type":"user","uuid":"u","message":7}').uuid
    'u'
    >>> decode(b'[1]') is None
    True
    """
    record = decode_line(_LINE, Line, line)
    if record is not None:
        return record
    links = decode_line(_LINKS, _Links, line)
    return None if links is None else Line(**msgspec.structs.asdict(links))
