"""Stage 3: keep direct user text, assistant text and checkpoints (docs/snapshot.md §Projection)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Final

import msgspec

from sessionref.log.records import LogRecord, decode_data
from sessionref.pipeline.messages import (
    FastModelMessage,
    KeptMessage,
    Message,
    ModelMessage,
    RawMessage,
    RawModelMessage,
    Shown,
)

_FAST_MODEL: Final = msgspec.json.Decoder(FastModelMessage)


def is_checkpoint(message: Message | RawMessage) -> bool:
    """A compact checkpoint: a user message put there by the ``compact`` plugin.

    >>> from sessionref.pipeline.messages import MessageSource
    >>> is_checkpoint(Message([], MessageSource("plugin", "compact")))
    True
    """
    return message.source.kind == "plugin" and message.source.plugin == "compact"


def model_blocks(record: LogRecord) -> Sequence[Shown]:
    """The content blocks of an ``assistant/message``: by :class:`FastModelMessage` where it
    takes them (the text of reasoning and tool calls is never built), else by
    :class:`RawModelMessage` (:class:`ModelMessage` for a record decoded alone), which
    raises what a bad message raises. A raw record's text stays raw.

    >>> from sessionref.log.records import decode_records
    >>> [record] = decode_records(b'{"type":"assistant/message","data":{"message":{"content":'
    ...     b'[{"type":"text","text":"a"},7],"source":{"kind":"model"}}}}\\n')
    >>> [block if type(block) is int else bytes(block.text) for block in model_blocks(record)]
    [b'"a"', 7]
    """
    if type(record) is not LogRecord:
        return decode_data(record, ModelMessage).message.content
    try:
        return _FAST_MODEL.decode(record.data).message.content
    except (msgspec.DecodeError, RecursionError):  # a ValidationError is a DecodeError
        return decode_data(record, RawModelMessage).message.content


def user_message(record: LogRecord) -> Message | RawMessage:
    """The message of a ``user/message``, its text left raw when the record's data is.

    >>> from sessionref.log.records import decode_records
    >>> [record] = decode_records(b'{"type":"user/message","data":{"content":[],'
    ...     b'"source":{"kind":"user"}}}\\n')
    >>> user_message(record)
    RawMessage(content=[], source=MessageSource(kind='user', plugin=None), display=None)
    """
    if type(record) is LogRecord:
        return decode_data(record, RawMessage)
    return decode_data(record, Message)


def filter_roles(surface: Iterable[LogRecord]) -> Iterator[KeptMessage]:
    """The surface's assistant messages, checkpoints and direct user prompts; tool results
    and injected context are dropped without being decoded.

    A direct prompt with ``display`` shows ``display``: it holds what the user typed when
    ``content`` already carries solidified context, so a snapshot never nests another. A
    ``display`` that is not an array is not one (the harness loads it unchecked): ``content``
    shows.

    >>> from sessionref.log.records import decode_records
    >>> log = decode_records(b'{"type":"user/message","seq":0,"data":{"content":[],'
    ...     b'"source":{"kind":"plugin","plugin":"compact"}}}\\n'
    ...     b'{"type":"user/message","seq":1,"data":{"content":[],"source":{"kind":"goal"}}}\\n'
    ...     b'{"type":"user/message","seq":2,"data":{"content":[{"type":"text","text":"<ctx>"}],'
    ...     b'"display":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}}\\n')
    >>> [(m.role, m.checkpoint, [bytes(b.text) for b in m.blocks]) for m in filter_roles(log)]
    [('user', True, []), ('user', False, [b'"hi"'])]
    """
    for record in surface:
        if record.type == "assistant/message":
            yield KeptMessage("assistant", model_blocks(record), False)
        elif record.type == "user/message":
            message = user_message(record)
            if is_checkpoint(message):
                yield KeptMessage("user", message.content, True)
            elif message.source.kind == "user":
                display = message.display
                blocks = display if type(display) is list else message.content
                yield KeptMessage("user", blocks, False)
