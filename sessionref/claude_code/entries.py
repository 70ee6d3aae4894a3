"""The lines of a Claude Code chain as transcript entries (docs/harnesses.md §Claude Code).

User text is what a person typed (:mod:`sessionref.claude_code.prompts`): a ``user`` line
that is not ``isMeta`` (those the harness injected), not a tool result, not a sidechain.
Assistant text is the text blocks of one API message, whose blocks Claude Code writes on
several lines sharing ``message.id``; a text after another entry of its message (a server
tool's call and result, between the texts the model wrote before and after it) is an entry
of its own that ``continues`` the text before it, so the transcript keeps the message's
order and a snapshot still shows one text. A ``compact_boundary`` and the summary after it
are one checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from sessionref.claude_code.prompts import COMMAND_OUTPUT, block_texts, prompt_of
from sessionref.claude_code.records import Block, Line
from sessionref.claude_code.server_results import server_result_text
from sessionref.log.jsonl import built, iso_millis, raw_text
from sessionref.transcript import Entry, EntryKind, Role, first_line, line_title, message_text


def _tool_output(block: Block) -> str:
    """A tool result's text: its string content or the text of its blocks."""
    content = built(block.content)
    if type(content) is list:
        return "\n".join(
            item["text"]
            for item in content
            if type(item) is dict and item.get("type") == "text" and type(item.get("text")) is str
        )
    return content if type(content) is str else ""


class _FirstPrompt:
    """The title a chain's first prompt gives, told as the person's texts come in order:
    a slash command Claude Code's resume picker passes over (a built-in one, one without
    arguments: :attr:`~sessionref.claude_code.prompts.Prompt.titles`) is passed over; the
    first one titles a chain that has no prompt, by its name alone."""

    def __init__(self) -> None:
        self.line: str | None = None  # the first line of the first prompt, once read
        self.command: str | None = None  # the first slash command before it

    def found(self) -> bool:
        """Whether the first prompt has been read (no later text can change the title)."""
        return self.line is not None

    def typed(self, text: str, command: str | None) -> None:
        """The next text the person typed; ``command``: the slash command it records, when
        it is one the title passes over."""
        if self.line is not None:
            return
        if command is None:
            self.line = first_line(text)
        elif self.command is None:
            self.command = command

    def title(self) -> str | None:
        """The first prompt's :func:`~sessionref.transcript.line_title`, else (none, or one
        too long to show) the first slash command's."""
        return line_title(self.line) or line_title(self.command)


