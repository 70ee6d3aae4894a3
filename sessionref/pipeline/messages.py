"""Messages on the surface, decoded only as far as the projection needs
(docs/snapshot.md §Projection)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec


class ContentBlock(msgspec.Struct, frozen=True, gc=False):
    """A content block; only ``text`` blocks whose text is a string matter."""

    type: Any = None
    text: Any = None


Block = ContentBlock | str | int | float | bool | list[Any] | None
"""An entry of ``content``: a block, or any other JSON value, which shows nothing (``null``
makes the harness fail the read, as reading ``null.type`` throws)."""


class MessageSource(msgspec.Struct, frozen=True, gc=False):
    """Who put a message on the surface."""

    kind: str
    plugin: Any = None


class Message(msgspec.Struct, frozen=True, gc=False):
    """``{id, role, content, source}``; a direct user prompt may also carry ``display``."""

    content: list[Block]
    source: MessageSource
    display: list[Block] | None = None


class ModelMessage(msgspec.Struct, frozen=True, gc=False):
    """``data`` of an ``assistant/message`` event."""

    message: Message


class TextPart(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="text"):
    """A ``text`` block of a model message decoded by :class:`FastModelMessage`."""

    text: Any = None


class _ReasoningPart(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="reasoning"):
    """A ``reasoning`` block: never shown, so its text is skipped, not built."""


class _ToolCallPart(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="tool-call"):
    """A ``tool-call`` block: never shown, so its arguments are skipped, not built."""


class _FastMessage(msgspec.Struct, frozen=True, gc=False):
    content: list[TextPart | _ReasoningPart | _ToolCallPart]
    source: MessageSource
    display: list[Block] | None = None


class FastModelMessage(msgspec.Struct, frozen=True, gc=False):
    """:class:`ModelMessage` for the blocks a model writes (text, reasoning, tool calls), by
    their ``type``; only the text of text blocks is built. It takes only what
    :class:`ModelMessage` takes, with the same text: any other content (another block type,
    a ``type`` given twice, a value that is not an object) is for :class:`ModelMessage`.

    >>> data = b'{"message":{"content":[{"type":"reasoning","text":"r"},{"type":"text",'
    >>> data += b'"text":"a"}],"source":{"kind":"model"}}}'
    >>> msgspec.json.decode(data, type=FastModelMessage).message.content[1]
    TextPart(text='a')
    """

    message: _FastMessage


Shown = Block | TextPart | _ReasoningPart | _ToolCallPart
"""An entry of a kept message's blocks: a :data:`Block`, or a model block decoded by type."""


class KeptMessage(msgspec.Struct, frozen=True):
    """A message the snapshot keeps, with the blocks whose text it shows."""

    role: Literal["user", "assistant"]
    blocks: Sequence[Shown]
    checkpoint: bool


class Unit(msgspec.Struct, frozen=True):
    """One item of a snapshot's conversation (docs/snapshot.md §Projection)."""

    role: Literal["user", "assistant"]
    text: str
    checkpoint: bool = False


class Turn(msgspec.Struct, frozen=True):
    """One item of a data object's conversation, in wire order: ``{"role","text"}``."""

    role: Literal["user", "assistant"]
    text: str


class SourceData(msgspec.Struct, frozen=True, rename="camel"):
    """A source's data object, in wire order; the stages fill ``conversation`` last.

    ``harness`` is written only for a source of another harness than DSH, last (a DSH
    source's bytes are the published package's; docs/harnesses.md §The same snapshot).

    >>> msgspec.json.encode(SourceData("s", "l", None, 3))
    b'{"sessionId":"s","label":"l","cwd":null,"capturedThroughSeq":3,"conversation":[]}'
    >>> msgspec.json.encode(SourceData("s", "l", None, 3, harness="codex"))[-36:]
    b'"conversation":[],"harness":"codex"}'
    """

    session_id: str
    label: str
    cwd: str | None
    captured_through_seq: int | None
    conversation: list[Turn] = []
    harness: str | msgspec.UnsetType = msgspec.UNSET
