"""A thread's rollout is read as Codex's resume reads it (docs/harnesses.md §Codex §Resume).

The expected answers come from Codex's reader (openai/codex ``codex-rs/rollout/src/recorder.rs``,
as friel-openai/codex@3b33ec3a and the stored copies of openai/codex have it:
``load_rollout_items`` → ``for_each_rollout_item_with_record_number`` →
``get_rollout_history``): each non-blank line is parsed by ``serde_json`` into a ``Value``
(a failure, such as a lone surrogate escape, which ``serde_json`` refuses, is a parse error and
the line is skipped), then into a ``RolloutLine`` (whose ``timestamp`` is a ``String``: a line
without one is a parse error, skipped); the lines are read by tokio's ``next_line``, which
fails on a line that is not UTF-8, and that error ends the resume (``?``); so does a rollout
in which no ``session_meta`` reads as one (``thread_id`` stays ``None``: "failed to parse
thread ID from rollout file"). The lines are written here by hand, as Codex's serde writes
them (tests/test_codex.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionref import SessionReferenceResolver, Target
from sessionref.codex.store import CodexStore
from sessionref.errors import SessionReferenceError
from tests.test_codex import NAME, THREAD, fails_naming, line, meta, rollout, said, shown, write

PATH = f"sessions/2025/06/01/{NAME}"


def captured(store: CodexStore) -> int | None:
    """The ``capturedThroughSeq`` of the thread's snapshot."""
    prepared = SessionReferenceResolver(store).prepare(
        Target("me"), content=[], references=[{"sessionId": THREAD}]
    )
    return prepared.additional_context.source.references[0].captured_through_seq


def unstamped(kind: str, payload: dict[str, object]) -> bytes:
    """A line without its ``timestamp``: no ``RolloutLine`` to Codex."""
    return json.dumps({"type": kind, "payload": payload}).encode()


def test_the_lines_codex_skips_are_passed_over_and_still_counted(tmp_path: Path) -> None:
    """Codex resumes the thread without the lines it cannot parse; they hold nothing of what
    it shows. sessionref showed an event without its ``timestamp`` (or with a number there);
    Codex skips such lines. The lines still count: ``capturedThroughSeq`` is the index of the
    last committed line."""
    numbered = {"timestamp": 5, "type": "event_msg", "payload": {"type": "user_message"}}
    lines = [
        meta(),
        *said("user", "first"),
        unstamped("event_msg", {"type": "user_message", "message": "no timestamp"}),
        json.dumps({**numbered, "payload": {**numbered["payload"], "message": "n"}}).encode(),
        b"not json",
        line("event_msg", {"type": "user_message", "message": "torn"})[:-9],  # no JSON
        *said("assistant", "answer"),
    ]
    store = write(tmp_path, {PATH: rollout(*lines)})
    assert shown(store.transcript(THREAD)) == [("user", "first"), ("assistant", "answer")]
    assert store.title(THREAD) == "first"
    assert captured(store) == len(lines) - 1


def test_a_line_that_is_not_utf8_makes_the_thread_read_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex's line reader fails on the line, and the resume with it: sessionref says so,
    naming the file and the line, in one line of the command line."""
    bad = line("event_msg", {"type": "agent_message", "message": "cafe"}).replace(
        b"cafe",
        b"caf\xe9",  # Latin-1, not UTF-8
    )
    store = write(tmp_path, {PATH: rollout(meta(), *said("user", "hi"), bad)})
    fails_naming(lambda: captured(store), tmp_path, f"{PATH}: line 4 is not UTF-8", capsys)


@pytest.mark.parametrize(
    ("first", "where"),
    [
        (meta(cli_version=7), "line 1: its session_meta is not one"),  # ``cli_version: String``
        (
            unstamped("session_meta", json.loads(meta())["payload"]),
            "line 1: its session_meta is not one",
        ),
    ],
)
def test_a_rollout_without_a_session_meta_codex_reads_is_read_failed(
    tmp_path: Path, first: bytes, where: str
) -> None:
    """Codex's resume finds no thread id in it and refuses it, and so does sessionref."""
    store = write(tmp_path, {PATH: rollout(first, *said("user", "hi"))})
    with pytest.raises(SessionReferenceError) as failure:
        store.transcript(THREAD)
    assert f"{PATH}: {where} Codex reads" in failure.value.message


ESCAPED_META = meta().replace(b'"type":"session_meta"', b'"type":"session\\u005fmeta"')
"""A ``session_meta`` whose type spells ``_`` as an escape, which ``serde_json`` reads as
``session_meta`` all the same."""


def test_a_session_meta_written_with_an_escape_is_one_codex_reads(tmp_path: Path) -> None:
    """``"session\\u005fmeta"`` is the string ``session_meta`` to ``serde_json``: Codex resumes
    the thread, and sessionref, which listed it, read it as having no ``session_meta``."""
    store = write(tmp_path, {PATH: rollout(ESCAPED_META, *said("user", "hi"))})
    assert [header.id for header in store.headers()] == [THREAD]
    assert shown(store.transcript(THREAD)) == [("user", "hi")]


def test_an_escaped_session_meta_codex_does_not_read_is_named_by_its_line(tmp_path: Path) -> None:
    """The escaped ``session_meta`` (line 2, after a line that only mentions the word) misses
    ``cwd``, a ``String`` of ``SessionMeta``: no thread id, so Codex refuses the rollout; the
    line named is that ``session_meta``, not the line that mentions it."""
    mention = line("event_msg", {"type": "agent_message", "message": "session_meta"})
    payload = json.loads(meta())["payload"]
    del payload["cwd"]
    broken = ESCAPED_META.replace(
        json.dumps(json.loads(meta())["payload"], separators=(",", ":")).encode(),
        json.dumps(payload, separators=(",", ":")).encode(),
    )
    assert broken != ESCAPED_META
    store = write(tmp_path, {PATH: rollout(mention, broken, *said("user", "hi"))})
    with pytest.raises(SessionReferenceError) as failure:
        store.transcript(THREAD)
    assert f"{PATH}: line 2: its session_meta is not one Codex reads" in failure.value.message


def test_the_oldest_rollouts_are_read_as_they_always_were(tmp_path: Path) -> None:
    """A rollout without envelope (a bare first line, then bare response items, no
    ``timestamp``) has no line a ``RolloutLine`` reads, but it is read whole, as before."""
    first = {"id": THREAD, "timestamp": "2025-04-01T00:00:00Z", "instructions": ""}
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "old"}]}
    path = f"sessions/rollout-2025-04-01T00-00-00-{THREAD}.jsonl"
    store = write(tmp_path, {path: rollout(*(json.dumps(v).encode() for v in (first, item)))})
    assert shown(store.transcript(THREAD)) == [("user", "old")]
