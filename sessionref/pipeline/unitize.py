"""Stage 4: turn kept messages into text units (docs/snapshot.md §Projection)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sessionref.errors import SessionLogError
from sessionref.pipeline.messages import ContentBlock, KeptMessage, Unit


def message_text(blocks: list[ContentBlock]) -> str:
    """The ``text`` blocks' strings joined with a newline; other blocks are dropped.

    >>> message_text([ContentBlock("text", "a"), ContentBlock("reasoning", "r"),
    ...               ContentBlock("text", "b")])
    'a\\nb'
    """
    texts = [block.text for block in blocks if block.type == "text"]
    if not all(isinstance(text, str) for text in texts):
        raise SessionLogError("text block whose text is not a string")
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
