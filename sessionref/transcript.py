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
from collections.abc import Callable, Iterable
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
    where the log gives none."""

    role: Role
    kind: EntryKind
    text: str
    time: int | None = None
    name: str | None = None


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


TITLE_LENGTH = 80
"""Characters of a first prompt a title keeps (docs/harnesses.md §Titles)."""
_TOKEN_CHARS: Final = "[!-~]"
"""Printable ASCII but the space: the characters of a key or a token."""
_ACROSS_THE_CUT: Final = re.compile(f"{_TOKEN_CHARS}{{2}}")
_TOKEN_END: Final = re.compile(f"{_TOKEN_CHARS}+\\Z")


def cut_title(line: str) -> str:
    """``line`` cut to :data:`TITLE_LENGTH` characters with ``…`` when it is longer, never
    inside a run of printable ASCII: a key or a token the cut falls in is left out whole, as
    its start alone is no key a secret detector recognises (``--redact`` would show it).
    Empty when the line starts with such a run that long.

    >>> cut_title("fix the build")
    'fix the build'
    >>> cut_title("deploy with " + "a" * 30 + " key ghp_" + "x" * 60)
    'deploy with aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa key…'
    >>> cut_title("修复" * 50) == "修复" * 39 + "修…"
    True
    >>> cut_title("sk-" + "x" * 100)
    ''
    """
    if len(line) <= TITLE_LENGTH:
        return line
    kept = line[: TITLE_LENGTH - 1]
    if _ACROSS_THE_CUT.fullmatch(line, TITLE_LENGTH - 2, TITLE_LENGTH):  # inside a run
        kept = _TOKEN_END.sub("", kept)
    kept = kept.rstrip()
    return kept + "…" if kept else ""


def first_prompt_line(entries: list[Entry]) -> str | None:
    """The first non-blank line of the first thing the user typed, stripped; ``None`` when
    the user typed nothing.

    >>> first_prompt_line([Entry("assistant", "text", "hi"),
    ...                    Entry("user", "text", "\\n fix the build \\nnow")])
    'fix the build'
    """
    for entry in entries:
        if entry.role == "user" and entry.kind == "text":
            for line in entry.text.splitlines():
                if line.strip():
                    return line.strip()
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
