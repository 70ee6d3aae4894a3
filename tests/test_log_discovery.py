"""Which sessions a store serves (docs/format.md; FINDINGS B.3, B.11, B.12, D.3).

The harness's listing skips headers it does not take and never follows a link; where it
refuses a whole root, sessionref serves every other session, does not serve the offending ones
(every copy of a duplicate id) and reports them in ``problems()`` (**[sessionref]**).
"""

from __future__ import annotations

import errno
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionref import DirectoryStore, MemoryStore
from sessionref.errors import SessionLogError
from sessionref.log.discovery import (
    PLAIN_LOG,
    ZSTD_LOG,
    Listing,
    LogFile,
    StoreProblem,
    list_sessions,
)
from sessionref.log.frames import DEFAULT_MAX_LINE_BYTES
from sessionref.log.layout import encode_project_directory, encode_session_directory
from sessionref.log.records import captured_through_seq
from sessionref.log.store import render_session
from sessionref.log.writer import log_path, render_header, zstd_frame
from tests.log_damage import place, plain_log, zstd_log
from tests.logs import header, two_turns
from tests.test_claude_code import refuse_listing
from tests.test_log_shrinking import frame_walks


def served(root: Path) -> set[str]:
    store = DirectoryStore(root)
    ids = {h.id for h in store.headers()}
    for session_id in ids:
        store.read(session_id)
    return ids


def problem_paths(root: Path) -> set[str]:
    store = DirectoryStore(root)
    store.headers()
    return {os.path.relpath(p.path, root) for p in store.problems()}


def test_a_linked_session_directory_is_not_followed(tmp_path: Path) -> None:
    place(tmp_path, plain_log(two_turns()), compress=False)
    target = place(
        tmp_path / ".store", plain_log(two_turns(), header("x")), "x", compress=False
    ).parent
    (tmp_path / "--w--" / "x").symlink_to(target)
    assert served(tmp_path) == {"s"}


def test_a_linked_project_directory_is_not_followed(tmp_path: Path) -> None:
    place(tmp_path / "elsewhere", plain_log(two_turns()), compress=False)
    (tmp_path / "--w--").symlink_to(tmp_path / "elsewhere" / "--w--")
    assert served(tmp_path) == set()


def test_a_log_reached_through_a_linked_project_directory_is_in_place(tmp_path: Path) -> None:
    """A log lying in ``real/`` whose header names ``--w--/``, where ``--w--`` is a link to
    ``real``: the listing does not walk the link but finds the log in ``real/``, and the
    harness takes it because the path its header names leads to the same file. Asked of the
    real stack (2026-12-04, ``_no-cwd -> realproj`` with the log in ``realproj/s1``): it lists
    the session and reads it."""
    place(tmp_path, plain_log(two_turns()), compress=False)
    (tmp_path / "--w--").rename(tmp_path / "real")
    (tmp_path / "--w--").symlink_to("real")
    assert served(tmp_path) == {"s"}
    assert problem_paths(tmp_path) == set()


def test_a_log_linked_into_another_session_directory_is_a_duplicate(tmp_path: Path) -> None:
    """``x/session.jsonl`` a link to the log of ``s``: the harness takes both paths for ``s``
    (the path its header names leads to that file) and refuses the root for a duplicate id.
    Asked of the real stack (2026-12-04): "duplicate JSONL session id". sessionref serves
    neither copy and reports both."""
    log = place(tmp_path, plain_log(two_turns()), compress=False)
    (log.parent.parent / "x").mkdir()
    (log.parent.parent / "x" / "session.jsonl").symlink_to(log)
    assert served(tmp_path) == set()
    assert problem_paths(tmp_path) == {"--w--/s/session.jsonl", "--w--/x/session.jsonl"}


