"""The Claude Code reader and store against hand-written transcripts (docs/harnesses.md
§Claude Code): each test writes the lines a rule is about and reads what the rule says."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from sessionref import SessionReferenceResolver, Target
from sessionref.claude_code.reader import claude_transcript
from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.codex.store import CodexStore
from sessionref.errors import READ_FAILED, SessionLogError, SessionReferenceError
from sessionref.log.store import SessionNotFound
from sessionref.testing.claude_logs import HarnessLog, claude_code_logs
from sessionref.transcript import Transcript, joined_texts
from tests.conftest import examples

SESSION = "5e55a000-0000-4000-8000-000000000001"


class Chain:
    """Writes the lines of a transcript, each node after the last unless told otherwise."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.clock = 0
        self.last: str | None = None

    def node(self, kind: str, uuid: str, parent: Any = "last", **fields: Any) -> str:
        self.clock += 1
        record = {
            "type": kind,
            "uuid": uuid,
            "parentUuid": self.last if parent == "last" else parent,
            "sessionId": SESSION,
            "cwd": "/work/app",
            "isSidechain": False,
            "timestamp": f"2025-06-01T10:00:{self.clock:02}.000Z",
            **fields,
        }
        self.lines.append(record)
        self.last = uuid
        return uuid

    def user(self, uuid: str, content: Any, **fields: Any) -> str:
        return self.node("user", uuid, message={"role": "user", "content": content}, **fields)

    def assistant(self, uuid: str, message_id: str, *blocks: dict[str, Any], **fields: Any) -> str:
        message = {"id": message_id, "role": "assistant", "content": list(blocks)}
        return self.node("assistant", uuid, message=message, **fields)

    def raw(self, record: dict[str, Any]) -> None:
        self.lines.append(record)

    def encoded(self) -> list[bytes]:
        return [json.dumps(line).encode() for line in self.lines]

    def transcript(self) -> Transcript:
        return claude_transcript(SESSION, self.encoded())


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def shown(transcript: Transcript) -> list[tuple[str, str]]:
    """``(role or "checkpoint", text)`` of what a snapshot may show, in order (a text that
    continues the one before it, a server tool's call between them, joined to it)."""
    texts = [
        e
        for e in transcript.entries
        if e.kind in ("text", "checkpoint") and e.role in ("user", "assistant")
    ]
    return [
        ("checkpoint" if e.kind == "checkpoint" else e.role, e.text) for e in joined_texts(texts)
    ]


def test_one_api_message_over_several_lines_is_one_assistant_text() -> None:
    chain = Chain()
    chain.user("u1", "list the files")
    chain.assistant("a1", "msg_1", {"type": "thinking", "thinking": "hmm", "signature": "x"})
    chain.assistant("a2", "msg_1", text("Let me look."))
    chain.assistant("a3", "msg_1", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}})
    chain.user("r1", [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}])
    chain.assistant("a4", "msg_2", text("One file:"), text("a.py"))
    entries = chain.transcript().entries
    assert [(e.role, e.kind, e.text, e.name) for e in entries] == [
        ("user", "text", "list the files", None),
        ("assistant", "thinking", "hmm", None),
        ("assistant", "text", "Let me look.", None),
        ("assistant", "tool-call", "{}", "Bash"),
        ("tool", "tool-result", "a.py", "Bash"),
        ("assistant", "text", "One file:\na.py", None),
    ]
    assert entries[0].time == 1748772001000


def test_a_thinking_block_with_only_its_signature_is_no_entry() -> None:
    """A currency check: newer models' thinking comes as ``"thinking": ""`` with only a
    signature; ``export --reasoning`` printed an empty "thinking" heading for each."""
    chain = Chain()
    chain.user("u1", "why")
    chain.assistant("a1", "msg_1", {"type": "thinking", "thinking": "", "signature": "s"})
    chain.assistant("a2", "msg_1", text("Because."))
    entries = chain.transcript().entries
    assert [(e.role, e.kind, e.text) for e in entries] == [
        ("user", "text", "why"),
        ("assistant", "text", "Because."),
    ]


def test_the_current_chain_is_the_path_from_the_newest_leaf() -> None:
    chain = Chain()
    chain.user("u1", "first")
    chain.assistant("a1", "m1", text("answer one"))
    chain.user("u2", "abandoned question")
    chain.assistant("a2", "m2", text("abandoned answer"))
    chain.user("u3", "asked again after a rewind", parent="a1")  # a later branch from a1
    chain.assistant("a3", "m3", text("the answer kept"))
    assert shown(chain.transcript()) == [
        ("user", "first"),
        ("assistant", "answer one"),
        ("user", "asked again after a rewind"),
        ("assistant", "the answer kept"),
    ]


CAVEAT = (
    "Caveat: The messages below were generated by the user while running local commands."
    " DO NOT respond to these messages or otherwise consider them in your response unless"
    " the user explicitly asks you to."
)


def local_commands_first() -> Chain:
    """What Claude Code 1.0 writes (claude-code-log's real-project fixtures, 1.0.55): the
    caveat as the root, a local command and its output hung off it, the conversation after
    them; a later local command is hung off the caveat again, not off the last turn."""
    chain = Chain()
    chain.user("cv", CAVEAT, parent=None, isMeta=True)
    chain.user(
        "c1", "<command-name>/clear</command-name>\n<command-message>clear</command-message>"
    )
    chain.user("o1", "<local-command-stdout></local-command-stdout>")
    chain.user("u1", "fix the login bug")
    chain.assistant("a1", "m1", text("fixed"))
    chain.user("b1", "<bash-input>make test</bash-input>", parent="cv")
    chain.user("b2", "<bash-stdout>ok</bash-stdout><bash-stderr></bash-stderr>")
    return chain


