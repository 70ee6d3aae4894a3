"""A transcript as Markdown that renders as written in any CommonMark viewer (docs/views.md).

Session text never becomes Markdown structure: prose is written with every character that
could start markup escaped (so ``# x``, ``</div>``, ``*x*`` or ``[x]: /u`` show as typed),
line breaks kept as hard breaks, and each fenced code block of a message is written as a
fence longer than any run of backticks inside it, so code stays code and cannot swallow
what follows. Bidi controls, which would reorder a line in a viewer, are written as their
escapes everywhere (:func:`visible_bidi`). Written piece by piece (:func:`markdown_chunks`),
in time linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from sessionref.codecs.jsstring import utf8_length
from sessionref.transcript import Entry, Transcript
from sessionref.views.entries import (
    ToolGroup,
    ViewOptions,
    format_time,
    nothing_shown,
    segments,
    view_arguments,
    view_items,
    visible_bidi,
)

_MARKUP: Final = re.compile(r"[\\`*_{}\[\]<>()#+\-!|~&=:$^]")
_ORDERED: Final = re.compile(r"^(\d{1,9})([.)])")
_BACKTICKS: Final = re.compile(r"`+")
_UNREFERABLE: Final = frozenset("\x0b\x1c\x1d\x1e\x1f\x85")
_INFO_REFERENCES: Final = re.compile(r"[\\&<>`\n\r]")
_INFO_NAMED: Final = {"\\": "\\\\", "&": "&amp;", "<": "&lt;", ">": "&gt;"}
HEADINGS: Final = {
    ("user", "text"): "User",
    ("user", "checkpoint"): "Checkpoint (compaction summary)",
    ("assistant", "text"): "Assistant",
    ("assistant", "thinking"): "Assistant thinking",
    ("system", "text"): "Context injected by the harness",
}
"""The heading of each kind of entry; tool calls are headed ``Tools``."""


def code_spans(line: str) -> Iterator[tuple[int, int]]:
    """Where the code spans of one line start and end, delimiters included, as CommonMark
    pairs backtick runs (a run is closed by the next run of the same length). A span whose
    content starts and ends with a space is left out, as a viewer would trim it.

    >>> list(code_spans("a `b` ``c`d`` `e")), list(code_spans("` x `"))
    ([(2, 5), (6, 13)], [])
    """
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(line)]
    following: dict[int, int] = {}  # run length -> index of the next run that long
    closer: list[int | None] = [None] * len(runs)
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        closer[index] = following.get(length)
        following[length] = index
    index = 0
    while index < len(runs):
        match = closer[index]
        if match is None:
            index += 1
            continue
        start, end = runs[index][0], runs[match][1]
        content = line[runs[index][1] : runs[match][0]]
        if not (content.startswith(" ") and content.endswith(" ") and content.strip(" ")):
            yield start, end
        index = match + 1


def _references(space: str) -> str:
    """White space as numeric character references, which no viewer trims; the control
    characters CommonMark will not take as references (U+000B, U+001C–U+001F, U+0085) stay
    as they are.

    >>> _references(" \\t\\u3000\\x1c")
    '&#32;&#9;&#12288;\\x1c'
    """
    return "".join(c if c in _UNREFERABLE else f"&#{ord(c)};" for c in space)


def _escaped(text: str) -> str:
    return _MARKUP.sub(r"\\\g<0>", text)


def escape_line(line: str) -> str:
    """One line of prose that Markdown shows exactly as written: code spans kept, every other
    markup character backslash-escaped, white space at either end written as character
    references (a viewer would drop it, or read indentation as code), bidi controls as
    their escapes (:func:`visible_bidi`).

    >>> escape_line("# not a *heading*"), escape_line("  1. x "), escape_line("</div>")
    ('\\\\# not a \\\\*heading\\\\*', '&#32;&#32;1\\\\. x&#32;', '\\\\</div\\\\>')
    >>> escape_line("run `ls *` now"), escape_line("1) item")
    ('run `ls *` now', '1\\\\) item')
    """
    line = visible_bidi(line)
    body = line.strip()
    if not body:
        return _references(line)
    start = line.index(body[0])
    lead, trail = line[:start], line[start + len(body) :]
    pieces, done = [], 0
    for span_start, span_end in code_spans(body):
        pieces += [_escaped(body[done:span_start]), body[span_start:span_end]]
        done = span_end
    pieces.append(_escaped(body[done:]))
    escaped = _ORDERED.sub(r"\1\\\2", "".join(pieces))
    return _references(lead) + escaped + _references(trail)


def prose(text: str) -> str:
    """Prose as Markdown paragraphs: each line escaped, lines of a paragraph joined by hard
    breaks, paragraphs (separated by empty lines) by one blank line.

    >>> print(prose("a\\nb\\n\\n\\nc"))
    a\\
    b
    <BLANKLINE>
    c
    """
    paragraphs = re.split(r"\n(?:\n)+", text)
    return "\n\n".join(
        "\\\n".join(escape_line(line) for line in _shown_lines(paragraph))
        for paragraph in paragraphs
        if paragraph
    )


def _shown_lines(paragraph: str) -> list[str]:
    """The lines of a paragraph, but for its last lines that hold only U+000B: a viewer trims
    U+000B at a paragraph's end (it cannot be written as a reference), which would leave the
    hard break before them as a stray backslash.

    >>> _shown_lines("a\\n\\x0b\\n\\x0b"), _shown_lines("\\x0b\\nb"), _shown_lines("\\x0b")
    (['a'], ['\\x0b', 'b'], ['\\x0b'])
    """
    lines = paragraph.split("\n")
    while len(lines) > 1 and not lines[-1].strip("\x0b"):
        lines.pop()
    return lines


def info_string(info: str) -> str:
    """An info string (as a viewer reads it) written so a fence line reads back the same and
    stays one line: backslashes escaped; ``&``, ``<``, ``>``, backticks (which a backtick
    fence's info string may not hold) and line ends (which would let the rest start a
    block of its own) as character references; bidi controls as their escapes
    (:func:`visible_bidi`).

    >>> print(info_string('py title="a`b" <x>&#10;\\\\ \\n# h'))
    py title="a&#96;b" &lt;x&gt;&amp;#10;\\\\ &#10;# h
    """
    return _INFO_REFERENCES.sub(_info_reference, visible_bidi(info))


def _info_reference(character: re.Match[str]) -> str:
    """The character reference an info string writes the matched character as: its name when
    it has one, else its number.

    >>> _info_reference(re.match("<", "<")), _info_reference(re.match("`", "`"))
    ('&lt;', '&#96;')
    """
    return _INFO_NAMED.get(character[0]) or f"&#{ord(character[0])};"


def fenced(code: str, info: str = "") -> str:
    """A fenced code block holding ``code`` exactly but for its bidi controls, written as
    their escapes (:func:`visible_bidi`): its fence is longer than any run of backticks
    inside; its info string is written by :func:`info_string`.

    >>> print(fenced("a ``` b\\n", 'py title="x"'))
    ````py title="x"
    a ``` b
    ````
    """
    code, info = visible_bidi(code), info_string(info)
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    body = code if code.endswith("\n") or not code else code + "\n"
    return f"{fence}{info}\n{body}{fence}"


def body(text: str) -> str:
    """A message's text: prose escaped, fenced code kept as code."""
    return "\n\n".join(
        prose(piece.text) if piece.kind == "prose" else fenced(piece.text, piece.info)
        for piece in segments(text)
    )


def _heading(title: str, time: int | None) -> str:
    when = format_time(time)
    return f"### {title}" + (f" · {when}" if when else "")


def _single_line(text: str) -> str:
    """A text that must stay one line (a title, an id, a cwd, a tool's name), its runs of
    white space and line ends as one space, escaped as prose: a line end in it would let
    the rest start a block of its own (a heading, a list, indented code).

    >>> _single_line("ls\\n\\n# forged\\n\\n1. x")
    'ls \\\\# forged 1. x'
    """
    return escape_line(" ".join(text.split()))


def _entry(entry: Entry) -> str:
    heading = _heading(HEADINGS.get((entry.role, entry.kind), entry.kind), entry.time)
    if entry.role == "system":
        return f"{heading}\n\n{utf8_length(entry.text)} bytes, not shown\n\n"
    return f"{heading}\n\n{body(entry.text)}\n\n"


def _tools(group: ToolGroup, options: ViewOptions) -> str:
    names = ", ".join(
        _single_line(name) + (f" ×{count}" if count > 1 else "") for name, count in group.counts()
    )
    parts = [f"{_heading('Tools', group.calls[0].time)}\n\n{names}\n\n"]
    if options.tools:
        for call in group.calls:
            parts.append(f"{_single_line(call.name)}\n\n")
            if call.arguments is not None:
                parts.append(f"{fenced(call.arguments)}\n\n")
            if call.output is not None:
                parts.append(f"Output:\n\n{fenced(call.output)}\n\n")
    return "".join(parts)


def markdown_chunks(transcript: Transcript, options: ViewOptions) -> Iterator[str]:
    """The Markdown of ``transcript``, one piece per entry (see the module's doc).

    >>> from sessionref.transcript import Entry, Transcript
    >>> t = Transcript("s", "dsh", "Fix <b>", None, None, [Entry("user", "text", "# hi")])
    >>> print("".join(markdown_chunks(t, ViewOptions())))
    # Fix \\<b\\>
    <BLANKLINE>
    Session s · dsh
    <BLANKLINE>
    ---
    <BLANKLINE>
    ### User
    <BLANKLINE>
    \\# hi
    <BLANKLINE>
    <BLANKLINE>
    >>> markdown_chunks(t, {"tools": True})
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: markdown_chunks options must be a ViewOptions, not dict
    """
    return _markdown_chunks(*view_arguments(transcript, options, "markdown_chunks"))


def _markdown_chunks(transcript: Transcript, options: ViewOptions) -> Iterator[str]:
    """:func:`markdown_chunks` once its arguments are checked."""
    title = transcript.title if transcript.title is not None else transcript.session_id
    facts = [f"Session {_single_line(transcript.session_id)}", transcript.harness]
    if transcript.cwd is not None:
        facts.append(_single_line(transcript.cwd))
    if transcript.created_at is not None:
        facts.append(f"started {format_time(transcript.created_at)}")
    yield f"# {_single_line(title)}\n\n{' · '.join(facts)}\n\n---\n\n"
    shown = False
    for item in view_items(transcript.entries, options):
        shown = True
        yield _tools(item, options) if isinstance(item, ToolGroup) else _entry(item)
    if not shown:
        yield f"{escape_line(nothing_shown(transcript))}\n"
