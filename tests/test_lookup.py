"""The harness's lookup of a session before each read, decided when the store is listed
(docs/format.md §Discovery): what the lookup meets in any project folder fails the read
(READ_FAILED, so a candidate is labelled by its id), the entry that fails it is a problem, and
the other sessions are served. The index, the batch workers and a store in memory answer so
too, however the conflict comes and goes. (The real stack's answers for these layouts:
``tests/data/oracle-cases/lookup-probes``, in ``test_log_oracle_cases.py``.)"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
import zstandard

from sessionref.batch.core import DirectoryRecipe
from sessionref.errors import READ_FAILED, SessionReferenceError
from sessionref.index import SessionIndex
from sessionref.index.walk import walk_tree
from sessionref.log.store import DirectoryStore, MemoryStore
from sessionref.resolver import SessionReferenceResolver
from sessionref.testing import write_session_store
from sessionref.types import Target
from tests.logs import title, turn, turn_end
from tests.store_clock import StoreClock

TARGET = Target("t")


def log(session_id: str, cwd: str | None = "/p", **header: Any) -> dict[str, Any]:
    """A log of one titled session (``header`` changes its header)."""
    fields = {"version": 0, "id": session_id, "createdAt": 1, "delegationDepth": 0, "cwd": cwd}
    events = [*turn(0, 1, "a question", "an answer"), title(6, f"title of {session_id}")]
    return {"header": {**fields, **header}, "events": [*events, turn_end(7)]}


def store_of(root: Path, count: int = 3) -> None:
    """Sessions ``s0``… in ``--p--`` (cwd ``/p``) and an empty project folder ``--x--``."""
    write_session_store(root, [log(f"s{n}") for n in range(count)])
    (root / "--x--").mkdir()


def readable(store: Any, session_id: str) -> bool:
    """Whether a reference to the session reads (else it must be READ_FAILED)."""
    try:
        SessionReferenceResolver(store).snapshot(TARGET, [{"sessionId": session_id}])
    except SessionReferenceError as exc:
        assert exc.code == READ_FAILED
        return False
    return True


def answers(store: Any) -> tuple[list[bool], list[Any], list[tuple[str, str]]]:
    """Each session ``store`` lists (listing it again: an index refreshes): readable or not;
    its title; and the problems."""
    ids = [h.id for h in store.headers()]
    problems = [(p.path, p.message) for p in store.problems()]
    return [readable(store, i) for i in ids], [store.title(i) for i in ids], problems


LAYOUTS = {
    "a flat file named as it": lambda r: (r / "--x--" / "s1.jsonl").write_text("{}\n"),
    "a flat directory named as it": lambda r: (r / "--x--" / "s1.jsonl.zstd").mkdir(),
    "a file named as its folder": lambda r: (r / "--x--" / "s1").write_text("x"),
    "a link loop named as its folder": lambda r: (r / "--x--" / "s1").symlink_to("s1"),
    "a link to its folder": lambda r: (r / "--x--" / "s1").symlink_to("../--p--/s1"),
    "a copy the listing does not take": lambda r: write_session_store(
        r, [log("s1", "/x", delegationDepth=None)]
    ),
}


@pytest.mark.parametrize("layout", LAYOUTS, ids=list(LAYOUTS))
def test_what_the_lookup_meets_fails_that_read_alone(tmp_path: Path, layout: str) -> None:
    """From the lookup's steps (flat artifacts, then ``<id>/session.<other>``, then the logs
    counted): ``s1``'s read fails and the entry is a problem; ``s0`` and ``s2`` read."""
    store_of(tmp_path)
    LAYOUTS[layout](tmp_path)
    store = DirectoryStore(tmp_path)
    assert [h.id for h in store.headers()] == ["s0", "s1", "s2"]
    assert [readable(store, i) for i in ("s0", "s1", "s2")] == [True, False, True]
    assert [store.title(i) for i in ("s0", "s1", "s2")] == ["title of s0", None, "title of s2"]
    failing = [p.path for p in store.problems() if p.message.startswith("fails the read of")]
    assert len(failing) == 1 and failing[0].startswith(str(tmp_path / "--x--" / "s1"))


def test_a_dangling_link_or_a_folder_without_a_log_fails_nothing(tmp_path: Path) -> None:
    store_of(tmp_path)
    (tmp_path / "--x--" / "s1").symlink_to("nowhere")
    (tmp_path / "--x--" / "s2").mkdir()
    store = DirectoryStore(tmp_path)
    assert [readable(store, i) for i in ("s0", "s1", "s2")] == [True, True, True]
    assert store.problems() == []


def index_at(root: Path, where: Path, **options: Any) -> SessionIndex:
    return SessionIndex(DirectoryStore(root), where, clock=StoreClock("settled"), **options)


def test_the_index_answers_a_conflict_that_comes_and_goes_beside_an_unchanged_log(
    tmp_path: Path,
) -> None:
    """The log of ``s1`` never changes; a link to its folder from another project folder
    comes and goes: each time the index answers as the store does (it kept a session's answer
    per log version, and the lookup depends on other folders)."""
    root = tmp_path / "store"
    store_of(root)
    index = index_at(root, tmp_path / "index.sqlite")
    link = root / "--x--" / "s1"
    for linked in (False, True, False, True):
        if linked:
            link.symlink_to("../--p--/s1")
        elif link.is_symlink():
            link.unlink()
        have = answers(index)
        assert have == answers(DirectoryStore(root))
        assert have[0] == [True, not linked, True]
        again = index_at(root, tmp_path / "index.sqlite")  # a new process: from the database
        assert answers(again) == have
        again.close()
    index.close()


