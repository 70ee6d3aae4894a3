"""Invariants of whole snapshots over valid logs: projection, budget, tag safety, accounting."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionref import MemoryStore, SessionReferenceResolver
from sessionref.codecs import tag_safe_json, utf8_encode, utf8_length
from sessionref.errors import BUDGET_EXCEEDED, SessionReferenceError
from sessionref.pipeline.escape_and_serialize import PROMPT_PREFIX, PROMPT_SUFFIX
from sessionref.snapshot import project_units
from sessionref.testing import LogRecords, js_strings, projected_units, session_logs
from tests.conftest import examples

NOTICE = re.compile(r"\n\[… omitted (\d+) UTF-8 bytes …\]\Z")
BOM = "\ufeff".encode()
TARGET = {"id": "\x00target-outside-the-store"}

logs = session_logs(max_turns=4, texts=js_strings(max_size=40))
budgets = st.integers(1, 2000)
slow = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def snapshot(log: LogRecords, max_bytes: int, label: str | None = None) -> Any:
    resolver = SessionReferenceResolver(MemoryStore([log]), max_reference_bytes=max_bytes)
    reference = {"sessionId": log["header"]["id"]}
    if label is not None:
        reference["label"] = label
    return resolver.snapshot(TARGET, [reference])


def data_objects(prompt: str) -> list[dict[str, Any]]:
    assert prompt.startswith(PROMPT_PREFIX) and prompt.endswith(PROMPT_SUFFIX)
    parsed: list[dict[str, Any]] = json.loads(prompt[len(PROMPT_PREFIX) : -len(PROMPT_SUFFIX)])
    return parsed


def minimal_size(log: LogRecords, units: list[dict[str, Any]], label: str) -> int:
    """The data object with only what may not be dropped, every text emptied."""
    last = len(units) - 1
    kept = [u for i, u in enumerate(units) if u["checkpoint"] or i == last]
    events = MemoryStore([log]).read(log["header"]["id"]).records
    from sessionref.log.records import captured_through_seq

    data = {
        "sessionId": log["header"]["id"],
        "label": label,
        "cwd": log["header"].get("cwd"),
        "capturedThroughSeq": captured_through_seq(events),
        "conversation": [{"role": u["role"], "text": ""} for u in kept],
    }
    return len(tag_safe_json(data))


def cut_omission(original: str, shown: str) -> int | None:
    """The omitted count of a valid head/tail cut of ``original`` showing ``shown``, else None."""
    found = NOTICE.search(shown)
    if found is None:
        return None
    omitted = int(found.group(1))
    whole, kept = utf8_encode(original), utf8_encode(shown[: found.start()])
    for split in range(len(kept) + 1):
        head, tail = kept[:split], kept[split:]
        for head_bom in (b"", BOM):
            for tail_bom in (b"", BOM):
                h, t = head_bom + head, tail_bom + tail
                if (
                    whole.startswith(h)
                    and (not t or whole.endswith(t))
                    and len(h) + len(t) <= len(whole)
                    and omitted == len(whole) - len(h) - len(t)
                ):
                    return omitted
    return None


@given(logs)
@settings(max_examples=examples(200), deadline=None)
def test_pipeline_projects_what_the_reference_projects(log: LogRecords) -> None:
    records = MemoryStore([log]).read(log["header"]["id"]).records
    units = [
        {"role": u.role, "text": u.text, "checkpoint": u.checkpoint} for u in project_units(records)
    ]
    assert units == projected_units(log)


@given(logs, budgets)
@slow
def test_each_data_object_fits_or_the_call_fails(log: LogRecords, max_bytes: int) -> None:
    label = log["header"]["id"]
    try:
        context = snapshot(log, max_bytes)
    except SessionReferenceError as exc:
        assert exc.code == BUDGET_EXCEEDED
        assert minimal_size(log, projected_units(log), label) > max_bytes
        return
    (data,) = data_objects(context.prompt)
    assert len(tag_safe_json(data)) <= max_bytes


@given(logs, budgets, js_strings(max_size=30))
@slow
def test_exactly_one_opening_and_closing_tag(log: LogRecords, max_bytes: int, label: str) -> None:
    try:
        context = snapshot(log, max_bytes, label)
    except SessionReferenceError:
        return
    prompt = context.prompt
    assert prompt.count("<referenced-sessions>") == 1
    assert prompt.count("</referenced-sessions>") == 1
    body = prompt[len(PROMPT_PREFIX) : -len(PROMPT_SUFFIX)]
    assert "<" not in body


@given(logs, budgets)
@slow
def test_omitted_bytes_are_the_dropped_and_cut_bytes(log: LogRecords, max_bytes: int) -> None:
    try:
        context = snapshot(log, max_bytes)
    except SessionReferenceError:
        return
    (stats,) = context.source.references
    (data,) = data_objects(context.prompt)
    originals = projected_units(log)
    kept = data["conversation"]
    # The drop phase removes the oldest units that are neither checkpoints nor the last one.
    last = len(originals) - 1
    droppable = [i for i, u in enumerate(originals) if not u["checkpoint"] and i != last]
    dropped = set(droppable[: len(originals) - len(kept)])
    assert len(dropped) == len(originals) - len(kept)
    survivors = [u for i, u in enumerate(originals) if i not in dropped]
    omitted = sum(utf8_length(originals[i]["text"]) for i in dropped)
    for unit, shown in zip(survivors, kept, strict=True):
        assert shown["role"] == unit["role"]
        if shown["text"] == unit["text"]:
            continue
        cut = cut_omission(unit["text"], shown["text"])
        assert cut is not None or shown["text"] == "", "a changed text is a head/tail cut"
        omitted += utf8_length(unit["text"]) if cut is None else cut
    assert stats.omitted_messages == len(dropped)
    assert stats.omitted_bytes == omitted
    assert stats.original_messages == len(originals)
    assert stats.retained_messages == len(kept)
    assert stats.truncated == (omitted > 0 or bool(dropped))
