"""Validation and migration as the harness loads a log (docs/format.md, docs/snapshot.md
§Surface; FINDINGS A.3, A.5, A.6, B.1–B.8, D.1): one change to a valid two-turn log at a time.

Each store was read by the real DSH stack (``real.mjs surface``): ``READABLE[name]`` is the
``capturedThroughSeq`` it answered, ``None`` where it refused the log, ``"absent"`` where its
listing skipped the session (it is then not found).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from sessionref import DirectoryStore, SessionReferenceResolver, Target
from sessionref.errors import SessionLogError
from sessionref.log.builder import DEFAULT_SOURCE
from sessionref.log.records import captured_through_seq
from sessionref.log.store import SessionNotFound
from sessionref.log.writer import render_header
from sessionref.snapshot import project_units
from tests.log_damage import place, plain_log
from tests.logs import call_result, event, header, two_turns

USER, STEP, ASSISTANT, TURN_END = 1, 2, 3, 5


def changed(seq: int, change: Any) -> bytes:
    """The two-turn log with event ``seq`` changed by ``change(event)`` (or replaced by it)."""
    events = two_turns()
    if callable(change):
        event_copy = copy.deepcopy(events[seq])
        change(event_copy)
        events[seq] = event_copy
    else:
        events[seq] = change
    return plain_log(events)


def set_path(path: str, value: Any, delete: bool = False) -> Any:
    """A change setting (or deleting) the key at a dotted path of an event."""

    def change(target: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if delete:
            del target[last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


def with_header(**fields: Any) -> bytes:
    head = header(**{k: v for k, v in fields.items() if v is not None})
    for key in [k for k, v in fields.items() if v is None]:
        del head[key]
    return plain_log(two_turns(), head)


ROW = {
    "type": "text-chunks",
    "seq0": 2,
    "time0": 5,
    "data": {"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["a"]},
}


def row(**changes: Any) -> bytes:
    """The two-turn log with step/start (seq 2) replaced by a one-member text row."""
    value = copy.deepcopy(ROW)
    for path, item in changes.items():
        set_path(path.replace("__", "."), item)(value)
    events: list[Any] = two_turns()
    events[STEP] = value
    return plain_log(events)


PRUNE = [
    call_result(12, "c1", "long output"),
    call_result(
        13,
        "c1",
        "[pruned]",
        surfaceOp={"op": "replace", "start": 12, "end": 12},
        sourceEventSeqs=[12],
    ),
]


def pruned(change: Any = None) -> bytes:
    """Two turns, a tool result (seq 12) and its prune (seq 13), the prune changed."""
    events = [*two_turns(), *copy.deepcopy(PRUNE)]
    events[-1]["data"]["message"]["id"] = "t12"
    if change is not None:
        change(events[-1])
    return plain_log(events)


PLAIN: dict[str, bytes] = {
    "valid": plain_log(two_turns()),
    "header-version-1": with_header(version=1),
    "header-dot-cwd": with_header(cwd="."),
    "header-windows-cwd": with_header(cwd="C:\\w"),
    "header-seedLength-negative": with_header(seedLength=-1),
    "header-parentSession-number": with_header(parentSession=5),
    "header-createdAt-negative": with_header(createdAt=-1),
    "header-createdAt-float": with_header(createdAt=1.5),
    "header-no-delegationDepth": with_header(delegationDepth=None),
    "header-delegationDepth-negative": with_header(delegationDepth=-1),
    "header-origin-bad": with_header(origin="x"),
    "header-agentPreset-number": with_header(agentPreset=5),
    "header-extra-field": with_header(note="kept out"),
    "header-no-newline": render_header(header())[:-1],
    "envelope-extra-key": changed(STEP, set_path("note", 1)),
    "envelope-ignorable-false": changed(STEP, set_path("ignorable", False)),
    "envelope-time-float": changed(STEP, set_path("time", 1.5)),
    "envelope-time-missing": changed(STEP, set_path("time", None, delete=True)),
    "envelope-data-missing": changed(STEP, set_path("data", None, delete=True)),
    "envelope-data-null": changed(TURN_END, set_path("data", None)),
    "envelope-seq0": changed(STEP, set_path("seq0", 2)),
    "envelope-integral-floats": changed(STEP, set_path("time", 1002.0)),
    "message-no-id": changed(USER, set_path("data.id", None, delete=True)),
    "message-empty-id": changed(USER, set_path("data.id", "")),
    "message-no-source": changed(USER, set_path("data.source", None, delete=True)),
    "message-content-not-array": changed(USER, set_path("data.content", "text")),
    "assistant-no-provider": changed(ASSISTANT, set_path("data.message.source", {"kind": "model"})),
    "assistant-source-user": changed(
        ASSISTANT, set_path("data.message.source", {**DEFAULT_SOURCE, "kind": "user"})
    ),
    "assistant-wrong-role": changed(ASSISTANT, set_path("data.message.role", "user")),
    "assistant-null-block": changed(ASSISTANT, set_path("data.message.content.0", None)),
    "assistant-string-block": changed(
        ASSISTANT, lambda e: e["data"]["message"]["content"].append("x")
    ),
    "text-not-string": changed(ASSISTANT, set_path("data.message.content.0.text", 5)),
    "toolresult-callid-mismatch": pruned(set_path("data.message.content.0.toolCallId", "c2")),
    "toolresult-two-blocks": pruned(
        lambda e: e["data"]["message"]["content"].append({"type": "text", "text": "x"})
    ),
    "prune": pruned(),
    "prune-changes-isError": pruned(set_path("data.message.content.0.isError", True)),
    "prune-changes-id": pruned(set_path("data.message.id", "other")),
    "turnend-reason-extra-key": changed(TURN_END, set_path("data.reason.note", "x")),
    "turnend-turn-zero": changed(TURN_END, set_path("data.turn", 0)),
    "turnend-legacy-disposed": changed(TURN_END, set_path("data.reason", {"kind": "disposed"})),
    "turnend-legacy-error": changed(
        TURN_END, set_path("data.reason", {"kind": "error", "step": 1, "message": "m"})
    ),
    "turnend-unknown-kind": changed(
        TURN_END, set_path("data.reason", {"kind": "whatever", "x": 1})
    ),
    "unknown-event-type": changed(STEP, set_path("type", "widget/added")),
    "unknown-event-ignorable": changed(
        STEP, lambda e: e.update(type="widget/added", ignorable=True)
    ),
    "request-header-delta": changed(STEP, set_path("type", "request/header-delta")),
    "request-header-no-provider": changed(
        STEP, lambda e: e.update(type="request/header", data={"header": {"config": {}}})
    ),
    "request-header": changed(
        STEP,
        lambda e: e.update(
            type="request/header", data={"header": {"config": {"provider": "p", "model": "m"}}}
        ),
    ),
    "turnstart-data-null": changed(0, set_path("data", None)),
    "sources-on-non-eligible": changed(STEP, set_path("sourceEventSeqs", [1])),
    "surfaceop-on-non-eligible": changed(STEP, set_path("surfaceOp", "append")),
    "surfaceop-null": changed(USER, set_path("surfaceOp", None)),
    "replace-extra-key": changed(
        ASSISTANT,
        lambda e: e.update(
            surfaceOp={"op": "replace", "start": 1, "end": 1, "x": 0}, sourceEventSeqs=[1]
        ),
    ),
    "replace-integral-floats": changed(
        ASSISTANT,
        lambda e: e.update(
            surfaceOp={"op": "replace", "start": 1.0, "end": 1.0}, sourceEventSeqs=[1.0]
        ),
    ),
    "row": row(),
    "row-dt-extra": row(data__dt=[1]),
    "row-dt-float": row(data__dt=[1.5]),
    "row-time0-float": row(time0=1.5),
    "row-data-extra-key": row(data__foo=1),
    "row-envelope-extra-key": row(foo=1),
    "row-turn-string": row(data__turn="1"),
    "row-texts-empty": row(data__texts=[]),
    "legacy-turnstart-trigger": changed(
        0, set_path("data", {"turn": 1, "trigger": {"kind": "user"}})
    ),
    "legacy-user-message": changed(
        USER,
        set_path(
            "data", {"content": [{"type": "text", "text": "old"}], "source": {"kind": "user"}}
        ),
    ),
    "legacy-assistant-message": changed(
        ASSISTANT,
        set_path(
            "data",
            {
                "turn": 1,
                "step": 1,
                "content": [{"type": "text", "text": "old"}],
                "provenance": {"provider": "p", "model": "m"},
            },
        ),
    ),
    "legacy-steering-message": changed(
        USER,
        lambda e: e.update(
            type="steering/message",
            data={
                "turn": 1,
                "content": [{"type": "text", "text": "steer"}],
                "source": {"kind": "user"},
            },
        ),
    ),
    "legacy-steering-wrapped": changed(
        USER,
        lambda e: e.update(
            type="steering/message",
            data={
                "turn": 1,
                "message": {
                    "id": "x",
                    "role": "user",
                    "content": [{"type": "text", "text": "wrapped"}],
                    "source": {"kind": "user"},
                },
            },
        ),
    ),
}
CWD = {"header-dot-cwd": ".", "header-windows-cwd": "C:\\w"}
READABLE: dict[str, int | str | None] = {
    "valid": 11,
    "header-version-1": None,
    "header-dot-cwd": None,
    "header-windows-cwd": None,
    "header-seedLength-negative": None,
    "header-parentSession-number": None,
    "header-createdAt-negative": "absent",
    "header-createdAt-float": "absent",
    "header-no-delegationDepth": "absent",
    "header-delegationDepth-negative": "absent",
    "header-origin-bad": "absent",
    "header-agentPreset-number": "absent",
    "header-extra-field": 11,
    "header-no-newline": "absent",
    "envelope-extra-key": None,
    "envelope-ignorable-false": None,
    "envelope-time-float": None,
    "envelope-time-missing": None,
    "envelope-data-missing": None,
    "envelope-data-null": 11,
    "envelope-seq0": None,
    "envelope-integral-floats": 11,
    "message-no-id": None,
    "message-empty-id": None,
    "message-no-source": None,
    "message-content-not-array": None,
    "assistant-no-provider": None,
    "assistant-source-user": None,
    "assistant-wrong-role": None,
    "assistant-null-block": None,
    "assistant-string-block": 11,
    "text-not-string": 11,
    "toolresult-callid-mismatch": None,
    "toolresult-two-blocks": None,
    "prune": 13,
    "prune-changes-isError": None,
    "prune-changes-id": None,
    "turnend-reason-extra-key": None,
    "turnend-turn-zero": None,
    "turnend-legacy-disposed": 11,
    "turnend-legacy-error": 11,
    "turnend-unknown-kind": 11,
    "unknown-event-type": None,
    "unknown-event-ignorable": 11,
    "request-header-delta": None,
    "request-header-no-provider": None,
    "request-header": 11,
    "turnstart-data-null": None,
    "sources-on-non-eligible": None,
    "surfaceop-on-non-eligible": None,
    "surfaceop-null": None,
    "replace-extra-key": None,
    "replace-integral-floats": 11,
    "row": 11,
    "row-dt-extra": None,
    "row-dt-float": None,
    "row-time0-float": None,
    "row-data-extra-key": None,
    "row-envelope-extra-key": None,
    "row-turn-string": None,
    "row-texts-empty": None,
    "legacy-turnstart-trigger": 11,
    "legacy-user-message": 11,
    "legacy-assistant-message": 11,
    "legacy-steering-message": 11,
    "legacy-steering-wrapped": 11,
}


def read_cts(root: Path) -> int | str | None:
    """``READABLE``'s answer for the session ``s`` stored under ``root``."""
    store = DirectoryStore(root)
    if "s" not in {h.id for h in store.headers()}:
        return "absent"
    try:
        log = store.read("s")
        list(project_units(log.records))
    except SessionNotFound:
        return "absent"
    except SessionLogError:
        return None
    found = captured_through_seq(log.records)
    return "empty" if found is None else found


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_each_rule_as_the_harness_applies_it(tmp_path: Path, name: str) -> None:
    place(tmp_path, PLAIN[name], cwd=CWD.get(name, "/w"), compress=False)
    assert read_cts(tmp_path) == READABLE[name]


