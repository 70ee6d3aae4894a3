"""The store index on a large generated store: build, warm commands, incremental refresh, size.

    python -m benchmarks.index_bench                      # 10,000 sessions of ~20 turns
    python -m benchmarks.index_bench --sessions 500 --store /tmp/small

Generates the store once (``generate_batch_store``, seeded; 10-12 minutes and ~1.9 GB for 10,000
sessions), then measures, on this machine:

- the *floor*: reading every log once (file, zstd, every line's envelope decoded), one process;
- the cold build of the index (``SessionIndex.refresh`` on an empty database) with
  ``--workers`` processes, taking turns with the floor for ``--build-rounds`` rounds (the
  target is the median of the rounds' ratios), and with 1 process once, after a floor of its
  own;
- ``sessionref candidates --query Q`` and ``sessionref search Q`` as whole processes, warm
  (after the build's writes are synced), beside ``python -c pass``;
- a refresh when nothing changed, and right after one session is appended to, against the
  no-change refresh plus reading that one log;
- the index's size against the store's.

Prints a Markdown table and one line per target (exit 1 when one is missed), and writes
``benchmarks/index_results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import zstandard

from benchmarks.generate import generate_batch_store
from benchmarks.measure import summed_floor
from benchmarks.measure import timed as timed_parts
from benchmarks.options import at_least_one
from sessionref.index import SessionIndex
from sessionref.index.schema import remove_database
from sessionref.index.upkeep import database_size
from sessionref.log.store import DirectoryStore

HERE = Path(__file__).resolve().parent


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``work`` (:func:`benchmarks.measure.timed`); CPU
    counts worker processes too, so it is what the run costs whatever else the machine is
    doing."""
    wall, own, children = timed_parts(work)
    return wall, own + children


