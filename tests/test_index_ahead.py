"""Statting a root's remembered walk in a child process (``sessionref.index.ahead``): the same
answer as statting here, taken only for the walk the index still holds, and never lost when
the child fails or cannot be made."""

from __future__ import annotations

import json
import marshal
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

import sessionref.index.ahead as ahead_module
from sessionref.index.ahead import StatsAhead, stat_ahead
from sessionref.index.restat import WalkStats, read_walk_stats, restat_tree
from tests.test_index import index_of, small_store
from tests.test_index_restat import indexed_changed_then_put_back, indexed_store, retitle

FAR: int = 1 << 62
"""A ``racy_after`` no file reaches: every state settled."""


def remembered(path: Path) -> tuple[str, WalkStats]:
    """The stamp and walk stats of the index database at ``path``."""
    with sqlite3.connect(path) as db:
        rows = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('tree', 'stats')"))
    found = read_walk_stats(rows["stats"], rows["tree"])
    assert found is not None
    return rows["tree"], found


@pytest.fixture(autouse=True)
def one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process counts as having one thread: the threads earlier tests of this worker may
    have left running take no lock the child needs."""
    monkeypatch.setattr(ahead_module.threading, "active_count", lambda: 1)


def looked_ahead(root: Path, path: Path) -> StatsAhead:
    found = stat_ahead(root, path, FAR)
    assert found is not None
    return found


def test_the_child_answers_as_statting_here(tmp_path: Path) -> None:
    root, path, clock = indexed_store(tmp_path)
    stamp, stats = remembered(path)
    assert looked_ahead(root, path).changed(stamp, stats) == restat_tree(root, FAR, stats) == {}
    log = next(root.glob("*/s3/session.jsonl"))
    retitle(log, "changed")
    clock.date(root)
    here = restat_tree(root, FAR, stats)
    assert here is not None and list(here) == [os.fsencode(log.relative_to(root))]
    assert looked_ahead(root, path).changed(stamp, stats) == here
    (root / "_no-cwd" / "s4").rename(root / "_no-cwd" / "s4-moved")
    assert looked_ahead(root, path).changed(stamp, stats) is None  # a directory changed


def test_a_look_at_another_walk_than_the_index_holds_is_not_taken(tmp_path: Path) -> None:
    """The child found the store as the index's walk; then another process indexed the store
    changed, and the store went back as it was: the index's walk is no longer the store."""
    root, path, clock = indexed_store(tmp_path)
    ahead = looked_ahead(root, path)
    ahead.close()  # the child has looked: nothing changed since the walk it knew
    indexed_changed_then_put_back(root, tmp_path, clock)
    index = index_of(root, tmp_path, clock=clock)
    index.ahead = ahead
    assert index.refresh().read == 1  # its own look: the log is not the one indexed
    assert index.ahead is None


def test_a_child_that_fails_leaves_the_look_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, path, clock = indexed_store(tmp_path)
    stamp, stats = remembered(path)
    log = next(root.glob("*/s3/session.jsonl"))
    retitle(log, "changed")
    clock.date(root)

    class Failing:
        loads = staticmethod(marshal.loads)

        @staticmethod
        def dumps(value: Any) -> bytes:
            raise RuntimeError("the child fails")

    monkeypatch.setattr(ahead_module, "marshal", Failing)
    found = looked_ahead(root, path).changed(stamp, stats)
    assert found == restat_tree(root, FAR, stats) and found


def test_no_child_is_made_beside_other_threads_or_without_an_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, path, _ = indexed_store(tmp_path)
    monkeypatch.undo()  # the real count of threads
    done = threading.Event()
    waiting = threading.Thread(target=done.wait)
    waiting.start()
    try:
        assert stat_ahead(root, path, FAR) is None
    finally:
        done.set()
        waiting.join()
    assert stat_ahead(root, tmp_path / "none.sqlite", FAR) is None
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database" * 100)
    assert stat_ahead(root, garbage, FAR) is None


def test_candidates_and_search_over_several_roots_look_ahead_and_answer_as_without_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sessionref.cli import main

    roots = []
    for name in ("a", "b", "c"):
        small_store(tmp_path / name, 4)
        roots += ["--root", str(tmp_path / name)]
    argv = ["candidates", "--json", *roots, "--index", f"{tmp_path / 'indexes'}/"]
    assert main(argv) == 0
    built = json.loads(capsys.readouterr().out)
    started: list[Path] = []

    def counted(root: Path, path: Path, racy_after: int) -> StatsAhead | None:
        started.append(root)
        return stat_ahead(root, path, racy_after)

    monkeypatch.setattr("sessionref.index.store.stat_ahead", counted)
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) == built
    assert main(["candidates", "--json", *roots, "--no-index"]) == 0
    assert json.loads(capsys.readouterr().out) == built
    assert [os.path.basename(root) for root in started] == ["b", "c"]
    search = ["search", "title", "--json", *roots]
    assert main([*search, "--index", f"{tmp_path / 'indexes'}/"]) == 0
    indexed = json.loads(capsys.readouterr().out)
    assert main([*search, "--no-index"]) == 0
    assert json.loads(capsys.readouterr().out) == indexed
    assert [os.path.basename(root) for root in started] == ["b", "c", "b", "c"]
