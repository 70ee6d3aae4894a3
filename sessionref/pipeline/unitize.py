"""Stage 4: turn kept messages into text units (docs/snapshot.md §Projection)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from sessionref.errors import SessionLogError
from sessionref.pipeline.messages import ContentBlock, KeptMessage, Shown, TextPart, Unit


def message_text(blocks: Sequence[Shown]) -> str:
    """The strings of the ``text`` blocks joined with a newline; other blocks, and a text
    block whose ``text`` is not a string, are dropped. A ``null`` block fails, as it does in
    the harness.

    >>> message_text([ContentBlock("text", "a"), ContentBlock("reasoning", "r"),
    ...               ContentBlock("text", 5), "x", TextPart("b"), TextPart(None)])
    'a\\nb'
    """
    texts = []
    for block in blocks:
        if type(block) is TextPart:
            if type(block.text) is str:
                texts.append(block.text)
        elif type(block) is ContentBlock:
            if block.type == "text" and type(block.text) is str:
                texts.append(block.text)
        elif block is None:
            raise SessionLogError("a content block is null")
    return "\n".join(texts)


def unitize(messages: Iterable[KeptMessage]) -> Iterator[Unit]:
    """One unit per message with text; a message whose text is empty is skipped.

    >>> [u.text for u in unitize([KeptMessage("user", [ContentBlock("text", "")], False),
    ...                           KeptMessage("assistant", [ContentBlock("text", "ok")], False)])]
    ['ok']
    """
    for message in messages:
        text = message_text(message.blocks)
        if text:
            yield Unit(message.role, text, message.checkpoint)
