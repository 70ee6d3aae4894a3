"""Batch throughput: many small sessions, against the summed per-session floor.

The store is ``stores/batch``: :data:`BATCH_SESSIONS` sessions of about :data:`BATCH_TURNS`
turns, one zstd frame per append batch (``python -m benchmarks.generate --batch-sessions 1000
--batch-turns 20`` writes the same). Each round times, one after the other: the floor of every
session (reading, decompressing and envelope-decoding its log, summed), then the local engine
with 1 and 2 workers and Dask with 2 workers, each over the whole store from its listing on,
every result encoded as ``sessionref batch`` writes it. Medians over the rounds.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from benchmarks.generate import generate_batch_store
from benchmarks.measure import decompressed_size, envelope_floor, seconds
from sessionref import DirectoryStore
from sessionref.batch import build_result_lines

BATCH_SESSIONS: Final = 1000
BATCH_TURNS: Final = 20
FLOOR_RATIO: Final = 1.5
"""One worker takes at most this many times the summed per-session floor."""
TWO_WORKER_SPEED_UP: Final = 1.7
"""Two workers give at least this many times the sessions per second of one."""


def ensure_batch_store(stores: Path) -> Path:
    """The batch store, generated when missing or of another size."""
    root = stores / "batch"
    if len(DirectoryStore(root).headers()) != BATCH_SESSIONS:
        print(f"generating the {BATCH_SESSIONS}-session batch store …", file=sys.stderr)
        generate_batch_store(root, BATCH_SESSIONS, BATCH_TURNS)
    return root


def _local(root: Path, workers: int) -> Callable[[], object]:
    return lambda: list(build_result_lines(DirectoryStore(root), workers=workers))


def _dask(root: Path, workers: int) -> Callable[[], object]:
    from sessionref.batch.dask import iter_bag, result_lines_bag

    return lambda: list(iter_bag(result_lines_bag(root), workers=workers))


def measure_batch(stores: Path, repeat: int) -> dict[str, Any]:
    """Seconds (medians of ``repeat`` rounds after a warm-up) and sizes of the batch store."""
    root = ensure_batch_store(stores)
    store = DirectoryStore(root)
    paths = [store.path_of(header.id) for header in store.headers()]
    floors = [envelope_floor(path) for path in paths]
    runs: dict[str, Callable[[], object]] = {
        "floor_s": lambda: [floor() for floor in floors],
        "local_1_workers_s": _local(root, 1),
        "local_2_workers_s": _local(root, 2),
        "dask_2_workers_s": _dask(root, 2),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for round_number in range(repeat + 1):
        for name, work in runs.items():
            elapsed = seconds(work)
            if round_number:
                times[name].append(elapsed)
    measured: dict[str, Any] = {name: statistics.median(value) for name, value in times.items()}
    measured["sessions"] = len(paths)
    measured["log_bytes"] = sum(decompressed_size(path) for path in paths)
    return measured


def describe(batch: dict[str, Any]) -> str:
    """One line per engine: seconds, sessions per second, MB of JSONL per second.

    >>> print(describe({"sessions": 10, "log_bytes": 4e6, "floor_s": 1, "local_1_workers_s": 2}))
    batch over 10 sessions, 4 MB of JSONL:
      floor (read + decompress + envelope decode, summed): 1.00 s, 10 sessions/s, 4.0 MB/s
      local 1 workers: 2.00 s, 5 sessions/s, 2.0 MB/s
    """
    lines = [
        f"batch over {batch['sessions']} sessions, {batch['log_bytes'] / 1e6:.0f} MB of JSONL:"
    ]
    for key, value in batch.items():
        if key.endswith("_s"):
            name = key.removesuffix("_s").replace("_", " ")
            if key == "floor_s":
                name = "floor (read + decompress + envelope decode, summed)"
            lines.append(
                f"  {name}: {value:.2f} s, {batch['sessions'] / value:.0f} sessions/s, "
                f"{batch['log_bytes'] / 1e6 / value:.1f} MB/s"
            )
    return "\n".join(lines)


def batch_checks(batch: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """The batch targets: 1 worker against the floor, 2 workers against 1.

    >>> for check in batch_checks({"floor_s": 2.0, "local_1_workers_s": 2.8,
    ...                            "local_2_workers_s": 1.6}):
    ...     print(check)
    ('batch, 1 worker, within 1.5× of the summed per-session floor', '1.40×', True)
    ('batch, 2 workers ≥ 1.7× the sessions/s of 1', '1.75×', True)
    """
    one, two = batch["local_1_workers_s"], batch["local_2_workers_s"]
    vs_floor, speed_up = one / batch["floor_s"], one / two
    return [
        (
            f"batch, 1 worker, within {FLOOR_RATIO}× of the summed per-session floor",
            f"{vs_floor:.2f}×",
            vs_floor <= FLOOR_RATIO,
        ),
        (
            f"batch, 2 workers ≥ {TWO_WORKER_SPEED_UP}× the sessions/s of 1",
            f"{speed_up:.2f}×",
            speed_up >= TWO_WORKER_SPEED_UP,
        ),
    ]