class _Builder:
    """Entries of a chain, built line by line; with ``texts_only``, only what a snapshot
    shows (user and assistant texts, checkpoints), nothing else built. What the person
    typed is told to ``title`` too."""

    def __init__(self, texts_only: bool, title: _FirstPrompt) -> None:
        self.texts_only = texts_only
        self.title = title
        self.entries: list[Entry] = []
        self.tools: dict[str, str] = {}
        self.message_id: object = None
        self.text_at: int | None = None  # the entry holding the current API message's text
        self.said: bool = False  # whether the current API message has had text
        self.boundary_at: int | None = None  # a checkpoint still waiting for its summary
        self.line = Line()

    def put(
        self,
        role: Role,
        kind: EntryKind,
        text: str,
        name: str | None = None,
        continues: bool = False,
        call: object = None,
    ) -> None:
        """Add an entry of the current line (unless only texts are asked for and it is not);
        ``call``, the id of the tool call it makes or answers, is kept when it is a string."""
        if self.texts_only and (kind not in ("text", "checkpoint") or role == "system"):
            return
        time = iso_millis(self.line.timestamp)
        call_id = call if type(call) is str else None
        self.entries.append(Entry(role, kind, text, time, name, continues, call_id))

    def typed(self, text: str, command: str | None = None) -> None:
        """A text the person typed (``command``: the slash command it records, when the title
        passes it over)."""
        self.put("user", "text", text)
        self.title.typed(text, command)

    def add(self, line: Line) -> None:
        """The entries of the next line of the chain (none of a sidechain's)."""
        if line.is_sidechain is True:
            return
        self.line = line
        kind = line.type
        if kind == "assistant":
            self.assistant(line)
            return
        self.message_id = None
        if kind == "user":
            self.user(line)
        elif kind == "system" and line.subtype == "compact_boundary":
            content = built(line.content)
            self.boundary_at = len(self.entries)
            self.put("user", "checkpoint", content if type(content) is str else "")
            return
        elif kind == "attachment":
            attachment = built(line.attachment)
            prompt = attachment.get("prompt") if type(attachment) is dict else None
            if type(prompt) is str and attachment.get("type") == "queued_command":
                self.typed(prompt_of(prompt).typed)
        self.boundary_at = None

    def user(self, line: Line) -> None:
        content = None if line.message is None else line.message.content
        if line.is_compact_summary is True:
            if self.boundary_at is None:
                self.put("user", "checkpoint", block_texts(content))
            else:
                time = iso_millis(line.timestamp)
                summary = Entry("user", "checkpoint", block_texts(content), time)
                self.entries[self.boundary_at] = summary
            return
        results = [
            block
            for block in (content if type(content) is list else ())
            if isinstance(block, Block) and block.type == "tool_result"
        ]
        for block in results if not self.texts_only else ():
            name = self.tools.get(block.tool_use_id) if type(block.tool_use_id) is str else None
            self.put("tool", "tool-result", _tool_output(block), name, call=block.tool_use_id)
        text = block_texts(content)  # a text block beside the results was typed too
        if results and not text:
            return
        if line.is_meta is True:
            self.put("system", "text", text)
            return
        prompt = prompt_of(content)
        if prompt.kind == "output":
            self.put("tool", "tool-result", text, COMMAND_OUTPUT)
        elif prompt.typed:
            self.typed(prompt.typed, None if prompt.titles else prompt.command)

    def assistant(self, line: Line) -> None:
        self.boundary_at = None
        message = line.message
        if message is None:
            return
        if line.is_api_error_message is True:
            self.put("system", "text", block_texts(message.content))
            return
        if message.id is None or message.id != self.message_id:
            self.message_id, self.text_at, self.said = message.id, None, False
        content = message.content
        if type(content) is str:
            self.text(content)
            return
        for block in content or ():
            if isinstance(block, Block):
                if block.type == "text":
                    if type(block.text) is str:
                        self.text(block.text)
                elif not self.texts_only:
                    before = len(self.entries)
                    self.block(block)
                    if len(self.entries) > before:  # text after it goes on in an entry of its own
                        self.text_at = None

    def text(self, text: str) -> None:
        """An assistant text: the current API message's text entry, or more of it; a new
        entry that ``continues`` it when another entry of the message came between."""
        if self.text_at is None:
            self.text_at = len(self.entries)
            self.put("assistant", "text", text, continues=self.said)
            self.said = True
        else:
            last = self.entries[self.text_at]
            joined = message_text((last.text, text))
            self.entries[self.text_at] = msgspec.structs.replace(last, text=joined)

    def block(self, block: Block) -> None:
        """A block of an API message that is not text."""
        if block.type == "thinking":
            thinking = built(block.thinking)
            if type(thinking) is str and thinking:  # newer models sign an empty one
                self.put("assistant", "thinking", thinking)
        elif block.type in ("tool_use", "server_tool_use"):  # server_tool_use: web search …
            name = block.name if type(block.name) is str else None
            if type(block.id) is str and name is not None:
                self.tools[block.id] = name
            self.put("assistant", "tool-call", raw_text(block.input), name, call=block.id)
        elif type(block.type) is str and block.type.endswith("_tool_result"):
            use = block.tool_use_id  # a server tool's result, in the message that called it
            if type(use) is str:
                text = server_result_text(block.type, built(block.content))
                self.put("tool", "tool-result", text, self.tools.get(use), call=use)


def chain_entries(
    lines: Iterable[Line], texts_only: bool = False, before: Iterable[Line] = ()
) -> tuple[list[Entry], str | None]:
    """The entries of the lines of a chain, in order (with ``texts_only``, only user and
    assistant texts and checkpoints), and the title its first prompt gives
    (:class:`_FirstPrompt`): read from the chain's lines ``before`` these, up to that
    prompt only, then from these. Each line is read once.

    >>> from sessionref.claude_code.records import Message
    >>> def said(*blocks):
    ...     return Line(type="assistant", message=Message("m", content=list(blocks)))
    >>> def user(text):
    ...     return Line(type="user", message=Message(content=text))
    >>> chain = [user("hi\\nthere"), said(Block("thinking", thinking="t")),
    ...          said(Block("text", "a")), said(Block("text", "b"))]
    >>> entries, title = chain_entries(chain)
    >>> title, [(e.role, e.kind, e.text) for e in entries[1:]]
    ('hi', [('assistant', 'thinking', 't'), ('assistant', 'text', 'a\\nb')])
    >>> [e.kind for e in chain_entries(chain, texts_only=True)[0]]
    ['text', 'text']
    >>> model = user("<command-name>/model</command-name><command-args>opus</command-args>")
    >>> chain_entries([user("go")], before=[model, user("<bash-input>make</bash-input>")])[1]
    '!make'
    >>> chain_entries([said(Block("text", "a"))], before=[model])[1]
    '/model'
    """
    title = _FirstPrompt()
    skimmed = _Builder(texts_only=True, title=title)  # its entries are not kept
    for line in before:
        if title.found():
            break
        skimmed.add(line)
    builder = _Builder(texts_only, title)
    for line in lines:
        builder.add(line)
    return builder.entries, title.title()