def texts(name: str, tmp_path: Path) -> list[str]:
    place(tmp_path, PLAIN[name], compress=False)
    return [unit.text for unit in project_units(DirectoryStore(tmp_path).read("s").records)]


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("legacy-user-message", "old"),
        ("legacy-steering-message", "steer"),
        ("legacy-steering-wrapped", "wrapped"),
    ],
)
def test_migrated_user_messages_show(tmp_path: Path, name: str, shown: str) -> None:
    assert texts(name, tmp_path)[0] == shown


def test_a_migrated_assistant_message_shows(tmp_path: Path) -> None:
    assert texts("legacy-assistant-message", tmp_path)[1] == "old"


def test_a_text_block_whose_text_is_not_a_string_is_skipped(tmp_path: Path) -> None:
    assert texts("text-not-string", tmp_path)[:2] == ["first question", "second question"]


def test_a_session_that_cannot_be_loaded_is_labelled_by_its_id(tmp_path: Path) -> None:
    titled = [
        *two_turns(),
        event("session/title", 12, {"title": "T", "messageSeqs": [1], "source": {"kind": "user"}}),
    ]
    place(tmp_path, plain_log(titled, header("good")), session_id="good", compress=False)
    broken = [*titled[:3], {**titled[3], "type": "widget/added"}, *titled[4:]]
    place(tmp_path, plain_log(broken, header("bad")), session_id="bad", compress=False)
    resolver = SessionReferenceResolver(DirectoryStore(tmp_path))
    labels = {c.session_id: c.label for c in resolver.list_candidates(Target("t"))}
    assert labels == {"good": "T", "bad": "bad"}
