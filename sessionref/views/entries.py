"""What an export shows of a transcript: the entries chosen by the options, tool calls
gathered into groups, and each text split into prose and fenced code.

>>> from sessionref.transcript import Entry, joined_texts
>>> entries = [Entry("user", "text", "hi"), Entry("assistant", "tool-call", "{}", name="ls"),
...            Entry("tool", "tool-result", "a.py", name="ls"),
...            Entry("assistant", "tool-call", "{}", name="ls")]
>>> [type(item).__name__ for item in view_items(entries, ViewOptions())]
['Entry', 'ToolGroup']
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Final, Literal

import msgspec

from sessionref.controls import BIDI_CONTROLS, CONTROLS
from sessionref.errors import instance
from sessionref.transcript import Entry, Transcript, joined_texts

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


class ViewOptions(msgspec.Struct, frozen=True):
    """What an export includes beyond the conversation: tool output (``tools``) and the
    model's reasoning (``reasoning``)."""

    tools: bool = False
    reasoning: bool = False


def view_arguments(
    transcript: Transcript, options: ViewOptions, view: str
) -> tuple[Transcript, ViewOptions]:
    """The arguments of the view ``view``, checked: INVALID_CONFIG naming the argument and
    the kind given, at the call (a view is lazy, and would fail deep inside at first use).

    >>> view_arguments(Transcript("s", "dsh", None, None, None, []), None, "markdown_chunks")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: markdown_chunks options must be a ViewOptions, \
not NoneType
    """
    return (
        instance(transcript, Transcript, f"{view} transcript", "a Transcript"),
        instance(options, ViewOptions, f"{view} options", "a ViewOptions"),
    )


class ToolCall(msgspec.Struct):
    """One tool call: its tool, its arguments (``None`` for an output whose call is not in
    the run, or that answers none, such as a command's output), and its output once known
    (``None``: none given, or not asked for)."""

    name: str
    arguments: str | None
    time: int | None
    output: str | None = None
    call: str | None = None


class ToolGroup(msgspec.Struct):
    """Consecutive tool calls (and their results), shown as one collapsed line by name."""

    calls: list[ToolCall]

    def counts(self) -> list[tuple[str, int]]:
        """Each tool's name and how many calls it got, in order of first call.

        >>> ToolGroup([ToolCall("a", "", None), ToolCall("b", "", None),
        ...            ToolCall("a", "", None)]).counts()
        [('a', 2), ('b', 1)]
        """
        counts: dict[str, int] = {}
        for call in self.calls:
            counts[call.name] = counts.get(call.name, 0) + 1
        return list(counts.items())


ViewItem = Entry | ToolGroup
UNNAMED_TOOL: Final = "tool"


def shown(entry: Entry, options: ViewOptions) -> bool:
    """Whether an export shows ``entry``: reasoning only with ``reasoning``, tool output
    only with ``tools``.

    >>> shown(Entry("assistant", "thinking", "hm"), ViewOptions()), shown(
    ...     Entry("assistant", "thinking", "hm"), ViewOptions(reasoning=True))
    (False, True)
    """
    if entry.kind == "thinking":
        return options.reasoning
    if entry.kind == "tool-result":
        return options.tools
    return True


def view_items(entries: Iterable[Entry], options: ViewOptions) -> Iterator[ViewItem]:
    """The entries an export shows, in order, with each run of tool calls and results
    gathered into one :class:`ToolGroup` (a result joins the call it names, else the earliest
    call of its tool that has none yet), and a text that continues the one before it joined
    to it when nothing shown came between (:func:`~sessionref.transcript.joined_texts`).
    Lazy: one group or text at a time is held.

    >>> said = [Entry("assistant", "text", "a"), Entry("assistant", "thinking", "hm"),
    ...         Entry("assistant", "text", "b", continues=True)]
    >>> [item.text for item in view_items(said, ViewOptions())]
    ['a\\nb']
    >>> len(list(view_items(said, ViewOptions(reasoning=True))))
    3
    """
    group: ToolGroup | None = None
    for entry in joined_texts(entry for entry in entries if shown(entry, options)):
        if entry.kind in ("tool-call", "tool-result"):
            group = group or ToolGroup([])
            _add_to_group(group, entry)
            continue
        if group is not None:
            yield group
            group = None
        yield entry
    if group is not None:
        yield group


def nothing_shown(transcript: Transcript) -> str:
    """What an export says where its entries would be when it shows none, so that a page
    with nothing under its header is not taken for a failed export: the session holds no
    messages, or only reasoning and tool output, which are shown when asked.

    >>> nothing_shown(Transcript("s", "dsh", None, None, None, []))
    'This session holds no messages.'
    >>> thought = [Entry("assistant", "thinking", "")]
    >>> nothing_shown(Transcript("s", "dsh", None, None, None, thought))
    'Nothing shown: this session holds only reasoning or tool output (--reasoning, --tools).'
    """
    if not transcript.entries:
        return "This session holds no messages."
    return "Nothing shown: this session holds only reasoning or tool output (--reasoning, --tools)."


def _answers(result: Entry, call: ToolCall) -> bool:
    """Whether ``result`` may answer ``call``: by the call's id when both carry one, else
    by the tool's name (a result without a name may answer any call).

    >>> call = ToolCall("ls", "{}", None, call="t1")
    >>> _answers(Entry("tool", "tool-result", "", name="ls", call="t2"), call)
    False
    >>> _answers(Entry("tool", "tool-result", ""), call), _answers(
    ...     Entry("tool", "tool-result", "", name="cat"), ToolCall("ls", "{}", None))
    (True, False)
    """
    if result.call and call.call:
        return call.call == result.call
    return not result.name or call.name == result.name


