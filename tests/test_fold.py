"""The surface fold (docs/snapshot.md §Surface):
what it keeps, and every rule that makes a log unreadable."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionref.errors import SessionLogError
from sessionref.log.records import LogRecord
from sessionref.log.store import MemoryStore
from sessionref.log.surface import RUN_LIMIT, is_seq_run
from sessionref.pipeline.fold_compaction import fold_compaction
from sessionref.pipeline.read_surface import read_surface
from sessionref.snapshot import project_units
from tests.logs import Event, assistant, header, other, replace, tool_result, user


def records(events: list[Event]) -> list[LogRecord]:
    """The records of a log, read the way a store reads them."""
    return MemoryStore([{"header": header(), "events": events}]).read("s").records


def surface(events: list[Event]) -> list[int | None]:
    return [record.seq for record in fold_compaction(read_surface(records(events)))]


def test_append_and_replace_in_order() -> None:
    events = [
        other(0),
        user(1, "a"),
        assistant(2, "b", sourceEventSeqs=[]),
        tool_result(3, "out"),
        user(4, "c"),
        user(5, "summary", kind="compact", op=replace(1, 3), sourceEventSeqs=[1, 2, 3]),
    ]
    assert surface(events) == [5, 4]


def test_replace_in_the_middle_keeps_neighbours() -> None:
    events = [user(0, "a"), user(1, "b"), user(2, "c"), user(3, "d")]
    events.append(user(4, "s", kind="compact", op=replace(1, 2), sourceEventSeqs=[1, 2]))
    assert surface(events) == [0, 4, 3]


def test_prune_edits_only_the_first_content() -> None:
    events = [tool_result(0, "long output"), tool_result(1, "[pruned]", op=replace(0, 0))]
    events[1]["sourceEventSeqs"] = [0]
    events[1]["data"]["message"]["id"] = "m0"
    assert surface(events) == [1]


@pytest.mark.parametrize(
    ("before", "after", "kept"),
    [(2**53 + 1, 2**53, True), (2**53 + 2, 2**53, False), (10**400, 10**401, True)],
    ids=["2**53+1", "2**53+2", "10**400"],
)
def test_a_prune_compares_numbers_as_the_doubles_json_parse_reads(
    before: int, after: int, kept: bool
) -> None:
    """The harness compares the pruned result with its original as ``JSON.parse`` read both:
    2**53 + 1 and 2**53 are one double (asked of the real stack, 2026-12-04: the
    ``prune-iserror-zero`` case with ``"n":9007199254740993`` in the original's block and
    ``"n":9007199254740992`` in the prune's loads, the prune on its surface); 2**53 + 2 is
    another double; integers past a double's range are both Infinity."""
    events = [tool_result(0, "long output"), tool_result(1, "[pruned]", op=replace(0, 0))]
    events[1]["sourceEventSeqs"] = [0]
    events[1]["data"]["message"]["id"] = "m0"
    for event, number in zip(events, (before, after), strict=True):
        event["data"]["message"]["content"][0]["n"] = number
    if kept:
        assert surface(events) == [1]
    else:
        with pytest.raises(SessionLogError, match="tool result 1 changes more than its content"):
            surface(events)


def test_units_keep_direct_user_assistant_and_checkpoints() -> None:
    events = [
        user(0, "typed"),
        user(1, "injected", kind="plugin"),
        user(2, "goal", kind="goal"),
        assistant(3, "answer"),
        tool_result(4, "out"),
        user(5, "", kind="user"),
        user(6, "summary", kind="compact", op=replace(0, 1), sourceEventSeqs=[0, 1]),
    ]
    units = project_units(records(events))
    assert [(u.role, u.text, u.checkpoint) for u in units] == [
        ("user", "summary", True),
        ("assistant", "answer", False),
    ]


def test_display_replaces_solidified_content() -> None:
    shown = user(0, "<referenced-sessions>…", data={"display": [{"type": "text", "text": "hi"}]})
    assert [u.text for u in project_units(records([shown]))] == ["hi"]


def test_text_blocks_join_with_newline() -> None:
    event = assistant(0, "one")
    event["data"]["message"]["content"].append({"type": "text", "text": "two"})
    assert [u.text for u in project_units(records([event]))] == ["one\ntwo"]


END = {"turn": 1, "reason": {"kind": "completed"}}


def _with(event: Event, **changes: Any) -> Event:
    return {**event, **changes}


BROKEN: dict[str, list[Event]] = {
    "surface event without surfaceOp": [
        {k: v for k, v in user(0, "a").items() if k != "surfaceOp"}
    ],
    "surfaceOp on another type": [other(0, surfaceOp="append")],
    "unknown surfaceOp": [user(0, "a", op="prepend")],
    "replace start not on surface": [
        user(0, "a"),
        user(1, "b", op=replace(5, 0), sourceEventSeqs=[0]),
    ],
    "replace end not on surface": [
        user(0, "a"),
        user(1, "b", op=replace(0, 7), sourceEventSeqs=[0]),
    ],
    "replace start after end": [
        user(0, "a"),
        user(1, "b"),
        user(2, "c", op=replace(1, 0), sourceEventSeqs=[0, 1]),
    ],
    "replace of a removed node": [
        user(0, "a"),
        user(1, "b", op=replace(0, 0), sourceEventSeqs=[0]),
        user(2, "c", op=replace(0, 0), sourceEventSeqs=[0]),
    ],
    "replace without sourceEventSeqs": [user(0, "a"), user(1, "b", op=replace(0, 0))],
    "sourceEventSeqs missing a replaced node": [
        user(0, "a"),
        user(1, "b"),
        user(2, "c", op=replace(0, 1), sourceEventSeqs=[0]),
    ],
    "duplicate sourceEventSeqs": [user(0, "a"), assistant(1, "b", sourceEventSeqs=[0, 0])],
    "negative sourceEventSeqs": [user(0, "a"), assistant(1, "b", sourceEventSeqs=[-1])],
    "sourceEventSeqs not before the event": [user(0, "a"), assistant(1, "b", sourceEventSeqs=[1])],
    "empty sourceEventSeqs on a user message": [user(0, "a", sourceEventSeqs=[])],
    "sourceEventSeqs not an array": [user(0, "a", sourceEventSeqs=3)],
    "prune of two results": [
        tool_result(0, "x"),
        tool_result(1, "y"),
        tool_result(2, "z", op=replace(0, 1), sourceEventSeqs=[0, 1]),
    ],
    "prune of a user message": [
        user(0, "a"),
        tool_result(1, "z", op=replace(0, 0), sourceEventSeqs=[0]),
    ],
    "prune that changes more than content": [
        tool_result(0, "x"),
        tool_result(1, "y", op=replace(0, 0), sourceEventSeqs=[0]),
    ],
    "seq gap before a turn/end": [user(0, "a"), user(2, "b"), other(3, "turn/end", data=END)],
    "seq repeated before a turn/end": [user(0, "a"), user(0, "b"), other(1, "turn/end", data=END)],
    "message without content": [user(0, "a", data={"content": None})],
}


@pytest.mark.parametrize("events", BROKEN.values(), ids=BROKEN.keys())
def test_broken_logs_are_unreadable(events: list[Event]) -> None:
    with pytest.raises(SessionLogError):
        list(project_units(records(events)))


def test_packed_rows_occupy_their_seqs() -> None:
    row = {
        "type": "text-chunks",
        "seq0": 1,
        "time0": 5,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]},
    }
    assert surface([user(0, "q"), row, assistant(4, "abc", sourceEventSeqs=[1, 2, 3])]) == [0, 4]
    with pytest.raises(SessionLogError, match="seq gap"):
        surface([user(0, "q"), row, assistant(3, "abc"), other(4, "turn/end", data=END)])