def test_a_linked_log_file_is_read_where_it_leads(tmp_path: Path) -> None:
    """Only directory links are not followed: a ``session.jsonl`` that is a link to a file
    outside the root is listed and read. Asked of the real stack (2026-12-02, the sample
    store with one log moved out and linked back): it lists and reads that session too."""
    root, outside = tmp_path / "root", tmp_path / "outside.jsonl"
    log = place(root, plain_log(two_turns()), compress=False)
    log.rename(outside)
    log.symlink_to(outside)
    assert served(root) == {"s"}


@pytest.mark.parametrize(
    "content",
    [b"", render_header(header())[:-1], b"\xef\xbb\xbf" + plain_log(two_turns())],
    ids=["empty", "no-newline", "bom"],
)
def test_a_header_the_listing_does_not_take_is_not_a_session(
    tmp_path: Path, content: bytes
) -> None:
    place(tmp_path, content, compress=False)
    place(tmp_path, plain_log(two_turns(), header("b")), "b", compress=False)
    assert served(tmp_path) == {"b"}
    assert problem_paths(tmp_path) == {"--w--/s/session.jsonl"}  # reported, not an error


def test_a_zstd_log_without_a_complete_first_frame_is_not_a_session(tmp_path: Path) -> None:
    place(tmp_path, zstd_frame(render_header(header()))[:-3], compress=True)
    assert served(tmp_path) == set()


def whole_root(tmp_path: Path, kind: str) -> None:
    """A root the harness refuses whole, for ``kind``; the session ``b`` is a bystander."""
    if kind.startswith("zstd"):
        place(
            tmp_path, zstd_log([two_turns()], header("b", cwd="/o")), "b", cwd="/o", compress=True
        )
    else:
        place(
            tmp_path, plain_log(two_turns(), header("b", cwd="/o")), "b", cwd="/o", compress=False
        )
    if kind == "duplicate-id":
        place(
            tmp_path, plain_log(two_turns(), header("d", cwd="/x")), "d", cwd="/x", compress=False
        )
        place(
            tmp_path, plain_log(two_turns(), header("d", cwd="/y")), "d", cwd="/y", compress=False
        )
    elif kind == "flat-artifact":
        (tmp_path / "--o--" / "flat.jsonl").write_bytes(plain_log(two_turns()))
    elif kind == "header-dir-mismatch":
        place(tmp_path, plain_log(two_turns(), header("real")), "other", compress=False)
    elif kind == "header-wrong-project":
        place(
            tmp_path, plain_log(two_turns(), header("w", cwd="/a")), "w", cwd="/b", compress=False
        )
    elif kind == "header-retired-field":
        place(tmp_path, plain_log(two_turns(), header("r", sandboxMode="x")), "r", compress=False)
    elif kind == "mixed-encoding":
        place(
            tmp_path, plain_log(two_turns(), header("c", cwd="/o")), "c", cwd="/o", compress=False
        )
        place(tmp_path, zstd_log([two_turns()], header("z")), "z", compress=True)
    elif kind == "zstd-header-frame-with-events":
        place(tmp_path, zstd_frame(plain_log(two_turns(), header("h"))), "h", compress=True)


WHOLE_ROOT: dict[str, tuple[set[str], set[str]]] = {
    "duplicate-id": ({"b"}, {"--x--/d/session.jsonl", "--y--/d/session.jsonl"}),
    "flat-artifact": ({"b"}, {"--o--/flat.jsonl"}),
    "header-dir-mismatch": ({"b"}, {"--w--/other/session.jsonl"}),
    "header-wrong-project": ({"b"}, {"--b--/w/session.jsonl"}),
    "header-retired-field": ({"b"}, {"--w--/r/session.jsonl"}),
    "mixed-encoding": ({"b", "c"}, {"--w--/z/session.jsonl.zstd"}),
    "zstd-header-frame-with-events": ({"b"}, {"--w--/h/session.jsonl.zstd"}),
}


