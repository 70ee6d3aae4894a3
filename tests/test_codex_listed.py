"""Which Codex threads are listed (docs/harnesses.md §Codex §Listed). The expected answers
are Codex's rule (openai/codex ``codex-rs/rollout/src/list.rs``: ``build_thread_item`` lists
a thread when its head scan saw a ``session_meta`` and a preview or a compacted user message;
``read_head_summary_with_references``, ``event_msg_preview``; ``user_message_preview`` in
``codex-rs/state/src/extract.rs``), written out case by case from that source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessionref import SessionReferenceResolver, Target
from sessionref.cli import main
from sessionref.codex.store import CodexStore
from sessionref.errors import SessionLogError
from sessionref.index import SessionIndex
from tests.test_codex import NAME, THREAD, copy, line, meta, rollout, said, shown
from tests.test_codex_references import LIVE, SEGMENTS, reference, segment, segment_path
from tests.test_index_limits import settled_clock
from tests.test_mcp import listed_and_read

ROLLOUT = f"sessions/2025/06/01/{NAME}"
OTHER = "0197a000-0000-7000-8000-0000000000bb"
OTHER_ROLLOUT = f"sessions/2025/06/01/rollout-2025-06-01T11-00-00-{OTHER}.jsonl"


def event(kind: str, **fields: Any) -> bytes:
    return line("event_msg", {"type": kind, **fields})


def asked(text: str, **fields: Any) -> bytes:
    """The person's prompt, as Codex records it for its views."""
    return event("user_message", message=text, **fields)


def completed(*content: dict[str, Any]) -> bytes:
    """A user message as a paginated rollout records it: a completed turn item."""
    return event("item_completed", item={"type": "UserMessage", "id": "u", "content": content})


def compacted(*history: dict[str, Any]) -> bytes:
    return line("compacted", {"message": "", "replacement_history": list(history)})


HIDDEN = "Codex does not list its thread: "
"""How the problem of a rollout whose thread Codex's listing hides begins."""


def listed(tmp_path: Path, *lines: bytes, refused: bool = False) -> bool:
    """Whether a store holding a rollout of ``lines`` lists its thread; one it does not list
    is a problem of the listing saying so, and it is read by its id either way, unless
    (``refused``) Codex's resume refuses it, which reading it then says naming the file
    (docs/harnesses.md §Codex §Resume)."""
    path = tmp_path / ROLLOUT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(rollout(*lines))
    store = CodexStore(tmp_path)
    ids = [header.id for header in store.headers()]
    problems = store.problems()
    assert (
        problems == []
        if ids
        else [(p.path, p.message[: len(HIDDEN)]) for p in problems] == [(str(path), HIDDEN)]
    )
    if refused:
        with pytest.raises(SessionLogError, match="Codex refuses to resume") as failure:
            store.transcript(THREAD)
        assert str(path) in str(failure.value)
    else:
        store.transcript(THREAD)
    return ids == [THREAD]


JUNK = b'{"timestamp":"2025-06-01T10:00:00.000Z","type":"turn_context","payload":{}}'
"""A line that counts in the head scan and gives nothing."""


