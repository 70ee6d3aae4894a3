"""How many worker processes a batch starts: never more than asked, than its sessions (or
the Dask bag's partitions), nor than 2 per CPU the process may use; an index build alike.
The CPUs are set here (``usable_cpus``), and the processes counted as the pool starts them,
whatever the machine."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import sessionref.pool
import sessionref.pool_start
from sessionref.batch.dask import iter_bag, result_lines_bag
from sessionref.batch.local import build_result_lines
from sessionref.cli import main
from sessionref.index import SessionIndex
from sessionref.log.store import DirectoryStore
from sessionref.testing import write_session_store
from tests.test_batch import LISTING, write_store
from tests.test_index_build import logs

Started = Callable[[int], list[int]]
"""Given the CPUs the process may use, the list that collects the id of every worker process
a pool starts from then on."""


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(tmp_path_factory.mktemp("store"))


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Started:
    def on(cpus: int) -> list[int]:
        pids: list[int] = []
        start = sessionref.pool._start_worker

        def counted(*args: Any) -> Any:
            worker = start(*args)
            pids.append(worker.process.pid)
            return worker

        monkeypatch.setattr(sessionref.pool_start, "usable_cpus", lambda: cpus)
        monkeypatch.setattr(sessionref.pool, "_start_worker", counted)
        return pids

    return on


def lines(results: Any) -> list[bytes]:
    return [result.line for result in results]


def test_a_huge_workers_starts_two_processes_per_cpu(store_root: Path, started: Started) -> None:
    """A tester's trial: ``--workers 500`` started one process per session (hundreds on a
    2-core machine); the CPU-bound work gains nothing past one or two per CPU."""
    assert len(LISTING) > 6
    alone = lines(build_result_lines(store_root))
    pids = started(3)
    assert lines(build_result_lines(store_root, workers=500)) == alone
    assert len(set(pids)) == len(pids) == 6


def test_no_more_processes_than_sessions(store_root: Path, started: Started) -> None:
    ids = LISTING[:3]
    alone = lines(build_result_lines(store_root, session_ids=ids))
    pids = started(64)
    assert lines(build_result_lines(store_root, session_ids=ids, workers=500)) == alone
    assert len(pids) == 3


def test_fewer_workers_than_the_cap_start_as_asked(store_root: Path, started: Started) -> None:
    pids = started(3)
    list(build_result_lines(store_root, workers=5))
    assert len(pids) == 5


def test_one_cpu_and_one_session_start_no_pool(store_root: Path, started: Started) -> None:
    pids = started(1)
    list(build_result_lines(store_root, session_ids=LISTING[:1], workers=500))
    assert pids == []


@pytest.mark.parametrize(("partition_size", "processes"), [(1, 6), (6, 3)])
def test_the_dask_engine_starts_no_more_than_partitions_and_two_per_cpu(
    store_root: Path, started: Started, partition_size: int, processes: int
) -> None:
    """``len(LISTING)`` sessions: one per partition is more partitions than 2 per CPU (3
    CPUs: 6 processes); 6 per partition is 3 partitions, so 3 processes."""
    assert -(-len(LISTING) // 6) == 3
    bag = result_lines_bag(store_root, partition_size=partition_size)
    alone = lines(iter_bag(bag))
    pids = started(3)
    assert lines(iter_bag(bag, workers=500)) == alone
    assert len(pids) == processes


def test_the_command_line_starts_two_processes_per_cpu(
    store_root: Path, tmp_path: Path, started: Started, capsys: pytest.CaptureFixture[str]
) -> None:
    pids = started(1)
    out = tmp_path / "out.jsonl"
    argv = ["batch", "--root", str(store_root), "--out", str(out), "--workers", "500"]
    main(argv)
    assert len(pids) == 2
    summary = capsys.readouterr().err
    assert summary.startswith(f"{len(LISTING)} sessions: "), summary


def test_an_index_reads_in_no_more_than_two_processes_per_cpu(
    tmp_path: Path, started: Started
) -> None:
    """``sessionref index --workers 500`` started 499 children for a store of 40 sessions, on
    a build from nothing (the early reads) and on a refresh of changed logs alike. On 2 CPUs
    it reads in 4 processes: this one, which writes, and 3 children."""
    paths = write_session_store(tmp_path / "store", logs(40))
    dated(paths, 60)  # not racy: the refresh remembers them
    pids = started(2)
    index = SessionIndex(DirectoryStore(tmp_path / "store"), tmp_path / "i.sqlite", workers=500)
    assert index.refresh().read == 40
    assert len(pids) == 3
    dated(paths, 120)  # every log changed: read again, by the pool
    assert index.refresh().read == 40
    assert len(pids) == 6


def dated(paths: list[Path], seconds_ago: int) -> None:
    past = time.time() - seconds_ago
    for path in paths:
        os.utime(path, (past, past))