@pytest.mark.parametrize("kind", sorted(WHOLE_ROOT))
def test_a_root_the_harness_refuses_whole_serves_the_others(tmp_path: Path, kind: str) -> None:
    whole_root(tmp_path, kind)
    want_served, want_problems = WHOLE_ROOT[kind]
    assert served(tmp_path) == want_served
    assert problem_paths(tmp_path) == want_problems


NOT_FILES = {"a FIFO": os.mkfifo, "a directory": os.mkdir}
"""Entries named as logs that are no files: the harness's listing fails on a directory
(EISDIR) and waits forever on a FIFO, so it would refuse (or hang on) the whole root."""


@pytest.mark.parametrize("kind", sorted(NOT_FILES))
def test_an_entry_in_place_of_a_log_is_reported_with_its_own_reason(
    tmp_path: Path, kind: str
) -> None:
    place(tmp_path, plain_log(two_turns()), compress=False)
    place(tmp_path, b"not a header\n", "bad", compress=False)  # another, unrelated problem
    odd = log_path(tmp_path, {"id": "odd", "cwd": "/w"}, compress=True)
    odd.parent.mkdir(parents=True)
    NOT_FILES[kind](odd)
    store = DirectoryStore(tmp_path)
    assert [h.id for h in store.headers()] == ["s"]
    reasons = {os.path.relpath(p.path, tmp_path): p.message for p in store.problems()}
    assert reasons == {
        "--w--/bad/session.jsonl": "line 1 is not a header the listing takes",
        "--w--/odd/session.jsonl.zstd": f"{kind} in place of a log file",
    }


@pytest.mark.parametrize("kind", sorted(NOT_FILES))
def test_an_entry_named_as_a_flat_artifact_that_is_no_file_is_no_flat_artifact(
    tmp_path: Path, kind: str
) -> None:
    """A flat ``<project>/<id>.jsonl`` file makes the real listing refuse the whole root
    (FINDINGS D.3); a FIFO or a directory of that name does not: the real stack (rc.8,
    ``real.mjs list``, 2026-12-04) listed every session of the sample store with a FIFO
    ``x.jsonl`` and an empty directory ``y.jsonl`` beside its sessions, waiting on neither.
    Nothing is served from them and nothing is reported."""
    place(tmp_path, plain_log(two_turns()), compress=False)
    NOT_FILES[kind](tmp_path / "--w--" / "x.jsonl")
    store = DirectoryStore(tmp_path)
    assert within(10, lambda: [h.id for h in store.headers()]) == ["s"]
    assert store.problems() == []


