"""Building the index in several processes: every session read exactly once, by a child or by
the process that writes, and the index the same as one built in one process."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionref.index import SessionIndex, tables
from sessionref.index.parallel import kept_reads, log_paths, read_file, read_sessions
from sessionref.index.refresh import (
    CachedHeaderStore,
    SessionData,
    read_session,
    session_text,
    unit_texts,
)
from sessionref.index.schema import connect_memory
from sessionref.index.walk import walk_tree
from sessionref.log.discovery import NotALog, not_a_log
from sessionref.log.records import SessionHeader
from sessionref.log.store import DirectoryStore
from sessionref.testing import write_session_store
from tests.logs import turn


def logs(count: int) -> list[dict[str, Any]]:
    """Sessions of one turn each, every one with words of its own."""
    return [
        {
            "header": {"version": 0, "id": f"s{n:03}", "createdAt": n, "delegationDepth": 0},
            "events": turn(0, 1, f"question {n} about zebra{n}", f"answer {n}"),
        }
        for n in range(count)
    ]


@pytest.mark.parametrize(("workers", "chunk", "ahead"), [(2, 4, 8), (3, 2, 4), (2, 16, 256)])
def test_every_session_is_read_once_whoever_reads_it(
    tmp_path: Path, workers: int, chunk: int, ahead: int
) -> None:
    """Children take pieces from the front, the writing process reads from the back and takes
    back pieces no child has started: each id comes out once, read as one process reads it."""
    write_session_store(tmp_path / "store", logs(70))
    store = DirectoryStore(tmp_path / "store")
    scanner = CachedHeaderStore(store.root, (store.max_bytes, store.max_line_bytes), {}, 0)
    ids = [header.id for header in scanner.headers()]
    got = list(read_sessions(scanner, ids, workers, chunk, ahead))
    assert sorted(session_id for session_id, _ in got) == sorted(ids)
    assert dict(got) == {session_id: read_session(scanner, session_id) for session_id in ids}


def test_a_parallel_build_searches_as_a_serial_one(tmp_path: Path) -> None:
    write_session_store(tmp_path / "store", logs(120))
    parallel = SessionIndex(DirectoryStore(tmp_path / "store"), tmp_path / "p.sqlite", workers=2)
    serial = SessionIndex(DirectoryStore(tmp_path / "store"), tmp_path / "s.sqlite")
    assert parallel.refresh().read == serial.refresh().read == 120
    for query in ("zebra7", "question", "answer 11", "zebra119 question"):
        assert parallel.search(query, 200) == serial.search(query, 200)
    hits = {hit.session_id for hit in parallel.search("zebra11", 200)}
    assert hits == {"s011", *(f"s11{n}" for n in range(10))}


def test_a_log_read_by_path_is_read_as_its_listed_session(tmp_path: Path) -> None:
    """Before any listing, a log is read as the session its header names, as the listing's
    read of that session reads it; a file with no header the listing takes names none."""
    write_session_store(tmp_path / "store", logs(5), compress=True)
    (tmp_path / "store" / "_no-cwd" / "zz-junk").mkdir()
    (tmp_path / "store" / "_no-cwd" / "zz-junk" / "session.jsonl.zstd").write_bytes(b"no log")
    store = DirectoryStore(tmp_path / "store")
    scanner = CachedHeaderStore(store.root, (store.max_bytes, store.max_line_bytes), {}, 0)
    listed = {header.id: read_session(scanner, header.id) for header in scanner.headers()}
    reads = [read_file(scanner, path) for path in log_paths(store.root, tree_entries(store))]
    assert [session_id for session_id, _ in reads] == [*sorted(listed), None]
    assert dict(reads[:-1]) == listed


def tree_entries(store: DirectoryStore) -> dict[bytes, str]:
    return walk_tree(store.root, 0).entries


def test_reads_the_listing_does_not_place_are_made_again(tmp_path: Path) -> None:
    """A read of another file, or of the same file at another revision, is not kept."""
    write_session_store(tmp_path / "store", logs(3))
    store = DirectoryStore(tmp_path / "store")
    limits = (store.max_bytes, store.max_line_bytes)
    scanner = CachedHeaderStore(store.root, limits, {}, 1 << 62)  # every file settled
    ids = [header.id for header in scanner.headers()]
    right = {session_id: read_session(scanner, session_id) for session_id in ids}
    expected = {session_id: (data.path, data.revision) for session_id, data in right.items()}
    reads = [
        (ids[0], right[ids[1]]),  # another session's file
        (ids[1], right[ids[1]]._replace(revision="0:0:0:0")),
        (ids[2], right[ids[2]]),
        (None, right[ids[0]]),
    ]
    got = list(kept_reads(reads, expected, ids, scanner))
    assert got == [(ids[2], right[ids[2]]), (ids[0], right[ids[0]]), (ids[1], right[ids[1]])]


def test_the_logs_read_early_are_regular_files(tmp_path: Path) -> None:
    """A FIFO in place of a log is never opened (that would wait forever), nor a directory."""
    write_session_store(tmp_path, logs(3))
    for session, make in (("s000", os.mkfifo), ("s001", os.mkdir)):
        (tmp_path / "_no-cwd" / session / "session.jsonl").unlink()
        make(tmp_path / "_no-cwd" / session / "session.jsonl")
    walk = walk_tree(tmp_path, 0)
    assert log_paths(tmp_path, walk.entries) == [str(tmp_path / "_no-cwd/s002/session.jsonl")]


def test_a_parallel_build_of_a_store_with_problems_is_the_serial_one(tmp_path: Path) -> None:
    """Children read every log file of the walk, served or not (a copy whose header names
    another directory, a duplicate id, a file of the other encoding) but a FIFO or directory
    in its place; the index keeps what the listing serves, as a build in one process does."""
    write_session_store(tmp_path / "store", logs(60))
    root = tmp_path / "store" / "_no-cwd"
    shutil.copytree(root / "s001", tmp_path / "store" / "--elsewhere--" / "s001")
    shutil.copytree(root / "s002", root / "s002-copy")
    (root / "s003" / "session.jsonl.zstd").write_bytes(b"")
    os.mkfifo(root / "s004" / "session.jsonl.zstd")  # besides its log, and in place of one
    for session, make in (("s005", os.mkfifo), ("s006", os.mkdir)):
        (root / session / "session.jsonl").unlink()
        make(root / session / "session.jsonl")
    parallel = SessionIndex(DirectoryStore(tmp_path / "store"), tmp_path / "p.sqlite", workers=2)
    serial = SessionIndex(DirectoryStore(tmp_path / "store"), tmp_path / "s.sqlite")
    assert parallel.refresh() == serial.refresh()
    assert parallel.headers() == serial.headers() == DirectoryStore(root.parent).headers()
    assert parallel.problems() == serial.problems()
    for query in ("zebra1", "question", "answer 2"):
        assert parallel.search(query, 200) == serial.search(query, 200)


@given(st.lists(st.text(st.sampled_from(["a", "é", "令", "😀", "\n", "\0", "\ud800", "\udfff"]))))
def test_a_session_text_is_its_units_made_indexable_one_by_one(units: list[str]) -> None:
    """Lone surrogates and NUL become U+FFFD in each unit, one for one; each bound is where
    its unit ends, units joined by a newline."""
    fixed = [
        "".join("\ufffd" if c == "\0" or "\ud800" <= c <= "\udfff" else c for c in u) for u in units
    ]
    text, bounds = session_text(units)
    assert text == "\n".join(fixed)
    assert unit_texts(text, bounds) == fixed


def test_a_batch_written_at_once_keeps_the_last_row_of_each_session() -> None:
    """Texts go in after every row of a batch: a session twice in one batch keeps its last
    text, a later row without text removes the earlier one, and an older text is replaced."""
    db = connect_memory()
    header = SessionHeader("a", 1)

    def row(text: str) -> tables.SessionRow:
        bounds = len(text).to_bytes(4, "little") if text else b""
        return (header, 0, "{}", SessionData("/a", "r", None, None, text, bounds))

    def found(word: str) -> list[int]:
        return [n for (n,) in db.execute("SELECT rowid FROM texts WHERE texts MATCH ?", (word,))]

    tables.write_sessions(db, [row("older words")])
    tables.write_sessions(db, [row("first zebra"), row("second yak")])
    assert found("zebra") == [] and found("older") == [] and len(found("yak")) == 1
    tables.write_sessions(db, [row("third okapi"), row("")])
    assert found("okapi") == [] and found("yak") == []
    assert db.execute("SELECT count(*) FROM texts").fetchone() == (0,)


def test_a_log_swapped_for_a_fifo_between_stat_and_open_is_not_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log swapped for a FIFO after the header cache stats it and back before the next
    listing (same version): the listing that opened the FIFO says so once, naming the path
    once, and the next reads the log again rather than a remembered error that would name it
    twice (``PATH: PATH: a FIFO in place of a log file``)."""
    write_session_store(tmp_path, logs(1))
    path = str(tmp_path / "_no-cwd" / "s000" / "session.jsonl")
    read = DirectoryStore.first_line

    def swapped(store: DirectoryStore, file: Any) -> bytes | None:
        raise NotALog(not_a_log(file.location, stat.S_IFIFO | 0o644))  # as open_regular

    monkeypatch.setattr(DirectoryStore, "first_line", swapped)
    scanner = CachedHeaderStore(tmp_path, (1 << 30, 1 << 20), {}, 1 << 62)  # every file settled
    assert scanner.headers() == []
    [problem] = scanner.problems()
    assert (problem.path, problem.message) == (path, "a FIFO in place of a log file")
    monkeypatch.setattr(DirectoryStore, "first_line", read)  # the log is back, same version
    again = CachedHeaderStore(tmp_path, (1 << 30, 1 << 20), scanner.learned, 1 << 62)
    assert [header.id for header in again.headers()] == ["s000"]
    assert again.problems() == []
