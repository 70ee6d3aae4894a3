"""What every benchmark measures with: rounds in which the works take turns, the median of the
rounds' ratios, traced peak memory, the floor."""

from __future__ import annotations

import statistics
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from sessionref.log.records import (
    DEFAULT_MAX_LINE_BYTES,
    LogRecord,
    decode_records,
    line_pieces,
    split_header,
    zstd_chunks,
)


def alternating_times(works: Sequence[Callable[[], object]], repeat: int) -> list[list[float]]:
    """Wall times of each of ``works`` over ``repeat`` rounds in which they take turns (after
    one warm-up round), so that a machine busy with other work slows them alike.

    >>> [len(times) for times in alternating_times([lambda: None, lambda: None], 3)]
    [3, 3]
    """
    times: list[list[float]] = [[] for _ in works]
    for round_number in range(repeat + 1):
        for measured, work in zip(times, works, strict=True):
            elapsed = seconds(work)
            if round_number:
                measured.append(elapsed)
    return times


def median_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median over rounds of one time over the other, each pair taken in the same round:
    a ratio a change in the machine's speed between rounds does not move.

    >>> median_ratio([2.0, 9.0, 3.0], [1.0, 3.0, 2.0])
    2.0
    """
    return statistics.median(a / b for a, b in zip(numerators, denominators, strict=True))


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


def summed_floor(paths: Iterable[Path]) -> Callable[[], None]:
    """The floor of each log of ``paths`` in turn, the records of one let go before the next is
    read, as an engine lets them go: kept all at once, they would make the floor pay for
    fresh memory where an engine reuses the same (5% of the floor over the batch store).

    >>> import tempfile, zstandard
    >>> path = Path(tempfile.mkdtemp()) / "session.jsonl.zstd"
    >>> _ = path.write_bytes(zstandard.ZstdCompressor().compress(b'{"id":"s"}\\n{"type":"a"}\\n'))
    >>> summed_floor([path, path])() is None
    True
    """
    floors = [envelope_floor(path) for path in paths]

    def run() -> None:
        for floor in floors:
            floor()

    return run


def decompressed_size(path: Path) -> int:
    """Bytes of JSONL a zstd log holds."""
    with path.open("rb") as compressed:
        return sum(len(chunk) for chunk in zstd_chunks(compressed))