@pytest.mark.parametrize(
    ("lines", "shown_by_codex"),
    [
        ([meta()], False),  # started, never prompted
        ([meta(), line("response_item", copy("user", "<environment_context>x"))], False),
        ([meta(), line("response_item", copy("user", "only the model's copy"))], False),
        ([meta(), event("agent_message", message="hello")], False),
        ([meta(), asked("fix it")], True),
        ([meta(), asked(" \u3000\n")], False),  # blank as Rust trims
        ([meta(), asked("# Context from my IDE setup:\nx\n## My request for Codex:\n ")], False),
        ([meta(), asked("# Context from my IDE setup:\n## My request for Codex: go")], True),
        ([meta(), asked("", images=["data:image/png;base64,AA"])], True),
        ([meta(), asked("", local_images=["/tmp/a.png"])], True),
        ([meta(), asked("", images=[], local_images=[])], False),
        ([meta(), completed({"type": "text", "text": "fix it"})], True),
        ([meta(), completed({"type": "text", "text": "  "})], False),
        ([meta(), completed({"type": "local_image", "path": "/tmp/a.png"})], True),
        ([meta(), event("thread_goal_updated", goal={"objective": "ship it"})], True),
        ([meta(), event("thread_goal_updated", goal={"objective": " "})], False),
        ([meta(), compacted(copy("user", "earlier"), copy("assistant", "ok"))], True),
        ([meta(), compacted(copy("assistant", "ok"))], False),
        ([asked("fix it"), meta()], True),  # the meta need not come first
        ([*[JUNK] * 9, meta(), asked("fix it")], True),  # the meta is the 10th line
        ([*[JUNK] * 10, meta(), asked("fix it")], False),  # the 11th: the scan stopped
        ([*[JUNK, b"", b"  "] * 9, meta(), asked("fix it")], True),  # blank lines do not count
        ([*[b"not json"] * 10, meta(), asked("fix it")], False),  # lines that do not read do
        ([meta(), *[JUNK] * 208, asked("fix it")], True),  # the 210th line
        ([meta(), *[JUNK] * 209, asked("fix it")], False),  # the 211th: past the scan
    ],
)
def test_a_thread_is_listed_when_codex_lists_it(
    tmp_path: Path, lines: list[bytes], shown_by_codex: bool
) -> None:
    assert listed(tmp_path, *lines) is shown_by_codex


def test_a_thread_holding_only_its_meta_is_not_listed_but_is_read_by_its_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex's picker does not show a thread that was started and never prompted; sessionref
    listed it, labelled by its id. It is read by its id still, as Codex resumes it."""
    home = tmp_path / "home"
    (tmp_path / "project").mkdir()  # where the MCP server runs
    for path, lines in ((ROLLOUT, [meta()]), (OTHER_ROLLOUT, [meta(OTHER), *said("user", "go")])):
        (home / path).parent.mkdir(parents=True, exist_ok=True)
        (home / path).write_bytes(rollout(*lines))
    for index in ([], ["--no-index"]):
        assert main(["candidates", "--root", str(home), *index, "--json"]) == 0
        assert [row["sessionId"] for row in json.loads(capsys.readouterr().out)] == [OTHER]
    assert main(["snapshot", "--root", str(home), THREAD]) == 0
    assert '"capturedThroughSeq":0' in capsys.readouterr().out
    resources, text = listed_and_read(home, THREAD)
    assert [resource.name for resource in resources.resources] == ["go"]
    assert THREAD in text
    resolver = SessionReferenceResolver(CodexStore(home))
    prepared = resolver.prepare(Target("me"), content=[], references=[{"sessionId": THREAD}])
    assert prepared.additional_context.source.references[0].captured_through_seq == 0


def test_the_oldest_rollouts_are_listed_though_codex_cannot_list_them(tmp_path: Path) -> None:
    """A rollout without envelope has no ``session_meta`` Codex's listing reads; sessionref
    lists it and reads it whole, as it always has."""
    first = json.dumps({"id": THREAD, "timestamp": "2025-04-01T00:00:00Z", "instructions": ""})
    assert listed(tmp_path, first.encode(), json.dumps(copy("user", "old")).encode())
    assert shown(CodexStore(tmp_path).transcript(THREAD)) == [("user", "old")]


def test_a_preview_is_found_through_the_references_in_the_head(tmp_path: Path) -> None:
    """The head scan reads a referenced rollout's head for a preview: at most two files in
    all, never a fork at its first user message."""
    for n in (1, 2, 3):
        (tmp_path / segment_path(SEGMENTS[n])).parent.mkdir(parents=True)
    empty, prompted = segment(1), segment(3, asked("from a segment"))
    (tmp_path / segment_path(SEGMENTS[1])).write_bytes(empty)
    (tmp_path / segment_path(SEGMENTS[2])).write_bytes(empty)
    (tmp_path / segment_path(SEGMENTS[3])).write_bytes(prompted)

    def to(n: int, **fields: Any) -> bytes:
        return reference(tmp_path / segment_path(SEGMENTS[n]), SEGMENTS[n], **fields)

    cases = [
        ([to(3)], True),
        ([to(1), to(3)], True),  # the second file
        ([to(1), to(2), to(3)], False),  # a third file is not read
        ([to(3, nth_user_message=0)], False),  # a fork before its first message
        ([to(3, nth_user_message=1)], True),
        ([reference("/gone.jsonl", SEGMENTS[0])], False),
    ]
    live = tmp_path / LIVE
    live.parent.mkdir(parents=True)
    for references, shown_by_codex in cases:
        live.write_bytes(rollout(meta(), *references))
        store = CodexStore(tmp_path)
        assert ([h.id for h in store.headers()] == [THREAD]) is shown_by_codex, references
        hidden = [problem.path for problem in store.problems()]
        assert hidden == ([] if shown_by_codex else [str(live)]), references


BAD_UTF8 = JUNK.replace(b"{}", b'{"x":"\xff"}')
"""A line the head scan reads that is not UTF-8."""


def bare(kind: str, payload: dict[str, Any]) -> bytes:
    """A line without its ``timestamp``: no ``RolloutLine`` to Codex."""
    return json.dumps({"type": kind, "payload": payload}).encode()


def meta_without(*fields: str, **more: Any) -> bytes:
    """The thread's ``session_meta`` with ``fields`` left out and ``more`` set."""
    payload = json.loads(meta(**more))["payload"]
    return line("session_meta", {k: v for k, v in payload.items() if k not in fields})