def test_local_commands_hung_off_an_older_line_do_not_hide_the_conversation() -> None:
    chain = local_commands_first()
    expected = [
        ("user", "/clear"),
        ("user", "fix the login bug"),
        ("assistant", "fixed"),
        ("user", "!make test"),
    ]
    assert shown(chain.transcript()) == expected
    snapshot = claude_transcript(SESSION, chain.encoded(), texts_only=True)
    assert shown(snapshot) == expected
    assert [e.text for e in chain.transcript().entries if e.kind == "tool-result"] == [
        "<local-command-stdout></local-command-stdout>",
        "<bash-stdout>ok</bash-stdout><bash-stderr></bash-stderr>",
    ]


def test_a_command_branch_stays_when_the_conversation_went_on_after_it() -> None:
    """A review: the chain took the first leaf that is no command branch and looked at no
    older leaf, so ``!make test`` (hung off the caveat, older than the next prompt, which
    continues the last answer) was lost; each command branch off the path is kept, in file
    order after the line it forks off."""
    chain = local_commands_first()
    chain.user("u2", "now the signup page", parent="a1")
    chain.assistant("a2", "m2", text("done too"))
    assert shown(chain.transcript()) == [
        ("user", "/clear"),
        ("user", "fix the login bug"),
        ("assistant", "fixed"),
        ("user", "!make test"),
        ("user", "now the signup page"),
        ("assistant", "done too"),
    ]


def test_a_line_written_twice_is_no_fork() -> None:
    """A review: a line written again with the same parent counted as a second child, so its
    parent looked like a fork, a local command's branch off it looked like a side branch, and
    an older abandoned prompt became the conversation."""
    chain = Chain()
    chain.user("u1", "hello")
    chain.assistant("a1", "m1", text("hi"))
    chain.user("z", "abandoned older prompt", parent="u1")
    chain.user("c", "<command-name>/cost</command-name>", parent="a1")
    chain.user("o", "<local-command-stdout>$0.01</local-command-stdout>")
    chain.lines.append(dict(chain.lines[3]))  # the command's line, written again
    assert shown(chain.transcript()) == [("user", "hello"), ("assistant", "hi"), ("user", "/cost")]


def test_a_branch_with_a_prompt_is_a_branch_and_commands_alone_are_one_chain() -> None:
    chain = local_commands_first()
    chain.user("u2", "after the tests, rewound", parent="b2")
    assert shown(chain.transcript())[-2:] == [
        ("user", "!make test"),
        ("user", "after the tests, rewound"),
    ]
    commands = Chain()
    commands.user("cv", CAVEAT, parent=None, isMeta=True)
    commands.user("c1", "<command-name>/doctor</command-name>")
    commands.user("b1", "<bash-input>ls</bash-input>", parent="cv")
    commands.user("c2", "<command-name>/mcp</command-name>", parent="cv")
    assert shown(commands.transcript()) == [
        ("user", "/doctor"),
        ("user", "!ls"),
        ("user", "/mcp"),
    ]


def test_a_compaction_replay_is_not_a_branch_and_unknown_lines_keep_the_chain() -> None:
    chain = Chain()
    chain.user("u1", "hello")
    first = dict(chain.lines[-1])
    chain.raw({**first, "uuid": "u1-replay"})  # same parent, same time, a new uuid
    chain.node("relocated", "x1", relocatedCwd="/elsewhere")  # an unknown type on the chain
    chain.raw({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}})
    chain.assistant("a1", "m1", text("hi"))
    assert shown(chain.transcript()) == [("user", "hello"), ("assistant", "hi")]


def test_compaction_is_a_checkpoint_and_the_surface_starts_there() -> None:
    chain = Chain()
    chain.user("u1", "old question")
    chain.assistant("a1", "m1", text("old answer"))
    boundary = {"subtype": "compact_boundary", "content": "Conversation compacted"}
    chain.node("system", "b1", parent=None, logicalParentUuid="a1", **boundary)
    chain.user("s1", "Summary: we fixed it.", isCompactSummary=True, isVisibleInTranscriptOnly=True)
    chain.user("u2", "next question")
    transcript = chain.transcript()
    assert shown(transcript) == [
        ("user", "old question"),
        ("assistant", "old answer"),
        ("checkpoint", "Summary: we fixed it."),
        ("user", "next question"),
    ]
    store_log = ClaudeLogs.snapshot_of(chain)
    assert store_log["conversation"] == [
        {"role": "user", "text": "Summary: we fixed it."},
        {"role": "user", "text": "next question"},
    ]


def test_preserved_messages_follow_the_summary_and_the_walk_still_ends() -> None:
    chain = Chain()
    chain.user("u1", "old")
    chain.assistant("a1", "m1", text("kept answer"))
    meta = {"preservedMessages": {"anchorUuid": "s1", "uuids": ["a1"]}}
    chain.node(
        "system",
        "b1",
        parent=None,
        logicalParentUuid="a1",
        subtype="compact_boundary",
        compactMetadata=meta,
    )
    chain.user("s1", "the summary", isCompactSummary=True)
    chain.assistant("a1", "m1", text("kept answer"), parent="s1")  # a1 written again
    chain.user("u2", "go on")
    assert shown(chain.transcript()) == [
        ("user", "old"),
        ("assistant", "kept answer"),
        ("checkpoint", "the summary"),
        ("assistant", "kept answer"),
        ("user", "go on"),
    ]