def _add_to_group(group: ToolGroup, entry: Entry) -> None:
    """Add a tool call or result to ``group``: a result to the first call still waiting
    that it answers (:func:`_answers`), else as a call of its own without arguments (its
    call is not in this run, or was never logged).

    >>> group = ToolGroup([ToolCall("ls", "{}", None)])
    >>> _add_to_group(group, Entry("tool", "tool-result", "a.py", name="ls"))
    >>> _add_to_group(group, Entry("tool", "tool-result", "b.py", name="ls"))
    >>> [(call.arguments, call.output) for call in group.calls]
    [('{}', 'a.py'), (None, 'b.py')]
    """
    name = entry.name or UNNAMED_TOOL
    if entry.kind == "tool-call":
        group.calls.append(ToolCall(name, entry.text, entry.time, call=entry.call))
        return
    waiting = (call for call in group.calls if call.output is None and _answers(entry, call))
    call = next(waiting, None)
    if call is None:
        group.calls.append(ToolCall(name, None, entry.time, entry.text))
        return
    call.output = entry.text


def format_time(milliseconds: int | None) -> str:
    """A time as people read it, in UTC to the second ('' when there is none).

    >>> format_time(1_700_000_000_000), format_time(None)
    ('2023-11-14 22:13:20 UTC', '')
    """
    if milliseconds is None:
        return ""
    try:
        moment = datetime.datetime.fromtimestamp(milliseconds / 1000, datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return f"{milliseconds} ms"
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


_LANGUAGE: Final = re.compile(r"[A-Za-z0-9_+#.-]{1,32}")


class Segment(msgspec.Struct, frozen=True):
    """A piece of a message's text: ``prose`` (shown as written) or fenced ``code``
    (``info``: the fence's whole info string as a viewer reads it, its backslash escapes
    and character references resolved, white space at its ends trimmed)."""

    kind: Literal["prose", "code"]
    text: str
    info: str = ""

    def language(self) -> str:
        """The info string's first word when it is a plain name (letters, digits and
        ``_ + # . -``, at most 32), the class a page gives the code; else ''.

        >>> Segment("code", "", 'py title="a b"').language(), Segment("code", "", "<x>").language()
        ('py', '')
        """
        words = self.info.split(maxsplit=1)
        return words[0] if words and _LANGUAGE.fullmatch(words[0]) else ""


@functools.lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    """CommonMark's block structure only (built once; inline markup is never needed here)."""
    from markdown_it import MarkdownIt  # only when an export runs

    return MarkdownIt("commonmark").disable(["inline", "text_join"])


def segments(text: str) -> list[Segment]:
    """``text`` split into prose and the fenced code blocks of its top level, as CommonMark
    (markdown-it-py) finds them; a fence left open runs to the end of the text. Line ends
    are normalized to ``\\n``.

    >>> [(s.kind, s.text, s.info) for s in segments("run:\\n```sh\\nls\\n```\\ndone")]
    [('prose', 'run:', ''), ('code', 'ls\\n', 'sh'), ('prose', 'done', '')]
    >>> segments('``` py  title="a\\\\_b" &amp; \\nx')[0].info
    'py  title="a_b" &'
    >>> [(s.kind, s.text) for s in segments("a\\n~~~\\nopen fence\\n\\n# b")]
    [('prose', 'a'), ('code', 'open fence\\n\\n# b')]
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "```" not in text and "~~~" not in text:  # no fence can open: all prose
        return [Segment("prose", text.strip("\n"))] if text.strip("\n") else []
    from markdown_it.common.utils import unescapeAll  # only when an export runs

    lines = text.split("\n")
    pieces: list[Segment] = []
    start = 0
    for token in _block_parser().parse(text):
        if token.type != "fence" or token.level != 0 or token.map is None:
            continue
        first, end = token.map
        if first > start:
            pieces.append(Segment("prose", "\n".join(lines[start:first]).strip("\n")))
        pieces.append(Segment("code", token.content, unescapeAll(token.info).strip()))
        start = end
    if start < len(lines) and (start > 0 or text):
        pieces.append(Segment("prose", "\n".join(lines[start:]).strip("\n")))
    return [piece for piece in pieces if piece.kind == "code" or piece.text]


def visible_bidi(text: str) -> str:
    """``text`` with each bidi embedding, override and isolate control (U+202A–U+202E,
    U+2066–U+2069) written as its escape, ``\\u202e``: left as it is, it would reorder the
    rest of its line in a viewer, so that what is read is not what is there (Trojan Source).

    >>> print(visible_bidi("if x \\u202e{ admin }\\u2066 end"))
    if x \\u202e{ admin }\\u2066 end
    >>> visible_bidi("\\u200f marks are kept")  # a mark, not a control: it overrides nothing
    '\\u200f marks are kept'
    """
    return text.translate(BIDI_CONTROLS)


def visible_controls(text: str) -> str:
    """``text`` with each control character but tab, line feed and carriage return written
    as its escape, ``\\u001b``: HTML takes none of them (a NUL, an ESC are parse errors).

    >>> visible_controls("a\\x1b[2J b\\x00c\\x85\\r\\n")
    'a\\\\u001b[2J b\\\\u0000c\\\\u0085\\r\\n'
    """
    return text.translate(CONTROLS)
