"""Batch throughput: many small sessions, against the summed per-session floor.

The store is ``stores/batch``: :data:`BATCH_SESSIONS` sessions of about :data:`BATCH_TURNS`
turns, one zstd frame per append batch (``python -m benchmarks.generate --batch-sessions 1000
--batch-turns 20`` writes the same). Each round times, one after the other: the floor of every
session (reading, decompressing and envelope-decoding its log, summed), then the local engine
with 1 and 2 workers and Dask with 2 workers, each over the whole store from its listing on,
every result encoded as ``sessionref batch`` writes it. Medians over the rounds, of wall time
and of CPU time: this process's, and its worker processes' (counted once they are joined).
The targets compare times taken in the same round (the median of the rounds' ratios): the
machine's speed moves from one minute to the next, and a round takes some 20 seconds.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from benchmarks.generate import generate_batch_store
from benchmarks.measure import decompressed_size, median_ratio, read_envelopes, summed_floor, timed
from sessionref import DirectoryStore
from sessionref.batch import ResultLine, build_result_lines
from sessionref.batch.core import Snapshotter, fresh_target, listing_order
from sessionref.errors import SessionLogError, SessionReferenceError
from sessionref.resolver import SessionReferenceResolver
from sessionref.snapshot import snapshot_source

BATCH_SESSIONS: Final = 1000
BATCH_TURNS: Final = 20
FLOOR_RATIO: Final = 1.5
"""One worker takes at most this many times the summed per-session floor."""
TWO_WORKER_SPEED_UP: Final = 1.7
"""Two workers give at least this many times the sessions per second of one."""


def ensure_batch_store(stores: Path) -> Path:
    """The batch store, generated when missing or of another size."""
    root = stores / "batch"
    if not root.is_dir() or len(DirectoryStore(root).headers()) != BATCH_SESSIONS:
        print(f"generating the {BATCH_SESSIONS}-session batch store …", file=sys.stderr)
        generate_batch_store(root, BATCH_SESSIONS, BATCH_TURNS)
    return root


def _local(root: Path, workers: int) -> Callable[[], object]:
    return lambda: list(build_result_lines(DirectoryStore(root), workers=workers))


def _dask(root: Path, workers: int) -> Callable[[], object]:
    from sessionref.batch.dask import iter_bag, result_lines_bag

    return lambda: list(iter_bag(result_lines_bag(root), workers=workers))


def rounds_of(
    runs: dict[str, Callable[[], object]], repeat: int
) -> dict[str, list[tuple[float, float, float]]]:
    """:func:`~benchmarks.measure.timed` of each of ``runs`` in ``repeat`` rounds in which they
    take turns, after a warm-up round.

    >>> {name: len(rounds) for name, rounds in rounds_of({"a": lambda: None}, 2).items()}
    {'a': 2}
    """
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in runs}
    for round_number in range(repeat + 1):
        for name, work in runs.items():
            measured = timed(work)
            if round_number:
                times[name].append(measured)
    return times


def measure_batch(stores: Path, repeat: int) -> dict[str, Any]:
    """Seconds (medians of ``repeat`` rounds after a warm-up) and sizes of the batch store:
    ``NAME_s`` wall time, ``NAME_cpu_s`` CPU time of all processes, ``NAME_parent_cpu_s``
    that of this process alone; and what the targets read, the medians of the rounds' ratios
    of wall times: ``local_1_workers_vs_floor`` and ``local_2_workers_speed_up`` (1 worker's
    time over 2 workers'); then, from one more pass, ``breakdown_cpu_s``, where 1 worker's
    time goes (:func:`batch_breakdown`).

    The local engines take turns with the floor before Dask first runs: a Dask client leaves
    threads behind, and a process with threads starts its workers from a fork server, not by
    forking itself as ``sessionref batch`` does (``sessionref.pool_start.process_context``),
    which costs 2 workers some of their lead."""
    root = ensure_batch_store(stores)
    store = DirectoryStore(root)
    paths = [store.path_of(header.id) for header in store.headers()]
    local: dict[str, Callable[[], object]] = {
        "floor": summed_floor(paths),
        "local_1_workers": _local(root, 1),
        "local_2_workers": _local(root, 2),
    }
    times = {**rounds_of(local, repeat), **rounds_of({"dask_2_workers": _dask(root, 2)}, repeat)}
    result: dict[str, Any] = {}
    for name, rounds in times.items():
        result[f"{name}_s"] = statistics.median(wall for wall, _, _ in rounds)
        result[f"{name}_cpu_s"] = statistics.median(cpu + child for _, cpu, child in rounds)
        result[f"{name}_parent_cpu_s"] = statistics.median(cpu for _, cpu, _ in rounds)
    walls = {name: [wall for wall, _, _ in rounds] for name, rounds in times.items()}
    result["local_1_workers_vs_floor"] = median_ratio(walls["local_1_workers"], walls["floor"])
    result["local_2_workers_speed_up"] = median_ratio(
        walls["local_1_workers"], walls["local_2_workers"]
    )
    result["sessions"] = len(paths)
    result["log_bytes"] = sum(decompressed_size(path) for path in paths)
    result["breakdown_cpu_s"] = batch_breakdown(root)[0]
    return result


PARTS: Final = ("listing", "read", "stages", "render", "engine")
"""What :func:`batch_breakdown` cuts a 1-worker batch into."""


def batch_breakdown(root: Path) -> tuple[dict[str, float], list[ResultLine]]:
    """CPU seconds of each part of a 1-worker batch over the store at ``root`` (the local
    engine's work, session by session), and of the floor of the same logs; and the lines the
    engine made meanwhile (the lines ``sessionref batch --label-from id`` writes).

    ``listing``: opening and listing the store in its order, once. Then, for each session in
    turn, so that a change in the machine's speed moves every part alike: its ``floor``; its
    ``read`` (``DirectoryStore.read``: recovery, validation, closers), ``stages``
    (``snapshot_source``, stages 1 to 6) and ``render`` (the context message, stage 7); and
    the engine's whole run of the session, of which ``engine`` counts what it took beyond
    those three: the reference and the message id, the resolver's calls, the result line's
    encoding. The engine runs before the three parts on every other session, after them on
    the others: whichever runs second finds the log in the processor's caches.
    """
    clock = time.process_time
    start = clock()
    store = DirectoryStore(root)
    session_ids = listing_order(store)
    parts = dict.fromkeys(("floor", *PARTS), 0.0)
    parts["listing"] = clock() - start
    resolver = SessionReferenceResolver(store)
    snapshotter = Snapshotter(resolver, fresh_target(session_ids), "id")
    lines: list[ResultLine] = []
    for number, session_id in enumerate(session_ids):
        path = store.path_of(session_id)
        start = clock()
        read_envelopes(path)
        parts["floor"] += clock() - start
        if number % 2:
            whole = _engine_run(snapshotter, session_id, lines)
            read, stages, render = _part_times(resolver, session_id)
        else:
            read, stages, render = _part_times(resolver, session_id)
            whole = _engine_run(snapshotter, session_id, lines)
        parts["read"] += read
        parts["stages"] += stages
        parts["render"] += render
        parts["engine"] += whole - read - stages - render
    return parts, lines


def _engine_run(snapshotter: Snapshotter, session_id: str, lines: list[ResultLine]) -> float:
    """CPU seconds of the engine's run of one session, whose line goes to ``lines``."""
    start = time.process_time()
    lines.append(snapshotter(session_id))
    return time.process_time() - start


def _part_times(resolver: SessionReferenceResolver, session_id: str) -> tuple[float, float, float]:
    """CPU seconds of one session's read, stages and render (those after a failure: 0).

    Letting the log go is counted with the read, as the floor counts letting its envelopes
    go (the engine lets it go within its run).
    """
    clock = time.process_time
    stamps = [clock()]
    try:
        log = resolver.store.read(session_id)
        stamps.append(clock())
        source = snapshot_source(log, session_id, resolver.max_reference_bytes)
        stamps.append(clock())
        resolver.render_sources([source], message_id=session_id)
        stamps.append(clock())
        del log, source
    except (SessionReferenceError, SessionLogError):  # what the engine makes a failed line of
        pass  # the part that failed ends here; those after it take no time
    stamps.append(clock())
    stamps += [stamps[-1]] * (5 - len(stamps))
    start, read, staged, rendered, let_go = stamps
    return (read - start) + (let_go - rendered), staged - read, rendered - staged


ENGINES: Final = ("floor", "local_1_workers", "local_2_workers", "dask_2_workers")


def describe(batch: dict[str, Any]) -> str:
    """One line per engine: seconds, sessions per second, MB of JSONL per second, and CPU
    seconds (the parent's share when there are workers); then the targets' ratios in CPU time.

    >>> print(describe({"sessions": 10, "log_bytes": 4e6, "floor_s": 1, "local_1_workers_s": 2,
    ...     "floor_cpu_s": 1, "local_1_workers_cpu_s": 1.8, "local_1_workers_parent_cpu_s": 1.8}))
    batch over 10 sessions, 4 MB of JSONL (floors summed):
      floor (read + decompress + envelope decode): 1.00 s, 10 sessions/s, 4.0 MB/s; CPU 1.00 s
      local 1 workers: 2.00 s, 5 sessions/s, 2.0 MB/s; CPU 1.80 s
      in CPU time: 1 worker 1.80× the floor
    """
    sessions, megabytes = batch["sessions"], batch["log_bytes"] / 1e6
    lines = [f"batch over {sessions} sessions, {megabytes:.0f} MB of JSONL (floors summed):"]
    for engine in ENGINES:
        if f"{engine}_s" not in batch:
            continue
        wall, cpu = batch[f"{engine}_s"], batch[f"{engine}_cpu_s"]
        name = engine.replace("_", " ")
        if engine == "floor":
            name = "floor (read + decompress + envelope decode)"
        line = f"  {name}: {wall:.2f} s, {sessions / wall:.0f} sessions/s, "
        line += f"{megabytes / wall:.1f} MB/s; CPU {cpu:.2f} s"
        parent = batch.get(f"{engine}_parent_cpu_s", cpu)
        if parent < cpu:
            line += f" ({parent / cpu:.0%} in the parent)"
        lines.append(line)
    one = batch["local_1_workers_cpu_s"]
    summary = f"  in CPU time: 1 worker {one / batch['floor_cpu_s']:.2f}× the floor"
    if "local_2_workers_cpu_s" in batch:
        summary += f", 2 workers {batch['local_2_workers_cpu_s'] / one:.2f}× the CPU of 1"
    lines.append(summary)
    if "breakdown_cpu_s" in batch:
        lines.append(describe_breakdown(batch["breakdown_cpu_s"]))
    return "\n".join(lines)


def describe_breakdown(parts: dict[str, float]) -> str:
    """Where 1 worker's CPU time goes, each part × the floor (see :func:`batch_breakdown`).

    >>> print(describe_breakdown({"floor": 2.0, "listing": 0.1, "read": 4.0, "stages": 1.0,
    ...     "render": 0.1, "engine": 0.2}))
      1 worker's CPU, × the floor: listing 0.05, read 2.00, stages 0.50, render 0.05, \
engine 0.10; 2.70 in all
    """
    floor = parts["floor"]
    shares = ", ".join(f"{part} {parts[part] / floor:.2f}" for part in PARTS)
    total = sum(parts[part] for part in PARTS) / floor
    return f"  1 worker's CPU, × the floor: {shares}; {total:.2f} in all"


def batch_checks(batch: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """The batch targets: 1 worker against the floor, 2 workers against 1, each the median of
    the rounds' ratios (see :func:`measure_batch`).

    >>> for check in batch_checks({"local_1_workers_vs_floor": 1.4,
    ...                            "local_2_workers_speed_up": 1.75}):
    ...     print(check)
    ('batch, 1 worker, within 1.5× of the summed per-session floor', '1.40×', True)
    ('batch, 2 workers ≥ 1.7× the sessions/s of 1', '1.75×', True)
    """
    vs_floor, speed_up = batch["local_1_workers_vs_floor"], batch["local_2_workers_speed_up"]
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
