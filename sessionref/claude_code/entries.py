"""The lines of a Claude Code chain as transcript entries (docs/harnesses.md §Claude Code).

User text is what a person typed: a ``user`` line that is not ``isMeta`` (those the harness
injected), not a tool result, not a sidechain; slash commands and ``!`` shell input are shown
as typed (``/name args``, ``!command``), their output and what the harness or IDE wrapped into
a prompt (``<system-reminder>`` …) are not user text. Assistant text is the text blocks of
one API message, whose blocks Claude Code writes on several lines sharing ``message.id``. A
``compact_boundary`` and the summary after it are one checkpoint.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Final

from sessionref.claude_code.records import Block, Content, Line
from sessionref.codecs.jsjson import js_json
from sessionref.transcript import Entry

_INJECTED: Final = re.compile(
    r"<(system-reminder|ide_opened_file|ide_selection|ide_diagnostics|task-notification)>"
    r".*?</\1>\s*",
    re.S,
)
_COMMAND: Final = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS: Final = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_WRAPPED: Final = re.compile(r"\A\s*<(bash-input|user-memory-input)>(.*?)</\1>\s*\Z", re.S)
_OUTPUT: Final = re.compile(r"\A\s*<(bash-stdout|bash-stderr|local-command-stdout)>", re.S)
_INTERRUPTED: Final = frozenset(
    {"[Request interrupted by user]", "[Request interrupted by user for tool use]"}
)
_TYPED_PREFIX: Final = {"bash-input": "!", "user-memory-input": "#"}


def block_texts(content: Content) -> str:
    """The text of ``content``: the string, or its ``text`` blocks joined by a newline
    (images and other blocks show nothing).

    >>> block_texts([Block("text", "a"), Block("image"), "x", Block("text", "b")])
    'a\\nb'
    """
    if type(content) is str:
        return content
    if type(content) is not list:
        return ""
    return "\n".join(
        block.text
        for block in content
        if type(block) is Block and block.type == "text" and type(block.text) is str
    )


def typed_text(text: str) -> tuple[str, bool]:
    """What a person typed into a prompt the harness wrote, and whether it is a prompt at all
    (``False`` for the output of a shell or local command).

    >>> typed_text("<command-name>/review</command-name><command-args>a.py</command-args>")
    ('/review a.py', True)
    >>> typed_text("<bash-input>ls</bash-input>"), typed_text("<bash-stdout>x</bash-stdout>")
    (('!ls', True), ('', False))
    >>> typed_text("fix it<system-reminder>be brief</system-reminder>")
    ('fix it', True)
    """
    if _OUTPUT.match(text):
        return "", False
    command = _COMMAND.search(text)
    if command is not None:
        name = command.group(1).strip()
        args = _COMMAND_ARGS.search(text)
        typed = name if name.startswith("/") else f"/{name}"
        arguments = args.group(1).strip() if args else ""
        return (f"{typed} {arguments}" if arguments else typed), True
    wrapped = _WRAPPED.match(text)
    if wrapped is not None:
        return _TYPED_PREFIX[wrapped.group(1)] + wrapped.group(2), True
    if "<" in text:
        cleaned = _INJECTED.sub("", text)
        if cleaned != text:
            text = cleaned.strip()
    return ("", True) if text in _INTERRUPTED else (text, True)


def _tool_output(block: Block) -> str:
    """A tool result's text: its string content or the text of its blocks."""
    content = block.content
    if type(content) is list:
        return "\n".join(
            item["text"]
            for item in content
            if type(item) is dict and item.get("type") == "text" and type(item.get("text")) is str
        )
    return content if type(content) is str else ""


