"""The views for every harness: a Claude Code or Codex session exports through the same views
(they read only its Transcript), and ``show``'s picture of it agrees with its snapshot."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionref.claude_code.reader import claude_log, claude_transcript
from sessionref.codex.reader import codex_log, codex_transcript
from sessionref.errors import BUDGET_EXCEEDED, SessionReferenceError
from sessionref.log.builder import LogBuilder
from sessionref.log.store import MemoryStore
from sessionref.testing.claude_logs import HarnessLog, claude_code_logs
from sessionref.testing.codex_logs import codex_rollouts
from sessionref.transcript import Transcript
from sessionref.views.entries import ToolGroup, ViewOptions, view_items
from sessionref.views.html import export_html_chunks
from sessionref.views.markdown import markdown_chunks
from sessionref.views.picture import check_agreement, snapshot_picture
from tests.conftest import examples
from tests.test_claude_code import Chain, parallel_reads
from tests.test_views_markdown import bidi_escaped, blocks


def either_log() -> st.SearchStrategy[tuple[str, HarnessLog]]:
    return st.tuples(st.just("claude-code"), claude_code_logs()) | st.tuples(
        st.just("codex"), codex_rollouts()
    )


@settings(max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck))
@given(either_log(), st.integers(200, 3000))
def test_other_harnesses_export_and_show(generated: tuple[str, HarnessLog], budget: int) -> None:
    harness, log = generated
    if harness == "claude-code":
        transcript, session = claude_transcript("s", log.lines), claude_log("s", log.lines)
    else:
        transcript = codex_transcript("s", log.lines, None)
        session = codex_log("s", log.lines, None)
    options = ViewOptions(tools=True, reasoning=True)
    document = "".join(markdown_chunks(transcript, options))
    headings = [value for kind, value in blocks(document) if kind == "h3"]
    assert len(headings) == len(list(view_items(transcript.entries, options)))
    assert blocks(document)[1][1].startswith(f"Session s · {harness}")
    page = "".join(export_html_chunks(transcript, options))
    assert page.count('<article class="entry') == sum(
        1
        for e in transcript.entries
        if e.kind in ("text", "checkpoint", "thinking") and e.role != "system"
    )
    try:
        picture = snapshot_picture(session, "s", budget)
    except SessionReferenceError as error:
        assert error.code == BUDGET_EXCEEDED
        return
    check_agreement(picture)
    assert [(row.role, row.text) for row in picture.rows] == [
        ("user" if kind != "assistant" else "assistant", text) for kind, text in log.surface
    ]


def test_a_server_tool_s_call_and_result_are_shown_as_tool_calls_are() -> None:
    """A web search's call and results show with ``--tools`` as any call does: by name, with
    its input and output as code; a result's title or URL is text, never markup or a link."""
    hostile = "```\n# forged</div><script>alert(1)</script>"
    use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}
    result = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [{"type": "web_search_result", "title": hostile, "url": "javascript:x()"}],
    }
    content = [{**use, "input": {"query": "q"}}, result]
    message = {"id": "m", "role": "assistant", "content": content}
    lines = [
        json.dumps({"type": "user", "uuid": "u", "message": {"role": "user", "content": "go"}}),
        json.dumps({"type": "assistant", "uuid": "a", "parentUuid": "u", "message": message}),
    ]
    transcript = claude_transcript("s", [line.encode() for line in lines])
    options = ViewOptions(tools=True)
    document = "".join(markdown_chunks(transcript, options))
    assert blocks(document)[5:] == [
        ("h3", "Tools"),
        ("p", "web_search"),
        ("p", "web_search"),
        ("code", ('{"query": "q"}\n', "")),
        ("p", "Output:"),
        ("code", (f"{hostile}\njavascript:x()\n", "")),
    ]
    collapsed = "".join(markdown_chunks(transcript, ViewOptions()))
    assert blocks(collapsed)[5:] == [("h3", "Tools"), ("p", "web_search")]
    page = "".join(export_html_chunks(transcript, options))
    assert "&lt;/div&gt;&lt;script&gt;" in page and "<script" not in page
    assert "javascript:x()" in page and "href" not in page


def assistant_line(uuid: str, parent: str, *blocks: dict[str, Any]) -> bytes:
    """A line of one API message (``msg_1``), as Claude Code writes each block of it."""
    message = {"id": "msg_1", "role": "assistant", "content": list(blocks)}
    line = {"type": "assistant", "uuid": uuid, "parentUuid": parent, "message": message}
    return json.dumps(line).encode()


