"""The index never changes an answer: over generated store histories (writes, appends, damage,
deletions, duplicates), every listing, title, candidate list and search with an incrementally
refreshed index equals the answer without one (the store itself, or an index built afresh).

Each history runs with the store in one of the states of :mod:`tests.store_clock` (everything
racy, files dated back, everything settled), on a clock the test sets: no history waits for
real time to pass, and none depends on the machine's speed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sessionref.index.walk as walk
from sessionref.index import SessionIndex
from sessionref.log.store import DirectoryStore
from sessionref.log.writer import log_path
from sessionref.resolver import SessionReferenceResolver
from sessionref.testing import mutated_stores, session_logs, write_mutated_store
from sessionref.testing.mutations.lines import log_lines, next_seq
from sessionref.types import Target
from tests.conftest import examples
from tests.store_clock import STATES, State, StoreClock

IDS = st.sampled_from(["a", "b", "Ab", "c-1", ".x"])
CWDS = st.sampled_from(["/w", "/x/y", None])

writes = st.tuples(
    st.just("write"), session_logs(ids=IDS, cwds=CWDS, max_turns=2), st.booleans(), st.booleans()
)
appends = st.tuples(
    st.just("append"), st.integers(0, 9), st.sampled_from(["title", "garbage", "blank"])
)
deletes = st.tuples(st.just("delete"), st.integers(0, 9))
histories = st.lists(st.one_of(writes, writes, appends, appends, deletes), min_size=1, max_size=4)
QUICK = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
"""Histories of valid and of damaged logs (``examples(400)`` and ``examples(150)``), each in
one of the three states, checked after every step."""


def log_files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*/session.jsonl*") if p.is_file())


def plain_lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    if path.suffix == ".zstd":
        try:
            reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
            data = reader.read()
        except zstandard.ZstdError:
            return []
    return data.split(b"\n")


def encoded(path: Path, line: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(line) if path.suffix == ".zstd" else line


def apply(root: Path, op: tuple[Any, ...]) -> None:
    """One step of a history; steps that name a missing file do nothing."""
    files = log_files(root)
    if op[0] == "write":
        _, log, compress, wipe = op
        path = log_path(root, log["header"], compress=compress)
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [line + b"\n" for line in log_lines(log)]
        if wipe:
            for other in path.parent.glob("session.jsonl*"):
                other.unlink()
        body = b"".join(encoded(path, line) for line in lines)
        path.write_bytes(body)
    elif files and op[0] == "append":
        path = files[op[1] % len(files)]
        if op[2] == "title":
            record = {
                "type": "session/title",
                "seq": next_seq(plain_lines(path)),
                "time": 9,
                "data": {"title": "appended title", "messageSeqs": [], "source": {"kind": "user"}},
            }
            line = json.dumps(record).encode() + b"\n"
        else:
            line = b"{not json\n" if op[2] == "garbage" else b"\n"
        with path.open("ab") as file:
            file.write(encoded(path, line))
    elif files and op[0] == "delete":
        files[op[1] % len(files)].unlink()


def candidates(store: Any, query: str) -> list[Any]:
    resolver = SessionReferenceResolver(store)
    return resolver.mention_candidates(Target("t", "/w"), query, 50)


def assert_same(index: SessionIndex, root: Path, fresh_path: Path | None) -> None:
    """Index answers == store answers; with ``fresh_path``, searches == a fresh index's."""
    plain = DirectoryStore(root)
    listed = plain.headers()
    assert index.headers() == listed
    assert index.problems() == plain.problems()
    assert [index.title(h.id) for h in listed] == [plain.title(h.id) for h in listed]
    for query in ("", "appended", "AB", "/W"):
        assert candidates(index, query) == candidates(plain, query)
    if fresh_path is None:
        return
    fresh = SessionIndex(DirectoryStore(root), fresh_path)
    for query in ("the", "a", "appended title", "e x"):
        assert index.search(query, 50) == fresh.search(query, 50)
    fresh.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{fresh_path}{suffix}").unlink(missing_ok=True)


def run_history(
    tmp: Path, ops: list[tuple[Any, ...]], state: State, damaged: list[Any] | None = None
) -> None:
    """The store (``damaged`` logs first, if given), then each step of ``ops``, the answers
    checked after each, the store kept in ``state`` (:mod:`tests.store_clock`)."""
    clock = StoreClock(state)
    root = tmp / "store"
    root.mkdir()
    if damaged is not None:
        write_mutated_store(root, damaged)
    clock.date(root)
    index = SessionIndex(DirectoryStore(root), tmp / "index.sqlite", clock=clock)
    assert_same(index, root, None)
    for op in ops:
        apply(root, op)
        clock.date(root)
        assert_same(index, root, None)
        # a second process (another index object on the same database) agrees too
        other = SessionIndex(DirectoryStore(root), tmp / "index.sqlite", clock=clock)
        assert other.headers() == index.headers()
        other.close()
    assert_same(index, root, tmp / "fresh.sqlite")
    index.close()


@settings(max_examples=examples(400), **QUICK)  # type: ignore[arg-type]
@given(ops=histories, state=st.sampled_from(STATES))
def test_histories_of_valid_logs(tmp_path_factory: Any, ops: list[Any], state: State) -> None:
    run_history(tmp_path_factory.mktemp("h"), ops, state)


@settings(max_examples=examples(150), **QUICK)  # type: ignore[arg-type]
@given(damaged=mutated_stores(max_sessions=3), ops=histories, state=st.sampled_from(STATES))
def test_histories_of_damaged_logs(
    tmp_path_factory: Any, damaged: list[Any], ops: list[Any], state: State
) -> None:
    run_history(tmp_path_factory.mktemp("d"), ops, state, damaged=damaged)


def test_a_settled_store_is_answered_without_listing_it(tmp_path: Path, monkeypatch: Any) -> None:
    """The ``settled`` state reaches the index's path for a store that did not change: every
    remembered entry statted, no directory listed."""
    clock = StoreClock("settled")
    root = tmp_path / "store"
    header = {"version": 0, "id": "a", "createdAt": 1, "delegationDepth": 0}
    apply(root, ("write", {"header": header, "events": []}, False, False))
    clock.date(root)
    index = SessionIndex(DirectoryStore(root), tmp_path / "index.sqlite", clock=clock)
    assert [h.id for h in index.headers()] == ["a"]
    listed: list[str] = []
    scandir = walk.os.scandir

    def listing(path: str) -> Any:
        listed.append(path)
        return scandir(path)

    monkeypatch.setattr(walk.os, "scandir", listing)
    assert index.refresh().read == 0
    assert listed == []
