"""Messages on the surface, decoded only as far as the projection needs
(docs/snapshot.md §Projection).

A message read from its raw JSON keeps the ``text`` of its text blocks raw too (the
``Raw*`` structs and :class:`TextPart`): a unit's text is measured on those bytes
(:class:`RawText`) and built only if the snapshot shows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

import msgspec

from sessionref.log.structs import ABSENT, decode_raw


class ContentBlock(msgspec.Struct, frozen=True, gc=False):
    """A content block; only ``text`` blocks whose text is a string matter."""

    type: Any = None
    text: Any = None


Block = ContentBlock | str | int | float | bool | list[Any] | None
"""An entry of ``content``: a block, or any other JSON value, which shows nothing (``null``
makes the harness fail the read, as reading ``null.type`` throws)."""

Display = list[Block] | str | int | float | bool | dict[str, Any] | None
"""A message's ``display``: the harness never checks it, so any JSON value loads; only an
array is shown (docs/differences.md §seed rules), anything else leaves ``content`` shown."""


class MessageSource(msgspec.Struct, frozen=True, gc=False):
    """Who put a message on the surface."""

    kind: str
    plugin: Any = None


class Message(msgspec.Struct, frozen=True, gc=False):
    """``{id, role, content, source}``; a direct user prompt may also carry ``display``."""

    content: list[Block]
    source: MessageSource
    display: Display = None


class ModelMessage(msgspec.Struct, frozen=True, gc=False):
    """``data`` of an ``assistant/message`` event."""

    message: Message


class RawContentBlock(msgspec.Struct, frozen=True, gc=False):
    """:class:`ContentBlock` with its ``text`` kept as the JSON the log holds (empty when
    the block has none): a string only when it starts with a quote."""

    type: Any = None
    text: msgspec.Raw = ABSENT


RawBlock = RawContentBlock | str | int | float | bool | list[Any] | None
""":data:`Block`, a block's ``text`` left raw."""

RawDisplay = list[RawBlock] | str | int | float | bool | dict[str, Any] | None
""":data:`Display`, its blocks' ``text`` left raw."""


class RawMessage(msgspec.Struct, frozen=True, gc=False):
    """:class:`Message` decoded from raw JSON, the text of its blocks left raw."""

    content: list[RawBlock]
    source: MessageSource
    display: RawDisplay = None


class RawModelMessage(msgspec.Struct, frozen=True, gc=False):
    """:class:`ModelMessage` decoded from raw JSON, the text of its blocks left raw."""

    message: RawMessage


class TextPart(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="text"):
    """A ``text`` block of a model message decoded by :class:`FastModelMessage`, its
    ``text`` as the JSON the log holds (empty when the block has none)."""

    text: msgspec.Raw = ABSENT


class _ReasoningPart(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="reasoning"):
    """A ``reasoning`` block: never shown, so its text is skipped, not built."""


class _ToolCallPart(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="tool-call"):
    """A ``tool-call`` block: never shown, so its arguments are skipped, not built."""


class _FastMessage(msgspec.Struct, frozen=True, gc=False):
    content: list[TextPart | _ReasoningPart | _ToolCallPart]
    source: MessageSource
    display: RawDisplay = None


class FastModelMessage(msgspec.Struct, frozen=True, gc=False):
    """:class:`ModelMessage` for the blocks a model writes (text, reasoning, tool calls), by
    their ``type``; only the text of text blocks is built. It takes only what
    :class:`ModelMessage` takes, with the same text: any other content (another block type,
    a ``type`` given twice, a value that is not an object) is for :class:`ModelMessage`.

    >>> data = b'{"message":{"content":[{"type":"reasoning","text":"r"},{"type":"text",'
    >>> data += b'"text":"a"}],"source":{"kind":"model"}}}'
    >>> bytes(msgspec.json.decode(data, type=FastModelMessage).message.content[1].text)
    b'"a"'
    """

    message: _FastMessage


Shown = Block | RawBlock | TextPart | _ReasoningPart | _ToolCallPart
"""An entry of a kept message's blocks: a :data:`Block`, a :data:`RawBlock`, or a model
block decoded by type."""


class KeptMessage(msgspec.Struct, frozen=True):
    """A message the snapshot keeps, with the blocks whose text it shows."""

    role: Literal["user", "assistant"]
    blocks: Sequence[Shown]
    checkpoint: bool


_STRING: Final = msgspec.json.Decoder(str)


class RawText(msgspec.Struct, frozen=True, gc=False):
    """A unit's text not built yet: the JSON string literals of its text blocks as the log
    holds them (the text is theirs joined with a newline), and the lengths the stages
    measure, counted on those bytes: the text's UTF-8 byte length and that of its tag-safe
    JSON string literal.

    >>> raw = RawText((b'"a<"', b'"\\\\u00e9"'), 5, 15)
    >>> raw.build()
    'a<\\né'
    """

    literals: tuple[bytes, ...]
    text_bytes: int
    json_bytes: int

    def build(self) -> str:
        """The text itself, each literal decoded as the harness decodes it."""
        return "\n".join(decode_raw(_STRING, msgspec.Raw(literal)) for literal in self.literals)


class Unit(msgspec.Struct, frozen=True):
    """One item of a snapshot's conversation (docs/snapshot.md §Projection): its text is a
    ``str``, or a :class:`RawText` that gives it on demand (:meth:`shown_text`).

    >>> Unit("user", RawText((b'"hi"',), 2, 4)).built()
    Unit(role='user', text='hi', checkpoint=False)
    """

    role: Literal["user", "assistant"]
    text: str | RawText
    checkpoint: bool = False

    def shown_text(self) -> str:
        """The unit's text, built if it is still raw."""
        return self.text if type(self.text) is str else self.text.build()  # type: ignore[union-attr]

    def built(self) -> Unit:
        """This unit with its text built."""
        return (
            self if type(self.text) is str else Unit(self.role, self.shown_text(), self.checkpoint)
        )


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
    label: Any
    """A string, or a session's title, which may be any JSON value (written as JavaScript
    writes it: a float ``1.0`` as ``1``)."""
    cwd: str | None
    captured_through_seq: int | None
    conversation: list[Turn] = []
    harness: str | msgspec.UnsetType = msgspec.UNSET
