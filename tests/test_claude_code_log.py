"""A reader no one here wrote as the check: claude-code-log 1.7 (a test-only dependency) reads
the same Claude Code and Codex files, and its user and assistant texts, in order, are held
against sessionref's (docs/harnesses.md §Differences from claude-code-log).

Both views are compared as runs: consecutive texts of one role joined by a newline (the
other reader shows each line of a streamed API message on its own; sessionref joins them).
Every other place the views differ is a documented, deliberate difference, pinned below by a
test of its own; the normalizations that bridge them are named where they are applied.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from claude_code_log import converter as ccl_converter
from claude_code_log.json import renderer as ccl_json
from claude_code_log.providers import codex as ccl_codex
from hypothesis import HealthCheck, assume, given, settings

from sessionref.claude_code.reader import claude_transcript
from sessionref.codex.reader import codex_transcript
from sessionref.testing.claude_logs import HarnessLog, claude_code_logs
from sessionref.testing.codex_logs import codex_rollouts
from sessionref.transcript import Transcript
from tests.conftest import examples

SESSION = "11111111-2222-4333-8444-555555555555"
ROLLOUT = "rollout-2025-06-15T10-00-00-0197a000-0000-7000-8000-000000000001.jsonl"
Texts = list[tuple[str, str]]
_LONE = re.compile("[\ud800-\udfff]")
_IMAGE_PLACEHOLDER = "{'type': 'image'"
_SERVER_TOOL_PLACEHOLDER = re.compile(r"\{'type': '(?:server_tool_use|[a-z_]+_tool_result)'")
_INJECTED = ("<environment_context>", "<user_instructions>")


def runs(texts: Texts) -> Texts:
    """Consecutive texts of one role joined by a newline."""
    joined: Texts = []
    for role, text in texts:
        if joined and joined[-1][0] == role:
            joined[-1] = (role, joined[-1][1] + "\n" + text)
        else:
            joined.append((role, text))
    return joined


def placeholder(text: str) -> bool:
    """Whether claude-code-log wrote ``text`` for a block it does not read: an image, which
    sessionref does not show, or a server tool's call or result (its Python ``repr``), which
    sessionref shows as a tool call and its result (differences 6 and 10)."""
    return text.startswith(_IMAGE_PLACEHOLDER) or _SERVER_TOOL_PLACEHOLDER.match(text) is not None


def rendered_texts(messages: list[dict[str, Any]], placeholders: bool = False) -> Texts:
    """The user and assistant texts of claude-code-log's rendered tree, depth first (its
    :func:`placeholder` texts only with ``placeholders``)."""
    texts: Texts = []
    for message in messages:
        if message["type"] in ("user", "assistant"):
            items = message["content"].get("items") or []
            pieces = [
                item["text"]
                for item in items
                if item.get("type") == "text" and (placeholders or not placeholder(item["text"]))
            ]
            if pieces:
                texts.append((message["type"], "\n".join(pieces)))
        texts += rendered_texts(message.get("children") or [], placeholders)
    return texts


def ccl_claude_view(content: bytes, placeholders: bool = False) -> Texts:
    directory = Path(tempfile.mkdtemp())
    path = directory / f"{SESSION}.jsonl"
    path.write_bytes(content)
    out = ccl_converter.convert_jsonl_to(
        "json",
        path,
        directory / "out.json",
        use_cache=False,
        silent=True,
        generate_individual_sessions=False,
    )
    messages = json.loads(out.read_text("utf-8", "surrogatepass"))["messages"]
    return rendered_texts(messages, placeholders)


def ccl_codex_view(content: bytes) -> Texts:
    path = Path(tempfile.mkdtemp()) / ROLLOUT
    path.write_bytes(content)
    entries = list(ccl_codex.CodexProvider().load_session_from_path(path))
    rendered = ccl_json.JsonRenderer().generate(entries)
    return rendered_texts(json.loads(rendered)["messages"])


def ours(transcript: Transcript, lone: str | None = "?", checkpoints: bool = True) -> Texts:
    """sessionref's texts, a checkpoint as the user text the other reader shows it as (none
    without ``checkpoints``), and a lone surrogate as the ``?`` its Claude Code reader reads
    one as (``lone=None``: kept)."""
    return [
        (
            "user" if entry.kind == "checkpoint" else entry.role,
            entry.text if lone is None else _LONE.sub(lone, entry.text),
        )
        for entry in transcript.entries
        if (entry.kind == "text" or (checkpoints and entry.kind == "checkpoint"))
        and entry.role in ("user", "assistant")
    ]


def claude_lines(*records: dict[str, Any]) -> bytes:
    stamped = []
    for number, record in enumerate(records, 1):
        base = {
            "isSidechain": False,
            "userType": "external",
            "cwd": "/w",
            "sessionId": SESSION,
            "version": "2.1.0",
            "timestamp": f"2025-06-01T10:00:{number:02}.000Z",
        }
        stamped.append(json.dumps({**base, **record}))
    return "".join(line + "\n" for line in stamped).encode()


def prompt(uuid: str, parent: str | None, text: str) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "message": {"role": "user", "content": text},
    }


def answer(uuid: str, parent: str, text: str) -> dict[str, Any]:
    message = {
        "id": f"m-{uuid}",
        "type": "message",
        "role": "assistant",
        "model": "claude",
        "content": [{"type": "text", "text": text}],
        "usage": {"input_tokens": 1},
    }
    return {"type": "assistant", "uuid": uuid, "parentUuid": parent, "message": message}


@settings(max_examples=examples(25), deadline=None, suppress_health_check=list(HealthCheck))
@given(claude_code_logs(rewinds=False, replays=False))
def test_claude_code_texts_agree_on_generated_files(log: HarnessLog) -> None:
    assert runs(ours(claude_transcript(SESSION, log.lines))) == runs(ccl_claude_view(log.content))


def test_claude_code_texts_agree_on_a_hand_written_session() -> None:
    content = claude_lines(
        prompt("u1", None, "Why does the build fail?"),
        answer("a1", "u1", "The lockfile is stale."),
        prompt("u2", "a1", "Fix it <b>please</b>"),
        answer("a2", "u2", "Done: regenerated package-lock.json."),
        {"type": "ai-title", "aiTitle": "Fix the build"},
    )
    view = ccl_claude_view(content)
    assert runs(ours(claude_transcript(SESSION, content.splitlines()))) == runs(view)
    assert view[0] == ("user", "Why does the build fail?")


def test_texts_beside_a_tool_result_agree() -> None:
    # sessionref dropped the text blocks of a user line that also held a tool_result
    call = answer("a1", "u1", "")
    call["message"]["content"] = [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]
    results = prompt("u2", "a1", "")
    results["message"]["content"] = [
        {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"},
        {"type": "text", "text": "stop, use b.py instead"},
    ]
    content = claude_lines(
        prompt("u1", None, "list the files"), call, results, answer("a2", "u2", "Using b.py.")
    )
    view = ccl_claude_view(content)
    assert runs(ours(claude_transcript(SESSION, content.splitlines()))) == runs(view)
    assert ("user", "stop, use b.py instead") in view


def test_difference_a_rewound_branch_is_not_shown() -> None:
    """claude-code-log shows every branch of a rewind; a snapshot shows the session as it
    went on (the current chain), as Claude Code would resume it."""
    content = claude_lines(
        prompt("u1", None, "start"),
        answer("a1", "u1", "ok"),
        prompt("u2", "a1", "abandoned"),
        answer("a2", "u2", "abandoned answer"),
        prompt("u3", "a1", "the path taken"),
        answer("a3", "u3", "kept"),
    )
    mine = ours(claude_transcript(SESSION, content.splitlines()))
    assert ("user", "abandoned") in ccl_claude_view(content)
    assert mine == [
        ("user", "start"),
        ("assistant", "ok"),
        ("user", "the path taken"),
        ("assistant", "kept"),
    ]


def test_local_commands_off_the_caveat_keep_the_conversation_in_both_views() -> None:
    """Claude Code 1.0 hangs a later local command off the caveat line, not off the last
    turn: claude-code-log shows both branches; sessionref puts the commands' branch back
    into the one chain, in file order, so neither drops the conversation."""
    caveat = {
        **prompt("cv", None, "Caveat: The messages below were generated by the user while"),
        "isMeta": True,
    }
    caveat["message"]["content"] += " running local commands. DO NOT respond to these messages."
    content = claude_lines(
        *(
            {**record, "version": "1.0.55"}
            for record in (
                caveat,
                prompt("c1", "cv", "<command-name>/clear</command-name>"),
                prompt("u1", "c1", "fix the login bug"),
                answer("a1", "u1", "fixed"),
                prompt("b1", "cv", "<bash-input>make test</bash-input>"),
                prompt("b2", "b1", "<bash-stdout>ok</bash-stdout>"),
            )
        )
    )
    conversation = [("user", "fix the login bug"), ("assistant", "fixed")]
    mine = ours(claude_transcript(SESSION, content.splitlines()))
    assert mine == [("user", "/clear"), *conversation, ("user", "!make test")]
    view = ccl_claude_view(content)
    assert [text for text in view if text in conversation] == conversation


def test_difference_a_replayed_prompt_is_shown_once() -> None:
    """A sibling written with its parent's other child's time and text (a compaction replay)
    is passed over by walking up from the newest leaf; claude-code-log 1.7 shows the copy too."""
    replay = {**prompt("u2-replay", "a1", "go on"), "timestamp": "2025-06-01T10:00:03.000Z"}
    content = (
        claude_lines(
            prompt("u1", None, "start"),
            answer("a1", "u1", "ok"),
            prompt("u2", "a1", "go on"),
            answer("a2", "u2", "went on"),
        )
        + claude_lines(replay)[:-1].replace(b"10:00:01", b"10:00:03")
        + b"\n"
    )
    mine = ours(claude_transcript(SESSION, content.splitlines()))
    assert mine == [
        ("user", "start"),
        ("assistant", "ok"),
        ("user", "go on"),
        ("assistant", "went on"),
    ]
    assert ccl_claude_view(content).count(("user", "go on")) == 2


def test_difference_slash_commands_and_shell_input_are_user_text() -> None:
    """claude-code-log renders a slash command and ``!`` shell input as messages of their
    own kinds; sessionref shows them as the user typed them."""
    content = claude_lines(
        prompt("u1", None, "<command-name>/review</command-name><command-args>a.py</command-args>"),
        prompt("u2", "u1", "<bash-input>make test</bash-input>"),
    )
    mine = ours(claude_transcript(SESSION, content.splitlines()))
    assert mine == [("user", "/review a.py"), ("user", "!make test")]
    assert ("user", "/review a.py") not in ccl_claude_view(content)


def test_a_teammate_s_message_is_not_user_text_in_either_view() -> None:
    # sessionref showed the <teammate-message> block (agent teams) as if the user typed it
    content = claude_lines(
        prompt("u1", None, "split the work"),
        prompt(
            "u2",
            "u1",
            '<teammate-message teammate_id="alice" summary="a > b">done</teammate-message>',
        ),
        answer("a1", "u2", "Alice is done."),
    )
    view = ccl_claude_view(content)
    assert runs(ours(claude_transcript(SESSION, content.splitlines()))) == runs(view)
    assert view == [("user", "split the work"), ("assistant", "Alice is done.")]


def test_difference_a_local_command_s_error_is_not_user_text() -> None:
    """claude-code-log 1.7 classifies ``<local-command-stdout>`` alone as command output and
    shows a ``<local-command-stderr>`` line as user text; sessionref treats both as output."""
    error = "<local-command-stderr>Unknown effort: huge</local-command-stderr>"
    content = claude_lines(
        prompt("u1", None, "<command-name>/effort</command-name><command-args>huge</command-args>"),
        prompt("u2", "u1", error),
    )
    assert ours(claude_transcript(SESSION, content.splitlines())) == [("user", "/effort huge")]
    assert ("user", error) in ccl_claude_view(content)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=list(HealthCheck))
@given(codex_rollouts(legacy=False, paginated=False))
def test_codex_texts_agree_on_generated_rollouts(log: HarnessLog) -> None:
    # claude-code-log 1.7 reads a legacy thread's events only, not a paginated thread's
    # completed items (docs/harnesses.md §Codex §Each message once)
    # claude-code-log 1.7 raises on a lone surrogate in a prompt that carries injected
    # context (it parses that prompt as XML); such rollouts are left out of the comparison
    assume(not any(b"<environment_context>" in line and b"\\ud" in line for line in log.lines))
    # claude-code-log does not show a compaction's summary (``compacted``); sessionref does
    mine = ours(codex_transcript("t", log.lines, None), lone=None, checkpoints=False)
    theirs = [
        (role, text) for role, text in ccl_codex_view(log.content) if not text.startswith(_INJECTED)
    ]  # claude-code-log shows the model's copy of a prompt that carries injected context
    assert runs(mine) == runs(theirs)


def test_difference_codex_injected_context_and_compaction() -> None:
    """The two places the Codex views differ, on one rollout."""

    def line(kind: str, payload: dict[str, Any]) -> str:
        return json.dumps(
            {"timestamp": "2025-06-01T10:00:00.000Z", "type": kind, "payload": payload}
        )

    content = "".join(
        line(kind, payload) + "\n"
        for kind, payload in [
            ("session_meta", {"id": "t", "cwd": "/w", "timestamp": "2025-06-01T10:00:00.000Z"}),
            (
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {
                            "type": "input_text",
                            "text": "<environment_context>x</environment_context>",
                        },
                        {"type": "input_text", "text": "hi"},
                    ],
                },
            ),
            ("event_msg", {"type": "user_message", "message": "hi"}),
            ("compacted", {"message": "summary of it"}),
            ("event_msg", {"type": "agent_message", "message": "hello"}),
        ]
    ).encode()
    theirs = ccl_codex_view(content)
    assert any(text.startswith("<environment_context>") for _, text in theirs)
    assert ("user", "summary of it") not in theirs
    mine = ours(codex_transcript("t", content.splitlines(), None))
    assert mine == [("user", "hi"), ("user", "summary of it"), ("assistant", "hello")]


def test_difference_a_quoted_injected_tag_is_user_text() -> None:
    """claude-code-log takes every ``<system-reminder>`` pair out of a prompt as an
    annotation; sessionref only those at a text block's start or end, where Claude Code puts
    them, and shows a pair the person quoted with what it holds."""
    quoted = "why does `<system-reminder>be brief</system-reminder>` show up in my log?"
    content = claude_lines(prompt("u1", None, quoted))
    assert ours(claude_transcript(SESSION, content.splitlines())) == [("user", quoted)]
    assert all("be brief" not in text for _, text in ccl_claude_view(content))


def test_difference_a_server_tool_s_blocks_are_a_call_and_its_result() -> None:
    """claude-code-log 1.7 writes a ``server_tool_use`` block and its result block, which it
    does not read, as text (their Python ``repr``) among the message's texts; sessionref shows
    them as a tool call and its result, between the texts they came between."""
    call = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    found = [{"type": "web_search_result", "title": "T", "url": "https://t.example"}]
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": found}
    message = answer("a1", "u1", "Let me look.")
    message["message"]["content"] += [call, result, {"type": "text", "text": "Found it."}]
    content = claude_lines(prompt("u1", None, "search"), message)
    transcript = claude_transcript(SESSION, content.splitlines())
    assert [(e.kind, e.name) for e in transcript.entries if e.kind.startswith("tool")] == [
        ("tool-call", "web_search"),
        ("tool-result", "web_search"),
    ]
    assert runs(ours(transcript)) == [("user", "search"), ("assistant", "Let me look.\nFound it.")]
    assert ccl_claude_view(content) == runs(ours(transcript))  # their placeholders left out
    theirs = runs(ccl_claude_view(content, placeholders=True))[1][1].split("\n")
    assert theirs[0] == "Let me look." and theirs[-1] == "Found it."
    assert theirs[1].startswith("{'type': 'server_tool_use'")
    assert theirs[2].startswith("{'type': 'web_search_tool_result'")
