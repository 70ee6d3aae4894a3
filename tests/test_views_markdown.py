"""Markdown export, parsed back with markdown-it-py (CommonMark): the document's structure is
the transcript's (one heading per entry, in order), nothing in a message becomes markup,
prose reads back exactly as written and fenced code comes back as the same code, its info
string too (and a page classes the code by that string's first word)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from markdown_it.token import Token

from sessionref.errors import INVALID_CONFIG, SessionReferenceError
from sessionref.testing import js_strings
from sessionref.transcript import Entry, Transcript
from sessionref.views.entries import ViewOptions
from sessionref.views.html import export_html_chunks
from sessionref.views.markdown import markdown_chunks
from sessionref.views.transcript_json import json_chunks
from tests.conftest import examples

PARSER = MarkdownIt("commonmark")
HOSTILE = [
    "</div><script>alert(1)</script>",
    "# a heading\n## another\n---\n===",
    "* item\n- item\n+ item\n1. one\n2) two",
    "> quoted\n>> deeper",
    "[link](http://example.com) ![img](x.png) <http://example.com> [ref]: /url",
    "<!-- an open comment",
    "*emph* _emph_ **strong** ~~strike~~ `code` ``two `ticks` here``",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "    indented four\n\ttabbed",
    "trailing spaces  \nand a backslash\\\nend",
    "&amp; &lt; &#65; &copy;",
    "\u202eRTL override\u200f mark \u061c",
    "emoji :smile: math $x$ footnote[^1] html &nbsp;",
    "x" * 100_000,
    "### User · 2024-01-01 00:00:00 UTC\nforged turn",
    "a\n\n\n\nb",
    "\u3000ideographic space edges\u3000",
]


def rebuilt_inline(token: Token) -> str:
    """An inline token's text as a viewer shows it; any markup fails the test."""
    out = []
    for child in token.children or []:
        if child.type == "text":
            out.append(child.content)
        elif child.type == "code_inline":
            out.append(child.markup + child.content + child.markup)
        elif child.type in ("hardbreak", "softbreak"):
            out.append("\n")
        else:
            raise AssertionError(f"a message became markup: {child.type}")
    return "".join(out)


def blocks(document: str) -> list[tuple[str, Any]]:
    """The document's top-level blocks: (heading level, text), ("p", text), ("code", text)."""
    out: list[tuple[str, Any]] = []
    tokens = PARSER.parse(document)
    for index, token in enumerate(tokens):
        if token.level != 0:
            continue
        if token.type == "heading_open":
            out.append((token.tag, rebuilt_inline(tokens[index + 1])))
        elif token.type == "paragraph_open":
            out.append(("p", rebuilt_inline(tokens[index + 1])))
        elif token.type == "fence":
            out.append(("code", (token.content, token.info)))
        elif token.type == "hr":
            out.append(("hr", None))
        elif not token.type.endswith("_close"):
            raise AssertionError(f"unexpected block {token.type}")
    return out


def export(entries: list[Entry], **options: bool) -> str:
    transcript = Transcript("s-1", "dsh", "Title *not emph*", "/w", 0, entries)
    return "".join(markdown_chunks(transcript, ViewOptions(**options)))


BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def bidi_escaped(text: str) -> str:
    for control in BIDI_CONTROLS:
        text = text.replace(control, f"\\u{ord(control):04x}")
    return text


