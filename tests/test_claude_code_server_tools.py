"""Server tools in a Claude Code transcript (docs/harnesses.md §Claude Code §Server tools).

The Messages API runs a server tool itself and writes its call (``server_tool_use``: ``id``,
``name``, ``input``) and its result (a ``*_tool_result`` block: ``tool_use_id``, ``content``)
into the assistant's own message. The shapes below are the API's as its reference and its
SDKs' types give them (anthropic-sdk-python ``src/anthropic/types/``: ``web_fetch_block``,
``code_execution_result_block``, ``encrypted_code_execution_result_block``,
``bash_code_execution_*``, ``text_editor_code_execution_*``, ``tool_search_tool_*``); the
values are this file's own. Each test writes such blocks and reads what the rule says.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sessionref.claude_code.reader import claude_log, claude_transcript
from sessionref.claude_code.server_results import EXCERPT_CHARACTERS, JSON_CHARACTERS
from sessionref.snapshot import snapshot_source
from tests.test_claude_code import SESSION, Chain, shown, text

PAGE = "Shannon was born in Petoskey, Michigan.\nHe died in 2001."


def document(source: dict[str, Any], title: str | None = "Claude Shannon") -> dict[str, Any]:
    return {"type": "document", "source": source, "title": title, "citations": {"enabled": True}}


def fetched(source: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "web_fetch_result",
        "url": "https://example.org/shannon",
        "retrieved_at": "2025-09-10T12:00:00Z",
        "content": document(source),
    }


CASES: list[tuple[str, dict[str, Any], str, Any, str]] = [
    (
        "web_fetch",
        {"url": "https://example.org/shannon"},
        "web_fetch_tool_result",
        fetched({"type": "text", "media_type": "text/plain", "data": PAGE}),
        f"Claude Shannon\nhttps://example.org/shannon\n\n{PAGE}",
    ),
    (  # a PDF's text is for the model: its base64 is never shown
        "web_fetch",
        {"url": "https://example.org/shannon"},
        "web_fetch_tool_result",
        fetched({"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQK"}),
        "Claude Shannon\nhttps://example.org/shannon\n\n(application/pdf document, not shown)",
    ),
    (
        "web_fetch",
        {"url": "http://127.0.0.1/"},
        "web_fetch_tool_result",
        {"type": "web_fetch_tool_result_error", "error_code": "url_not_allowed"},
        "error: url_not_allowed",
    ),
    (
        "code_execution",
        {"code": "print(6 * 7)"},
        "code_execution_tool_result",
        {
            "type": "code_execution_result",
            "stdout": "42\n",
            "stderr": "",
            "return_code": 0,
            "content": [],
        },
        "return code: 0\nstdout:\n42",
    ),
    (  # the stdout of programmatic calls comes encrypted: for the model alone
        "code_execution",
        {"code": "search()"},
        "code_execution_tool_result",
        {
            "type": "encrypted_code_execution_result",
            "encrypted_stdout": "EqQBCioIAxgC",
            "stderr": "warning: slow\n",
            "return_code": 0,
            "content": [],
        },
        "return code: 0\nstdout: (encrypted, for the model alone)\nstderr:\nwarning: slow",
    ),
    (
        "bash_code_execution",
        {"command": "ls nowhere; echo made > out.txt"},
        "bash_code_execution_tool_result",
        {
            "type": "bash_code_execution_result",
            "stdout": "",
            "return_code": 2,
            "stderr": "ls: cannot access 'nowhere'\n",
            "content": [{"type": "bash_code_execution_output", "file_id": "file_011CNha8iCJcU1"}],
        },
        "return code: 2\nstderr:\nls: cannot access 'nowhere'\nfiles: file_011CNha8iCJcU1",
    ),
    (
        "bash_code_execution",
        {"command": "yes"},
        "bash_code_execution_tool_result",
        {"type": "bash_code_execution_tool_result_error", "error_code": "execution_time_exceeded"},
        "error: execution_time_exceeded",
    ),
    (
        "text_editor_code_execution",
        {"command": "view", "path": "/tmp/a.py"},
        "text_editor_code_execution_tool_result",
        {
            "type": "text_editor_code_execution_view_result",
            "file_type": "text",
            "content": "x = 1\n",
            "num_lines": 1,
            "start_line": 1,
            "total_lines": 1,
        },
        "x = 1\n",
    ),
    (
        "text_editor_code_execution",
        {"command": "create", "path": "/tmp/b.py", "file_text": "y = 2\n"},
        "text_editor_code_execution_tool_result",
        {"type": "text_editor_code_execution_create_result", "is_file_update": False},
        "file created",
    ),
    (
        "text_editor_code_execution",
        {"command": "str_replace", "path": "/tmp/a.py", "old_str": "1", "new_str": "2"},
        "text_editor_code_execution_tool_result",
        {
            "type": "text_editor_code_execution_str_replace_result",
            "old_start": 1,
            "old_lines": 1,
            "new_start": 1,
            "new_lines": 1,
            "lines": ["-x = 1", "+x = 2"],
        },
        "@@ -1,1 +1,1 @@\n-x = 1\n+x = 2",
    ),
    (
        "text_editor_code_execution",
        {"command": "view", "path": "/tmp/gone.py"},
        "text_editor_code_execution_tool_result",
        {
            "type": "text_editor_code_execution_tool_result_error",
            "error_code": "file_not_found",
            "error_message": "File not found: /tmp/gone.py",
        },
        "error: file_not_found\nFile not found: /tmp/gone.py",
    ),
    (
        "tool_search_tool_regex",
        {"pattern": "weather"},
        "tool_search_tool_result",
        {
            "type": "tool_search_tool_search_result",
            "tool_references": [
                {"type": "tool_reference", "tool_name": "get_weather"},
                {"type": "tool_reference", "tool_name": "get_forecast"},
            ],
        },
        "get_weather\nget_forecast",
    ),
    (  # a shape not known: its JSON, without what is for the model alone
        "advisor",
        {},
        "advisor_tool_result",
        {"type": "advisor_result", "advice": "use a set", "encrypted_content": "Eo8BCkYIBR"},
        '{"type": "advisor_result", "advice": "use a set"}',
    ),
]


def one_message(*blocks: dict[str, Any]) -> Chain:
    """A prompt, then one API message whose blocks Claude Code writes a line each."""
    chain = Chain()
    chain.user("u1", "go")
    for number, block in enumerate(blocks):
        chain.assistant(f"a{number}", "msg_1", block)
    return chain


def call(name: str, arguments: dict[str, Any], use: str = "srvtoolu_1") -> dict[str, Any]:
    return {"type": "server_tool_use", "id": use, "name": name, "input": arguments}


def result(kind: str, content: Any, use: str | None = "srvtoolu_1") -> dict[str, Any]:
    return {"type": kind, "content": content, **({"tool_use_id": use} if use else {})}


@pytest.mark.parametrize(("name", "arguments", "kind", "content", "expected"), CASES)
def test_a_server_tool_s_result_is_the_result_of_its_call(
    name: str, arguments: dict[str, Any], kind: str, content: Any, expected: str
) -> None:
    transcript = one_message(call(name, arguments), result(kind, content)).transcript()
    entries = [(e.role, e.kind, e.name, e.text) for e in transcript.entries[1:]]
    assert entries == [
        ("assistant", "tool-call", name, json.dumps(arguments)),
        ("tool", "tool-result", name, expected),
    ]
    assert all(secret not in expected for secret in ("JVBERi", "EqQBC", "Eo8BC"))


def test_a_fetched_page_shows_its_start_never_half_a_token() -> None:
    """Of a long page, the first :data:`EXCERPT_CHARACTERS` characters at most, and how
    long the page is; the cut falls between words, never inside a run of printable ASCII
    (a key cut in two is no key ``--redact`` recognises)."""
    key = "ghp_" + "A1" * 30
    page = "word " * 98 + key + " and more" * 200
    content = fetched({"type": "text", "media_type": "text/plain", "data": page})
    chain = one_message(call("web_fetch", {}), result("web_fetch_tool_result", content))
    lines = chain.transcript().entries[-1].text.split("\n")
    assert lines[:3] == ["Claude Shannon", "https://example.org/shannon", ""]
    excerpt = lines[3]
    assert excerpt.endswith("…") and page.startswith(excerpt[:-1])
    assert len(excerpt) <= EXCERPT_CHARACTERS and "ghp_" not in excerpt
    assert lines[4:] == [f"({len(page)} characters in all)"]


def test_an_unknown_result_is_bounded_json() -> None:
    """A shape not known shows as JSON whatever it holds: cut at :data:`JSON_CHARACTERS`
    (with the JSON's whole length), and written only so deep."""
    big = {"type": "future_result", "items": [f"item {n}" for n in range(2000)]}
    deep: Any = "bottom"
    for _ in range(200):
        deep = {"next": deep}
    chain = one_message(
        call("future", {}),
        result("future_tool_result", big),
        call("future", {}, "srvtoolu_2"),
        result("future_tool_result", deep, "srvtoolu_2"),
    )
    first, second = (e.text for e in chain.transcript().entries if e.kind == "tool-result")
    written = json.dumps(big)
    excerpt, _, total = first.rpartition("\n")
    assert total == f"({len(written)} characters in all)"
    assert len(excerpt) <= JSON_CHARACTERS and written.startswith(excerpt.removesuffix("…"))
    assert "bottom" not in second and second.startswith('{"next": {"next": ')
    assert json.loads(second)  # still JSON: the levels below the bound are one "…"


def test_a_result_that_names_no_call_is_no_entry() -> None:
    content = {"type": "code_execution_result", "stdout": "x", "return_code": 0}
    chain = one_message(
        call("code_execution", {}), result("code_execution_tool_result", content, None)
    )
    assert [e.kind for e in chain.transcript().entries] == ["text", "tool-call"]


def test_texts_keep_their_place_around_server_tools_and_a_snapshot_is_unchanged() -> None:
    """Text, a call, its result, more text, all one API message: the transcript keeps that
    order (each later text ``continues`` the one before); a snapshot shows the message's
    text as one, joined by a line end, byte for byte as if the server blocks were not there."""
    search = call("web_search", {"query": "shannon"})
    found = result("web_search_tool_result", [{"type": "web_search_result", "title": "T",
        "url": "https://t.example", "encrypted_content": "Eq"}])  # fmt: skip
    run = call("code_execution", {"code": "1+1"}, "srvtoolu_2")
    ran = result("code_execution_tool_result",
        {"type": "code_execution_result", "stdout": "2", "stderr": "", "return_code": 0,
         "content": []}, "srvtoolu_2")  # fmt: skip
    lines = [[text("Let me search."), search], [found, text("Found it.")], [run, ran],
             [text("It is 2."), text("Done.")]]  # fmt: skip
    with_tools, without = Chain(), Chain()
    for chain in (with_tools, without):
        chain.user("u1", "go")
    for number, blocks in enumerate(lines):
        with_tools.assistant(f"a{number}", "msg_1", *blocks)
        without.assistant(f"a{number}", "msg_1", *(b for b in blocks if b["type"] == "text"))
    entries = with_tools.transcript().entries[1:]
    assert [(e.kind, e.text if e.kind == "text" else e.name, e.continues) for e in entries] == [
        ("text", "Let me search.", False),
        ("tool-call", "web_search", False),
        ("tool-result", "web_search", False),
        ("text", "Found it.", True),
        ("tool-call", "code_execution", False),
        ("tool-result", "code_execution", False),
        ("text", "It is 2.\nDone.", True),
    ]
    joined = "Let me search.\nFound it.\nIt is 2.\nDone."
    assert shown(without.transcript()) == [("user", "go"), ("assistant", joined)]
    lean = claude_transcript(SESSION, with_tools.encoded(), texts_only=True)
    assert shown(lean) == [("user", "go"), ("assistant", joined)]
    snapshots = [
        snapshot_source(claude_log(SESSION, chain.encoded()), "label", 4096).data_json
        for chain in (with_tools, without)
    ]
    assert snapshots[0] == snapshots[1]
    assert json.loads(snapshots[0])["conversation"][-1]["text"] == joined