def test_what_the_harness_wrote_is_not_user_text() -> None:
    chain = Chain()
    chain.user(
        "c1",
        "<command-name>/review</command-name>\n<command-message>review</command-message>"
        "\n<command-args>src/app.py</command-args>",
    )
    chain.user("m1", "Review the file carefully.", isMeta=True)
    chain.user("o1", "<local-command-stdout>done</local-command-stdout>")
    chain.user("b1", "<bash-input>git status</bash-input>")
    chain.user("b2", "<bash-stdout>clean</bash-stdout><bash-stderr></bash-stderr>")
    chain.user("r1", "why?<system-reminder>be terse</system-reminder>")
    chain.user("i1", [text("[Request interrupted by user]")])
    chain.user("q1", [text("look"), {"type": "image", "source": {"type": "base64", "data": "A"}}])
    chain.node("user", "side", isSidechain=True, message={"content": "subagent prompt"})
    chain.node("attachment", "s1", attachment={"type": "queued_command", "prompt": "also X"})
    chain.node("attachment", "s2", attachment="not an object")
    chain.assistant("e1", "err", text("API Error: 500"), isApiErrorMessage=True)
    assert shown(chain.transcript()) == [
        ("user", "/review src/app.py"),
        ("user", "!git status"),
        ("user", "why?"),
        ("user", "look"),
        ("user", "also X"),
    ]


def test_a_failed_local_command_and_a_teammate_s_message_are_not_user_text() -> None:
    # Claude Code 2.1 writes a local command's error as a user line of its own, without
    # isMeta, and a teammate's message (agent teams) into the lead's prompt, with attributes
    chain = Chain()
    chain.user("c1", "<command-name>/effort</command-name>\n<command-args>huge</command-args>")
    chain.user("e1", "<local-command-stderr>Unknown effort: huge</local-command-stderr>")
    chain.user(
        "t1",
        '<teammate-message teammate_id="alice" color="blue" summary="tests: 15% -> 96%">\n'
        "I raised the coverage\n</teammate-message>",
    )
    chain.user("t2", "<teammate-message teammate_id='system'>done</teammate-message>\nship it")
    transcript = chain.transcript()
    assert shown(transcript) == [("user", "/effort huge"), ("user", "ship it")]
    stderr_first = Chain()
    stderr_first.user("e1", "<local-command-stderr>Error: failed</local-command-stderr>")
    stderr_first.user("t1", '<teammate-message teammate_id="bob">hi</teammate-message>')
    stderr_first.user("u1", "the real question")
    assert stderr_first.transcript().title == "the real question"


def test_a_prompt_is_a_slash_command_only_when_it_is_made_of_command_tags() -> None:
    # a person's prompt that mentions the tags lost all but the tag's text ("/x")
    said = "why does <command-name>/x</command-name> show up in my log?"
    chain = Chain()
    chain.user("p1", said)
    chain.user("p2", "<command-name>/x</command-name> and then fix it")
    chain.user(
        "c1",
        "<command-message>init is analyzing</command-message>\n <command-name>/init"
        "</command-name>\n<command-args> --fast </command-args>\n",
    )
    chain.user("c2", "<command-name>model</command-name><command-args></command-args>")
    assert shown(chain.transcript()) == [
        ("user", said),
        ("user", "<command-name>/x</command-name> and then fix it"),
        ("user", "/init --fast"),
        ("user", "/model"),
    ]


def test_a_text_beside_a_tool_result_is_user_text() -> None:
    chain = Chain()
    chain.user("u1", "list the files")
    chain.assistant("a1", "m1", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}})
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}
    chain.user("r1", [result, text("stop, use b.py instead")])
    chain.user("r2", [result, text("[Request interrupted by user for tool use]")])
    chain.user("r3", [result])
    transcript = chain.transcript()
    assert shown(transcript) == [("user", "list the files"), ("user", "stop, use b.py instead")]
    assert [(e.role, e.kind, e.text) for e in transcript.entries if e.role == "tool"] == [
        ("tool", "tool-result", "a.py")
    ] * 3


@pytest.mark.parametrize("kind", [{}, [], 7, None])
def test_a_line_whose_type_is_not_a_string_is_an_unknown_line(kind: object) -> None:
    # found by the CI fuzz: {"type":{},...} failed the read ("unhashable type: 'dict'")
    chain = Chain()
    chain.user("u1", "fix the login bug")
    chain.raw({"type": kind, "messageId": "m", "snapshot": {}, "summary": "not a title"})
    chain.assistant("a1", "m1", text("ok"))
    transcript = chain.transcript()
    assert shown(transcript) == [("user", "fix the login bug"), ("assistant", "ok")]
    assert transcript.title == "fix the login bug"