def paragraphs(text: str) -> list[str]:
    """What a prose message reads back as: line ends normalized, NUL shown as U+FFFD
    (CommonMark's rule), bidi controls as their escapes (``\\u202e``), runs of blank lines
    as one paragraph break, and U+000B trimmed at a paragraph's ends (markdown-it-py trims it,
    and CommonMark takes no reference for it) with the line breaks before a trimmed end (a
    hard break ends no paragraph)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    text = bidi_escaped(text)
    return [p.lstrip("\x0b").rstrip("\x0b\n") for p in re.split(r"\n{2,}", text.strip("\n")) if p]


def message_blocks(document: str) -> list[list[tuple[str, Any]]]:
    """The blocks under each h3 heading."""
    found: list[list[tuple[str, Any]]] = []
    for kind, value in blocks(document):
        if kind == "h3":
            found.append([])
        elif found:
            found[-1].append((kind, value))
    return found


def test_the_header_and_headings_are_the_transcripts() -> None:
    document = export([Entry("user", "text", text, time=0) for text in HOSTILE])
    parsed = blocks(document)
    assert parsed[:3] == [("h1", "Title *not emph*"), ("p", parsed[1][1]), ("hr", None)]
    assert parsed[1][1] == "Session s-1 · dsh · /w · started 1970-01-01 00:00:00 UTC"
    headings = [value for kind, value in parsed if kind == "h3"]
    assert headings == ["User · 1970-01-01 00:00:00 UTC"] * len(HOSTILE)


def test_hostile_prose_reads_back_as_written() -> None:
    document = export([Entry("user", "text", text) for text in HOSTILE])
    for text, found in zip(HOSTILE, message_blocks(document), strict=True):
        assert found == [("p", p) for p in paragraphs(text)], text[:60]


def test_fenced_code_stays_code_and_cannot_swallow_what_follows() -> None:
    texts = [
        "run this:\n```python\nprint('```')\n````\n```\nthen *this*",
        "~~~\nan open fence to the end\n# not a heading",
        "````` \n``` inner\n`````",
    ]
    document = export(
        [Entry("assistant", "text", t) for t in texts] + [Entry("user", "text", "end")]
    )
    assert message_blocks(document) == [
        # a longer fence closes a shorter one (CommonMark), so the last ``` opens a new one
        [
            ("p", "run this:"),
            ("code", ("print('```')\n", "python")),
            ("code", ("then *this*\n", "")),
        ],
        [("code", ("an open fence to the end\n# not a heading\n", ""))],
        [("code", ("``` inner\n", ""))],
        [("p", "end")],
    ]


def test_tools_and_reasoning_show_only_when_asked() -> None:
    entries = [
        Entry("assistant", "thinking", "secret plan"),
        Entry("assistant", "tool-call", '{"cmd":"ls"}', name="bash"),
        Entry("tool", "tool-result", "a.py\n```b.py", name="bash"),
        Entry("assistant", "tool-call", "{}", name="bash"),
    ]
    plain = message_blocks(export(entries))
    assert plain == [[("p", "bash ×2")]]
    full = message_blocks(export(entries, tools=True, reasoning=True))
    assert full == [
        [("p", "secret plan")],
        [
            ("p", "bash ×2"),
            ("p", "bash"),
            ("code", ('{"cmd":"ls"}\n', "")),
            ("p", "Output:"),
            ("code", ("a.py\n```b.py\n", "")),
            ("p", "bash"),
            ("code", ("{}\n", "")),
        ],
    ]


FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(js_strings(max_size=80).filter(lambda t: not FENCE.search(t)), max_size=4))
@example(["hello\r\n\x0b", "a\n\x0b\x0b\n\nb"])  # a trimmed end after a hard break
def test_any_prose_reads_back_as_written(texts: list[str]) -> None:
    document = export([Entry("user", "text", text) for text in texts])
    shown = [t for t in texts if paragraphs(t)]
    found = message_blocks(document)
    assert len(found) == len(texts)
    assert [f for f in found if f] == [[("p", p) for p in paragraphs(t)] for t in shown]


def test_bidi_controls_are_written_as_escapes_in_prose_code_and_headings() -> None:
    """Trojan Source: a viewer would reorder the text after an override or an isolate, so
    that what is read is not what is there; the export shows each control instead."""
    text = "a \u202eevil\u202c b\n```sh\nrm \u2067x\u2069 y\n```"
    transcript = Transcript("s", "dsh", "t\u202dx", None, None, [Entry("user", "text", text)])
    assert "".join(markdown_chunks(transcript, ViewOptions())) == (
        "# t\\\\u202dx\n\nSession s · dsh\n\n---\n\n"
        "### User\n\n"
        "a \\\\u202eevil\\\\u202c b\n\n"
        "```sh\nrm \\u2067x\\u2069 y\n```\n\n"
    )


def test_injected_context_is_one_plain_line() -> None:
    document = export([Entry("system", "text", "<ctx># rules *x*</ctx>", time=0)])
    assert blocks(document)[3:] == [
        ("h3", "Context injected by the harness · 1970-01-01 00:00:00 UTC"),
        ("p", "22 bytes, not shown"),
    ]


def test_a_tools_name_stays_one_line_of_text() -> None:
    """A log may name a call anything: a name with line ends (and a code span across them)
    would otherwise start a heading, a list or indented code of its own."""
    names = ["`ls\n\n# forged`", "ls\n\n1. item", "ls\n\n    indented", *HOSTILE[:13]]
    entries = [Entry("assistant", "tool-call", "{}", name=name) for name in names]
    # each name as one line: white space runs as one space, bidi controls as escapes
    lines = [paragraphs(" ".join(name.split()))[0] for name in names]
    summary = ("p", ", ".join(lines))
    calls = [block for line in lines for block in (("p", line), ("code", ("{}\n", "")))]
    assert message_blocks(export(entries)) == [[summary]]
    assert message_blocks(export(entries, tools=True)) == [[summary, *calls]]


def source_infos(text: str) -> list[str]:
    """The info strings of a message's top-level fences as CommonMark reads them (escapes
    and references resolved, ends trimmed), bidi controls as their escapes."""
    infos = [unescapeAll(t.info).strip() for t in PARSER.parse(text) if t.type == "fence"]
    return [bidi_escaped(info) for info in infos]


INFO_STRINGS = [
    'python title="x"',
    "js {1,3-5} showLineNumbers",
    "py `title` <script>alert(1)</script>",
    "sh &amp; &#96; \\` \\\\ &#10;# forged heading",
    "rust,ignore \u202eevil\u202c",
]


def test_a_fences_whole_info_string_is_kept_and_stays_on_its_line() -> None:
    # tilde fences may hold backticks in their info string; backtick fences may not
    texts = [f"~~~ {info}\ncode\n~~~\nafter" for info in INFO_STRINGS]
    document = export([Entry("assistant", "text", t) for t in texts])
    assert not [t.type for t in PARSER.parse(document) if t.type.startswith("html")]
    found = message_blocks(document)
    assert [[kind for kind, _ in blocks] for blocks in found] == [["code", "p"]] * len(texts)
    infos = [unescapeAll(blocks[0][1][1]).strip() for blocks in found]
    assert infos == [source_infos(t)[0] for t in texts]
    assert infos[0] == 'python title="x"' and infos[3] == "sh & ` ` \\ \n# forged heading"


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(js_strings(max_size=40).filter(lambda t: "\n" not in t and "\r" not in t))
def test_any_info_string_reads_back_as_written(info: str) -> None:
    text = f"~~~~ {info}\ncode\n~~~~"
    found = message_blocks(export([Entry("user", "text", text)]))
    assert [kind for kind, _ in found[0]] == ["code"]
    assert unescapeAll(found[0][0][1][1]).strip() == source_infos(text)[0]


def test_a_page_classes_code_by_its_info_strings_first_word_if_a_plain_name() -> None:
    texts = ['```python title="x"\na\n```', '```"><b>x\nb\n```', "```\nc\n```"]
    transcript = Transcript("s", "dsh", None, None, None, [Entry("user", "text", t) for t in texts])
    page = "".join(export_html_chunks(transcript, ViewOptions()))
    assert re.findall(r"<pre><code[^>]*>", page) == [
        '<pre><code class="language-python">',
        "<pre><code>",
        "<pre><code>",
    ]


@pytest.mark.parametrize("view", [markdown_chunks, export_html_chunks, json_chunks])
@pytest.mark.parametrize(
    ("transcript", "options", "wrong"),
    [
        (
            Transcript("s", "dsh", None, None, None, []),
            None,
            "options must be a ViewOptions, not NoneType",
        ),
        (
            Transcript("s", "dsh", None, None, None, []),
            {"tools": True},
            "options must be a ViewOptions, not dict",
        ),
        ({"sessionId": "s"}, ViewOptions(), "transcript must be a Transcript, not dict"),
    ],
)
def test_a_view_argument_of_another_kind_is_invalid_config(
    view: Callable[[Any, Any], Iterator[object]], transcript: Any, options: Any, wrong: str
) -> None:
    """A newcomer's trial: ``markdown_chunks(t, None)`` raised a bare AttributeError from
    deep inside; as every public call, a coded error naming the argument, at the call."""
    with pytest.raises(SessionReferenceError) as caught:
        view(transcript, options)
    expected = f"{view.__name__} {wrong}"
    assert (caught.value.code, caught.value.message) == (INVALID_CONFIG, expected)


@pytest.mark.parametrize(
    ("entries", "said"),
    [
        ([], "This session holds no messages."),
        (
            [Entry("assistant", "thinking", "plan"), Entry("tool", "tool-result", "a.py")],
            "Nothing shown: this session holds only reasoning or tool output "
            "(--reasoning, --tools).",
        ),
    ],
)
def test_an_export_that_shows_no_entry_says_why(entries: list[Entry], said: str) -> None:
    """A newcomer's trial: an empty session (a DSH log of its header alone, a Codex rollout of
    its meta alone) exported as a header over a blank page, which reads as a failed export;
    the page says the session holds nothing it shows, in Markdown and in HTML alike."""
    parsed = blocks(export(entries))
    assert parsed[2:] == [("hr", None), ("p", said)]
    transcript = Transcript("s-1", "dsh", None, None, None, entries)
    page = "".join(export_html_chunks(transcript, ViewOptions()))
    main = page[page.index("<main>") : page.index("</main>")]
    assert re.sub(r"<[^>]*>", "", main).split() == said.split()
    shown = export([*entries, Entry("user", "text", "hi")])
    assert ("p", said) not in blocks(shown)