def test_the_index_sees_a_log_put_behind_a_link_it_does_not_walk(tmp_path: Path) -> None:
    """A link named as ``s1``'s folder leads out of the root to a folder with no log, then
    one with a log of the other encoding: the index walks no further than the link, and must
    still see the read fail."""
    root, outside = tmp_path / "store", tmp_path / "outside"
    store_of(root)
    outside.mkdir()
    (root / "--x--" / "s1").symlink_to(outside)
    index = index_at(root, tmp_path / "index.sqlite")
    assert answers(index)[0] == [True, True, True]
    (outside / "session.jsonl.zstd").write_bytes(zstandard.ZstdCompressor().compress(b"{}\n"))
    assert answers(index) == answers(DirectoryStore(root))
    assert answers(index)[0] == [True, False, True]
    index.close()


def test_a_parallel_build_fails_the_read_its_workers_would_not_know_of(tmp_path: Path) -> None:
    """A cold build with two processes reads logs before the listing (and knows no lookup):
    the conflicted session's early read is not kept."""
    root = tmp_path / "store"
    store_of(root, 40)
    (root / "--x--" / "s7").symlink_to("../--p--/s7")
    index = index_at(root, tmp_path / "index.sqlite", workers=2)
    assert answers(index) == answers(DirectoryStore(root))
    assert index.title("s7") is None and index.title("s8") == "title of s8"
    index.close()


def test_a_batch_worker_fails_the_read_its_listing_failed(tmp_path: Path) -> None:
    """A worker's store is told where the listing found each log, and what failed its read."""
    store_of(tmp_path)
    (tmp_path / "--x--" / "s1").symlink_to("../--p--/s1")
    store = DirectoryStore(tmp_path)
    worker = DirectoryRecipe.of(store, ["s0", "s1"])()
    assert [readable(worker, i) for i in ("s0", "s1")] == [True, False]


def test_a_store_in_memory_fails_the_read_of_an_id_another_log_holds(tmp_path: Path) -> None:
    """As on disk: the second log (line 1 not a header the listing takes) is not listed, and
    the lookup finds the id twice."""
    logs = [log("s0"), log("s0", "/x", delegationDepth=None), log("s1")]
    memory = MemoryStore(logs)
    write_session_store(tmp_path, logs)
    disk = DirectoryStore(tmp_path)
    assert [h.id for h in memory.headers()] == ["s0", "s1"]
    assert [readable(memory, i) for i in ("s0", "s1")] == [False, True]
    assert [readable(disk, i) for i in ("s0", "s1")] == [False, True]
    assert [os.path.basename(os.path.dirname(p.path)) for p in memory.problems()] == ["s0", "s0"]


def test_the_index_keeps_a_conflict_when_only_that_log_changes(tmp_path: Path) -> None:
    """A log appended to, its header line the same: the index reads only that log again, with
    the listing (and the lookup's conflicts) it keeps."""
    root = tmp_path / "store"
    store_of(root)
    LAYOUTS["a flat file named as it"](root)
    index = index_at(root, tmp_path / "index.sqlite")
    assert answers(index)[0] == [True, False, True]
    with (root / "--p--" / "s1" / "session.jsonl").open("ab") as file:
        file.write(b"\n")
    report = index.refresh()
    assert (report.read, answers(index)) == (1, answers(DirectoryStore(root)))
    assert answers(index)[0] == [True, False, True]
    index.close()


def test_the_index_keeps_a_failed_read_that_names_a_folder_whose_name_is_no_utf8(
    tmp_path: Path,
) -> None:
    """The read of ``s1`` fails on a link loop in a project folder named by bytes that are no
    UTF-8: the failure names it (a lone surrogate in Python), and the index stores and gives
    it back as the store does (SQLite takes no lone surrogate as text)."""
    root = tmp_path / "store"
    store_of(root)
    folder = os.path.join(os.fsencode(root), b"--\xff--")
    os.mkdir(folder)
    os.symlink(b"s1", os.path.join(folder, b"s1"))
    index = index_at(root, tmp_path / "index.sqlite")
    assert answers(index) == answers(DirectoryStore(root))
    assert answers(index)[0] == [True, False, True]
    looped = os.fsdecode(os.path.join(folder, b"s1", b"session.jsonl.zstd"))
    loop = os.strerror(errno.ELOOP)
    assert [p.message for p in index.unread()] == [f"cannot read {looped}: {loop}"]
    index.close()


def test_what_a_link_as_a_project_folder_leads_to_changes_no_walk(tmp_path: Path) -> None:
    """Neither the listing nor the lookup goes through a link at the root (docs/format.md
    §Discovery): what its target holds changes no walk of the index, which would otherwise
    list the store again at each use under a link to a folder that keeps changing."""
    root, outside = tmp_path / "store", tmp_path / "outside"
    store_of(root)
    (outside / "--q--").mkdir(parents=True)
    (root / "--linked--").symlink_to(outside)
    before = walk_tree(root, 0).digest
    (outside / "--q--" / "s1").symlink_to(root / "--p--" / "s1")
    (outside / "s2.jsonl").write_text("{}\n")
    assert walk_tree(root, 0).digest == before
    assert answers(DirectoryStore(root))[0] == [True, True, True]
