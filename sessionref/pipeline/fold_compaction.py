"""Stage 2: decode the surface's messages and mark compaction checkpoints (SPEC §2)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sessionref.codecs.records import LogRecord, decode_data
from sessionref.pipeline.messages import Message, ModelMessage, SurfaceMessage


def is_checkpoint(message: Message) -> bool:
    """A compact checkpoint: a user message put there by the ``compact`` plugin.

    >>> from sessionref.pipeline.messages import MessageSource
    >>> is_checkpoint(Message([], MessageSource("plugin", "compact")))
    True
    """
    return message.source.kind == "plugin" and message.source.plugin == "compact"


def fold_compaction(surface: Iterable[LogRecord]) -> Iterator[SurfaceMessage]:
    """User and assistant messages of the surface; tool results are not even decoded.

    After the fold a checkpoint stands where the range it summarizes was, so the messages
    come out in the order the model sees them.

    >>> from sessionref.codecs.records import decode_records
    >>> log = decode_records(b'{"type":"user/message","seq":0,"data":{"content":[],'
    ...     b'"source":{"kind":"plugin","plugin":"compact"}}}\\n')
    >>> [(m.role, m.checkpoint) for m in fold_compaction(log)]
    [('user', True)]
    """
    for record in surface:
        if record.type == "user/message":
            message = decode_data(record, Message)
            yield SurfaceMessage("user", message, is_checkpoint(message))
        elif record.type == "assistant/message":
            yield SurfaceMessage("assistant", decode_data(record, ModelMessage).message, False)
