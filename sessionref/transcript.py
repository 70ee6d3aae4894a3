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

from typing import Literal

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


def prompt_title(entries: list[Entry]) -> str | None:
    """A title from the first thing the user typed: its first non-blank line, stripped, cut
    to :data:`TITLE_LENGTH` characters with ``…``; ``None`` when the user typed nothing.

    >>> prompt_title([Entry("assistant", "text", "hi"),
    ...               Entry("user", "text", "\\n fix the build \\nnow")])
    'fix the build'
    >>> len(prompt_title([Entry("user", "text", "x" * 200)]))
    80
    """
    for entry in entries:
        if entry.role == "user" and entry.kind == "text":
            for line in entry.text.splitlines():
                if line.strip():
                    title = line.strip()
                    cut = TITLE_LENGTH - 1
                    return title if len(title) <= TITLE_LENGTH else title[:cut] + "…"
    return None
