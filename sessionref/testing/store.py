"""Logs as the strategies give them (a header and its storage records), and writing them.

Writing goes through :mod:`sessionref.log.writer`, so a log is stored exactly as the harness
stores it: the header line, then the records in append batches, one zstd frame per batch.

>>> log = {"header": {"version": 0, "id": "s-1", "createdAt": 1, "delegationDepth": 0},
...        "events": [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
...                   {"type": "turn/end", "seq": 1, "time": 2,
...                    "data": {"turn": 1, "reason": {"kind": "completed"}}},
...                   {"type": "session/title", "seq": 2, "time": 3, "data": {}}]}
>>> [[r["seq"] for r in batch] for batch in turn_batches(log["events"])]
[[0, 1], [2]]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypedDict

from sessionref.log.writer import log_path, write_log

__all__ = ["LogRecords", "record_batches", "turn_batches", "write_session_store"]


class LogRecords(TypedDict):
    """A session log as in docs/api.md §Conformance: its header (``type`` may be left out)
    and storage records."""

    header: dict[str, Any]
    events: list[dict[str, Any]]


def turn_batches(records: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Records cut into append batches, each ending after a ``turn/end`` (the rest last).

    The harness flushes a batch at the latest when a turn ends; this is the coarsest batching
    it may have written.

    >>> records = [{"type": "turn/start"}, {"type": "turn/end"}, {"type": "session/title"}]
    >>> [len(batch) for batch in turn_batches(records)]
    [2, 1]
    """
    batches: list[list[dict[str, Any]]] = [[]]
    for record in records:
        batches[-1].append(record)
        if record.get("type") == "turn/end":
            batches.append([])
    return [batch for batch in batches if batch]


def record_batches(records: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each record alone in its batch (a harness that flushes after every event).

    >>> record_batches([{"seq": 0}, {"seq": 1}])
    [[{'seq': 0}], [{'seq': 1}]]
    """
    return [[record] for record in records]


Batching = Callable[[list[dict[str, Any]]], list[list[dict[str, Any]]]]


def write_session_store(
    root: str | os.PathLike[str],
    logs: Iterable[LogRecords],
    *,
    compress: bool = False,
    batches: Batching = turn_batches,
) -> list[Path]:
    """Write logs in the DSH on-disk layout under ``root`` and return the files written.

    Records are written as given (rows already packed stay so, nothing else is packed), cut
    into append batches by ``batches``; with ``compress`` each batch is one zstd frame of
    ``session.jsonl.zstd``. Two logs landing on the same path raise ``ValueError``.

    >>> import tempfile
    >>> log = {"header": {"version": 0, "id": "a b", "createdAt": 1, "delegationDepth": 0,
    ...                   "cwd": "/w"}, "events": []}
    >>> with tempfile.TemporaryDirectory() as root:
    ...     [p.relative_to(root).as_posix() for p in write_session_store(root, [log])]
    ['--w--/a~0020b/session.jsonl']
    """
    written: list[Path] = []
    for log in logs:
        path = log_path(root, log["header"], compress=compress)
        if path in written:
            raise ValueError(f"two logs share the path {path}")
        cut = batches(log["events"])
        written.append(write_log(root, log["header"], cut, compress=compress, pack=False))
    return written
