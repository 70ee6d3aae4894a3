"""The lines of a Claude Code chain as transcript entries (docs/harnesses.md §Claude Code).

User text is what a person typed: a ``user`` line that is not ``isMeta`` (those the harness
injected), not a tool result, not a sidechain; slash commands and ``!`` shell input are shown
as typed (``/name args``, ``!command``), their output and what the harness or IDE wrapped into
a prompt (``<system-reminder>`` …) are not user text. Assistant text is the text blocks of
one API message, whose blocks Claude Code writes on several lines sharing ``message.id``; a
text after another entry of its message (a server tool's call and result, between the texts
the model wrote before and after it) is an entry of its own that ``continues`` the text
before it, so the transcript keeps the message's order and a snapshot still shows one text.
A ``compact_boundary`` and the summary after it are one checkpoint.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Final

import msgspec

from sessionref.claude_code.records import Block, Content, Line
from sessionref.claude_code.server_results import server_result_text
from sessionref.log.jsonl import built, iso_millis, raw_text
from sessionref.transcript import Entry, EntryKind, Role, first_prompt_title, message_text

_INJECTED_TAG: Final = re.compile(
    r"<(/?)(system-reminder|ide_opened_file|ide_selection|ide_diagnostics|task-notification"
    r"|teammate-message)(?:\s+[\w-]+=(?:\"[^\"<]*\"|'[^'<]*'))*\s*>"
)
"""An opening or closing tag of what the harness or an IDE wraps into a prompt; a tag may
carry quoted attributes (``<teammate-message teammate_id="a" summary="x > y">``)."""
_COMMAND_TAG: Final = re.compile(r"\s*<(command-[a-z]+)>")
_WRAPPED: Final = re.compile(r"\A\s*<(bash-input|user-memory-input)>(.*?)</\1>\s*\Z", re.S)
_OUTPUT: Final = re.compile(
    r"\A\s*<(bash-stdout|bash-stderr|local-command-stdout|local-command-stderr)>", re.S
)
_INTERRUPTED: Final = frozenset(
    {"[Request interrupted by user]", "[Request interrupted by user for tool use]"}
)
_TYPED_PREFIX: Final = {"bash-input": "!", "user-memory-input": "#"}


def block_texts(content: Content, each: Callable[[str], str] | None = None) -> str:
    """The text of ``content``: the string, or its ``text`` blocks joined by a newline
    (images and other blocks show nothing); with ``each``, each text as ``each`` gives it,
    a block it empties left out.

    >>> block_texts([Block("text", "a"), Block("image"), "x", Block("text", "b")])
    'a\\nb'
    >>> block_texts([Block("text", "a"), Block("text", "b")], lambda text: text.strip("b"))
    'a'
    """
    if type(content) is str:
        return content if each is None else each(content)
    if type(content) is not list:
        return ""
    texts = [
        block.text
        for block in content
        if isinstance(block, Block) and block.type == "text" and type(block.text) is str
    ]
    if each is not None:
        texts = [shown for text in texts if (shown := each(text)) or not text]
    return "\n".join(texts)


def command_tags(text: str) -> dict[str, str] | None:
    """The ``<command-*>`` tags of a prompt made of them alone (blanks between them aside),
    by name, the first of a name winning; ``None`` when the prompt holds anything else, as a
    person's prompt that mentions such a tag does. Linear: a tag ends at the first closing
    tag of its name, found with ``str.find``.

    >>> command_tags("<command-message>m</command-message>\\n <command-name>/m</command-name>")
    {'command-message': 'm', 'command-name': '/m'}
    >>> command_tags("see <command-name>/m</command-name>"), command_tags("<command-name>/m")
    (None, None)
    """
    tags: dict[str, str] = {}
    at = 0
    while (tag := _COMMAND_TAG.match(text, at)) is not None:
        name = tag.group(1)
        end = text.find(f"</{name}>", tag.end())
        if end < 0:
            return None
        tags.setdefault(name, text[tag.end() : end])
        at = end + len(name) + 3
    return None if text[at:].strip() else tags


def _injected_blocks(text: str) -> list[tuple[int, int]]:
    """Where the blocks of ``text`` wrapped in an injected tag start and end, in order: each
    from its opening tag to the first closing tag of its name; one pass.

    >>> _injected_blocks("a<ide_selection>b<system-reminder></ide_selection>c")
    [(1, 50)]
    """
    blocks: list[tuple[int, int]] = []
    open_at, open_name = 0, None
    for tag in _INJECTED_TAG.finditer(text):
        closing, name = tag.groups()
        if open_name is None and not closing:
            open_at, open_name = tag.start(), name
        elif open_name == name and closing:
            blocks.append((open_at, tag.end()))
            open_name = None
    return blocks


def without_injected(text: str) -> str:
    """``text`` (one text block of a prompt) without what a harness or an IDE wrapped into
    it: the injected blocks (:func:`_injected_blocks`) at its start and at its end, where
    Claude Code puts them, with nothing but blanks and other such blocks between them and
    the end; the rest stripped of the blanks at its ends. A block with the person's words
    on both sides (mid-sentence, in a code span, in a fenced example) was typed, and stays.

    >>> without_injected("<ide_selection>y</ide_selection>fix\\n<ide_selection>x</ide_selection>")
    'fix'
    >>> without_injected("fix `<system-reminder>x</system-reminder>`, and <system-reminder>y")
    'fix `<system-reminder>x</system-reminder>`, and <system-reminder>y'
    >>> without_injected('<teammate-message teammate_id="a">done</teammate-message>ok')
    'ok'
    """
    if "<" not in text:
        return text
    blocks = _injected_blocks(text)
    start, end = 0, len(text)
    for open_at, close_end in blocks:
        if text[start:open_at].strip():
            break
        start = close_end
    for open_at, close_end in reversed(blocks):
        if close_end <= start or text[close_end:end].strip():
            break
        end = open_at
    return text if (start, end) == (0, len(text)) else text[start:end].strip()


def typed_text(content: Content) -> tuple[str, bool]:
    """What a person typed into a prompt the harness wrote (its text blocks without what
    was injected into them, :func:`without_injected`), and whether it is a prompt at all
    (``False`` for the output of a shell or local command).

    >>> typed_text("<command-name>/review</command-name><command-args>a.py</command-args>")
    ('/review a.py', True)
    >>> typed_text("<bash-input>ls</bash-input>"), typed_text("<bash-stdout>x</bash-stdout>")
    (('!ls', True), ('', False))
    >>> typed_text("<local-command-stderr>Unknown effort: huge</local-command-stderr>")
    ('', False)
    >>> typed_text("fix it<system-reminder>be brief</system-reminder>")
    ('fix it', True)
    >>> typed_text("why <command-name>/x</command-name>?")
    ('why <command-name>/x</command-name>?', True)
    >>> typed_text([Block("text", "<ide_opened_file>a.py</ide_opened_file>"), Block("text", "go")])
    ('go', True)
    """
    text = block_texts(content, without_injected)
    if _OUTPUT.match(text):
        return "", False
    tags = command_tags(text) if text.lstrip().startswith("<command-") else None
    if tags is not None and "command-name" in tags:
        name = tags["command-name"].strip()
        typed = name if name.startswith("/") else f"/{name}"
        arguments = tags.get("command-args", "").strip()
        return (f"{typed} {arguments}" if arguments else typed), True
    wrapped = _WRAPPED.match(text)
    if wrapped is not None:
        return _TYPED_PREFIX[wrapped.group(1)] + wrapped.group(2), True
    return ("", True) if text in _INTERRUPTED else (text, True)


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


class _Builder:
    """Entries of a chain, built line by line; with ``texts_only``, only what a snapshot
    shows (user and assistant texts, checkpoints), nothing else built."""

    def __init__(self, texts_only: bool) -> None:
        self.texts_only = texts_only
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

    def add(self, line: Line) -> None:
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
                self.put("user", "text", typed_text(prompt)[0])
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
        typed, prompt = typed_text(content)
        if not prompt:
            self.put("tool", "tool-result", text)
        elif typed:
            self.put("user", "text", typed)

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


def first_prompt(lines: Iterable[Line]) -> str | None:
    """The title the first prompt of a chain's lines gives, read up to it.

    >>> from sessionref.claude_code.records import Message
    >>> first_prompt([Line(type="user", message=Message(content="hi\\nthere"))])
    'hi'
    """
    builder = _Builder(texts_only=True)
    chain = (line for line in lines if line.is_sidechain is not True)
    return first_prompt_title(chain, builder.add, builder.entries)


def chain_entries(lines: Iterable[Line], texts_only: bool = False) -> list[Entry]:
    """The entries of the lines of a chain, in order (with ``texts_only``, only user and
    assistant texts and checkpoints).

    >>> from sessionref.claude_code.records import Message
    >>> def said(*blocks):
    ...     return Line(type="assistant", message=Message("m", content=list(blocks)))
    >>> chain = [Line(type="user", message=Message(content="hi")),
    ...          said(Block("thinking", thinking="t")), said(Block("text", "a")),
    ...          said(Block("text", "b"))]
    >>> [(e.role, e.kind, e.text) for e in chain_entries(chain)]
    [('user', 'text', 'hi'), ('assistant', 'thinking', 't'), ('assistant', 'text', 'a\\nb')]
    >>> [e.kind for e in chain_entries(chain, texts_only=True)]
    ['text', 'text']
    """
    builder = _Builder(texts_only)
    for line in lines:
        if line.is_sidechain is not True:
            builder.add(line)
    return builder.entries
