"""Codex CLI rollout lines to a :class:`~sessionref.transcript.Transcript`
(docs/harnesses.md §Codex).

Codex writes every user and assistant message twice: as the model saw it (``response_item``,
with the harness's context blocks) and as the person saw it (``event_msg``: ``user_message``
and ``agent_message`` in a legacy rollout, completed ``UserMessage`` and ``AgentMessage``
items in a paginated one, :func:`~sessionref.codex.records.said`). A rollout that
has the event stream takes its texts from there; one without (the oldest rollouts) from the
response items, minus the injected context blocks; one whose older turns have no events (a
rollout that a newer Codex resumed) from the response items up to its first event and from
the events on (:class:`~sessionref.codex.records.Outline`). Reasoning, tool calls and their
output come from the response items. A ``compacted`` item with a summary is a checkpoint.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from sessionref.codex.names import IDE_REQUEST
from sessionref.codex.records import Item, Payload, decode, outline, said
from sessionref.log.jsonl import built, iso_millis, raw_text
from sessionref.log.structs import SessionLog
from sessionref.log.synthetic import surface_log
from sessionref.transcript import (
    Entry,
    EntryKind,
    Role,
    Transcript,
    first_prompt_title,
    message_text,
    prompt_title,
)

_INJECTED: Final = re.compile(
    r"\A\s*(?:<(environment_context|user_instructions|INSTRUCTIONS|user_shell_command"
    r"|turn_aborted|permissions instructions)>.*</\1>\s*\Z|# AGENTS\.md instructions for )",
    re.S,
)
_SHOWN: Final = frozenset({"text", "checkpoint"})
"""The kinds of entry a snapshot shows."""
_TOOL_CALLS: Final = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_TOOL_OUTPUTS: Final = frozenset({"function_call_output", "custom_tool_call_output"})


def _texts(parts: Any, key: str = "text") -> list[str]:
    """The string ``text`` of each object in a list (``content`` or ``summary``)."""
    parts = built(parts)
    if type(parts) is not list:
        return []
    return [part[key] for part in parts if type(part) is dict and type(part.get(key)) is str]


def typed_prompt(text: str) -> str:
    """What the person typed in a user message: an injected context block is nothing, and
    an IDE prompt is what follows its request heading.

    >>> typed_prompt("<environment_context>cwd</environment_context>")
    ''
    >>> typed_prompt("# Context from my IDE setup:\\nx\\n## My request for Codex:\\nfix it\\n")
    'fix it'
    """
    if _INJECTED.match(text):
        return ""
    heading = text.find(IDE_REQUEST)
    return text[heading + len(IDE_REQUEST) :].strip() if heading >= 0 else text


def _tool_output(output: Any) -> str:
    """A tool's output as text: the string, the ``content`` of an object, or its JSON."""
    value = built(output)
    if type(value) is str:
        return value
    if type(value) is dict and type(value.get("content")) is str:
        return str(value["content"])
    return raw_text(output)


def _call_text(payload: Payload) -> str:
    """A tool call's arguments as text."""
    for value in (built(payload.arguments), built(payload.input)):
        if type(value) is str:
            return value
    return raw_text(payload.action)


class _Builder:
    """Entries of a rollout, line by line; with ``texts_only``, only what a snapshot shows
    (user and assistant texts, checkpoints), nothing else built. Texts come from the response
    items before line ``events_from`` and from the events from there on."""

    def __init__(self, events_from: int, texts_only: bool) -> None:
        self.events_from = events_from
        self.texts_only = texts_only
        self.entries: list[Entry] = []
        self.tools: dict[str, str] = {}
        self.stamp: Any = None

    def put(
        self,
        role: Role,
        kind: EntryKind,
        text: str,
        name: str | None = None,
        call: object = None,
    ) -> None:
        """Add an entry of the current item; a text only when it says something. ``call``,
        the ``call_id`` of the tool call it makes or answers, is kept when it is a string."""
        if kind != "text" or text:
            call_id = call if type(call) is str else None
            self.entries.append(Entry(role, kind, text, iso_millis(self.stamp), name, call=call_id))

    def add(self, line: tuple[int, Item]) -> None:
        """Add the entries of the item on line ``line[0]``."""
        index, (kind, payload, self.stamp) = line
        from_events = index >= self.events_from
        message = payload.message
        if kind == "event_msg":
            if from_events:
                for part, (speaker, text) in enumerate(said(payload)):
                    text = typed_prompt(text) if speaker == "user" else text
                    self.event(speaker, text, index == self.events_from and part == 0)
        elif kind == "response_item" and type(payload.type) is str:
            self.response(payload.type, payload, from_events)
        elif kind == "compacted" and type(message) is str and message:
            self.put("user", "checkpoint", message)

    def event(self, role: Role, text: str, first: bool) -> None:
        """Add an event's text. The ``first`` event after older turns without any replaces the
        text of its own response item, which Codex writes just before it: the last text shown,
        if it says the same."""
        if first:
            entries = self.entries
            shown = (at for at in reversed(range(len(entries))) if entries[at].kind in _SHOWN)
            last = next(shown, -1)
            copy = entries[last] if last >= 0 else None
            if copy is not None and (copy.role, copy.kind, copy.text) == (role, "text", text):
                del entries[last]
        self.put(role, "text", text)

    def response(self, kind: str, payload: Payload, from_events: bool) -> None:
        if kind == "message":
            if from_events:
                return
            if payload.role == "user":
                texts = (typed_prompt(text) for text in _texts(payload.content))
                self.put("user", "text", message_text(text for text in texts if text))
            elif payload.role == "assistant":
                self.put("assistant", "text", message_text(_texts(payload.content)))
        elif self.texts_only:
            return
        elif kind == "reasoning":
            summary = message_text(_texts(payload.summary))
            if summary:
                self.put("assistant", "thinking", summary)
        elif kind in _TOOL_CALLS:
            name = payload.name if type(payload.name) is str else None
            if type(payload.call_id) is str and name is not None:
                self.tools[payload.call_id] = name
            self.put("assistant", "tool-call", _call_text(payload), name, payload.call_id)
        elif kind in _TOOL_OUTPUTS:
            call = payload.call_id
            name = self.tools.get(call) if type(call) is str else None
            self.put("tool", "tool-result", _tool_output(payload.output), name, call)