@pytest.mark.parametrize(
    ("extra", "title"),
    [
        ([], "fix the login bug"),
        ([{"type": "summary", "summary": "Legacy", "leafUuid": "a1"}], "Legacy"),
        # a summary naming a leaf of another session's file titles that session, not this one
        (
            [{"type": "summary", "summary": "Another session", "leafUuid": "z9"}],
            "fix the login bug",
        ),
        ([{"type": "summary", "summary": "No leaf"}], "fix the login bug"),
        (
            [
                {"type": "ai-title", "aiTitle": "AI 1"},
                {"type": "ai-title", "aiTitle": "AI 2"},
                {"type": "summary", "summary": "Legacy", "leafUuid": "a1"},
            ],
            "AI 2",
        ),
        (
            [
                {"type": "custom-title", "customTitle": "Mine"},
                {"type": "ai-title", "aiTitle": "AI"},
            ],
            "Mine",
        ),
    ],
)
def test_title_order(extra: list[dict[str, Any]], title: str) -> None:
    chain = Chain()
    chain.user("u1", "fix the login bug\nit fails on Safari")
    chain.assistant("a1", "m1", text("ok"))
    for record in extra:
        chain.raw({**record, "sessionId": SESSION})
    assert chain.transcript().title == title


@pytest.mark.parametrize(
    ("prompts", "title"),
    [
        (["<command-name>/clear</command-name>", "fix the login bug"], "fix the login bug"),
        (
            ["<command-name>/init</command-name><command-args></command-args>", "now the tests"],
            "now the tests",
        ),
        (["<command-name>/model</command-name><command-args>opus</command-args>"], "/model"),
        (["<bash-input>make</bash-input>", "fix the login bug"], "!make"),
    ],
)
def test_a_slash_command_titles_only_a_session_without_a_prompt(
    prompts: list[str], title: str
) -> None:
    # Claude Code's resume picker (src/utils/sessionStorage.ts, extractFirstPromptFromChunk)
    # passes a slash command over, titling by its name only when no prompt follows, and
    # shows ! shell input as a prompt
    chain = Chain()
    for number, prompt in enumerate(prompts):
        chain.user(f"u{number}", prompt)
    assert chain.transcript().title == title
    assert claude_transcript(SESSION, chain.encoded(), texts_only=True).title == title


def ran(name: str, arguments: str) -> str:
    """A slash command's line as Claude Code 2.1 writes a prompt command's (one of
    ``~/.claude/commands/``, a project's, a skill's): its progress message, its name, its
    arguments."""
    return (
        f"<command-message>{name} is running…</command-message>\n"
        f"<command-name>/{name}</command-name>\n<command-args>{arguments}</command-args>"
    )


@pytest.mark.parametrize(
    ("prompts", "title"),
    [
        ([ran("fix-issue", "123"), "now the tests"], "/fix-issue 123"),
        ([ran("frontend:component", " Button "), "now the tests"], "/frontend:component Button"),
        ([ran("simplify", "the parser"), "now the tests"], "/simplify the parser"),
        ([ran("fix-issue", ""), "now the tests"], "now the tests"),
        ([ran("fix-issue", "  "), ran("model", "opus")], "/fix-issue"),
        ([ran("model", "opus"), ran("fix-issue", "123")], "/fix-issue 123"),
        ([ran("bg", "watch ci"), ran("security-review", "auth"), "go"], "go"),
    ],
)
def test_a_custom_command_with_arguments_titles_a_session_as_claude_code_does(
    prompts: list[str], title: str
) -> None:
    """Claude Code's resume picker titles a session by its first command of the person's own
    (a Markdown file of ``~/.claude/commands/``, a project's, a skill's: not one of its
    built-in commands or their aliases, code.claude.com/docs/en/commands) that has
    arguments, as ``/name args``; a built-in one, or one without arguments, it passes over,
    the first titling a session without a prompt (``extractFirstPromptFromChunk``,
    src/utils/sessionStorage.ts). The expansion Claude Code sends the model is an ``isMeta``
    line after the command, never a title."""
    chain = Chain()
    for number, prompt in enumerate(prompts):
        chain.user(f"u{number}", prompt)
        chain.user(f"x{number}", "Expanded: work on $ARGUMENTS", isMeta=True)
    assert chain.transcript().title == title
    assert claude_transcript(SESSION, chain.encoded(), texts_only=True).title == title


def compacted(before: list[str], after: list[str]) -> Chain:
    """The prompts ``before`` a compaction and ``after`` it, each answered."""
    chain = Chain()
    for number, prompt in enumerate(before):
        chain.user(f"u{number}", prompt)
        chain.assistant(f"a{number}", f"m{number}", text("done"))
    boundary = {"subtype": "compact_boundary", "content": "Conversation compacted"}
    chain.node("system", "b1", parent=None, logicalParentUuid=chain.last, **boundary)
    chain.user("s1", "Summary: we fixed it.", isCompactSummary=True)
    for number, prompt in enumerate(after):
        chain.user(f"v{number}", prompt)
        chain.assistant(f"c{number}", f"n{number}", text("done"))
    return chain


MODEL = "<command-name>/model</command-name><command-args>opus</command-args>"


@pytest.mark.parametrize(
    ("before", "after", "title"),
    [
        (["fix the login bug"], ["now the tests"], "fix the login bug"),
        ([MODEL, "<command-name>/clear</command-name>"], ["now the tests"], "now the tests"),
        ([MODEL], ["<command-name>/clear</command-name>"], "/model"),
        ([], [MODEL, "  \n", "now the tests"], "now the tests"),
    ],
)
def test_the_first_prompt_titles_a_session_across_a_compaction(
    before: list[str], after: list[str], title: str
) -> None:
    # a snapshot reads the lines before the latest compaction only for the title: the same
    # first prompt (slash commands passed over, the first one titling a chain without one)
    chain = compacted(before, after)
    assert chain.transcript().title == title
    assert claude_transcript(SESSION, chain.encoded(), texts_only=True).title == title