def one_message(*blocks: dict[str, Any]) -> Transcript:
    prompt = {"type": "user", "uuid": "u", "message": {"role": "user", "content": "go"}}
    lines = [json.dumps(prompt).encode()]
    for number, block in enumerate(blocks):
        lines.append(assistant_line(f"a{number}", "u" if number == 0 else f"a{number - 1}", block))
    return claude_transcript("s", lines)


def test_texts_around_a_server_tool_show_in_the_message_s_order() -> None:
    """Text, a web fetch's call and its result, more text, all one API message: the export
    shows them in that order, with ``--tools`` and without; the fetched page's hostile text
    (a fence, a heading, tags, a link, a bidi override) is the result's code, shown as it is
    but for the override, never markup or a link (docs/views.md)."""
    hostile = "```\n# forged\n</div><script>alert(1)</script>\n[x](javascript:y) \u202eevil"
    page = {
        "type": "web_fetch_result",
        "url": "https://e.example/</a>",
        "content": {"type": "document", "title": "T <b>", "source": {"type": "text",
            "media_type": "text/plain", "data": hostile}},
    }  # fmt: skip
    transcript = one_message(
        {"type": "text", "text": "Let me *read* it."},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_fetch", "input": {"url": "u"}},
        {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_1", "content": page},
        {"type": "text", "text": "It says\n# hi"},
    )
    output = f"T <b>\nhttps://e.example/</a>\n\n{bidi_escaped(hostile)}\n"
    document = "".join(markdown_chunks(transcript, ViewOptions(tools=True)))
    assert blocks(document)[5:] == [
        ("h3", "Assistant"),
        ("p", "Let me *read* it."),
        ("h3", "Tools"),
        ("p", "web_fetch"),
        ("p", "web_fetch"),
        ("code", ('{"url": "u"}\n', "")),
        ("p", "Output:"),
        ("code", (output, "")),
        ("h3", "Assistant"),
        ("p", "It says\n# hi"),
    ]
    collapsed = blocks("".join(markdown_chunks(transcript, ViewOptions())))[5:]
    assert collapsed == [
        ("h3", "Assistant"),
        ("p", "Let me *read* it."),
        ("h3", "Tools"),
        ("p", "web_fetch"),
        ("h3", "Assistant"),
        ("p", "It says\n# hi"),
    ]
    html = "".join(export_html_chunks(transcript, ViewOptions(tools=True)))
    assert html.index("Let me *read* it.") < html.index("evil") < html.index("It says")
    assert "&lt;/div&gt;&lt;script&gt;" in html and "<script" not in html and "<b>" not in html
    assert "href" not in html


def test_a_text_continued_after_what_is_not_shown_is_shown_as_one() -> None:
    """Thinking between two texts of one message (interleaved thinking): with
    ``--reasoning`` the three in order; without it the texts are one, as a snapshot has it."""
    transcript = one_message(
        {"type": "text", "text": "First."},
        {"type": "thinking", "thinking": "Hmm.", "signature": "s"},
        {"type": "text", "text": "Second."},
    )
    hidden = [(e.kind, e.text) for e in view_items(transcript.entries, ViewOptions())]
    assert hidden == [("text", "go"), ("text", "First.\nSecond.")]
    reasoning = view_items(transcript.entries, ViewOptions(reasoning=True))
    assert [(e.kind, e.text) for e in reasoning] == [
        ("text", "go"),
        ("text", "First."),
        ("thinking", "Hmm."),
        ("text", "Second."),
    ]


def test_each_parallel_call_shows_its_own_output() -> None:
    """Trial: three parallel reads whose results come back last first (each ``tool_result``
    names its call by ``tool_use_id``) showed a.py's call with c.py's output: the export paired
    a result with the earliest call of its tool's name. A result that names its call is that
    call's output, in Markdown, in HTML and in the transcript's JSON."""
    transcript = parallel_reads().transcript()
    options = ViewOptions(tools=True)
    [group] = [
        item for item in view_items(transcript.entries, options) if isinstance(item, ToolGroup)
    ]
    assert [(json.loads(call.arguments)["file_path"], call.output) for call in group.calls] == [
        ("a.py", "A"),
        ("b.py", "B"),
        ("c.py", "C"),
    ]
    document = "".join(markdown_chunks(transcript, options))
    assert [value[0].rstrip("\n") for kind, value in blocks(document) if kind == "code"] == [
        '{"file_path": "a.py"}',
        "A",
        '{"file_path": "b.py"}',
        "B",
        '{"file_path": "c.py"}',
        "C",
    ]


def paired_outputs(transcript: Transcript) -> list[tuple[str, str | None]]:
    """Each tool call of ``transcript``'s one run of calls, as its arguments and the output
    the views show with it."""
    [group] = [
        item
        for item in view_items(transcript.entries, ViewOptions(tools=True))
        if isinstance(item, ToolGroup)
    ]
    return [(call.arguments, call.output) for call in group.calls]


def test_codex_parallel_calls_show_the_output_their_call_id_names() -> None:
    """Codex pairs a ``function_call_output`` with its ``function_call`` by ``call_id``;
    two parallel shell calls whose outputs come back last first were shown with each other's
    output, paired by tool name."""

    def item(payload: dict[str, Any]) -> bytes:
        line = {"timestamp": "2025-01-01T00:00:01Z", "type": "response_item", "payload": payload}
        return json.dumps(line).encode()

    def call(call_id: str, command: str) -> bytes:
        arguments = json.dumps({"command": ["cat", command]})
        return item({"type": "function_call", "name": "shell", "arguments": arguments,
                     "call_id": call_id})  # fmt: skip

    def output(call_id: str, text: str) -> bytes:
        return item({"type": "function_call_output", "call_id": call_id, "output": text})

    meta = {"id": "0197a000-0000-7000-8000-0000000000aa", "cwd": "/w"}
    lines = [
        json.dumps(
            {"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta", "payload": meta}
        ).encode(),
        call("call_a", "a.py"),
        call("call_b", "b.py"),
        output("call_b", "B"),
        output("call_a", "A"),
    ]
    transcript = codex_transcript(meta["id"], lines, None)
    assert [(json.loads(arguments)["command"][1], shown) for arguments, shown in
            paired_outputs(transcript)] == [("a.py", "A"), ("b.py", "B")]  # fmt: skip


def test_dsh_parallel_calls_show_the_output_their_call_id_names() -> None:
    """A DSH ``tool-result`` block names its call by ``toolCallId``; two parallel calls
    whose results come back last first were shown with each other's output."""
    b = LogBuilder(time=1000)
    b.turn_start()
    b.user("read both")
    b.step_start()
    calls = [("c1", '{"path":"a.py"}'), ("c2", '{"path":"b.py"}')]
    b.assistant([{"type": "tool-call", "id": i, "name": "read", "arguments": a} for i, a in calls])
    for call_id, arguments in calls:
        b.tool_call(call_id, "read", arguments)
    b.tool_result("c2", "B")
    b.tool_result("c1", "A")
    b.step_end()
    b.turn_end()
    header = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    transcript = MemoryStore([{"header": header, "events": b.events}]).transcript("s")
    assert paired_outputs(transcript) == [('{"path":"a.py"}', "A"), ('{"path":"b.py"}', "B")]


def test_a_local_command_s_output_is_shown_as_command_output() -> None:
    """A newcomer's trial: ``/cost``'s ``<local-command-stdout>`` answers no tool call
    (docs/harnesses.md: command output), yet ``export --tools`` showed it as a call of a tool
    named "tool" with an empty arguments block. It is shown as command output, its text alone,
    in Markdown and in HTML."""
    stdout = "<local-command-stdout>Total cost: $0.12</local-command-stdout>"
    chain = Chain()
    chain.user("c1", "<command-name>/cost</command-name>\n<command-args></command-args>")
    chain.user("o1", stdout)
    chain.user("u1", "thanks")
    transcript = chain.transcript()
    options = ViewOptions(tools=True)
    document = "".join(markdown_chunks(transcript, options))
    shown = [(kind, value) for kind, value in blocks(document)[2:] if kind != "hr"]
    assert [
        (kind, value[0] if kind == "code" else value.split(" · ")[0]) for kind, value in shown
    ] == [
        ("h3", "User"),
        ("p", "/cost"),
        ("h3", "Tools"),
        ("p", "command output"),
        ("p", "command output"),
        ("p", "Output:"),
        ("code", stdout + "\n"),
        ("h3", "User"),
        ("p", "thanks"),
    ]
    page = "".join(export_html_chunks(transcript, options))
    assert '<span class="call-name">command output</span>' in page
    assert '<span class="call-name">tool</span>' not in page
    assert page.count("<pre><code>") == 1
