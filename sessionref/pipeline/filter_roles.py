"""Stage 3: keep direct user text, assistant text and checkpoints (SPEC §3)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sessionref.pipeline.messages import KeptMessage, SurfaceMessage


def filter_roles(messages: Iterable[SurfaceMessage]) -> Iterator[KeptMessage]:
    """Drop injected context; a direct prompt with ``display`` shows ``display``.

    ``display`` holds what the user typed when ``content`` already carries solidified context,
    so a snapshot never nests another snapshot.

    >>> from sessionref.pipeline.messages import ContentBlock, Message, MessageSource
    >>> typed = [ContentBlock("text", "hi")]
    >>> solid = Message([ContentBlock("text", "<ctx>")], MessageSource("user"), typed)
    >>> goal = Message([ContentBlock("text", "x")], MessageSource("goal"))
    >>> [m.blocks for m in filter_roles([SurfaceMessage("user", solid, False),
    ...                                   SurfaceMessage("user", goal, False)])]
    [[ContentBlock(type='text', text='hi')]]
    """
    for item in messages:
        message = item.message
        if item.role == "assistant" or item.checkpoint:
            yield KeptMessage(item.role, message.content, item.checkpoint)
        elif message.source.kind == "user":
            blocks = message.content if message.display is None else message.display
            yield KeptMessage("user", blocks, False)
