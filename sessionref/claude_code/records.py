"""Claude Code transcript lines decoded as far as the reader needs them (docs/harnesses.md
§Claude Code).

Every field is optional and of any JSON type, so a line of an unknown type, or with odd
values, still decodes and keeps its place in the ``parentUuid`` chain; the reader checks
the types of what it uses. A ``message`` that is not an object is dropped (the line keeps
its links). What a snapshot never shows (thinking, tool input and output, attachments) is
kept raw where msgspec takes the line, and built only when asked for
(:func:`~sessionref.log.jsonl.built`).
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from sessionref.log.jsonl import decode_line, decode_lines


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


_NULL = msgspec.Raw(b"null")


class _RawBlock(Block, frozen=True, gc=False):
    """A block whose thinking, input and tool output are still raw."""

    thinking: msgspec.Raw = _NULL
    input: msgspec.Raw = _NULL
    content: msgspec.Raw = _NULL


Content = str | list[Block | str | int | float | bool | list[Any] | None] | None
"""``message.content``: a string, or blocks (anything else in the list shows nothing)."""


class Message(msgspec.Struct, frozen=True, gc=False):
    """``message``: the Anthropic Messages API shape."""

    id: Any = None
    role: Any = None
    content: Content = None


class _RawMessage(Message, frozen=True, gc=False):
    content: str | list[_RawBlock | str | int | float | bool | list[Any] | None] | None = None  # type: ignore[assignment]  # the blocks are Blocks


class Links(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """What a line says of its place in the chain and of the session (cwd, time, titles),
    without its message: all the chain and the title need, read for every line."""

    type: Any = None
    uuid: Any = None
    parent_uuid: Any = None
    logical_parent_uuid: Any = None
    timestamp: Any = None
    cwd: Any = None
    is_sidechain: Any = None
    is_compact_summary: Any = None
    subtype: Any = None
    custom_title: Any = None
    ai_title: Any = None
    summary: Any = None
    leaf_uuid: Any = None


class Line(Links, frozen=True, gc=False, rename="camel"):
    """One line of a transcript, any type."""

    is_meta: Any = None
    is_api_error_message: Any = None
    content: Any = None
    message: Message | None = None
    attachment: Any = None


class _RawLine(Line, frozen=True, gc=False, rename="camel"):
    content: msgspec.Raw = _NULL
    message: _RawMessage | None = None
    attachment: msgspec.Raw = _NULL


_LINE: Final = msgspec.json.Decoder(_RawLine)
_LINKS: Final = msgspec.json.Decoder(Links)


def decode_links(lines: list[bytes]) -> list[Links | None]:
    """Each line's :class:`Links`, all at once where msgspec takes every line.

    >>> [links.parent_uuid for links in decode_links([b'{"uuid":"b","parentUuid":"a"}'])]
    ['a']
    """
    decoded: list[Links | None] = decode_lines(_LINKS, Links, lines)
    return decoded


def decode_all(lines: list[bytes]) -> list[Line | None]:
    """:func:`decode` of each line, all at once where msgspec takes them all.

    >>> [line.uuid for line in decode_all([b'{"uuid":"a"}', b'{"uuid":"b","message":1}'])]
    ['a', 'b']
    """
    decoded: list[Line | None] = decode_lines(_LINE, Line, lines)
    return [
        line if line is not None else decode(raw) for line, raw in zip(decoded, lines, strict=True)
    ]


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
    links = decode_line(_LINKS, Links, line)
    return None if links is None else Line(**msgspec.structs.asdict(links))
