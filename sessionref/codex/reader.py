"""Codex CLI rollout lines to a :class:`~sessionref.transcript.Transcript`
(docs/harnesses.md §Codex).

Codex writes every user and assistant message twice: as the model saw it (``response_item``,
with the harness's context blocks) and as the person saw it (``event_msg``). A rollout that
has the event stream takes its texts from there; one without (the oldest rollouts) from the
response items, minus the injected context blocks. Reasoning, tool calls and their output
come from the response items. A ``compacted`` item with a summary is a checkpoint.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from sessionref.codecs.jsjson import js_json
from sessionref.codex.records import Item, Payload, decode
from sessionref.log.jsonl import iso_millis
from sessionref.log.structs import SessionLog
from sessionref.log.synthetic import surface_log
from sessionref.transcript import Entry, Transcript, prompt_title

_INJECTED: Final = re.compile(
    r"\A\s*(?:<(environment_context|user_instructions|INSTRUCTIONS|user_shell_command"
    r"|turn_aborted|permissions instructions)>.*</\1>\s*\Z|# AGENTS\.md instructions for )",
    re.S,
)
_IDE_REQUEST: Final = "## My request for Codex:"
_TOOL_CALLS: Final = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_TOOL_OUTPUTS: Final = frozenset({"function_call_output", "custom_tool_call_output"})


def _texts(parts: Any, key: str = "text") -> list[str]:
    """The string ``text`` of each object in a list (``content`` or ``summary``)."""
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
    heading = text.find(_IDE_REQUEST)
    return text[heading + len(_IDE_REQUEST) :].strip() if heading >= 0 else text


def _tool_output(output: Any) -> str:
    """A tool's output as text: the string, the ``content`` of an object, or its JSON."""
    if type(output) is str:
        return output
    if type(output) is dict and type(output.get("content")) is str:
        return str(output["content"])
    return js_json(output).decode("utf-8", "surrogatepass")


def _call_text(payload: Payload) -> str:
    """A tool call's arguments as text."""
    for value in (payload.arguments, payload.input):
        if type(value) is str:
            return value
    return js_json(payload.action).decode("utf-8", "surrogatepass")


class _Builder:
    """Entries of a rollout, item by item."""

    def __init__(self, from_events: bool) -> None:
        self.from_events = from_events
        self.entries: list[Entry] = []
        self.tools: dict[str, str] = {}

    def text(self, role: str, text: str, time: int | None) -> None:
        if text:
            self.entries.append(Entry(role, "text", text, time))  # type: ignore[arg-type]

    def add(self, item: Item) -> None:
        kind, payload, time = item.kind, item.payload, iso_millis(item.timestamp)
        message = payload.message
        if kind == "event_msg" and self.from_events and type(message) is str:
            if payload.type == "user_message":
                self.text("user", typed_prompt(message), time)
            elif payload.type == "agent_message":
                self.text("assistant", message, time)
        elif kind == "response_item":
            self.response(payload, time)
        elif kind == "compacted" and type(message) is str and message:
            self.entries.append(Entry("user", "checkpoint", message, time))

    def response(self, payload: Payload, time: int | None) -> None:
        kind = payload.type if type(payload.type) is str else None
        if kind == "message" and not self.from_events:
            if payload.role == "user":
                texts = (typed_prompt(text) for text in _texts(payload.content))
                self.text("user", "\n".join(text for text in texts if text), time)
            elif payload.role == "assistant":
                self.text("assistant", "\n".join(_texts(payload.content)), time)
        elif kind == "reasoning":
            summary = "\n".join(_texts(payload.summary))
            if summary:
                self.entries.append(Entry("assistant", "thinking", summary, time))
        elif kind in _TOOL_CALLS:
            name = payload.name if type(payload.name) is str else None
            if type(payload.call_id) is str and name is not None:
                self.tools[payload.call_id] = name
            self.entries.append(Entry("assistant", "tool-call", _call_text(payload), time, name))
        elif kind in _TOOL_OUTPUTS:
            call = payload.call_id
            name = self.tools.get(call) if type(call) is str else None
            output = _tool_output(payload.output)
            self.entries.append(Entry("tool", "tool-result", output, time, name))


def _has_events(items: Iterable[Item]) -> bool:
    """Whether a rollout records what the person saw (``event_msg`` user/agent messages)."""
    return any(
        item.kind == "event_msg" and item.payload.type in ("user_message", "agent_message")
        for item in items
    )


def codex_transcript(session_id: str, raw_lines: list[bytes], title: str | None) -> Transcript:
    """The transcript of a thread's committed lines (its segment files' lines, in order);
    ``title`` is the thread's name in ``session_index.jsonl``, if any.

    >>> lines = [b'{"type":"session_meta","payload":{"id":"t","cwd":"/p",'
    ...          b'"timestamp":"2025-01-01T00:00:00Z"}}',
    ...          b'{"type":"response_item","payload":{"type":"message","role":"user",'
    ...          b'"content":[{"type":"input_text","text":"<environment_context>x'
    ...          b'</environment_context>"}]}}',
    ...          b'{"type":"event_msg","payload":{"type":"user_message","message":"hi"}}',
    ...          b'{"type":"event_msg","payload":{"type":"agent_message","message":"hello"}}']
    >>> t = codex_transcript("t", lines, None)
    >>> t.title, t.cwd, t.created_at, [(e.role, e.text) for e in t.entries]
    ('hi', '/p', 1735689600000, [('user', 'hi'), ('assistant', 'hello')])
    """
    items = [item for item in map(decode, raw_lines) if item is not None]
    metas = [item.payload for item in items if item.kind == "session_meta"]
    meta = metas[0] if metas else Payload()
    builder = _Builder(_has_events(items))
    for item in items:
        builder.add(item)
    created = iso_millis(meta.timestamp)
    if created is None:
        created = next((t for t in (iso_millis(i.timestamp) for i in items) if t is not None), None)
    return Transcript(
        session_id=session_id,
        harness="codex",
        title=title or prompt_title(builder.entries),
        cwd=meta.cwd if type(meta.cwd) is str else None,
        created_at=created,
        entries=builder.entries,
    )


def codex_log(session_id: str, raw_lines: list[bytes], title: str | None) -> SessionLog:
    """The DSH-shaped log a snapshot reads (:func:`~sessionref.log.synthetic.surface_log`);
    ``capturedThroughSeq`` is the index of the thread's last committed line, its segment
    files counted in order.

    >>> codex_log("t", [b'{"type":"compacted","payload":{"message":"sum"}}'], None).records[0].type
    'user/message'
    """
    captured = len(raw_lines) - 1 if raw_lines else None
    return surface_log(codex_transcript(session_id, raw_lines, title), captured)
