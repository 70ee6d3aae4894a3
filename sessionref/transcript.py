"""A session as a person reads it, from any harness: the entries of its current history in
order, each with its role, what kind of entry it is, its text and its time.

Every reader (the DSH log, Claude Code, Codex CLI) can give a :class:`Transcript`; the views
(export, show) read only this, and a reader of another harness derives its snapshot surface
from it, so the seven stages of :mod:`sessionref.snapshot` never learn which harness wrote a
log (docs/harnesses.md).

>>> import msgspec
>>> entry = Entry("assistant", "tool-call", '{"cmd":"ls"}', time=1_700_000_000_000, name="bash")
>>> msgspec.json.encode(entry)
b'{"role":"assistant","kind":"tool-call","text":"{\\\\"cmd\\\\":\\\\"ls\\\\"}","time":1700000000000,"name":"bash"}'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final, Literal, TypeVar

import msgspec

Harness = Literal["dsh", "claude-code", "codex"]
"""The harnesses sessionref reads, by the name ``candidates --json`` gives them."""

HARNESSES: tuple[Harness, ...] = ("dsh", "claude-code", "codex")

Role = Literal["user", "assistant", "tool", "system"]
"""Who an entry is from: ``tool`` for tool output, ``system`` for what the harness injected."""

EntryKind = Literal["text", "checkpoint", "thinking", "tool-call", "tool-result"]
"""What an entry is. ``text``: what a user typed or a model wrote; ``checkpoint``: the summary a
compaction left (role ``user``, as DSH records it); ``thinking``: reasoning, never in a
snapshot; ``tool-call``: a call (``name`` the tool, ``text`` its arguments as JSON text);
``tool-result``: what a tool gave back (``name`` the tool when the log says)."""


class Entry(msgspec.Struct, frozen=True, omit_defaults=True):
    """One entry of a transcript. ``time`` is milliseconds since the Unix epoch, ``None``
    where the log gives none. ``continues``: an assistant text that goes on the text before
    it of the same API message, other entries of that message (a server tool's call and
    result, thinking) having come between; where nothing shown comes between, it is shown
    joined to that text (:func:`joined_texts`), as a snapshot always shows it. ``call``: the
    id of the tool call a ``tool-call`` makes or a ``tool-result`` answers, where the log
    gives one (parallel calls' results come back in the order the tools finish)."""

    role: Role
    kind: EntryKind
    text: str
    time: int | None = None
    name: str | None = None
    continues: bool = False
    call: str | None = None


class Transcript(msgspec.Struct, frozen=True, rename="camel"):
    """A whole session in reading order: the chain a harness would resume, compactions kept
    as their ``checkpoint`` entries.

    ``created_at`` is milliseconds since the epoch; ``title`` the session's title as
    ``candidates`` labels it, ``None`` when it has none.
    """

    session_id: str
    harness: Harness
    title: str | None
    cwd: str | None
    created_at: int | None
    entries: list[Entry]


def message_text(texts: Iterable[str]) -> str:
    """The texts of one message as one text, a line end between each two: how a snapshot
    joins a message's text blocks (:mod:`sessionref.pipeline.unitize`), and so how every
    reader joins the texts of one message and the views the texts that ``continue`` one.

    >>> message_text(["a", "b"]), message_text([])
    ('a\\nb', '')
    """
    return "\n".join(texts)


def joined_texts(entries: Iterable[Entry]) -> Iterator[Entry]:
    """``entries`` with each text that ``continues`` the assistant text right before it
    joined to it by a line end, as one text; lazy, linear (one text held at a time).

    >>> said = [Entry("assistant", "text", "a", 1), Entry("assistant", "tool-call", "{}"),
    ...         Entry("assistant", "text", "c", 3, continues=True)]
    >>> said.insert(1, Entry("assistant", "text", "b", 2, continues=True))
    >>> [(e.kind, e.text, e.time) for e in joined_texts(said)]
    [('text', 'a\\nb', 1), ('tool-call', '{}', None), ('text', 'c', 3)]
    """
    held: list[Entry] = []  # an assistant text and the texts that continue it
    for entry in entries:
        if held and entry.continues and entry.kind == "text":
            held.append(entry)
            continue
        if held:
            yield _joined(held)
        held = [entry] if entry.role == "assistant" and entry.kind == "text" else []
        if not held:
            yield entry
    if held:
        yield _joined(held)


def _joined(texts: list[Entry]) -> Entry:
    """The first of ``texts`` holding all their texts, a line end between each two."""
    if len(texts) == 1:
        return texts[0]
    return msgspec.structs.replace(texts[0], text=message_text(entry.text for entry in texts))


TITLE_LENGTH = 80
"""Characters of a first prompt a title keeps (docs/harnesses.md §Titles)."""
_TOKEN_CHARS: Final = "[!-~]"
"""Printable ASCII but the space: the characters of a key or a token."""
_ACROSS_THE_CUT: Final = re.compile(f"{_TOKEN_CHARS}{{2}}")
_TOKEN_END: Final = re.compile(f"{_TOKEN_CHARS}+\\Z")


def cut_text(text: str, length: int) -> str:
    """``text`` cut to ``length`` characters (``length`` at least 2) with ``…`` when it is
    longer, never inside a run of printable ASCII: a key or a token the cut falls in is left
    out whole, as its start alone is no key a secret detector recognises (``--redact`` would
    show it). Empty when the text starts with such a run that long.

    >>> cut_text("see ghp_" + "x" * 40, 20), cut_text("short", 20)
    ('see…', 'short')
    """
    if len(text) <= length:
        return text
    kept = text[: length - 1]
    if _ACROSS_THE_CUT.fullmatch(text, length - 2, length):  # inside a run
        kept = _TOKEN_END.sub("", kept)
    kept = kept.rstrip()
    return kept + "…" if kept else ""


def cut_title(line: str) -> str:
    """``line`` cut to :data:`TITLE_LENGTH` characters by :func:`cut_text`.

    >>> cut_title("fix the build")
    'fix the build'
    >>> cut_title("deploy with " + "a" * 30 + " key ghp_" + "x" * 60)
    'deploy with aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa key…'
    >>> cut_title("修复" * 50) == "修复" * 39 + "修…"
    True
    >>> cut_title("sk-" + "x" * 100)
    ''
    """
    return cut_text(line, TITLE_LENGTH)


def first_line(text: str) -> str | None:
    """The first non-blank line of ``text``, stripped; ``None`` when it is all blank.

    >>> first_line("\\n fix the build \\nnow"), first_line(" \\n")
    ('fix the build', None)
    """
    return next((stripped for line in text.splitlines() if (stripped := line.strip())), None)


def first_prompt_line(entries: list[Entry]) -> str | None:
    """The first non-blank line of the first thing the user typed (:func:`first_line`);
    ``None`` when the user typed nothing.

    >>> first_prompt_line([Entry("assistant", "text", "hi"),
    ...                    Entry("user", "text", "\\n fix the build \\nnow")])
    'fix the build'
    """
    for entry in entries:
        if entry.role == "user" and entry.kind == "text":
            line = first_line(entry.text)
            if line is not None:
                return line
    return None


def line_title(line: str | None) -> str | None:
    """The title a first prompt's line gives (:func:`first_prompt_line`): the line cut by
    :func:`cut_title`; ``None`` when there is no line, or when it starts with a token too long
    to show whole (the session is then labelled by its id).

    >>> line_title("x " * 100)[-4:], line_title("sk-" + "x" * 100), line_title(None)
    ('x x…', None, None)
    """
    return None if line is None else cut_title(line) or None


Item = TypeVar("Item")


def first_prompt_title(
    items: Iterable[Item], add: Callable[[Item], object], entries: list[Entry]
) -> str | None:
    """:func:`line_title` of the first prompt in ``entries`` as ``add`` extends them with
    ``items``, one at a time: no item after the one holding the prompt is read (a reader's
    title, read from the start of a log it does not otherwise read).

    >>> entries = []
    >>> def add(text):
    ...     entries.append(Entry("user" if text.startswith(">") else "assistant", "text", text))
    >>> first_prompt_title(iter(["hello", "> fix it\\nnow", "later"]), add, entries), len(entries)
    ('> fix it', 2)
    """
    looked = 0
    for item in items:
        add(item)
        prompt = first_prompt_line(entries[looked:])  # only what the item added
        if prompt is not None:
            return line_title(prompt)
        looked = len(entries)
    return None


def prompt_title(entries: list[Entry]) -> str | None:
    """:func:`line_title` of :func:`first_prompt_line`.

    >>> prompt_title([Entry("user", "text", "fix the build")])
    'fix the build'
    """
    return line_title(first_prompt_line(entries))
