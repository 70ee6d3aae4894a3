"""Stage 4: turn kept messages into text units (docs/snapshot.md §Projection).

A message whose blocks came raw gives a unit whose text is a :class:`RawText`: measured on
the JSON the log holds, built only if a later stage shows it. A text the byte count cannot
take (a ``\\u`` escape, bytes that are not UTF-8) is built here instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from sessionref.codecs.jsjson import literal_lengths
from sessionref.errors import SessionLogError
from sessionref.pipeline.messages import (
    ContentBlock,
    KeptMessage,
    RawContentBlock,
    RawText,
    Shown,
    TextPart,
    Unit,
)


def _texts(blocks: Sequence[Shown]) -> list[str | bytes]:
    """The text of each text block whose text is a string: built, or its raw literal.
    A ``null`` block fails, as it does in the harness."""
    texts: list[str | bytes] = []
    for block in blocks:
        kind = type(block)
        if kind is TextPart or kind is RawContentBlock:
            if kind is TextPart or block.type == "text":  # type: ignore[union-attr]
                literal = bytes(block.text)  # type: ignore[union-attr]
                if literal[:1] == b'"':
                    texts.append(literal)
        elif kind is ContentBlock:
            if block.type == "text" and type(block.text) is str:  # type: ignore[union-attr]
                texts.append(block.text)  # type: ignore[union-attr]
        elif block is None:
            raise SessionLogError("a content block is null")
    return texts


def unit_text(blocks: Sequence[Shown]) -> str | RawText:
    """The strings of the ``text`` blocks joined with a newline; other blocks, and a text
    block whose ``text`` is not a string, are dropped. A ``null`` block fails, as it does in
    the harness. Texts left raw give a :class:`RawText` when the byte count takes them all;
    its tag-safe JSON is as long as its literals', since the escaped newline between two
    takes the place of two quotes.

    >>> import msgspec
    >>> unit_text([ContentBlock("text", "a"), ContentBlock("reasoning", "r"),
    ...     ContentBlock("text", 5), "x", TextPart(msgspec.Raw(b'"<b"')), TextPart()])
    'a\\n<b'
    >>> raw = unit_text([TextPart(msgspec.Raw(b'"<b"')), TextPart(msgspec.Raw(b'"c"'))])
    >>> raw.text_bytes, raw.json_bytes, raw.build()
    (4, 12, '<b\\nc')
    """
    texts = _texts(blocks)
    if not texts:
        return ""
    text_bytes = json_bytes = 0
    literals: list[bytes] = []
    for text in texts:
        measured = literal_lengths(text) if type(text) is bytes else None
        if measured is None:
            return "\n".join(map(_built, texts))
        text_bytes += measured[0]
        json_bytes += measured[1]
        literals.append(text)  # type: ignore[arg-type]  # measured: bytes
    count = len(texts) - 1  # one newline, escaped in two bytes, between two texts
    return RawText(tuple(literals), text_bytes + count, json_bytes)


def _built(text: str | bytes) -> str:
    """A text, its literal decoded if it is raw."""
    return text if type(text) is str else RawText((text,), 0, 0).build()  # type: ignore[arg-type]


def message_text(blocks: Sequence[Shown]) -> str:
    """:func:`unit_text`, built.

    >>> import msgspec
    >>> message_text([TextPart(msgspec.Raw(b'"a"')), ContentBlock("text", "b")])
    'a\\nb'
    """
    text = unit_text(blocks)
    return text if type(text) is str else text.build()  # type: ignore[union-attr]


def unitize(messages: Iterable[KeptMessage]) -> Iterator[Unit]:
    """One unit per message with text; a message whose text is empty is skipped.

    >>> [u.text for u in unitize([KeptMessage("user", [ContentBlock("text", "")], False),
    ...                           KeptMessage("assistant", [ContentBlock("text", "ok")], False)])]
    ['ok']
    """
    for message in messages:
        text = unit_text(message.blocks)
        if text if type(text) is str else text.text_bytes:  # type: ignore[union-attr]
            yield Unit(message.role, text, message.checkpoint)