def median_of(work: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median (wall, CPU) seconds of ``repeat`` runs."""
    runs = [timed(work) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def command(*args: str) -> Callable[[], object]:
    """A ``sessionref`` process, output discarded (checked to succeed)."""
    argv = [sys.executable, "-m", "sessionref", *args]
    return lambda: subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def store_bytes(root: Path) -> int:
    """Bytes of every log file in the store."""
    return sum(p.stat().st_size for p in root.glob("*/*/session.jsonl*"))


def appended_once(path: Path) -> Callable[[], None]:
    """Append one title record (a zstd frame) to a log; the returned call undoes it."""
    status = path.stat()
    record = {
        "type": "session/title",
        "seq": 10**9,
        "time": 1,
        "data": {"title": "appended", "messageSeqs": [], "source": {"kind": "user"}},
    }
    with path.open("ab") as file:
        file.write(zstandard.ZstdCompressor().compress(json.dumps(record).encode() + b"\n"))

    def undo() -> None:
        os.truncate(path, status.st_size)
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))

    return undo


def timed_build(root: Path, index_path: Path, workers: int) -> tuple[float, float]:
    """(wall, CPU) seconds of a cold build: refreshing an index that does not exist yet."""
    remove_database(index_path)
    index = SessionIndex(DirectoryStore(root), index_path, workers=workers)
    try:
        return timed(index.refresh)
    finally:
        index.close()


def cold_builds(
    root: Path, files: Sequence[Path], index_path: Path, workers: int, rounds: int
) -> dict[str, Any]:
    """The floor (of ``files``, the store's logs) and the cold build with ``workers``
    processes, taking turns for ``rounds`` rounds after an untimed floor that brings the logs
    into the page cache: their medians, each round's ratio (``cold_N_round_ratios``) and the
    median of those (``cold_N_vs_floor``), since the machine's speed moves from one minute to
    the next. Then the 1-process build once, right after a floor of its own."""
    floor = summed_floor(files)
    floor()
    floors: list[tuple[float, float]] = []
    builds: list[tuple[float, float]] = []
    ratios: list[float] = []
    for _ in range(rounds):
        floors.append(timed(floor))
        builds.append(timed_build(root, index_path, workers))
        ratios.append(builds[-1][0] / floors[-1][0])
        print(f"floor {floors[-1][0]:.1f} s, cold build ({workers}) {ratios[-1]:.2f}×", flush=True)
    row: dict[str, Any] = {}
    for key, runs in (("floor", floors), (f"cold_{workers}", builds)):
        row[f"{key}_s"] = statistics.median(wall for wall, _ in runs)
        row[f"{key}_cpu"] = statistics.median(cpu for _, cpu in runs)
    row[f"cold_{workers}_round_ratios"] = ratios
    row[f"cold_{workers}_vs_floor"] = statistics.median(ratios)
    if workers != 1:
        own_floor = timed(floor)[0]
        row["cold_1_s"], row["cold_1_cpu"] = timed_build(root, index_path, 1)
        row["cold_1_vs_floor"] = row["cold_1_s"] / own_floor
        print(f"floor {own_floor:.1f} s, cold build (1) {row['cold_1_vs_floor']:.2f}×", flush=True)
    return row


def measure(
    root: Path,
    index_path: Path,
    workers: int,
    queries: tuple[str, str],
    *,
    build_rounds: int,
    repeat: int,
) -> dict[str, Any]:
    """Every number of the table: ``build_rounds`` rounds of the cold builds (see
    :func:`cold_builds`), medians of ``repeat`` runs of the rest."""
    files = sorted(root.glob("*/*/session.jsonl*"))
    row: dict[str, Any] = {"sessions": len(files), "store_bytes": store_bytes(root)}
    row.update(cold_builds(root, files, index_path, workers, build_rounds))
    row["index_bytes"] = database_size(SessionIndex(DirectoryStore(root), index_path).path)
    os.sync()  # the build's writes reach the disk now, not while warm commands are timed
    row["python_s"], row["python_cpu"] = median_of(
        lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), repeat
    )
    where = ["--root", str(root), "--index", str(index_path)]
    candidates = command("candidates", "--query", queries[0], *where)
    row["candidates_s"], row["candidates_cpu"] = median_of(candidates, repeat)
    row["search_s"], row["search_cpu"] = median_of(command("search", queries[1], *where), repeat)
    index = SessionIndex(DirectoryStore(root), index_path)
    index.refresh()
    row["refresh_unchanged_s"], row["refresh_unchanged_cpu"] = median_of(index.refresh, repeat)
    store = DirectoryStore(root)
    victim = files[len(files) // 2]
    victim_id = next(h.id for h in store.headers() if store.path_of(h.id) == victim)
    row["read_one_s"], row["read_one_cpu"] = median_of(lambda: store.read(victim_id), repeat)
    undo = appended_once(victim)  # the append need not keep the log loadable: it is re-read
    try:
        row["refresh_appended_s"], row["refresh_appended_cpu"] = timed(index.refresh)
    finally:
        undo()
    index.refresh()
    index.close()
    return row


def checks(row: dict[str, Any], workers: int) -> list[tuple[str, str, bool]]:
    """The targets of the index issue, on wall time (CPU time beside it)."""
    cold = row[f"cold_{workers}_vs_floor"]
    extra = row["refresh_appended_s"] - row["refresh_unchanged_s"]
    return [
        (f"cold build ({workers} processes) <= 1.5x the floor", f"{cold:.2f}x", cold <= 1.5),
        (
            "warm candidates --query <= 0.3 s",
            f"{row['candidates_s']:.3f} s (CPU {row['candidates_cpu']:.3f} s)",
            row["candidates_s"] <= 0.3,
        ),
        (
            "warm search <= 0.3 s",
            f"{row['search_s']:.3f} s (CPU {row['search_cpu']:.3f} s)",
            row["search_s"] <= 0.3,
        ),
        (
            "refresh after one append <= no-change + 0.1 s",
            f"+{extra:.3f} s (one log read: {row['read_one_s']:.3f} s)",
            extra <= 0.1,
        ),
    ]


def table(row: dict[str, Any], workers: int) -> str:
    """The README table: wall and CPU seconds."""

    def line(name: str, key: str, note: str = "") -> str:
        return f"| {name} | {row[key + '_s']:.3f} | {row[key + '_cpu']:.3f} | {note} |"

    lines = [
        f"Store: {row['sessions']} sessions, {row['store_bytes'] / 1e6:.0f} MB of zstd logs.",
        "",
        "| measure | wall s | CPU s | note |",
        "| --- | --- | --- | --- |",
        line("floor: read every log once (1 process)", "floor"),
        line("cold build, 1 process", "cold_1", f"{row['cold_1_vs_floor']:.2f}× floor"),
        line(
            f"cold build, {workers} processes",
            f"cold_{workers}",
            f"{row[f'cold_{workers}_vs_floor']:.2f}× floor (rounds: "
            + ", ".join(f"{r:.2f}×" for r in row[f"cold_{workers}_round_ratios"])
            + ")",
        ),
        line("`python -c pass` (start-up alone, whole process)", "python"),
        line("`sessionref candidates --query` (warm, whole process)", "candidates"),
        line("`sessionref search` (warm, whole process)", "search"),
        line("refresh, nothing changed", "refresh_unchanged"),
        line("refresh after one session appended to", "refresh_appended"),
        line("reading that one log", "read_one"),
        f"| index size | {row['index_bytes'] / 1e6:.0f} MB | | "
        f"{row['index_bytes'] / row['store_bytes']:.2f}× the store |",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.index_bench")
    parser.add_argument("--store", type=Path, default=HERE / "stores" / "index")
    parser.add_argument("--sessions", type=at_least_one, default=10_000)
    parser.add_argument("--turns", type=at_least_one, default=20)
    parser.add_argument("--workers", type=at_least_one, default=2)
    parser.add_argument(
        "--query", default="chunk", help="the candidates query (in about 2%% of titles)"
    )
    parser.add_argument("--search", default="token", help="the search query")
    parser.add_argument("--repeat", type=at_least_one, default=5, help="runs of each warm measure")
    parser.add_argument(
        "--build-rounds",
        type=at_least_one,
        default=3,
        help="rounds of the floor and the cold build",
    )
    parser.add_argument("--out", type=Path, default=HERE / "index_results.json")
    args = parser.parse_args(argv)
    if not args.store.exists():
        print(f"generating {args.sessions} sessions into {args.store} …", flush=True)
        generate_batch_store(args.store, args.sessions, args.turns)
    index_path = args.store.with_name(args.store.name + ".index.sqlite")
    queries = (args.query, args.search)
    row = measure(
        args.store,
        index_path,
        args.workers,
        queries,
        build_rounds=args.build_rounds,
        repeat=args.repeat,
    )
    print(table(row, args.workers))
    missed = 0
    for name, value, ok in checks(row, args.workers):
        print(f"{'ok  ' if ok else 'MISS'} {name}: {value}")
        missed += not ok
    args.out.write_text(json.dumps(row, indent=1) + "\n")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