def within(seconds: float, call: Callable[[], object]) -> object:
    """What ``call`` returns or raises, called in a thread that must be done within
    ``seconds`` (a bound on a hang: a FIFO opened to be read waits for a writer)."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(call())
        except Exception as exc:  # the outcome under test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the call still runs after {seconds} s"
    return outcome[0]


@pytest.mark.parametrize("compress", [False, True])
def test_a_log_made_a_fifo_after_the_listing_is_refused_not_waited_on(
    tmp_path: Path, compress: bool
) -> None:
    """A hostile trial: a store kept open (an MCP server, a library caller) lists a log, which
    is then replaced by a FIFO; reading the session opened the FIFO and waited forever."""
    log = place(tmp_path, plain_log(two_turns()), compress=False)
    if compress:
        log = log.rename(log.with_name("session.jsonl.zstd"))
        log.write_bytes(zstd_log([two_turns()]))
    store = DirectoryStore(tmp_path)
    assert [h.id for h in store.headers()] == ["s"]
    log.unlink()
    os.mkfifo(log)
    failure = within(10, lambda: store.read("s"))
    assert isinstance(failure, SessionLogError)
    assert str(failure) == f"{log}: a FIFO in place of a log file"
    assert within(10, lambda: store.title("s")) is None


@pytest.mark.parametrize("name", [PLAIN_LOG, ZSTD_LOG])
def test_a_log_made_a_fifo_after_the_walk_is_passed_over_by_the_listing(
    tmp_path: Path, name: str
) -> None:
    """The same race one step earlier: the walk saw a file, line 1 is read from a FIFO."""
    fifo = tmp_path / name
    os.mkfifo(fifo)
    store = DirectoryStore(tmp_path)
    file = LogFile("--w--", "s", name, str(fifo))
    found = within(10, lambda: list_sessions([file], [], store.first_line))
    assert isinstance(found, Listing)
    assert found.headers == []
    assert found.problems == [StoreProblem(str(fifo), "a FIFO in place of a log file")]


def test_a_plain_header_line_that_never_ends_is_refused_in_linear_time(tmp_path: Path) -> None:
    """A hostile trial: line 1 of a plain log was looked for 64 KiB at a time, each time
    copying and searching all that was read before, so one sparse file of zeros over the
    64 MiB line limit took a minute to pass over (fixed, a tenth of a second: the bound of
    20 s is a hang detector, not a speed requirement)."""
    place(tmp_path, plain_log(two_turns()), compress=False)
    endless = place(tmp_path, b"", "endless", compress=False)
    os.truncate(endless, DEFAULT_MAX_LINE_BYTES + 2)  # sparse: no disk, no newline
    store = DirectoryStore(tmp_path)
    assert within(20, store.headers) == [store.read("s").header]
    assert [(p.path, p.message) for p in store.problems()] == [
        (str(endless), f"header line is longer than {DEFAULT_MAX_LINE_BYTES} bytes")
    ]


def test_a_zstd_header_frame_that_never_ends_is_scanned_in_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The zstd twin: a first frame of empty blocks that never ends was scanned from its
    start after every 64 KiB read (an hour to pass over, at the 64 MiB limit). The bytes
    scanned are counted: linear is at most twice what was read, plus the last scan."""
    place(tmp_path, zstd_log([two_turns()]), compress=True)
    limit = 1 << 20
    endless = place(tmp_path, zstd_frame(b"")[:6], "endless", compress=True)
    os.truncate(endless, 2 * limit)  # zeros: an empty raw block every 3 bytes
    scanned = frame_walks(monkeypatch)
    store = DirectoryStore(tmp_path, max_line_bytes=limit)
    assert [h.id for h in store.headers()] == ["s"]
    assert [(p.path, p.message) for p in store.problems()] == [
        (str(endless), f"header frame is longer than {limit} bytes")
    ]
    read = limit + (1 << 16)  # what the probe read: one chunk past the limit
    assert sum(scanned) <= 3 * read + 2 * len(zstd_log([two_turns()]))


def test_a_log_that_is_a_link_loop_is_reported_not_dropped(tmp_path: Path) -> None:
    """A hostile trial: a log linked to itself (ELOOP) was taken for no log at all, so its
    session vanished without a word (the harness's listing fails on it, ELOOP)."""
    place(tmp_path, plain_log(two_turns()), compress=False)
    loop = log_path(tmp_path, {"id": "loop", "cwd": "/w"}, compress=False)
    loop.parent.mkdir(parents=True)
    loop.symlink_to(loop.name)
    store = DirectoryStore(tmp_path)
    assert [h.id for h in store.headers()] == ["s"]
    reasons = {os.path.relpath(p.path, tmp_path): p.message for p in store.problems()}
    assert reasons == {
        "--w--/loop/session.jsonl": f"cannot be read: {os.strerror(errno.ELOOP)}",
    }


def test_logs_of_both_encodings_in_one_directory_are_not_served(tmp_path: Path) -> None:
    place(tmp_path, plain_log(two_turns()), compress=False)
    place(tmp_path, zstd_log([two_turns()]), compress=True)
    place(tmp_path, plain_log(two_turns(), header("p")), "p", compress=False)
    assert served(tmp_path) == {"p"}
    assert problem_paths(tmp_path) == {"--w--/s/session.jsonl.zstd", "--w--/s/session.jsonl"}


