"""The Codex CLI reader and store against hand-written rollouts (docs/harnesses.md §Codex)."""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from sessionref import DirectoryStore, SessionReferenceResolver, Target
from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.cli import main
from sessionref.codex.reader import codex_transcript
from sessionref.codex.store import CodexStore
from sessionref.errors import READ_FAILED, SessionReferenceError
from sessionref.testing.claude_logs import HarnessLog
from sessionref.testing.codex_logs import codex_rollouts
from sessionref.transcript import Transcript
from tests.conftest import examples
from tests.test_claude_code import listed_within, refuse_listing

THREAD = "0197a000-0000-7000-8000-0000000000aa"
OTHERS = [f"0197b000-0000-7000-8000-00000000000{n}" for n in range(4)]
"""Ids of rollouts that hold no thread of their own (a broken or empty one)."""
NAME = f"rollout-2025-06-01T10-00-00-{THREAD}.jsonl"
NO_META = "no session_meta line with an id in its first lines"


def line(kind: str, payload: dict[str, Any], second: int = 0) -> bytes:
    stamp = f"2025-06-01T10:00:{second:02}.000Z"
    envelope = {"timestamp": stamp, "type": kind, "payload": payload}
    return json.dumps(envelope, separators=(",", ":")).encode()  # compact, as serde writes


def meta(thread: str = THREAD, **fields: Any) -> bytes:
    payload = {
        "id": thread,
        "timestamp": "2025-06-01T10:00:00.000Z",
        "cwd": "/w",
        "originator": "codex_cli_rs",
        "cli_version": "0.40.0",
        **fields,
    }
    return line("session_meta", payload)


def copy(role: str, text: str) -> dict[str, Any]:
    """The model's copy of a message, as a response item."""
    kind = "input_text" if role == "user" else "output_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def said(role: str, text: str) -> list[bytes]:
    """A message as Codex writes it: the model's copy, then the event."""
    event = "user_message" if role == "user" else "agent_message"
    return [
        line("response_item", copy(role, text)),
        line("event_msg", {"type": event, "message": text}),
    ]


def shown(transcript: Transcript) -> list[tuple[str, str]]:
    return [
        ("checkpoint" if e.kind == "checkpoint" else e.role, e.text)
        for e in transcript.entries
        if e.kind in ("text", "checkpoint") and e.role in ("user", "assistant")
    ]


def test_each_message_is_shown_once_without_injected_context() -> None:
    injected = {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "<user_instructions>be nice</user_instructions>"},
            {
                "type": "input_text",
                "text": "<environment_context>\n<cwd>/w</cwd>\n</environment_context>",
            },
        ],
    }
    lines = [
        meta(),
        line("response_item", {"type": "message", "role": "developer", "content": []}),
        line("response_item", injected),
        *said("user", "add a test"),
        line(
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "thinking"}],
                "encrypted_content": "opaque",
            },
        ),
        line(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command":["ls"]}',
                "call_id": "c1",
            },
        ),
        line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "a.py"}),
        *said("assistant", "Added."),
        line("event_msg", {"type": "token_count"}),
    ]
    entries = codex_transcript(THREAD, lines, None).entries
    assert [(e.role, e.kind, e.text, e.name) for e in entries] == [
        ("user", "text", "add a test", None),
        ("assistant", "thinking", "thinking", None),
        ("assistant", "tool-call", '{"command":["ls"]}', "shell"),
        ("tool", "tool-result", "a.py", "shell"),
        ("assistant", "text", "Added.", None),
    ]


def test_a_legacy_rollout_without_envelope_or_events() -> None:
    items = [
        {"id": THREAD, "timestamp": "2025-04-01T10:00:00.000Z", "instructions": None},
        {"record_type": "state"},
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "<environment_context>x</environment_context>"},
                {"type": "input_text", "text": "rename foo"},
            ],
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Done"}],
        },
    ]
    transcript = codex_transcript(THREAD, [json.dumps(i).encode() for i in items], None)
    assert shown(transcript) == [("user", "rename foo"), ("assistant", "Done")]
    assert transcript.created_at is not None


CONTEXT = "<environment_context>\n<cwd>/w</cwd>\n</environment_context>"
OLDER = [copy("user", CONTEXT), copy("user", "old question"), copy("assistant", "old answer")]
"""Older turns, by a Codex that wrote no events."""
NEWER = [
    line("turn_context", {"cwd": "/w"}),
    line("response_item", copy("user", CONTEXT)),
    *said("user", "new question"),
    *said("assistant", "new answer"),
]
"""Then the turns of a newer Codex that resumed the rollout: each message twice."""
BOTH = [
    ("user", "old question"),
    ("assistant", "old answer"),
    ("user", "new question"),
    ("assistant", "new answer"),
]