def codex_transcript(
    session_id: str, raw_lines: list[bytes], title: str | None, texts_only: bool = False
) -> Transcript:
    """The transcript of a thread's committed lines (its segment files' lines, in order);
    ``title`` is the thread's name in ``session_index.jsonl``, if any. With ``texts_only``,
    only what a snapshot shows, from the latest checkpoint on: the lines before it are read
    only for their kind (and, for a title, up to the first prompt).

    >>> lines = [b'{"type":"session_meta","payload":{"id":"t","cwd":"/p",'
    ...          b'"timestamp":"2025-01-01T00:00:00Z"}}',
    ...          b'{"type":"response_item","payload":{"type":"message","role":"user",'
    ...          b'"content":[{"type":"input_text","text":"<environment_context>x'
    ...          b'</environment_context>"}]}}',
    ...          b'{"type":"event_msg","payload":{"type":"user_message","message":"hi"}}',
    ...          b'{"type":"compacted","payload":{"message":"sum"}}',
    ...          b'{"type":"event_msg","payload":{"type":"agent_message","message":"hello"}}']
    >>> t = codex_transcript("t", lines, None)
    >>> t.title, t.cwd, t.created_at, [(e.role, e.text) for e in t.entries]
    ('hi', '/p', 1735689600000, [('user', 'hi'), ('user', 'sum'), ('assistant', 'hello')])
    >>> [e.text for e in codex_transcript("t", lines, None, texts_only=True).entries]
    ['sum', 'hello']
    """
    summary = outline(raw_lines)
    start = summary.checkpoint if texts_only else 0
    builder = _Builder(summary.events_from, texts_only)
    for line in _items(raw_lines, start):
        builder.add(line)
    if title is None and start == 0:
        title = prompt_title(builder.entries)
    elif title is None:
        title = _first_prompt(raw_lines, summary.events_from)
    cwd = summary.meta.cwd
    return Transcript(
        session_id=session_id,
        harness="codex",
        title=title,
        cwd=cwd if type(cwd) is str else None,
        created_at=summary.created_at,
        entries=builder.entries,
    )


def _items(raw_lines: list[bytes], start: int = 0) -> Iterator[tuple[int, Item]]:
    """Each line from ``start`` on that is an item, with its index.

    >>> [index for index, _ in _items([b'{"type":"message"}', b"oops", b'{"type":"message"}'])]
    [0, 2]
    """
    for index in range(start, len(raw_lines)):
        item = decode(raw_lines[index])
        if item is not None:
            yield index, item


def _first_prompt(raw_lines: list[bytes], events_from: int) -> str | None:
    """The title the first prompt gives, read up to it."""
    builder = _Builder(events_from, texts_only=True)
    return first_prompt_title(_items(raw_lines), builder.add, builder.entries)


def codex_log(session_id: str, raw_lines: list[bytes], title: str | None) -> SessionLog:
    """The DSH-shaped log a snapshot reads (:func:`~sessionref.log.synthetic.surface_log`);
    ``capturedThroughSeq`` is the index of the thread's last committed line, its segment
    files counted in order.

    >>> codex_log("t", [b'{"type":"compacted","payload":{"message":"sum"}}'], None).records[0].type
    'user/message'
    """
    captured = len(raw_lines) - 1 if raw_lines else None
    return surface_log(codex_transcript(session_id, raw_lines, title, texts_only=True), captured)