class _Builder:
    """Entries of a chain, built line by line."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.tools: dict[str, str] = {}
        self.message_id: object = None
        self.text_at: int | None = None  # the entry holding the current API message's text
        self.boundary_at: int | None = None  # a checkpoint still waiting for its summary

    def add(self, line: Line, time: int | None) -> None:
        kind = line.type
        if kind == "assistant":
            self.assistant(line, time)
            return
        self.message_id = None
        if kind == "user":
            self.user(line, time)
        elif kind == "system" and line.subtype == "compact_boundary":
            text = line.content if type(line.content) is str else ""
            self.boundary_at = len(self.entries)
            self.entries.append(Entry("user", "checkpoint", text, time))
            return
        elif kind == "attachment" and type(line.attachment) is dict:
            prompt = line.attachment.get("prompt")
            if line.attachment.get("type") == "queued_command" and type(prompt) is str:
                self.entries.append(Entry("user", "text", typed_text(prompt)[0], time))
        self.boundary_at = None

    def user(self, line: Line, time: int | None) -> None:
        content = None if line.message is None else line.message.content
        if line.is_compact_summary is True:
            summary = Entry("user", "checkpoint", block_texts(content), time)
            if self.boundary_at is None:
                self.entries.append(summary)
            else:
                self.entries[self.boundary_at] = summary
            return
        results = [
            block
            for block in (content if type(content) is list else ())
            if type(block) is Block and block.type == "tool_result"
        ]
        if results:
            for block in results:
                name = self.tools.get(block.tool_use_id) if type(block.tool_use_id) is str else None
                self.entries.append(Entry("tool", "tool-result", _tool_output(block), time, name))
            return
        text = block_texts(content)
        if line.is_meta is True:
            self.entries.append(Entry("system", "text", text, time))
            return
        typed, prompt = typed_text(text)
        if not prompt:
            self.entries.append(Entry("tool", "tool-result", text, time))
        elif typed:
            self.entries.append(Entry("user", "text", typed, time))

    def assistant(self, line: Line, time: int | None) -> None:
        self.boundary_at = None
        message = line.message
        if message is None:
            return
        if line.is_api_error_message is True:
            self.entries.append(Entry("system", "text", block_texts(message.content), time))
            return
        if message.id is None or message.id != self.message_id:
            self.message_id, self.text_at = message.id, None
        content = message.content
        blocks: Sequence[object] = (
            [Block("text", content)] if type(content) is str else content or ()
        )
        for block in blocks:
            if type(block) is Block:
                self.block(block, time)

    def block(self, block: Block, time: int | None) -> None:
        if block.type == "text" and type(block.text) is str:
            if self.text_at is None:
                self.text_at = len(self.entries)
                self.entries.append(Entry("assistant", "text", block.text, time))
            else:
                joined = self.entries[self.text_at].text + "\n" + block.text
                self.entries[self.text_at] = Entry("assistant", "text", joined, time)
        elif block.type == "thinking" and type(block.thinking) is str:
            self.entries.append(Entry("assistant", "thinking", block.thinking, time))
        elif block.type == "tool_use":
            name = block.name if type(block.name) is str else None
            if type(block.id) is str and name is not None:
                self.tools[block.id] = name
            arguments = js_json(block.input).decode("utf-8", "surrogatepass")
            self.entries.append(Entry("assistant", "tool-call", arguments, time, name))


def chain_entries(lines: Iterator[tuple[Line, int | None]]) -> list[Entry]:
    """The entries of the lines of a chain (with their times), in order.

    >>> from sessionref.claude_code.records import Message
    >>> def said(*blocks):
    ...     return Line(type="assistant", message=Message("m", content=list(blocks)))
    >>> chain = [Line(type="user", message=Message(content="hi")),
    ...          said(Block("thinking", thinking="t")), said(Block("text", "a")),
    ...          said(Block("text", "b"))]
    >>> [(e.role, e.kind, e.text) for e in chain_entries((line, None) for line in chain)]
    [('user', 'text', 'hi'), ('assistant', 'thinking', 't'), ('assistant', 'text', 'a\\nb')]
    """
    builder = _Builder()
    for line, time in lines:
        if line.is_sidechain is not True:
            builder.add(line, time)
    return builder.entries
