"""What every benchmark measures with: medians of wall time, traced peak memory, the floor."""

from __future__ import annotations

import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path

from sessionref.log.records import (
    DEFAULT_MAX_LINE_BYTES,
    LogRecord,
    decode_records,
    line_pieces,
    split_header,
    zstd_chunks,
)


def median_seconds(work: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``work()`` over ``repeat`` runs, after one warm-up run.

    >>> median_seconds(lambda: None, 3) < 0.1
    True
    """
    work()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def alternating_medians(works: Sequence[Callable[[], object]], repeat: int) -> list[float]:
    """Median wall time of each of ``works`` over ``repeat`` rounds in which they take turns
    (after one warm-up round), so that a machine busy with other work slows them alike.

    >>> [t < 0.1 for t in alternating_medians([lambda: None, lambda: None], 3)]
    [True, True]
    """
    times: list[list[float]] = [[] for _ in works]
    for round_number in range(repeat + 1):
        for measured, work in zip(times, works, strict=True):
            elapsed = seconds(work)
            if round_number:
                measured.append(elapsed)
    return [statistics.median(measured) for measured in times]


def seconds(work: Callable[[], object]) -> float:
    """Wall time of one run of ``work()``.

    >>> seconds(lambda: None) < 0.1
    True
    """
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def peak_bytes(work: Callable[[], object]) -> int:
    """Peak traced Python memory while ``work()`` runs.

    >>> peak_bytes(lambda: bytearray(1 << 20)) >= 1 << 20
    True
    """
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def envelope_floor(path: Path) -> Callable[[], object]:
    """Reading a zstd log, decompressing it and decoding every line's envelope: the least any
    reader must do, streamed in pieces as the store reads it."""

    def floor() -> object:
        records: list[LogRecord] = []
        with path.open("rb") as compressed:
            for number, piece in line_pieces(zstd_chunks(compressed), DEFAULT_MAX_LINE_BYTES):
                records += decode_records(piece, split_header(piece)[1] if number == 1 else 0)
        return records

    return floor


def decompressed_size(path: Path) -> int:
    """Bytes of JSONL a zstd log holds."""
    with path.open("rb") as compressed:
        return sum(len(chunk) for chunk in zstd_chunks(compressed))
