"""A DSH session log as a person reads it: :func:`dsh_transcript` turns the current surface
(the harness's fold, :func:`~sessionref.log.surface.current_surface`) into a
:class:`~sessionref.transcript.Transcript`.

Every surface event becomes entries in surface order, each with the event's time:

- a direct user prompt: a ``user`` ``text`` entry (its ``display`` when it has one: what the
  user typed, as a snapshot shows it);
- a compact checkpoint: a ``user`` ``checkpoint`` entry;
- any other user message (context the harness injected): a ``system`` ``text`` entry;
- an assistant message: one entry per block, in order: ``reasoning`` → ``thinking``,
  ``text`` → ``text``, ``tool-call`` → ``tool-call`` (``name`` the tool, ``text`` its
  arguments, ``call`` its ``id``);
- a tool result: a ``tool`` ``tool-result`` entry per ``tool-result`` block, named by the
  call it answers (``call`` its ``toolCallId``).

Blocks whose text is empty or not a string (images, kinds the harness does not know) show
nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from sessionref.codecs.jsjson import js_json
from sessionref.log.records import LogRecord, SessionLog, decode_data, latest_title
from sessionref.log.surface import current_surface
from sessionref.transcript import Entry, Role, Transcript, message_text

__all__ = ["dsh_transcript", "log_transcript"]


class _Message(msgspec.Struct, frozen=True):
    """``{content, source, display?}``: what a transcript reads of a message."""

    content: list[Any]
    source: dict[str, Any]
    display: Any = None


class _Wrapped(msgspec.Struct, frozen=True):
    """``data`` of an ``assistant/message`` or ``tool/result``: ``{message, …}``."""

    message: _Message


def _json_text(value: Any) -> str:
    """A value as text: a string as it is, anything else as its JSON.

    >>> _json_text("ls -a"), _json_text({"cmd": "ls"})
    ('ls -a', '{"cmd":"ls"}')
    """
    return value if isinstance(value, str) else js_json(value).decode("utf-8", "surrogatepass")


def _texts(blocks: Sequence[Any]) -> str:
    """The strings of a message's ``text`` blocks, joined with a newline (as a snapshot
    joins them).

    >>> _texts([{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}])
    'a\\nb'
    """
    return message_text(
        block["text"]
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "text"
        and type(block.get("text")) is str
    )


def _time(record: LogRecord) -> int | None:
    return record.time if isinstance(record.time, int) else None


def _user_entry(record: LogRecord) -> Entry | None:
    """The entry of a ``user/message``: a prompt, a checkpoint, or injected context."""
    message = decode_data(record, _Message)
    source = message.source
    if source.get("kind") == "plugin" and source.get("plugin") == "compact":
        role: Role = "user"
        kind = "checkpoint"
        text = _texts(message.content)
    elif source.get("kind") == "user":
        role, kind = "user", "text"
        display = message.display
        text = _texts(display if isinstance(display, list) else message.content)
    else:
        role, kind = "system", "text"
        text = _texts(message.content)
    return Entry(role, kind, text, _time(record)) if text else None  # type: ignore[arg-type]


def _assistant_entries(record: LogRecord, tools: dict[str, str]) -> Iterator[Entry]:
    """The entries of an ``assistant/message``, one per block; tool calls are remembered in
    ``tools`` (call id → tool name) for the results that answer them."""
    time = _time(record)
    for block in decode_data(record, _Wrapped).message.content:
        if not isinstance(block, dict):
            continue
        kind, text = block.get("type"), block.get("text")
        if kind == "tool-call":
            name = block.get("name")
            name = name if isinstance(name, str) else None
            call = block.get("id")
            call = call if isinstance(call, str) else None
            if call is not None and name is not None:
                tools[call] = name
            arguments = _json_text(block.get("arguments", ""))
            yield Entry("assistant", "tool-call", arguments, time, name, call=call)
        elif kind in ("text", "reasoning") and type(text) is str and text:
            yield Entry("assistant", "text" if kind == "text" else "thinking", text, time)


def _tool_entries(record: LogRecord, tools: dict[str, str]) -> Iterator[Entry]:
    """The entries of a ``tool/result``: one per ``tool-result`` block."""
    for block in decode_data(record, _Wrapped).message.content:
        if isinstance(block, dict) and block.get("type") == "tool-result":
            content = block.get("content")
            text = _texts(content) if isinstance(content, list) else _json_text(content)
            call = block.get("toolCallId")
            call = call if isinstance(call, str) else None
            name = None if call is None else tools.get(call)
            yield Entry("tool", "tool-result", text, _time(record), name, call=call)


def _title(title: Any) -> str | None:
    """A title as a transcript holds it: text as it is, any other JSON value as its JSON.

    >>> _title("Auth"), _title(None), _title(7)
    ('Auth', None, '7')
    """
    return None if title is None else _json_text(title)


def dsh_transcript(log: SessionLog, title: Any = None) -> Transcript:
    """The transcript of a DSH log: its current surface in order (see the module's doc).
    ``title`` is the session's latest title (any JSON value the log holds; ``None``: none).

    Raises :class:`~sessionref.errors.SessionLogError` where the harness could not fold the
    surface.

    >>> from sessionref.log.builder import LogBuilder
    >>> from sessionref.log.records import SessionHeader, decode_records
    >>> b = LogBuilder(time=0)
    >>> _ = b.user("fix it"), b.assistant([{"type": "reasoning", "text": "hm"},
    ...     {"type": "tool-call", "id": "c1", "name": "bash", "arguments": '{"cmd":"ls"}'}])
    >>> _ = b.tool_result("c1", "a.py")
    >>> lines = b"".join(js_json(event) + b"\\n" for event in b.events)
    >>> log = SessionLog(SessionHeader("s", 5), decode_records(lines))
    >>> for e in dsh_transcript(log, "Fix").entries:
    ...     print(e.role, e.kind, e.text, e.time, e.name, e.call)
    user text fix it 7 None None
    assistant thinking hm 14 None None
    assistant tool-call {"cmd":"ls"} 14 bash c1
    tool tool-result a.py 21 bash c1
    >>> _ = b.checkpoint("we fixed it", 0, 2)
    >>> lines = b"".join(js_json(event) + b"\\n" for event in b.events)
    >>> log = SessionLog(SessionHeader("s", 5), decode_records(lines))
    >>> dsh_transcript(log).entries == [Entry("user", "checkpoint", "we fixed it", 28)]
    True
    """
    entries: list[Entry] = []
    tools: dict[str, str] = {}
    for record in current_surface(log.records):
        if record.type == "user/message":
            entry = _user_entry(record)
            if entry is not None:
                entries.append(entry)
        elif record.type == "assistant/message":
            entries.extend(_assistant_entries(record, tools))
        else:
            entries.extend(_tool_entries(record, tools))
    header = log.header
    return Transcript(
        header.id, "dsh", _title(title), header.loaded_cwd, header.created_at, entries
    )


def log_transcript(log: SessionLog) -> Transcript:
    """:func:`dsh_transcript` titled by the log's latest title (what a DSH store gives).

    >>> from sessionref.log.records import SessionHeader
    >>> log_transcript(SessionLog(SessionHeader("s", 1, cwd="/w"), []))
    Transcript(session_id='s', harness='dsh', title=None, cwd='/w', created_at=1, entries=[])
    """
    return dsh_transcript(log, latest_title(log))