def test_each_prompt_is_read_once_for_its_entry_and_its_title(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the reader and the title share one reading of a record's text (the title walked the
    # chain again, and read a slash command or its output twice)
    from sessionref.claude_code import prompts

    read: list[str] = []
    without_injected = prompts.without_injected

    def reading(text: str) -> str:
        read.append(text)
        return without_injected(text)

    monkeypatch.setattr(prompts, "without_injected", reading)
    said = [MODEL, "<local-command-stdout>Set model to opus</local-command-stdout>"]
    chain = compacted([*said, "<bash-input>make</bash-input>"], [*said, "now the tests"])
    for texts_only in (False, True):
        read.clear()
        transcript = claude_transcript(SESSION, chain.encoded(), texts_only)
        assert transcript.title == "!make"
        assert read == [*said, "<bash-input>make</bash-input>", *said, "now the tests"]


class ClaudeLogs:
    """A config directory written for a store test."""

    @staticmethod
    def write(root: Path, files: dict[str, bytes]) -> ClaudeCodeStore:
        for name, content in files.items():
            path = root / "projects" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        return ClaudeCodeStore(root)

    @staticmethod
    def snapshot_of(chain: Chain, max_bytes: int = 65536) -> Any:
        store = ClaudeLogs.store_of(chain)
        resolver = SessionReferenceResolver(store, max_reference_bytes=max_bytes)
        prepared = resolver.prepare(Target("me"), content=[], references=[{"sessionId": SESSION}])
        prompt = prepared.additional_context.prompt
        start = prompt.index("\n[") + 1
        data = json.loads(prompt[start : prompt.rindex("]") + 1])[0]
        assert data["harness"] == "claude-code"
        return data

    @staticmethod
    def store_of(chain: Chain) -> ClaudeCodeStore:
        import tempfile

        root = Path(tempfile.mkdtemp())
        content = b"".join(line + b"\n" for line in chain.encoded())
        return ClaudeLogs.write(root, {f"-work-app/{SESSION}.jsonl": content})


def test_store_lists_sessions_not_subagents_and_serves_the_rest(tmp_path: Path) -> None:
    good = (
        b'{"type":"user","uuid":"u","cwd":"/w","timestamp":"2025-06-01T10:00:00Z",'
        b'"message":{"content":"hi"}}\n'
    )
    store = ClaudeLogs.write(
        tmp_path,
        {
            "-w/aaa.jsonl": good,
            "-w/agent-1234.jsonl": good,  # an old-layout subagent transcript
            "-w/aaa/subagents/agent-5678.jsonl": good,  # a new-layout one
            "-w/empty.jsonl": b"",
            "-w/torn.jsonl": good[:-1],
            "-x/bad.jsonl": b"\xff\xfe not json\n[1,2]\n",
        },
    )
    (tmp_path / "projects" / "-w" / "dir.jsonl").mkdir()  # a directory where a file should be
    headers = store.headers()
    assert [(h.id, h.cwd, h.created_at) for h in headers] == [("aaa", "/w", 1748772000000)]
    assert [p.path.endswith("dir.jsonl") for p in store.problems()] == [True]
    assert store.title("aaa") == "hi"
    assert store.read("aaa").harness == "claude-code"


def test_a_file_over_the_limit_is_read_failed_naming_it(tmp_path: Path) -> None:
    line = b'{"type":"user","uuid":"u","message":{"content":"' + b"x" * 100 + b'"}}\n'
    store = ClaudeLogs.write(tmp_path, {"-w/big.jsonl": line, "-w/ok.jsonl": line[:60] + b'"}}\n'})
    small = ClaudeCodeStore(tmp_path, max_bytes=100)
    assert {h.id for h in store.headers()} == {"big", "ok"}
    assert {h.id for h in small.headers()} == {"big", "ok"}
    resolver = SessionReferenceResolver(small)
    with pytest.raises(SessionReferenceError) as failure:
        resolver.prepare(Target("me"), content=[], references=[{"sessionId": "big"}])
    assert failure.value.code == READ_FAILED
    assert str(tmp_path / "projects" / "-w" / "big.jsonl") in failure.value.message
    prepared = resolver.prepare(Target("me"), content=[], references=[{"sessionId": "ok"}])
    assert prepared.additional_context is not None


def test_duplicate_ids_are_problems_not_sessions(tmp_path: Path) -> None:
    line = b'{"type":"user","uuid":"u","message":{"content":"hi"}}\n'
    store = ClaudeLogs.write(tmp_path, {"-a/s.jsonl": line, "-b/s.jsonl": line, "-b/t.jsonl": line})
    assert [h.id for h in store.headers()] == ["t"]
    a, b = (str(tmp_path / "projects" / project / "s.jsonl") for project in ("-a", "-b"))
    assert [(p.path, p.message) for p in store.problems()] == [
        (a, f'session "s" is also in {b}'),
        (b, f'session "s" is also in {a}'),
    ]


def test_a_duplicate_id_holding_a_double_quote_is_quoted_with_it_doubled(tmp_path: Path) -> None:
    """The problem quotes the id as every message of sessionref does (README): ``"s""q"`` is
    the id ``s"q``; ``"s"q"`` read as ``s`` followed by text."""
    line = b'{"type":"user","uuid":"u","message":{"content":"hi"}}\n'
    store = ClaudeLogs.write(tmp_path, {'-a/s"q.jsonl': line, '-b/s"q.jsonl': line})
    assert store.headers() == []
    a, b = (str(tmp_path / "projects" / project / 's"q.jsonl') for project in ("-a", "-b"))
    assert [(p.path, p.message) for p in store.problems()] == [
        (a, f'session "s""q" is also in {b}'),
        (b, f'session "s""q" is also in {a}'),
    ]


def test_a_session_whose_file_was_passed_over_fails_naming_why(tmp_path: Path) -> None:
    """A newcomer's trial: a first line over ``max_line_bytes`` kept the file out of the
    listing, and reading the session then said it did not exist; a duplicate id too."""
    line = b'{"type":"user","uuid":"u","message":{"content":"' + b"x" * 100 + b'"}}\n'
    short = b'{"type":"user","uuid":"u","message":{"content":"hi"}}\n'
    ClaudeLogs.write(tmp_path, {"-w/long.jsonl": line, "-a/s.jsonl": short, "-b/s.jsonl": short})
    store = ClaudeCodeStore(tmp_path, max_line_bytes=100)
    assert store.headers() == []
    long, a, b = (
        str(tmp_path / "projects" / name) for name in ("-w/long.jsonl", "-a/s.jsonl", "-b/s.jsonl")
    )
    for session_id, reason in (
        ("long", f"{long}: line 1 is longer than 100 bytes"),
        ("s", f'{a}: session "s" is also in {b}'),
    ):
        with pytest.raises(SessionLogError) as failed:
            store.read(session_id)
        assert not isinstance(failed.value, SessionNotFound)
        assert str(failed.value) == reason
        resolver = SessionReferenceResolver(store)
        with pytest.raises(SessionReferenceError) as refused:
            resolver.prepare(Target("me"), content=[], references=[{"sessionId": session_id}])
        assert refused.value.code == READ_FAILED and reason in refused.value.message
    with pytest.raises(SessionNotFound):
        store.read("other")


def test_a_passed_over_entry_named_like_a_served_session_leaves_it_served(
    tmp_path: Path,
) -> None:
    """A review of the change above: a directory ``-b/s.jsonl`` beside the session ``-a/s.jsonl``
    made every read of ``s`` fail, and with it every index refresh (a traceback)."""
    line = b'{"type":"user","uuid":"u","cwd":"/w","message":{"content":"hello there"}}\n'
    store = ClaudeLogs.write(tmp_path, {"-a/s.jsonl": line})
    (tmp_path / "projects" / "-b" / "s.jsonl").mkdir(parents=True)
    assert [h.id for h in store.headers()] == ["s"]
    assert [p.message for p in store.problems()] == ["a directory in place of a log file"]
    assert store.transcript("s").title == "hello there"
    from sessionref.index import SessionIndex

    with SessionIndex(store, tmp_path / "index.sqlite") as index:
        assert [hit.session_id for hit in index.search("hello")] == ["s"]
        assert [h.id for h in index.headers()] == ["s"]


def listed_within(store: ClaudeCodeStore | CodexStore, seconds: float) -> list[str]:
    """The ids ``store`` lists, listed in a thread that must be done within ``seconds``: a
    FIFO opened to be read waits for a writer, and the listing with it."""
    listed: list[str] = []
    thread = threading.Thread(target=lambda: listed.extend(h.id for h in store.headers()))
    thread.daemon = True
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the listing waits on the FIFO"
    return listed


def test_a_fifo_named_as_a_session_is_passed_over_not_waited_on(tmp_path: Path) -> None:
    line = b'{"type":"user","uuid":"u","message":{"content":"hi"}}\n'
    store = ClaudeLogs.write(tmp_path, {"-w/s.jsonl": line})
    fifo = tmp_path / "projects" / "-w" / "t.jsonl"
    os.mkfifo(fifo)
    released = threading.Event()

    def writer() -> None:  # waits for a reader: one that opens the FIFO lets it write, to no one
        with fifo.open("wb"):
            released.set()

    threading.Thread(target=writer, daemon=True).start()
    assert listed_within(store, 30) == ["s"]
    assert [(p.path, p.message) for p in store.problems()] == [
        (str(fifo), "a FIFO in place of a log file")
    ]
    assert not released.wait(0.5), "the listing opened the FIFO"
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # let the writer go
    released.wait(30)
    os.close(reader)


def test_captured_through_seq_is_the_index_of_the_last_line(tmp_path: Path) -> None:
    chain = Chain()
    chain.user("u1", "hi")
    chain.raw({"type": "ai-title", "aiTitle": "Greeting", "sessionId": SESSION})
    chain.raw({"type": "last-prompt", "lastPrompt": "hi", "sessionId": SESSION})
    data = ClaudeLogs.snapshot_of(chain)
    assert data["capturedThroughSeq"] == 2
    assert data["cwd"] == "/work/app"


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(claude_code_logs())
def test_generated_transcripts_show_their_current_chain(log: HarnessLog) -> None:
    transcript = claude_transcript(SESSION, log.lines)
    assert shown(transcript) == log.shown
    if log.title is not None:
        assert transcript.title == log.title


def test_a_uuid_written_again_resolves_to_its_latest_line_before_the_child() -> None:
    chain = Chain()
    for number in range(3):  # one uuid written three times, each naming itself as parent
        chain.user("a", f"copy {number}", parent="a")
    chain.user("b", "after", parent="a")
    assert shown(chain.transcript()) == [
        ("user", "copy 0"),
        ("user", "copy 1"),
        ("user", "copy 2"),
        ("user", "after"),
    ]


def test_unclosed_tags_leave_the_prompt_as_typed() -> None:
    text = "<system-reminder>" * 3 + "<command-name>/x" + " keep"
    chain = Chain()
    chain.user("u1", text)
    mid_sentence = "a<system-reminder>b<system-reminder>c</system-reminder> d"
    chain.user("u2", mid_sentence)
    chain.user("u3", "a\n<system-reminder>b<system-reminder>c</system-reminder>")
    assert shown(chain.transcript()) == [("user", text), ("user", mid_sentence), ("user", "a")]


def test_only_what_claude_code_injects_is_removed() -> None:
    """Claude Code and an IDE put what they inject into a prompt as text blocks of their own,
    or at a block's start or end; a pair of tags a person quoted (in a code span, a fenced
    example, mid-sentence) was typed, and is shown with what it holds."""
    opened = "<ide_opened_file>The user opened a.py in the IDE.</ide_opened_file>"
    reminder = "<system-reminder>\nThe date changed.\n</system-reminder>"
    quoted = [
        "why does `<system-reminder>x</system-reminder>` show up?",
        "my log has:\n```xml\n<system-reminder>\nbe brief\n</system-reminder>\n```",
        "is <ide_selection>a</ide_selection> a tag or <system-reminder>b</system-reminder>?",
        "```\n<system-reminder>x</system-reminder>\n```\nwhat is this?",
    ]
    chain = Chain()
    for number, typed in enumerate(quoted):
        chain.user(f"q{number}", typed)
    chain.user("b1", [text(opened), text("fix it"), text(reminder)])
    chain.user("b2", [text("first"), text(reminder), text("second")])
    chain.user("s1", f"{reminder}\n{opened} fix it\n\n{reminder}")
    chain.user("s2", [text(f"{quoted[0]}\n\n{reminder}")])
    assert shown(chain.transcript()) == [
        *[("user", typed) for typed in quoted],
        ("user", "fix it"),
        ("user", "first\nsecond"),
        ("user", "fix it"),
        ("user", quoted[0]),
    ]


def test_a_reminder_at_a_prompt_s_start_is_hidden_as_claude_code_hides_it() -> None:
    # Claude Code itself prepends <system-reminder> blocks to the stored text of a prompt
    # (memory updates, auto mode reminders) and shows the rest as what the person typed:
    # src/components/messageActions.tsx stripSystemReminders, used by copyTextOf and by
    # VirtualMessageList.tsx stickyPromptText ("Leading <system-reminder> blocks are
    # stripped before checking ... aren't what the user typed"), Claude Code 2.1.88 as
    # published (github.com/Jayleonc/claude-code-source-code); it strips them one after
    # another, blanks between them too, and stops at one left open
    reminder = "<system-reminder>\nMemory updated.\n</system-reminder>"
    chain = Chain()
    chain.user("u1", f"{reminder}\nfix the login bug")
    chain.user("u2", f"  {reminder}\n\n{reminder}now the tests")
    chain.user("u3", "<system-reminder>never closed\nship it")
    assert shown(chain.transcript()) == [
        ("user", "fix the login bug"),
        ("user", "now the tests"),
        ("user", "<system-reminder>never closed\nship it"),
    ]


def refuse_listing(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make ``os.scandir`` of ``folder`` fail as a folder of mode 000 fails a user (root,
    whom these tests may run as, lists it anyway)."""
    scandir = os.scandir

    def refusing(path: Any) -> Any:
        if Path(path) == folder:
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)


def test_a_folder_that_cannot_be_listed_or_is_a_link_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its sessions are passed over, and the listing says so (they vanished without a word)."""
    line = b'{"type":"user","uuid":"u","message":{"content":"hi"}}\n'
    store = ClaudeLogs.write(tmp_path, {"-w/s.jsonl": line, "-locked/t.jsonl": line})
    projects = tmp_path / "projects"
    ClaudeLogs.write(tmp_path / "elsewhere", {"-linked/u.jsonl": line})
    (projects / "-linked").symlink_to(tmp_path / "elsewhere" / "projects" / "-linked")
    locked = projects / "-locked"
    refuse_listing(monkeypatch, locked)
    assert [h.id for h in store.headers()] == ["s"]
    assert [(p.path, p.message) for p in store.problems()] == [
        (str(projects / "-linked"), "a link to a directory, not followed"),
        (str(locked), "cannot be listed: Permission denied"),
    ]


def test_a_server_tool_s_call_and_result_are_a_tool_call_and_its_result() -> None:
    """The Messages API writes a server tool's call (web search) and its result into the
    assistant's own message: ``server_tool_use`` (id, name, input) and
    ``web_search_tool_result`` (``tool_use_id``; ``content``: the results, each with a title,
    a URL and the ``encrypted_content`` only the model reads, or an error object)."""
    query = {"query": "claude shannon birth date"}
    results = [
        {
            "type": "web_search_result",
            "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
            "title": "Claude Shannon - Wikipedia",
            "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1m",
            "page_age": "April 30, 2025",
        },
        {"type": "web_search_result", "url": "https://example.org/s", "title": "Shannon"},
    ]
    chain = Chain()
    chain.user("u1", "when was Shannon born?")
    use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": query}
    chain.assistant("a1", "msg_1", text("I'll search."), use)
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": results}
    chain.assistant("a2", "msg_1", result, text("He was born on April 30, 1916."))
    error = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
    use_2 = {**use, "id": "srvtoolu_2"}
    chain.assistant("a3", "msg_1", use_2)
    chain.assistant("a4", "msg_1", {**result, "tool_use_id": "srvtoolu_2", "content": error})
    transcript = chain.transcript()
    tools = [(e.role, e.kind, e.name, e.text) for e in transcript.entries if e.kind != "text"]
    assert [json.loads(text) for _, kind, _, text in tools if kind == "tool-call"] == [query] * 2
    assert [(role, kind, name) for role, kind, name, _ in tools] == [
        ("assistant", "tool-call", "web_search"),
        ("tool", "tool-result", "web_search"),
    ] * 2
    assert [text for _, kind, _, text in tools if kind == "tool-result"] == [
        "Claude Shannon - Wikipedia\nhttps://en.wikipedia.org/wiki/Claude_Shannon"
        "\n\nShannon\nhttps://example.org/s",
        "error: max_uses_exceeded",
    ]
    order = [(e.kind, e.continues) for e in transcript.entries[1:]]
    assert order == [
        ("text", False),
        ("tool-call", False),
        ("tool-result", False),
        ("text", True),  # after the search, in the one message: it goes on the text before
        ("tool-call", False),
        ("tool-result", False),
    ]
    texts = [e.text for e in transcript.entries[1:] if e.kind == "text"]
    assert texts == ["I'll search.", "He was born on April 30, 1916."]
    assert shown(transcript)[1:] == [("assistant", "\n".join(texts))]  # as a snapshot has it


def parallel_reads() -> Chain:
    """Claude Code 2.1 writes an API message's parallel ``tool_use`` blocks as a run of lines
    (each the parent of the next) and each result as the child of its own call, in the order
    the tools finish; the next message continues from the last result written. Three reads
    of a.py, b.py and c.py (ids t1, t2, t3, outputs A, B, C) finish last first."""

    def use(tool_id: str, path: str) -> dict[str, Any]:
        return {"type": "tool_use", "id": tool_id, "name": "Read", "input": {"file_path": path}}

    def result(tool_id: str, output: str) -> list[dict[str, Any]]:
        return [{"type": "tool_result", "tool_use_id": tool_id, "content": output}]

    chain = Chain()
    chain.user("u1", "read the three files")
    chain.assistant("a1", "msg_1", text("Reading them at once."))
    chain.assistant("a2", "msg_1", use("t1", "a.py"))
    chain.assistant("a3", "msg_1", use("t2", "b.py"))
    chain.assistant("a4", "msg_1", use("t3", "c.py"))
    chain.user("r3", result("t3", "C"), parent="a4")
    chain.node("attachment", "h3", attachment={"type": "hook_success"})
    chain.user("r2", result("t2", "B"), parent="a3")
    chain.node("attachment", "h2", attachment={"type": "hook_success"})
    chain.user("r1", result("t1", "A"), parent="a2")
    chain.node("attachment", "h1", attachment={"type": "hook_success"})
    chain.assistant("a5", "msg_2", text("All three are read."))
    return chain


def test_parallel_tool_calls_and_their_lagging_results_are_all_in_the_transcript() -> None:
    """The path from the newest leaf of :func:`parallel_reads` passes through one call and
    one result only (claude-code-log's dev-docs/dag.md, "Assistant continuation" and
    "Tool-result stitching": recording artifacts, not branches). Every call and every
    result is the session's."""
    chain = parallel_reads()
    entries = chain.transcript().entries
    assert [(e.kind, e.name, e.text) for e in entries if e.kind.startswith("tool")] == [
        ("tool-call", "Read", '{"file_path": "a.py"}'),
        ("tool-call", "Read", '{"file_path": "b.py"}'),
        ("tool-call", "Read", '{"file_path": "c.py"}'),
        ("tool-result", "Read", "C"),
        ("tool-result", "Read", "B"),
        ("tool-result", "Read", "A"),
    ]
    assert shown(chain.transcript()) == [
        ("user", "read the three files"),
        ("assistant", "Reading them at once."),
        ("assistant", "All three are read."),
    ]


def test_a_replayed_tool_call_beside_the_chain_is_not_shown_twice() -> None:
    """A compaction replay re-writes a line under a new uuid with its parent and time: its
    call is the one already on the chain, never a second call."""
    chain = Chain()
    chain.user("u1", "list")
    chain.assistant("a1", "msg_1", text("Listing."))
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    chain.assistant("a2", "msg_1", call)
    chain.raw({**chain.lines[-1], "uuid": "a2-replay"})
    chain.user("r1", [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}], parent="a2")
    chain.raw({**chain.lines[-1], "uuid": "r1-replay", "parentUuid": "a2-replay"})
    chain.assistant("a3", "msg_2", text("One file."), parent="r1")
    kinds = [e.kind for e in chain.transcript().entries if e.kind.startswith("tool")]
    assert kinds == ["tool-call", "tool-result"]
