"""What every benchmark measures with: rounds in which the works take turns, the median of the
rounds' ratios, traced peak memory, the floor.

The floor is independent of sessionref: no sessionref code is on its path, so a change to the
reader cannot move the yardstick it is measured with (the floor before issue 22 was built
from sessionref's own reader and took nearly twice as long).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from multiprocessing import forkserver
from pathlib import Path
from typing import Any, Final

import msgspec
import zstandard


def alternating_times(works: Sequence[Callable[[], object]], repeat: int) -> list[list[float]]:
    """Wall times of each of ``works`` over ``repeat`` rounds in which they take turns (after
    one warm-up round), so that a machine busy with other work slows them alike.

    >>> [len(times) for times in alternating_times([lambda: None, lambda: None], 3)]
    [3, 3]
    """
    return alternating_clocks(works, repeat)[0]


def _children_cpu() -> float:
    """CPU seconds (user and system) of the child processes this one has waited for, and of
    those its fork server has: a worker pool started while this process runs several threads
    (after a Dask run, say) forks its workers from the fork server, not from this process
    (``sessionref.pool_start.process_context``), and their time is counted there.

    >>> _children_cpu() >= 0
    True
    """
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime + _fork_server_children_cpu()


def _fork_server_children_cpu(proc: str = "/proc") -> float:
    """CPU seconds of the processes ``multiprocessing``'s fork server has waited for (the
    ``cutime`` and ``cstime`` of its ``/proc`` stat line); 0 while this process has started
    none, or where ``/proc`` cannot tell (not Linux).

    >>> _fork_server_children_cpu("/nonexistent")
    0.0
    """
    server = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)
    if server is None:
        return 0.0
    try:
        with open(f"{proc}/{server}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def timed(work: Callable[[], object]) -> tuple[float, float, float]:
    """Wall seconds of one run of ``work()``, this process's CPU seconds, and those of the
    child processes it joined meanwhile.

    >>> [t < 0.1 for t in timed(lambda: None)]
    [True, True, True]
    """
    wall, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    work()
    return (
        time.perf_counter() - wall,
        time.process_time() - cpu,
        _children_cpu() - children,
    )


def alternating_clocks(
    works: Sequence[Callable[[], object]], repeat: int
) -> tuple[list[list[float]], list[list[float]]]:
    """:func:`alternating_times`, with the CPU time of the process (every thread's) and of the
    child processes it waited for beside each wall time (:func:`timed`): a work that uses a
    second core takes less wall time than CPU time.

    >>> wall, cpu = alternating_clocks([lambda: sum(range(10**5))], 2)
    >>> len(wall[0]), len(cpu[0]), cpu[0][0] > 0
    (2, 2, True)
    """
    wall: list[list[float]] = [[] for _ in works]
    cpu: list[list[float]] = [[] for _ in works]
    for round_number in range(repeat + 1):
        for walls, cpus, work in zip(wall, cpu, works, strict=True):
            elapsed, own, children = timed(work)
            if round_number:
                walls.append(elapsed)
                cpus.append(own + children)
    return wall, cpu


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


class Envelope(msgspec.Struct, frozen=True, gc=False):
    """What the floor decodes of a line: its ``type`` and ``seq``, ``data`` left raw."""

    type: Any = None
    seq: Any = None
    data: msgspec.Raw = msgspec.Raw(b"")


_ENVELOPES: Final = msgspec.json.Decoder(Envelope)
CHUNK_BYTES: Final = 1 << 18
"""How much decompressed text the floor takes from the stream at a time."""


def envelopes(piece: bytes) -> list[Envelope]:
    """The envelopes of the lines of ``piece`` (whole lines, newline-terminated): all at once
    by msgspec, or line by line when it refuses one, with the standard library's ``json``
    for each line msgspec refuses (a lone surrogate in ``type``, say).

    >>> [e.type for e in envelopes(b'{"type":"a","data":{}}\\n{"type":"\\\\ud800"}\\n')]
    ['a', '\\ud800']
    """
    try:
        return _ENVELOPES.decode_lines(piece)
    except msgspec.DecodeError:
        return [_envelope(line) for line in piece.splitlines()]


def _envelope(line: bytes) -> Envelope:
    try:
        return _ENVELOPES.decode(line)
    except msgspec.DecodeError:
        value = json.loads(line)  # decoded whole: its data is built, not kept raw
        if not isinstance(value, dict):
            return Envelope()
        return Envelope(value.get("type"), value.get("seq"))


def read_envelopes(path: Path) -> list[Envelope]:
    """Every line's envelope of a zstd log, stream-decompressed in chunks and split into
    lines: the least any reader must do.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "session.jsonl.zstd"
    >>> frame = zstandard.ZstdCompressor().compress
    >>> _ = path.write_bytes(frame(b'{"id":"s"}\\n{"type":"a","seq":0}\\n') + frame(b'{"ty'))
    >>> [(e.type, e.seq) for e in read_envelopes(path)]
    [(None, None), ('a', 0)]
    """
    found: list[Envelope] = []
    rest = b""
    with path.open("rb") as compressed:
        stream = zstandard.ZstdDecompressor().stream_reader(compressed, read_across_frames=True)
        try:
            while chunk := stream.read(CHUNK_BYTES):
                piece = rest + chunk
                end = piece.rfind(b"\n") + 1
                if end:
                    found += envelopes(piece[:end])
                rest = piece[end:]
        except zstandard.ZstdError:  # a torn last frame: what it holds is not committed
            pass
    return found


def envelope_floor(path: Path) -> Callable[[], object]:
    """The floor of one zstd log: :func:`read_envelopes`, with nothing of sessionref."""
    return lambda: read_envelopes(path)


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
    """Bytes of JSONL a zstd log holds.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "session.jsonl.zstd"
    >>> _ = path.write_bytes(zstandard.ZstdCompressor().compress(b"ab\\n") * 2)
    >>> decompressed_size(path)
    6
    """
    with path.open("rb") as compressed:
        stream = zstandard.ZstdDecompressor().stream_reader(compressed, read_across_frames=True)
        return sum(map(len, iter(lambda: stream.read(CHUNK_BYTES), b"")))
