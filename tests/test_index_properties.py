"""The index never changes an answer: over generated store histories (writes, appends, damage,
deletions, duplicates), every listing, title, candidate list and search with an incrementally
refreshed index equals the answer without one (the store itself, or an index built afresh)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionref.index import SessionIndex
from sessionref.log.store import DirectoryStore
from sessionref.log.writer import log_path
from sessionref.resolver import SessionReferenceResolver
from sessionref.testing import mutated_stores, session_logs, write_mutated_store
from sessionref.testing.mutations.lines import log_lines, next_seq
from sessionref.types import Target

IDS = st.sampled_from(["a", "b", "Ab", "c-1", ".x"])
CWDS = st.sampled_from(["/w", "/x/y", None])
DAY_NS = 86_400 * 10**9

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
"""620 generated histories in all (350 + 120 + 150), each checked after every step."""


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


def settle(root: Path, step: int) -> None:
    """Date back everything just touched, as if written long ago (each step at its own time)."""
    now = time.time_ns()
    stamp = now - DAY_NS + step * 10**9
    for entry in [*root.glob("*"), *root.glob("*/*"), *root.glob("*/*/*")]:
        if entry.stat().st_mtime_ns > now - DAY_NS // 2:
            os.utime(entry, ns=(stamp, stamp))


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
    tmp: Path,
    ops: list[tuple[Any, ...]],
    settled: bool,
    pause: float = 0,
    damaged: list[Any] | None = None,
) -> None:
    """The store (``damaged`` logs first, if given), then each step of ``ops``, the answers
    checked after each; ``pause`` seconds after each step."""
    root = tmp / "store"
    root.mkdir()
    if damaged is not None:
        write_mutated_store(root, damaged)
        if settled:
            settle(root, -1)
    index = SessionIndex(DirectoryStore(root), tmp / "index.sqlite")
    assert_same(index, root, None)
    for step, op in enumerate(ops):
        apply(root, op)
        if settled:
            settle(root, step)
        time.sleep(pause)
        assert_same(index, root, None)
        # a second process (another index object on the same database) agrees too
        other = SessionIndex(DirectoryStore(root), tmp / "index.sqlite")
        assert other.headers() == index.headers()
        other.close()
    assert_same(index, root, tmp / "fresh.sqlite")
    index.close()


@settings(max_examples=350, **QUICK)  # type: ignore[arg-type]
@given(ops=histories, settled=st.booleans())
def test_histories_of_valid_logs(tmp_path_factory: Any, ops: list[Any], settled: bool) -> None:
    run_history(tmp_path_factory.mktemp("h"), ops, settled)


SHORT_RACY_NS = 30_000_000
"""A racy window of 30 ms, longer than a file system timestamp's tick: histories that pause
past it after each step reach the paths for settled trees (every remembered entry statted
and nothing listed, a session directory not listed again), which a 2 s window keeps them
from (setting a directory's times back changes its ctime)."""


@settings(max_examples=120, **QUICK)  # type: ignore[arg-type]
@given(ops=histories)
def test_histories_past_a_short_racy_window(
    tmp_path_factory: Any, monkeypatch: Any, ops: list[Any]
) -> None:
    monkeypatch.setattr("sessionref.index.store.RACY_NS", SHORT_RACY_NS)
    run_history(tmp_path_factory.mktemp("r"), ops, False, pause=2 * SHORT_RACY_NS / 1e9)


@settings(max_examples=150, **QUICK)  # type: ignore[arg-type]
@given(damaged=mutated_stores(max_sessions=3), ops=histories, settled=st.booleans())
def test_histories_of_damaged_logs(
    tmp_path_factory: Any, damaged: list[Any], ops: list[Any], settled: bool
) -> None:
    run_history(tmp_path_factory.mktemp("d"), ops, settled, damaged=damaged)