SESSIONS: list[dict[str, Any]] = [
    {
        "header": {"version": 0, "id": "s", "createdAt": 1, "cwd": "/w", "delegationDepth": 0},
        "events": [*two_turns()[:-1], "a string entry", ["an", "array"]],
    },
    {
        "header": {"version": 0, "id": "\ud800", "createdAt": 2, "delegationDepth": 0},
        "events": two_turns(),
    },
    {
        "header": {"version": 0, "id": "t", "createdAt": 3, "delegationDepth": 0},
        "events": [{**e, "time": 1.5} if e["seq"] == 2 else e for e in two_turns()],
    },
]


def test_a_memory_store_reads_as_the_same_plain_store_on_disk(tmp_path: Path) -> None:
    for session in SESSIONS:
        project, directory, content = render_session(session)
        (tmp_path / project / directory).mkdir(parents=True)
        (tmp_path / project / directory / "session.jsonl").write_bytes(content)
    memory, disk = MemoryStore(SESSIONS), DirectoryStore(tmp_path)
    assert sorted(h.id for h in memory.headers()) == sorted(h.id for h in disk.headers())
    for session in SESSIONS:
        session_id = session["header"]["id"]
        answers = []
        for store in (memory, disk):
            try:
                answers.append(captured_through_seq(store.read(session_id).records))
            except SessionLogError:
                answers.append("refused")
        assert answers[0] == answers[1]
    assert captured_through_seq(memory.read("s").records) == 11  # prefix ends, turn closed
    with pytest.raises(SessionLogError):
        memory.read("t")


def test_a_later_session_in_the_same_directory_replaces_the_earlier() -> None:
    first = {"header": SESSIONS[0]["header"], "events": two_turns()}
    second = {"header": SESSIONS[0]["header"], "events": two_turns()[:6]}
    assert captured_through_seq(MemoryStore([first, second]).read("s").records) == 5


def _escaped_unit_by_unit(text: str) -> str:
    """docs/format.md §Layout taken literally: walk the UTF-16 code units one by one."""
    literal = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"
    units = text.encode("utf-16-le", "surrogatepass")
    out = []
    for i in range(0, len(units), 2):
        unit = int.from_bytes(units[i : i + 2], "little")
        out.append(chr(unit) if chr(unit) in literal else f"~{unit:04X}")
    return "".join(out)


@given(
    st.text(st.characters(exclude_categories=()) | st.sampled_from("\ud83d\ude42a~/:"), max_size=12)
)
def test_directory_names_escape_each_utf16_code_unit(session_id: str) -> None:
    if session_id not in (".", ".."):
        assert encode_session_directory(session_id) == _escaped_unit_by_unit(session_id)
    parts = re.split(r"[/\\:]+", session_id)
    key = "-".join(_escaped_unit_by_unit(part) for part in parts).lstrip("-") or "root"
    assert encode_project_directory(session_id) == f"--{key[:251]}--"


def test_a_folder_that_cannot_be_listed_is_a_problem_and_the_rest_is_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real stack (asked 2026-12-02, the sample store with one project folder at mode
    000, run as a user) fails the whole listing: ``EACCES: permission denied, scandir``.
    As for the other causes the harness refuses a root for (SPEC §1 [sessionref]),
    sessionref serves every other session and names the folder in ``problems()``; before,
    the folder's sessions vanished without a word."""
    place(tmp_path, plain_log(two_turns(), header("a", cwd="/a")), "a", "/a", compress=False)
    place(tmp_path, plain_log(two_turns(), header("b", cwd="/b")), "b", "/b", compress=False)
    locked = tmp_path / encode_project_directory("/b")
    refuse_listing(monkeypatch, locked)
    store = DirectoryStore(tmp_path)
    assert [h.id for h in store.headers()] == ["a"]
    assert [(p.path, p.message) for p in store.problems()] == [
        (str(locked), "cannot be listed: Permission denied")
    ]
