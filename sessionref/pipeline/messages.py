"""Messages on the surface, decoded only as far as the projection needs
(docs/snapshot.md §Projection)."""

from __future__ import annotations

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


class KeptMessage(msgspec.Struct, frozen=True):
    """A message the snapshot keeps, with the blocks whose text it shows."""

    role: Literal["user", "assistant"]
    blocks: list[Block]
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

    >>> msgspec.json.encode(SourceData("s", "l", None, 3))
    b'{"sessionId":"s","label":"l","cwd":null,"capturedThroughSeq":3,"conversation":[]}'
    """

    session_id: str
    label: str
    cwd: str | None
    captured_through_seq: int | None
    conversation: list[Turn] = []