@given(
    st.lists(st.integers(-3, 300), max_size=12)
    | st.builds(
        lambda start, size: list(range(start, start + size)),
        st.integers(0, 70_000),
        st.integers(1, 300),
    ),
    st.integers(0, 70_500),
    st.sampled_from([(",", "]"), (", ", "]"), (",", " ]")]),
)
def test_a_seq_run_is_what_it_says(seqs: list[int], below: int, spelling: tuple[str, str]) -> None:
    """``is_seq_run`` says yes exactly for a run ``a, a+1, …, b`` below ``below`` written
    as ``JSON.stringify`` writes it (beyond its limit it says no: the fold decodes them)."""
    comma, close = spelling
    raw = ("[" + comma.join(map(str, seqs)) + close).encode()
    canonical = ("[" + ",".join(map(str, seqs)) + "]").encode()
    run = bool(seqs) and seqs == list(range(seqs[0], seqs[-1] + 1)) and seqs[0] >= 0
    expected = run and raw == canonical and seqs[-1] < min(below, RUN_LIMIT)
    assert is_seq_run(raw, below) == expected


@pytest.mark.parametrize(
    ("dt", "kept"),
    [
        ([2**41, 1], True),
        ([-(2**45), 2**45], True),
        ([2**53 - 10, 4], True),
        ([2**53 - 10, 5], False),
    ],
)
def test_a_rows_member_times_must_stay_safe(dt: list[int], kept: bool) -> None:
    """Gaps beyond what the fast decoder takes are checked as the harness checks them: the
    row (time0 5) stands for its three events while every member time is a safe integer."""
    row = {
        "type": "text-chunks",
        "seq0": 1,
        "time0": 5,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": dt, "texts": ["a", "b", "c"]},
    }
    log = [user(0, "q"), row, assistant(4, "abc", sourceEventSeqs=[1, 2, 3])]
    assert [record.seq for record in records(log) if record.type != "text-chunks"] == (
        [0, 4] if kept else [0]
    )