@pytest.mark.parametrize(
    ("lines", "shown_by_codex", "resumed_by_codex"),
    [
        # Codex's resume (docs/harnesses.md §Codex §Resume) refuses a rollout holding a line that
        # is not UTF-8 or no session_meta that reads, whether or not its listing shows it.
        # Codex's scan reads each line with tokio's ``next_line``, which errs on a line that is
        # not UTF-8; ``build_thread_item`` takes the failed summary as an empty one
        # (``read_head_summary_for_listing(..).unwrap_or_default()``, codex-rs/rollout/src/list.rs)
        ([meta(), BAD_UTF8, asked("fix it")], False, False),
        ([BAD_UTF8, meta(), asked("fix it")], False, False),
        ([meta(), asked("fix it"), BAD_UTF8], True, False),  # the scan has all it looks for
        # a paginated rollout's completed ``UserMessage`` is a first user message as much as a
        # legacy ``user_message`` event ("Legacy rollouts persist UserMessage while paginated
        # rollouts persist ItemCompleted(UserMessage), so summaries must recognize both
        # formats": ``read_head_summary_with_references``, list.rs as of friel-openai/codex
        # @3b33ec3a; older list.rs counted ``EventMsg::UserMessage`` alone), so the scan stops
        ([meta(), completed({"type": "text", "text": "fix it"}), BAD_UTF8], True, False),
        ([meta(), completed({"type": "local_image", "path": "/tmp/a.png"}), BAD_UTF8], True, False),
        ([meta(), completed({"type": "text", "text": " "}), BAD_UTF8], False, False),  # no preview
        # a goal is a preview but no first user message: the scan goes on, and reads the line
        (
            [meta(), event("thread_goal_updated", goal={"objective": "ship"}), BAD_UTF8],
            False,
            False,
        ),
        ([meta(), compacted(copy("user", "earlier")), BAD_UTF8], False, False),
        (
            [
                meta(),
                event("thread_goal_updated", goal={"objective": "x"}),
                *[JUNK] * 207,
                BAD_UTF8,
            ],
            False,
            False,
        ),
        (
            [
                meta(),
                event("thread_goal_updated", goal={"objective": "x"}),
                *[JUNK] * 208,
                BAD_UTF8,
            ],
            True,
            False,
        ),
        # ``read_head_summary_with_references`` skips a line ``serde_json`` cannot read as a
        # ``RolloutLine`` (codex-rs/protocol/src/protocol.rs: ``RolloutLine``, whose
        # ``timestamp`` is a ``String``; ``SessionMetaLine``, ``SessionMeta``, ``GitInfo``)
        ([meta_without("cli_version"), asked("fix it")], False, False),
        ([meta_without("originator"), asked("fix it")], False, False),
        ([meta_without("cwd"), asked("fix it")], False, False),
        ([meta_without("timestamp"), asked("fix it")], False, False),
        ([meta(forked_from_id="x"), asked("fix it")], False, False),
        ([meta(segment_id=7), asked("fix it")], False, False),
        ([meta(model_provider=7), asked("fix it")], False, False),
        ([meta(git={"branch": 7}), asked("fix it")], False, False),
        ([meta(source=None), asked("fix it")], False, False),
        (
            [meta(git={"branch": "main"}, model_provider=None, source="vscode"), asked("x")],
            True,
            True,
        ),
        ([meta(history_mode="paginated"), asked("fix it")], True, True),
        ([meta(history_mode="legacy"), asked("fix it")], True, True),
        ([bare("session_meta", json.loads(meta())["payload"]), asked("fix it")], False, False),
        ([meta(), bare("event_msg", {"type": "user_message", "message": "fix it"})], False, True),
        ([meta_without("cli_version"), meta(), asked("fix it")], True, True),  # the next meta reads
    ],
)
def test_a_head_codex_cannot_read_hides_the_thread(
    tmp_path: Path, lines: list[bytes], shown_by_codex: bool, resumed_by_codex: bool
) -> None:
    """Codex lists a thread only when every line its scan reads is UTF-8 and a ``session_meta``
    among them reads whole; reading it by its id succeeds as Codex's resume does
    (:func:`listed`)."""
    assert listed(tmp_path, *lines, refused=not resumed_by_codex) is shown_by_codex


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        ([meta()], "its head holds no user message, goal or compacted user message"),
        ([meta(), asked(" ")], "its head holds no user message, goal or compacted user message"),
        ([meta(), BAD_UTF8, asked("fix it")], "a line of its head is not UTF-8"),
        (
            [*[JUNK] * 10, meta(), asked("fix it")],
            "no session_meta Codex reads in its first 10 lines",
        ),
        (
            [meta(history_mode="windowed"), asked("x")],
            "no session_meta Codex reads in its first 10 lines",
        ),
    ],
)
def test_a_thread_codex_does_not_list_is_passed_over_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[bytes], why: str
) -> None:
    """A thread Codex's picker hides is left out of the listing as any log passed over is:
    ``--verbose`` says which rollout and why, without it a note counts it. The line does not
    say the thread is read by its id: Codex's resume refuses some (a line not UTF-8, a
    history mode it does not know), which reading them says (§Codex §Resume)."""
    path = tmp_path / ROLLOUT
    path.parent.mkdir(parents=True)
    path.write_bytes(rollout(*lines))
    reason = f"{HIDDEN}{why}"
    for index in (["--index", str(tmp_path / "index.db")], ["--no-index"]):
        assert main(["candidates", "--root", str(tmp_path), *index, "-v"]) == 0
        assert capsys.readouterr().err.splitlines()[0] == f"passed over {path}: {reason}"
        assert main(["candidates", "--root", str(tmp_path), *index]) == 0
        noted = capsys.readouterr().err.splitlines()
        assert "note: 1 log passed over (--verbose lists them)" in noted


