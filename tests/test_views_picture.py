"""``show``'s picture agrees exactly with the snapshot it pictures: over generated sessions and
budgets, the dropped units are ``omittedMessages`` (the oldest that are neither checkpoints
nor the newest), their bytes and the cuts' omissions add up to ``omittedBytes``, a cut shows
a head and a tail of its unit and the omission notice, and ``truncated`` says whether
anything was left out."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionref.codecs import utf8_encode, utf8_length
from sessionref.errors import BUDGET_EXCEEDED, INVALID_CONFIG, SessionReferenceError
from sessionref.log.store import MemoryStore
from sessionref.pipeline.escape_and_serialize import PROMPT_PREFIX, PROMPT_SUFFIX
from sessionref.redact import Redaction
from sessionref.resolver import SessionReferenceResolver
from sessionref.snapshot import Unit
from sessionref.testing import LogRecords, js_strings, projected_units, session_logs
from sessionref.types import SourceStats, Target
from sessionref.views.picture import (
    PictureMismatch,
    SnapshotPicture,
    check_agreement,
    match_units,
    snapshot_picture,
)
from tests.conftest import examples

BOM = "\ufeff"


def reported(log: LogRecords, max_bytes: int) -> tuple[SourceStats, list[dict[str, str]]]:
    """The stats and the conversation the resolver reports (the public path)."""
    resolver = SessionReferenceResolver(MemoryStore([log]), max_reference_bytes=max_bytes)
    context = resolver.snapshot(Target("\x00outside"), [{"sessionId": log["header"]["id"]}])
    prompt = context.prompt
    data = json.loads(prompt[len(PROMPT_PREFIX) : -len(PROMPT_SUFFIX)])[0]
    return context.source.references[0], data["conversation"]


def picture_or_none(log: LogRecords, max_bytes: int) -> SnapshotPicture | None:
    store = MemoryStore([log])
    session_id = log["header"]["id"]
    try:
        return snapshot_picture(store.read(session_id), session_id, max_bytes)
    except SessionReferenceError as exc:
        assert exc.code == BUDGET_EXCEEDED
        return None


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    session_logs(max_turns=5, texts=js_strings(max_size=60)),
    st.integers(60, 1500),
)
def test_the_picture_agrees_with_the_snapshot_stats(log: LogRecords, max_bytes: int) -> None:
    picture = picture_or_none(log, max_bytes)
    if picture is None:
        return
    stats, conversation = reported(log, max_bytes)
    units = projected_units(log)  # the independent reference's units
    rows = picture.rows
    assert [(r.role, r.text, r.checkpoint) for r in rows] == [
        (u["role"], u["text"], u["checkpoint"]) for u in units
    ]
    dropped = [r for r in rows if r.fate == "dropped"]
    assert len(dropped) == stats.omitted_messages
    # the oldest go: no kept or cut unit that could be dropped is older than a dropped one
    droppable = [r.position for r in rows[:-1] if not r.checkpoint]
    assert [r.position for r in dropped] == droppable[: len(dropped)]
    assert all(not r.checkpoint and r is not rows[-1] for r in dropped)
    for row, item in zip([r for r in rows if r.fate != "dropped"], conversation, strict=True):
        assert item["role"] == row.role
        if row.fate == "kept":
            assert item["text"] == row.text
            continue
        shown_bytes = utf8_encode(row.head + row.tail)
        original = utf8_encode(row.text)
        assert item["text"] == row.head + row.tail + row.notice
        assert original.startswith(utf8_encode(row.head)) or original.startswith(
            utf8_encode(BOM + row.head)
        )
        assert original.endswith(utf8_encode(row.tail))
        # each of head and tail may have lost one leading U+FEFF (3 bytes that count as kept)
        assert len(original) - len(shown_bytes) - row.omitted_bytes in (0, 3, 6)
    gone = sum(r.text_bytes for r in dropped) + sum(r.omitted_bytes for r in rows)
    assert gone == stats.omitted_bytes
    assert picture.truncated == stats.truncated == any(r.fate != "kept" for r in rows)
    assert picture.used_bytes <= max_bytes
    assert sum(r.text_bytes for r in dropped) == sum(utf8_length(r.text) for r in dropped)
    check_agreement(picture)


def test_a_checkpoint_is_never_the_one_dropped() -> None:
    units = [Unit("user", "ok", checkpoint=True), Unit("user", "ok"), Unit("assistant", "b")]
    rows = match_units(units, [("user", "ok"), ("assistant", "b")], 1)
    assert [r.fate for r in rows] == ["kept", "dropped", "kept"]


@pytest.mark.parametrize(
    ("conversation", "dropped"),
    [([("user", "b")], 0), ([("user", "a"), ("user", "x")], 0), ([], 0), ([("user", "a")], 1)],
)
def test_a_conversation_that_does_not_follow_from_the_units_is_refused(
    conversation: list[tuple[str, str]], dropped: int
) -> None:
    with pytest.raises(PictureMismatch):
        match_units([Unit("user", "a")], conversation, dropped)


def test_disagreeing_stats_are_refused() -> None:
    rows = match_units([Unit("user", "a" * 10), Unit("user", "b")], [("user", "b")], 1)
    picture = SnapshotPicture("s", "s", 100, 50, rows, 2, 1, 1, 9, True, False)
    with pytest.raises(PictureMismatch, match="9"):
        check_agreement(picture)


HEADER = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0, "cwd": "/w"}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("s", "s", 100, None), "snapshot_picture log must be a SessionLog, not str"),
        (
            (None, "s", "100", None),
            "snapshot_picture max_bytes must be a positive safe integer, not '100'",
        ),
        ((None, "s", 0, None), "snapshot_picture max_bytes must be a positive safe integer, not 0"),
        (
            (None, "s", 100, True),
            "snapshot_picture redaction must be a Redaction or None, not bool",
        ),
    ],
)
def test_an_argument_of_another_kind_is_invalid_config(
    arguments: tuple[Any, ...], message: str
) -> None:
    """As every public call: a coded error naming the argument and the kind given, never a
    TypeError or an AttributeError from deep inside."""
    log, label, max_bytes, redaction = arguments
    empty = MemoryStore([{"header": HEADER, "events": []}]).read("s")
    with pytest.raises(SessionReferenceError) as caught:
        snapshot_picture(empty if log is None else log, label, max_bytes, redaction)
    assert (caught.value.code, caught.value.message) == (INVALID_CONFIG, message)


def titled(title: Any) -> MemoryStore:
    """A store of one session ``s`` with one message, titled ``title`` (none: ``None``)."""
    message = {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}
    events: list[dict[str, Any]] = [
        {"type": "user/message", "seq": 0, "time": 0, "surfaceOp": "append", "data": message}
    ]
    if title is not None:
        data = {"title": title, "messageSeqs": [], "source": {"kind": "user"}}
        events.append({"type": "session/title", "seq": 1, "time": 0, "data": data})
    return MemoryStore([{"header": HEADER, "events": events}])


@pytest.mark.parametrize(
    ("title", "shown"),
    [(None, "s"), ("fix CI", "fix CI"), (7, "7"), (True, "true"), ({"a": [1]}, '{"a":[1]}')],
)
def test_a_picture_takes_what_a_store_gives_as_title(title: Any, shown: str) -> None:
    """A newcomer's trial: ``snapshot_picture(store.read(id), store.title(id), n)`` was
    INVALID_CONFIG for an untitled session (docs/api.md: ``title()`` gives ``None``) and for
    a title that is not a string (a log may hold any JSON value there). Untitled, the id
    labels it, as it labels a candidate; any other title shows as its JSON text (docs/mcp.md)."""
    store = titled(title)
    assert store.title("s") == title
    picture = snapshot_picture(store.read("s"), store.title("s"), 4096)
    assert (picture.label, [row.text for row in picture.rows]) == (shown, ["hi"])


def test_a_redacted_picture_agrees_with_the_redacted_snapshot_stats() -> None:
    """A tester's trial: ``show --redact`` of a session whose older dropped messages held
    secrets said `omitted 17518 bytes` over rows whose bytes and cuts made 17414. The snapshot
    counts the dropped units it never scans (all but the newest dropped) as the log holds
    them (docs/snapshot.md §Stats); the picture counted them redacted."""
    texts = ["key ticket-123456789012 one", "key ticket-98765 two", "plain three", "x" * 400]
    events: list[dict[str, Any]] = [
        {
            "type": "user/message",
            "seq": seq,
            "time": 0,
            "surfaceOp": "append",
            "data": {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}},
        }
        for seq, text in enumerate(texts)
    ]
    log = MemoryStore([{"header": HEADER, "events": events}]).read("s")
    redaction = Redaction(("ticket-[0-9]+",))
    picture = snapshot_picture(log, "s", 300, redaction)
    stats = redaction.snapshot(log, "s", 300)
    assert [row.fate for row in picture.rows] == ["dropped", "dropped", "dropped", "cut"]
    assert [row.text for row in picture.rows[:2]] == [
        "key [REDACTED:custom] one",
        "key [REDACTED:custom] two",
    ]
    # the two older dropped units as the log holds them, the newest dropped as scanned
    assert [row.text_bytes for row in picture.rows[:3]] == [27, 20, 11]
    assert (
        picture.omitted_bytes == stats.omitted_bytes == 27 + 20 + 11 + picture.rows[3].omitted_bytes
    )
    check_agreement(picture)
