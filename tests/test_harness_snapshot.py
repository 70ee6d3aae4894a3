"""The same snapshot for every harness (docs/harnesses.md §The same snapshot): a transcript's
surface goes through the DSH stages unchanged, so budgets, cuts and byte accounting hold as
for DSH, the data object names the harness, and a DSH source's bytes do not change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionref.claude_code.reader import claude_log, claude_transcript
from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.codex.reader import codex_log, codex_transcript
from sessionref.codex.store import CodexStore
from sessionref.errors import BUDGET_EXCEEDED, INVALID_CONFIG, SessionReferenceError
from sessionref.log.records import SessionHeader, SessionLog, latest_title
from sessionref.log.store import DirectoryStore
from sessionref.log.synthetic import surface_entries, surface_log
from sessionref.snapshot import snapshot_source
from sessionref.testing.claude_logs import HarnessLog, claude_code_logs
from sessionref.testing.codex_logs import codex_rollouts
from sessionref.transcript import Entry, Transcript
from tests.conftest import examples
from tests.logs import BytesPath


def test_lone_surrogates_reach_the_snapshot_as_javascript_writes_them() -> None:
    entries = [Entry("user", "text", "a\ud800"), Entry("assistant", "text", "\udc00b")]
    log = surface_log(Transcript("s", "codex", "t\ud800", None, None, entries), 4)
    data = snapshot_source(log, "s", 1000).data_json
    assert b'"text":"a\\ud800"' in data and b'"text":"\\udc00b"' in data
    assert latest_title(log) == "t\ud800"


def test_a_dsh_source_carries_no_harness_key() -> None:
    data = snapshot_source(SessionLog(SessionHeader("s", 0), []), "s", 1000).data_json
    assert b"harness" not in data
    assert SessionLog(SessionHeader("s", 0), []).harness == "dsh"


def test_only_the_latest_checkpoint_on_is_shown() -> None:
    entries = [
        Entry("user", "text", "before"),
        Entry("user", "checkpoint", "one"),
        Entry("tool", "tool-result", "output"),
        Entry("user", "checkpoint", "two"),
        Entry("assistant", "thinking", "hidden"),
        Entry("system", "text", "injected"),
        Entry("assistant", "text", "after"),
    ]
    snapshot = snapshot_source(
        surface_log(Transcript("s", "claude-code", None, "/p", 1, entries), 9), "s", 1000
    )
    data = json.loads(snapshot.data_json)
    assert data["conversation"] == [
        {"role": "user", "text": "two"},
        {"role": "assistant", "text": "after"},
    ]
    assert (snapshot.compacted, snapshot.captured_through_seq, data["harness"]) == (
        True,
        9,
        "claude-code",
    )


def either_log() -> st.SearchStrategy[tuple[str, HarnessLog]]:
    return st.tuples(st.just("claude-code"), claude_code_logs()) | st.tuples(
        st.just("codex"), codex_rollouts()
    )


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(either_log(), st.integers(120, 3000))
def test_budgets_and_accounting_hold_for_other_harnesses(
    generated: tuple[str, HarnessLog], max_bytes: int
) -> None:
    harness, log = generated
    session = (
        claude_log("s", log.lines) if harness == "claude-code" else codex_log("s", log.lines, None)
    )
    try:
        snapshot = snapshot_source(session, "label", max_bytes)
    except SessionReferenceError as error:
        assert error.code == BUDGET_EXCEEDED
        return
    data = json.loads(snapshot.data_json)
    assert len(snapshot.data_json) <= max_bytes
    assert data["harness"] == harness
    assert data["capturedThroughSeq"] == len(log.lines) - 1
    surface = [text for _, text in log.surface]
    assert snapshot.original_messages == len(surface)
    assert snapshot.compacted == (log.surface[0][0] == "checkpoint" if log.surface else False)
    assert snapshot.retained_messages + snapshot.omitted_messages == len(surface)
    if snapshot.omitted_bytes == 0:  # nothing cut: the kept texts are the newest, whole
        kept = [turn["text"] for turn in data["conversation"]]
        checkpoints = [text for kind, text in log.surface if kind == "checkpoint"]
        assert kept[len(checkpoints) :] == surface[len(surface) - len(kept) + len(checkpoints) :]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(either_log())
def test_reading_only_what_a_snapshot_shows_changes_nothing_it_shows(
    generated: tuple[str, HarnessLog],
) -> None:
    harness, log = generated

    def read(texts_only: bool) -> Transcript:
        if harness == "claude-code":
            return claude_transcript("s", log.lines, texts_only)
        return codex_transcript("s", log.lines, None, texts_only)

    full, lean = read(False), read(True)
    assert surface_entries(lean.entries) == surface_entries(full.entries)
    assert (lean.title, lean.cwd, lean.created_at) == (full.title, full.cwd, full.created_at)


@pytest.mark.parametrize("kind", [ClaudeCodeStore, CodexStore, DirectoryStore])
def test_a_store_root_that_is_no_directory_is_invalid_config(
    kind: type[ClaudeCodeStore | CodexStore | DirectoryStore], tmp_path: Path
) -> None:
    """As for a DSH store: a mistyped root is an error at once, not a store of no sessions."""
    name = {ClaudeCodeStore: "claude-code", CodexStore: "codex", DirectoryStore: "DSH"}[kind]
    file = tmp_path / "file"
    file.touch()
    for root, problem in ((tmp_path / "missing", "no such directory"), (file, "not a directory")):
        with pytest.raises(SessionReferenceError) as caught:
            kind(root)
        assert (caught.value.code, caught.value.message) == (
            INVALID_CONFIG,
            f"{name} store root {root}: {problem}",
        )
    for wrong, kind_name in ((None, "NoneType"), (b"/r", "bytes"), (3, "int")):
        with pytest.raises(SessionReferenceError) as caught:
            kind(wrong)  # type: ignore[arg-type]
        assert (caught.value.code, caught.value.message) == (
            INVALID_CONFIG,
            f"{name} store root must be a string or an os.PathLike, not {kind_name}",
        )
    with pytest.raises(SessionReferenceError) as caught:
        kind(BytesPath())  # type: ignore[arg-type]
    assert caught.value.message == (
        f"{name} store root must be a string or an os.PathLike of text, not BytesPath of bytes"
    )