@pytest.mark.parametrize("mode", ["windowed", "Paginated", None, 1])
def test_a_thread_of_a_history_mode_codex_does_not_know_is_hidden_and_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: object
) -> None:
    """Codex's listing cannot read such a ``session_meta`` (``ThreadHistoryMode`` is
    ``legacy`` or ``paginated``), and its resume refuses the rollout, failing closed on a
    history it cannot tell how to read (codex-rs/rollout/src/recorder.rs:
    ``load_rollout_items``, ``reject_unknown_thread_history_mode``): sessionref neither lists
    it nor reads it, and says why naming the file."""
    path = tmp_path / ROLLOUT
    path.parent.mkdir(parents=True)
    path.write_bytes(rollout(meta(history_mode=mode), *said("user", "fix it")))
    store = CodexStore(tmp_path)
    assert list(store.headers()) == []
    assert [problem.path for problem in store.problems()] == [str(path)]
    assert main(["snapshot", "--root", str(tmp_path), THREAD]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "line 1" in err
    assert "history_mode" in err and "Traceback" not in err


def test_the_index_lists_what_the_store_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The index keeps whether each head is listed (its schema says which rule made it): a
    head Codex cannot read is hidden with it and without it."""
    home = tmp_path / "home"
    for path, lines in (
        (ROLLOUT, [meta(), BAD_UTF8, asked("hidden")]),
        (OTHER_ROLLOUT, [meta(OTHER), asked("shown")]),
    ):
        (home / path).parent.mkdir(parents=True, exist_ok=True)
        (home / path).write_bytes(rollout(*lines))
    for index in (["--index", str(tmp_path / "index.db")], ["--no-index"]):
        assert main(["candidates", "--root", str(home), *index, "--json"]) == 0
        assert [row["sessionId"] for row in json.loads(capsys.readouterr().out)] == [OTHER]


@pytest.mark.parametrize("ended", [False, True])
def test_a_line_too_long_in_the_scan_fails_naming_the_file_and_line(
    tmp_path: Path, ended: bool
) -> None:
    """The head scan reads the rollout's text as a stream, and a committed line longer than
    the store's ``max_line_bytes`` fails there, held no further than that (the DSH reader
    bounds a line the same way): a problem of the listing that names the file and the line.
    A torn last line of any length is passed over, as the whole read passes it over (a
    reviewer's find: the scan refused a rollout caught mid-write that reading took). Codex's
    reader has no bound. A goal is a preview but no first user message, so the scan goes on
    into the long line."""
    filler = line("turn_context", {"x": "y" * 1000})
    lines = [meta(), event("thread_goal_updated", goal={"objective": "x"}), *[filler] * 80]
    long = b'{"x":"' + b"z" * 300_000 + (b'"}\n' if ended else b"")
    path = tmp_path / ROLLOUT
    path.parent.mkdir(parents=True)
    path.write_bytes(rollout(*lines) + long)
    store = CodexStore(tmp_path, max_line_bytes=200_000)
    if not ended:  # listed and read alike, the torn line left out
        assert [header.id for header in store.headers()] == [THREAD]
        assert store.problems() == []
        store.transcript(THREAD)
        return
    assert list(store.headers()) == []
    [problem] = store.problems()
    assert problem.path == str(path)
    assert f"line {len(lines) + 1} is longer than 200000 bytes" in problem.message
    assert listed(tmp_path / "short", *lines[:2])  # with the goal alone it lists


def test_a_head_cut_by_a_low_max_bytes_lists_once_the_index_is_raised(tmp_path: Path) -> None:
    """A reviewer's find: the head scan stops quietly at ``max_bytes``, so a thread whose
    prompt lies past a low limit is not listed under it, with no problem to read again; an
    index raised to higher limits kept that head and still did not list it, where the store
    alone lists it under them."""
    filler = line("turn_context", {"x": "y" * 1000})
    rollout_path = tmp_path / ROLLOUT
    rollout_path.parent.mkdir(parents=True)
    # past the 64 KiB head the listing reads first, and past the low limit
    rollout_path.write_bytes(rollout(meta(), *[filler] * 80, asked("fix the build")))
    low, high = 70_000, 1 << 20
    assert [h.id for h in CodexStore(tmp_path, max_bytes=low).headers()] == []
    assert [h.id for h in CodexStore(tmp_path, max_bytes=high).headers()] == [THREAD]
    database = tmp_path / "index.sqlite"
    for max_bytes, ids in ((low, []), (high, [THREAD])):
        store = CodexStore(tmp_path, max_bytes=max_bytes)
        with SessionIndex(store, database, clock=settled_clock) as index:
            index.refresh()
            assert [header.id for header in index.headers()] == ids, max_bytes
