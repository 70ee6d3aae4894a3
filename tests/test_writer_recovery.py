"""Logs written by the writer and damaged after their last ``turn/end`` read as the harness reads
them: the recovered prefix, its closers and ``capturedThroughSeq`` as the reference model says.

The expected answers come from :mod:`sessionref.testing.recovery` and
:mod:`sessionref.testing.reference` (written from the real stack's behaviour and checked against
it on stores drawn from the same strategy, see ``scripts/oracle_stores.py``), never from the
library. Invariants check the reference itself: the recovered events are a prefix of the log,
and every event through the last ``turn/end`` is in it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from sessionref import DirectoryStore, SessionReferenceResolver, Target
from sessionref.errors import READ_FAILED, SessionReferenceError
from sessionref.log.builder import LogBuilder
from sessionref.log.writer import log_path, render_log, write_log, zstd_frame
from sessionref.pipeline.escape_and_serialize import PROMPT_PREFIX, PROMPT_SUFFIX
from sessionref.testing import (
    captured_through_seq,
    closers,
    event_units,
    expand_records,
    recovered_events,
)
from tests.conftest import examples
from tests.tail_damage import REFUSED, DamagedTail, damaged_tails

TARGET = Target("\x00recovery-target-outside-the-store", "/work/project")
UNBOUNDED = 1 << 40

examples = settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def expected(case: DamagedTail) -> list[dict[str, Any]] | None:
    """The events the harness recovers from the case, ``None`` if it refuses the file."""
    try:
        return recovered_events(case.data, compress=case.compress)
    except ValueError:
        return None


def snapshot_data(root: Any, session_id: str) -> dict[str, Any]:
    resolver = SessionReferenceResolver(DirectoryStore(root), max_reference_bytes=UNBOUNDED)
    context = resolver.snapshot(TARGET, [{"sessionId": session_id}])
    assert context is not None
    (data,) = json.loads(context.prompt[len(PROMPT_PREFIX) : -len(PROMPT_SUFFIX)])
    assert isinstance(data, dict)
    return data


@examples
@given(damaged_tails())
def test_the_reference_keeps_a_prefix_through_the_last_turn_end(case: DamagedTail) -> None:
    events = expected(case)
    if events is None:
        assert any(refused in step for step in case.steps for refused in REFUSED), case
        return
    original = expand_records(case.log["events"])
    assert events == original[: len(events)]
    assert len(events) >= case.intact_events


@examples
@given(damaged_tails())
def test_damage_after_the_last_turn_end_reads_as_the_harness_reads_it(
    tmp_path_factory: pytest.TempPathFactory, case: DamagedTail
) -> None:
    root = tmp_path_factory.mktemp("damaged")
    path = log_path(root, case.log["header"], compress=case.compress)
    path.parent.mkdir(parents=True)
    path.write_bytes(case.data)
    session_id = case.log["header"]["id"]
    events = expected(case)
    if events is None:
        with pytest.raises(SessionReferenceError) as refused:
            snapshot_data(root, session_id)
        assert refused.value.code == READ_FAILED
        return
    data = snapshot_data(root, session_id)
    units = event_units(events + closers(events))
    assert data["capturedThroughSeq"] == captured_through_seq(events)
    assert data["conversation"] == [{"role": u["role"], "text": u["text"]} for u in units]


def one_turn() -> LogBuilder:
    """A log of one whole turn: a prompt and its answer."""
    b = LogBuilder()
    b.turn_start()
    b.user("hi")
    b.step_start()
    b.assistant("hello")
    b.step_end()
    b.turn_end()
    return b


@pytest.mark.parametrize("compress", [False, True])
def test_a_null_line_after_the_last_turn_end_is_refused(tmp_path: Path, compress: bool) -> None:
    """The real stack fails on it: "Cannot read properties of null (reading 'seq')" (seen with
    ``real.mjs surface`` on this log, plain and in the torn last zstd frame)."""
    b = one_turn()
    header = {"version": 0, "id": "null-line", "createdAt": 1, "delegationDepth": 0}
    torn = zstd_frame(b"null\n")[:-2] if compress else b"null\n"
    data = render_log(header, [b.events], compress=compress) + torn
    with pytest.raises(ValueError):
        recovered_events(data, compress=compress)
    path = log_path(tmp_path, header, compress=compress)
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    with pytest.raises(SessionReferenceError) as refused:
        snapshot_data(tmp_path, "null-line")
    assert refused.value.code == READ_FAILED


@pytest.mark.parametrize("compress", [False, True])
def test_a_line_nested_too_deeply_is_damage_to_the_reference_as_to_the_reader(
    tmp_path: Path, compress: bool
) -> None:
    """A newcomer's property test over ``mutated_logs()``, which writes such lines: the
    reference raised ``RecursionError`` where it says it raises ``ValueError`` or recovers.
    The reader cannot parse the line either: both recover the turn before it from a plain
    log, and both refuse a zstd log whose complete frame holds it."""
    b = one_turn()
    header = {"version": 0, "id": "deep-line", "createdAt": 1, "delegationDepth": 0}
    deep = b"[" * 100_000 + b"]" * 100_000 + b"\n"
    data = render_log(header, [b.events], compress=compress)
    data += zstd_frame(deep) if compress else deep
    path = log_path(tmp_path, header, compress=compress)
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    if compress:
        with pytest.raises(ValueError):
            recovered_events(data, compress=compress)
        with pytest.raises(SessionReferenceError) as refused:
            snapshot_data(tmp_path, "deep-line")
        assert refused.value.code == READ_FAILED
    else:
        assert recovered_events(data, compress=compress) == b.events
        assert snapshot_data(tmp_path, "deep-line")["capturedThroughSeq"] == len(b.events) - 1


@pytest.mark.parametrize("kind", [[], {}, ["text-chunks"]])
def test_a_type_that_is_no_string_is_an_event_to_the_reference(kind: Any) -> None:
    """``mutated_logs()`` sets fields to values of every type; the reference raised
    ``TypeError: unhashable type`` looking a list or an object up among the packed rows'
    types. It is an event like any other (no packed row), for the later rules to judge."""
    events = [{"type": kind, "seq": 0, "time": 1, "data": {"turn": 1}}]
    header = {"version": 0, "id": "odd-type", "createdAt": 1, "delegationDepth": 0}
    data = render_log(header, [events], compress=False, pack=False)
    assert recovered_events(data, compress=False) == events


@pytest.mark.parametrize("compress", [False, True])
def test_an_id_too_long_for_the_flat_probe_is_unreadable(tmp_path: Path, compress: bool) -> None:
    """Recorded with ``real.mjs surface``: an encoded id of 244 characters reads, one of 245
    fails with ENAMETOOLONG, because the harness also probes ``<project>/<id>.jsonl.zstd``."""
    for length in (244, 245):
        b = LogBuilder()
        b.turn_start()
        b.user("hi")
        b.turn_end()
        header = {"version": 0, "id": "x" * length, "createdAt": 1, "delegationDepth": 0}
        write_log(tmp_path, header, [b.events], compress=compress)
    assert snapshot_data(tmp_path, "x" * 244)["conversation"] == [{"role": "user", "text": "hi"}]
    with pytest.raises(SessionReferenceError) as refused:
        snapshot_data(tmp_path, "x" * 245)
    assert refused.value.code == READ_FAILED