@pytest.mark.parametrize(
    "older",
    [
        [meta(), *(line("response_item", item) for item in OLDER)],
        [json.dumps(item).encode() for item in [{"id": THREAD, "instructions": None}, *OLDER]],
    ],
    ids=["envelope", "legacy"],
)
def test_a_rollout_resumed_by_a_codex_that_writes_events_shows_both_parts_once(
    older: list[bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A newcomer's trial: the older turns of a rollout that gained events partway were not
    shown (the rollout was taken as one that has the event stream, so its texts all came
    from the events). Codex's own views replay only the events
    (``InitialHistory::get_event_msgs``, app-server ``ThreadHistoryBuilder``), so it shows
    nothing of them either; the model it resumes sees them, as response items."""
    lines = older + NEWER
    assert shown(codex_transcript(THREAD, lines, None)) == BOTH
    assert shown(codex_transcript(THREAD, lines, None, texts_only=True)) == BOTH
    summary = line("compacted", {"message": "summary"})
    later = [summary, *NEWER, *said("user", "last question")]
    snapshot = codex_transcript(THREAD, older + later, None, texts_only=True)
    assert shown(snapshot) == [("checkpoint", "summary"), *BOTH[2:], ("user", "last question")]
    assert snapshot.title == "old question"
    store = write(tmp_path, {f"sessions/2025/06/01/{NAME}": rollout(*lines)})
    assert (shown(store.transcript(THREAD)), store.title(THREAD)) == (BOTH, "old question")
    assert main(["show", "--root", str(tmp_path), THREAD]) == 0
    table = capsys.readouterr().out
    assert "kept 4 of 4 units" in table
    assert [table.count(text) for _, text in BOTH] == [1, 1, 1, 1]


def test_a_checkpoint_among_the_older_turns_keeps_them_after_it() -> None:
    again = [
        line("response_item", copy("user", "again")),
        line("response_item", copy("assistant", "ok")),
    ]
    lines = [
        meta(),
        *(line("response_item", item) for item in OLDER),
        line("compacted", {"message": "summary"}),
        *again,
        *NEWER,
    ]
    after = [("checkpoint", "summary"), ("user", "again"), ("assistant", "ok"), *BOTH[2:]]
    assert shown(codex_transcript(THREAD, lines, None)) == BOTH[:2] + after
    snapshot = codex_transcript(THREAD, lines, None, texts_only=True)
    assert (shown(snapshot), snapshot.title) == (after, "old question")


def test_a_rollout_with_events_from_its_first_turn_shows_no_response_item_text() -> None:
    """Before its first prompt a rollout holds only what Codex injects, whatever its tags."""
    lines = [meta(), line("response_item", copy("user", "<new_context>x</new_context>")), *NEWER]
    assert shown(codex_transcript(THREAD, lines, None)) == BOTH[2:]


def test_compacted_is_a_checkpoint_and_ide_prompts_show_the_request() -> None:
    lines = [
        meta(),
        *said("user", "old"),
        line("compacted", {"message": "we did X", "replacement_history": []}),
        line("event_msg", {"type": "context_compacted"}),
        line(
            "event_msg",
            {
                "type": "user_message",
                "message": "# Context from my IDE setup:\n## Open tabs: a.py\n"
                "## My request for Codex:\nnew",
            },
        ),
    ]
    assert shown(codex_transcript(THREAD, lines, None)) == [
        ("user", "old"),
        ("checkpoint", "we did X"),
        ("user", "new"),
    ]


PROMPT = said("user", "hello")
"""A prompt: a rollout holding one is listed (docs/harnesses.md §Codex §Listed)."""


def write(root: Path, files: dict[str, bytes]) -> CodexStore:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return CodexStore(root)


def fails_naming(
    read: Callable[[], object], root: Path, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``read`` fails ``READ_FAILED`` saying ``said``, and ``sessionref snapshot`` of the
    thread over ``root`` says it in one line, no traceback."""
    with pytest.raises(SessionReferenceError) as failure:
        read()
    assert failure.value.code == READ_FAILED
    assert said in failure.value.message
    assert main(["snapshot", "--root", str(root), THREAD]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and "Traceback" not in err


def rollout(*lines: bytes) -> bytes:
    return b"".join(item + b"\n" for item in lines)


def test_a_thread_whose_only_rollout_was_passed_over_fails_naming_why(tmp_path: Path) -> None:
    """A newcomer's trial: a rollout whose first line is over ``max_line_bytes`` is passed over
    by the listing, and reading its thread said it did not exist."""
    first = f"sessions/2025/06/01/rollout-2025-06-01T10-00-00-{THREAD}.jsonl"
    write(tmp_path, {first: rollout(meta(instructions="x" * 300), *said("user", "first part"))})
    store = CodexStore(tmp_path, max_line_bytes=200)
    assert store.headers() == []
    with pytest.raises(SessionReferenceError) as failed:
        SessionReferenceResolver(store).snapshot(Target("me"), [{"sessionId": THREAD}])
    assert failed.value.code == READ_FAILED
    assert f"{tmp_path / first}: line 1 is longer than 200 bytes" in failed.value.message


def test_store_layouts_newest_rollouts_titles_and_subagents(tmp_path: Path) -> None:
    """A thread with two rollouts is its newest (openai/codex ``codex-rs/rollout/src/list.rs``:
    ``find_thread_path_by_id_from_filenames``, ``select_thread_candidates``)."""
    other = "0197a000-0000-7000-8000-0000000000bb"
    child = "0197a000-0000-7000-8000-0000000000cc"
    store = write(
        tmp_path,
        {
            f"sessions/2025/06/01/rollout-2025-06-01T10-00-00-{THREAD}.jsonl": rollout(
                meta(), *said("user", "first part")
            ),
            f"sessions/2025/06/02/rollout-2025-06-02T09-00-00-{THREAD}.jsonl": rollout(
                meta(), *said("user", "second part")
            ),
            f"archived_sessions/rollout-2025-05-01T10-00-00-{other}.jsonl": rollout(
                meta(other), *said("user", "archived question")
            ),
            f"sessions/rollout-2025-04-01T10-00-00-{child}.jsonl": rollout(
                meta(child, source={"subagent": {}})
            ),
            f"sessions/2025/06/03/rollout-2025-06-03T10-00-00-{OTHERS[0]}.jsonl": b"not json\n",
            f"sessions/2025/06/03/rollout-2025-06-03T11-00-00-{OTHERS[1]}.jsonl": b"",
            "session_index.jsonl": rollout(
                b'{"id":"%s","thread_name":"Old name","updated_at":"x"}' % other.encode(),
                b'{"id":"%s","thread_name":"New name","updated_at":"y"}' % other.encode(),
                b"torn",
            ),
        },
    )
    assert sorted(h.id for h in store.headers()) == [THREAD, other]
    assert len(store.problems()) == 2
    assert store.title(other) == "New name"
    assert store.title(THREAD) == "second part"
    assert shown(store.transcript(THREAD)) == [("user", "second part")]
    resolver = SessionReferenceResolver(store)
    prepared = resolver.prepare(Target("me"), content=[], references=[{"sessionId": THREAD}])
    stats = prepared.additional_context.source.references[0]
    assert stats.captured_through_seq == 2  # the newest rollout's three lines
    assert '"harness":"codex"' in prepared.additional_context.prompt
    assert store.headers()[0].cwd == "/w"


OTHER_THREAD = "0197a000-0000-7000-8000-0000000000bb"


def two_named_threads(tmp_path: Path, index_lines: list[bytes]) -> CodexStore:
    """A home of two threads, :data:`THREAD` ("first prompt") and :data:`OTHER_THREAD`
    ("second prompt"), whose ``session_index.jsonl`` holds ``index_lines``."""
    return write(
        tmp_path,
        {
            f"sessions/2025/06/01/{NAME}": rollout(meta(), *said("user", "first prompt")),
            f"sessions/2025/06/01/rollout-2025-06-01T11-00-00-{OTHER_THREAD}.jsonl": rollout(
                meta(OTHER_THREAD), *said("user", "second prompt")
            ),
            "session_index.jsonl": rollout(*index_lines),
        },
    )


def test_a_blank_thread_name_is_no_name_and_a_name_is_trimmed(tmp_path: Path) -> None:
    """openai/codex ``codex-rs/rollout/src/session_index.rs``, ``find_thread_names_by_ids`` (the
    names its listing shows): each name is ``trim()``-ed, and a blank latest name takes the
    thread's name away, so the thread is titled by its first prompt again, as one never named.
    (``read_thread`` also passes over a blank name, ``!name.trim().is_empty()``.)"""
    index = [
        (THREAD, "Auth work"),
        (THREAD, " \u3000\t"),  # Rust's trim takes U+3000 (White_Space) too
        (OTHER_THREAD, "\u2003 Webhook retry \u0085"),
    ]
    store = two_named_threads(
        tmp_path,
        [
            json.dumps({"id": thread, "thread_name": name, "updated_at": "x"}).encode()
            for thread, name in index
        ],
    )
    assert store.title(THREAD) == "first prompt"
    assert store.title(OTHER_THREAD) == "Webhook retry"


def test_a_session_index_line_without_updated_at_names_no_thread(tmp_path: Path) -> None:
    """openai/codex ``codex-rs/rollout/src/session_index.rs``: a line is a ``SessionIndexEntry``
    (``id``, ``thread_name`` and ``updated_at``, each required, ``updated_at`` a ``String``),
    and ``find_thread_names_by_ids`` passes over a line that does not parse as one. So a line
    without ``updated_at``, or with one that is no string, names nothing: not even a blank
    one takes the earlier name away."""
    other = OTHER_THREAD.encode()
    store = two_named_threads(
        tmp_path,
        [
            b'{"id":"%s","thread_name":"Kept name","updated_at":"x"}' % other,
            b'{"id":"%s","thread_name":""}' % other,
            b'{"id":"%s","thread_name":"No time"}' % THREAD.encode(),
            b'{"id":"%s","thread_name":"Null time","updated_at":null}' % THREAD.encode(),
        ],
    )
    assert store.title(THREAD) == "first prompt"
    assert store.title(OTHER_THREAD) == "Kept name"


def test_a_fifo_or_a_rollout_without_its_thread_is_a_problem_named_once(tmp_path: Path) -> None:
    unthreaded = f"sessions/rollout-2025-06-01T10-00-01-{OTHERS[0]}.jsonl"
    store = write(
        tmp_path,
        {
            f"sessions/rollout-2025-06-01T10-00-00-{THREAD}.jsonl": rollout(meta(), *PROMPT),
            unthreaded: rollout(b'{"type":"event_msg","payload":{}}'),
        },
    )
    fifo = tmp_path / "sessions" / f"rollout-2025-06-01T10-00-02-{OTHERS[1]}.jsonl"
    os.mkfifo(fifo)
    assert listed_within(store, 30) == [THREAD]
    assert [(p.path, p.message) for p in store.problems()] == [
        (str(tmp_path / unthreaded), NO_META),
        (str(fifo), "a FIFO in place of a log file"),
    ]


def test_an_unreadable_rollout_fails_alone(tmp_path: Path) -> None:
    store = write(tmp_path, {f"sessions/{NAME}": rollout(meta(), *PROMPT, b"\xff" * 50)})
    small = CodexStore(tmp_path, max_line_bytes=40)
    assert [h.id for h in small.headers()] == []  # its first line is over the limit
    assert len(small.problems()) == 1
    size = (tmp_path / "sessions" / NAME).stat().st_size  # its prompt within the limit
    tight = CodexStore(tmp_path, max_bytes=size - 1)
    assert [h.id for h in tight.headers()] == [THREAD]
    with pytest.raises(SessionReferenceError) as failure:
        SessionReferenceResolver(tight).prepare(
            Target("me"), content=[], references=[{"sessionId": THREAD}]
        )
    assert failure.value.code == READ_FAILED and NAME in failure.value.message
    with pytest.raises(SessionReferenceError) as refused:  # its last line is not UTF-8
        store.transcript(THREAD)
    assert NAME in refused.value.message and "is not UTF-8" in refused.value.message


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(codex_rollouts())
def test_generated_rollouts_show_each_message_once(log: HarnessLog) -> None:
    assert shown(codex_transcript(THREAD, log.lines, None)) == log.shown


@settings(max_examples=examples(30), deadline=None, suppress_health_check=list(HealthCheck))
@given(codex_rollouts(legacy=False, paginated=True))
def test_generated_paginated_rollouts_show_each_message_once(log: HarnessLog) -> None:
    """A paginated thread records what the person saw as completed ``UserMessage`` and
    ``AgentMessage`` items only, never as ``user_message`` or ``agent_message`` events."""
    kinds = [json.loads(line)["payload"].get("type") for line in log.lines]
    assert '"history_mode":"paginated"' in log.lines[0].decode()
    assert "item_completed" in kinds and not {"user_message", "agent_message"} & set(kinds)
    assert shown(codex_transcript(THREAD, log.lines, None)) == log.shown


def test_a_folder_that_cannot_be_listed_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = write(
        tmp_path,
        {
            f"sessions/2025/06/01/{NAME}": rollout(meta(), *PROMPT),
            f"sessions/2025/06/02/rollout-2025-06-02T10-00-00-{OTHERS[0]}.jsonl": rollout(
                meta(OTHERS[0]), *PROMPT
            ),
        },
    )
    locked = tmp_path / "sessions" / "2025" / "06" / "02"
    refuse_listing(monkeypatch, locked)
    assert [h.id for h in store.headers()] == [THREAD]
    assert [(p.path, p.message) for p in store.problems()] == [
        (str(locked), "cannot be listed: Permission denied")
    ]


ASKED = [meta(), *said("user", "fix the build"), *said("assistant", "Fixed.")]
MORE = said("user", "and the docs")
FIXED = [("user", "fix the build"), ("assistant", "Fixed.")]


@pytest.mark.parametrize(
    ("live", "archived"),
    [
        (ASKED, ASKED),  # copied, not moved
        (ASKED, ASKED + MORE),  # archived after a copy
        (ASKED + MORE, ASKED),  # went on after a copy
        (ASKED + MORE, ASKED + said("user", "other")),
    ],
)
def test_a_rollout_in_sessions_and_in_archived_sessions_is_read_once(
    tmp_path: Path, live: list[bytes], archived: list[bytes]
) -> None:
    """A newcomer's trial: the same rollout in ``sessions/`` and in ``archived_sessions/``
    showed each message twice (both were read as segments of the thread). Codex looks a
    thread up in ``archived_sessions/`` only when no rollout in ``sessions/`` names it
    (openai/codex ``codex-rs/thread-store/src/local/thread_rollout_resolver.rs``: ``resolve``),
    so the copy in ``sessions/`` is read, whichever is longer."""
    store = write(
        tmp_path,
        {
            f"sessions/2025/06/01/{NAME}": rollout(*live),
            f"archived_sessions/{NAME}": rollout(*archived),
        },
    )
    read = [*FIXED, ("user", "and the docs")] if len(live) > len(ASKED) else FIXED
    assert shown(store.transcript(THREAD)) == read
    resolver = SessionReferenceResolver(store)
    prepared = resolver.prepare(Target("me"), content=[], references=[{"sessionId": THREAD}])
    seq = prepared.additional_context.source.references[0].captured_through_seq
    assert seq == len(live) - 1  # the copy read: its meta, and two lines per message


def test_a_thread_is_its_newest_rollout_wherever_its_copies_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A thread with a rollout in ``sessions/``, a copy of it in ``archived_sessions/`` and a
    later rollout is its later rollout alone, as ``codex resume`` reads it (openai/codex
    ``codex-rs/rollout/src/list.rs``: ``find_thread_path_by_id_from_filenames`` keeps the
    latest time of the names that say the thread)."""
    later = f"rollout-2025-06-02T09-00-00-{THREAD}.jsonl"
    write(
        tmp_path,
        {
            f"sessions/2025/06/01/{NAME}": rollout(*ASKED),
            f"archived_sessions/{NAME}": rollout(*ASKED),
            f"sessions/2025/06/02/{later}": rollout(meta(), *said("assistant", "second part")),
        },
    )
    assert main(["show", "--root", str(tmp_path), THREAD]) == 0
    table = capsys.readouterr().out
    assert "kept 1 of 1 units" in table
    assert [table.count(text) for text in ("fix the build", "Fixed.", "second part")] == [0, 0, 1]
    assert main(["snapshot", "--root", str(tmp_path), THREAD]) == 0
    prompt = capsys.readouterr().out
    assert '"capturedThroughSeq":2' in prompt  # the later rollout's 3 lines
    assert [prompt.count(text) for text in ("fix the build", "Fixed.", "second part")] == [0, 0, 1]


def test_the_store_takes_the_options_every_store_takes_by_name() -> None:
    """A newcomer's trial: ``CodexStore(root, **options: Any)`` let ``mypy --strict`` pass a
    misspelt or mistyped option (``max_byte=``, ``max_bytes="1"``), which the other stores'
    signatures catch; its options are now theirs, each named and typed."""
    options = inspect.signature(CodexStore).parameters
    assert options == inspect.signature(ClaudeCodeStore).parameters
    assert list(options) == ["root", "max_bytes", "max_line_bytes", "heads"]
    dsh = inspect.signature(DirectoryStore).parameters
    assert [options[name].annotation for name in dsh] == [dsh[name].annotation for name in dsh]
