"""An index leaves nothing beside its database once a command is done with it.

SQLite removes an index's -wal and -shm files as the last connection to it closes (one that
could write), so every command that opens an index must close it: when it ends normally, on
Ctrl-C (SIGINT to its process group, as a terminal sends it: exit 130) and on SIGTERM to it
alone (as ``kill`` sends it: exit 143; it ends its workers itself), wherever the signal lands
in a build. So must a refresh a Ctrl-C stops in a library caller's process. (A process killed
with SIGKILL cannot: the next use of the index folds its write-ahead log in.)
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from sessionref.index import SessionIndex
from sessionref.index.upkeep import index_stats
from sessionref.log.store import DirectoryStore
from sessionref.redact import Redaction
from sessionref.testing.store import write_session_store
from sessionref.types import Target
from tests.conftest import CACHE
from tests.logs import assistant, header, user

SESSIONS = 250
"""Enough sessions of :func:`conversation` that a build with 3 workers takes a second or two."""
PATIENCE = 60.0
"""Seconds to wait for a state a test needs: a bound on a hung run, not a speed requirement."""


def conversation(n: int, turns: int) -> dict[str, Any]:
    """Session ``n``: ``turns`` turns of some 80 words, the first naming it (``kiwi{n}``)."""
    events = [
        (user if seq % 2 == 0 else assistant)(seq, f"kiwi{n} turn {seq} " + "words " * 80)
        for seq in range(turns)
    ]
    return {"header": header(f"s{n:03}", n, "/w"), "events": events}


def settled(root: Path) -> Path:
    """``root`` with every file dated a minute ago: no log is too fresh to be remembered."""
    past = time.time() - 60
    for path in [root, *root.rglob("*")]:
        os.utime(path, (past, past))
    return root


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big") / "store"
    write_session_store(root, [conversation(n, 120) for n in range(SESSIONS)])
    return settled(root)


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("small") / "store"
    write_session_store(root, [conversation(n, 4) for n in range(5)])
    return settled(root)


def beside(index: Path) -> list[str]:
    """The files in the index's folder."""
    return sorted(entry.name for entry in index.parent.iterdir())


def sessionref(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sessionref", *args],
        capture_output=True,
        stdin=subprocess.DEVNULL,  # mcp serves until its input ends
        env={**os.environ, "XDG_CACHE_HOME": CACHE},
        timeout=PATIENCE,
    )


def group_members(group: int) -> list[int]:
    """The live processes of a process group, from /proc."""
    members = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(entry))
    return members


def wait_for(condition: Callable[[], bool], what: str) -> None:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < PATIENCE, f"gave up waiting for {what}"
        time.sleep(0.002)


def wal_bytes(index: Path) -> int:
    try:
        return os.stat(f"{index}-wal").st_size
    except FileNotFoundError:
        return -1


MOMENTS: dict[str, Callable[[Path, int], bool]] = {
    # the database is being made: its write-ahead log has just appeared
    "made": lambda index, group: wal_bytes(index) >= 0,
    # the first batch of sessions is written (the build is well under way)
    "writing": lambda index, group: wal_bytes(index) > 1_000_000,
}
NO_TABLES = "cannot be read as an index (no such table: meta); the next refresh rebuilds it"
SIGNALS = {"SIGINT": (signal.SIGINT, 130), "SIGTERM": (signal.SIGTERM, 143)}


@pytest.mark.parametrize("moment", list(MOMENTS))
@pytest.mark.parametrize("name", list(SIGNALS))
def test_a_stopped_build_leaves_only_its_database(
    big_store: Path, tmp_path: Path, name: str, moment: str
) -> None:
    """``sessionref index`` stopped at ``moment``: one line, its status, no process left, and
    nothing beside the database, which opens and answers."""
    signum, status = SIGNALS[name]
    index = tmp_path / "index.sqlite"
    running = subprocess.Popen(
        [
            *(sys.executable, "-m", "sessionref", "index", "--root", str(big_store)),
            *("--workers", "3", "--index", str(index)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    group = running.pid
    try:
        wait_for(lambda: MOMENTS[moment](index, group) or running.poll() is not None, moment)
        assert running.poll() is None, "the build ended before it could be stopped"
        if signum == signal.SIGINT:
            os.killpg(group, signum)  # as a terminal's Ctrl-C: the workers get it too
        else:
            os.kill(running.pid, signum)
        out, err = running.communicate(timeout=PATIENCE)
    finally:
        if running.poll() is None:  # pragma: no cover - only when the test already failed
            os.killpg(group, signal.SIGKILL)
            running.wait()
    wait_for(lambda: not group_members(group), "every process of the build to end")
    assert (running.returncode, out, err) == (status, b"", b"interrupted\n")
    assert beside(index) == ["index.sqlite"]
    with sqlite3.connect(index) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    db.close()
    stats = index_stats(big_store, index)  # stopped before its tables were made: rebuilt
    assert stats.unusable in (None, NO_TABLES) and 0 <= (stats.sessions or 0) <= SESSIONS
    assert beside(index) == ["index.sqlite"]


def test_every_command_that_opens_an_index_leaves_only_its_database(
    small_store: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "indexes"
    other = tmp_path / "other"  # a second root: its index is statted ahead by a child
    write_session_store(other, [conversation(n, 2) for n in range(5, 8)])
    settled(other)
    roots = ["--root", str(small_store), "--root", str(other), "--index", f"{folder}/"]
    runs = [
        ("candidates", *roots),
        ("candidates", "--query", "kiwi3", *roots),
        ("search", "kiwi3", *roots),
        ("index", *roots),
        ("index", "--stats", *roots),
        ("index", "--prune", "--index", f"{folder}/"),
        ("mcp", *roots),
        ("search", "kiwi6", *roots),
    ]
    for args in runs:
        done = sessionref(*args)
        assert done.returncode == 0, (args, done.stderr)
        assert {name.rpartition(".")[2] for name in os.listdir(folder)} == {"sqlite"}, args
    assert len(os.listdir(folder)) == 2
    assert b"s006" in done.stdout and b"s003" not in done.stdout  # the index answers
    named = tmp_path / "one.sqlite"  # an index named as a file
    for args in (("candidates",), ("search", "kiwi3"), ("index",), ("index", "--stats")):
        done = sessionref(*args, "--root", str(small_store), "--index", str(named))
        assert done.returncode == 0, (args, done.stderr)
        assert [name for name in beside(named) if name.startswith("one.")] == ["one.sqlite"]


class StopAt:
    """A trace function that raises KeyboardInterrupt (as the CLI's SIGINT handler does) at the
    ``at``-th line run in ``sessionref/index``: a Ctrl-C landing there (0: none, lines counted).
    """

    def __init__(self, at: int) -> None:
        self.at, self.lines = at, 0

    def __call__(self, frame: FrameType, event: str, arg: object) -> StopAt | None:
        if f"sessionref{os.sep}index{os.sep}" not in frame.f_code.co_filename:
            return self if "sessionref" in frame.f_code.co_filename else None
        if event == "line" and self.counts(frame):
            self.lines += 1
            if self.lines == self.at:
                raise KeyboardInterrupt
        return self

    def counts(self, frame: FrameType) -> bool:
        """Whether the line about to run in ``frame`` is one counted: every line."""
        return True


class StopHoldingCursor(StopAt):
    """A :class:`StopAt` that counts only the first line run at each place (file, function
    and line) while its frame holds a cursor: a Ctrl-C there leaves the cursor in the
    traceback's frames, open unless it was closed."""

    def __init__(self, at: int) -> None:
        super().__init__(at)
        self.places: set[tuple[str, str, int]] = set()

    def counts(self, frame: FrameType) -> bool:
        place = (frame.f_code.co_filename, frame.f_code.co_name, frame.f_lineno)
        if place in self.places:
            return False
        holds = any(isinstance(value, sqlite3.Cursor) for value in frame.f_locals.values())
        if holds:
            self.places.add(place)
        return holds


@contextlib.contextmanager
def traced(tracer: StopAt) -> Iterator[None]:
    before = sys.gettrace()  # a coverage tool's, if any
    sys.settrace(tracer)
    try:
        yield
    finally:
        sys.settrace(before)


def store_and_build(tmp_path: Path, build: str) -> tuple[DirectoryStore, Path | None]:
    """A store of five sessions and where an index of it was built: for a ``cold`` build,
    nowhere (``None``); for a ``warm`` one, built before a sixth session came, so that a
    refresh lists the store again."""
    root = tmp_path / "store"
    write_session_store(root, [conversation(n, 4) for n in range(5)])
    if build == "cold":
        return DirectoryStore(settled(root)), None
    built = tmp_path / "built.sqlite"
    with SessionIndex(DirectoryStore(settled(root)), built) as index:
        index.refresh()
    write_session_store(root, [conversation(5, 4)])  # one more: listed again
    return DirectoryStore(settled(root)), built


def run_index(
    tmp_path: Path, at: int, store: DirectoryStore, built: Path | None
) -> tuple[SessionIndex, Path]:
    """An index of ``store`` in a folder of its own for the run stopped ``at``, starting
    from a copy of ``built`` when there is one, and the path of its database."""
    path = tmp_path / f"stopped{at}" / "index.sqlite"
    path.parent.mkdir()
    if built is not None:
        path.write_bytes(built.read_bytes())
    return SessionIndex(store, path), path


@pytest.mark.parametrize("build", ["cold", "warm"])
def test_a_refresh_stopped_anywhere_closes_the_index(tmp_path: Path, build: str) -> None:
    """A Ctrl-C landing at any line of a refresh (sampled), as the database is made (cold)
    or as a changed store is listed again (warm): the refresh leaves no connection the index
    does not own nor one that closes only once its frames are gone, so closing the index
    leaves nothing beside the database, even while the interruption is being handled; the
    index then answers as the store does."""
    store, built = store_and_build(tmp_path, build)
    counted = StopAt(0)
    with traced(counted), SessionIndex(store, tmp_path / "counted.sqlite") as index:
        index.refresh()
    stopped = 0
    for at in range(1, counted.lines, 17):
        index, path = run_index(tmp_path, at, store, built)
        try:
            with traced(StopAt(at)):
                index.refresh()
        except KeyboardInterrupt:  # handled here: its traceback holds the refresh's frames
            stopped += 1
            index.close()  # as a with block does
            assert beside(path) in ([], ["index.sqlite"]), at
        assert index.headers() == store.headers()
        index.close()
        assert beside(path) == ["index.sqlite"]
    assert stopped > 50


def uses(index: SessionIndex) -> None:
    """What reads the database through cursors: a refresh, searches (the redacted one reads
    its hits' ids as it goes), candidates and the headers, titles and problems kept."""
    index.refresh()
    index.search("kiwi3")
    index.search("kiwi", limit=1, cwd="/w")
    index.search("turn", redaction=Redaction(("kiwi[0-9]",)))
    index.candidates(Target("s000", "/w"), "kiwi", 3)
    index.headers(), index.title("s001"), index.problems(), index.unread()


@pytest.mark.parametrize("build", ["cold", "warm"])
def test_a_ctrl_c_while_a_cursor_is_held_leaves_it_closed(tmp_path: Path, build: str) -> None:
    """A Ctrl-C at each line run while a frame holds a cursor, garbage collection off (as at
    the CLI's exit): the cursor is closed before the exception leaves it in the traceback,
    so closing the index while the interruption is handled leaves nothing beside the
    database. A cursor still holding its statement would defer SQLite's close (and the
    removal of the -wal and -shm files) until it was freed."""
    store, built = store_and_build(tmp_path, build)
    collecting = gc.isenabled()
    gc.disable()
    try:
        for at in itertools.count(1):
            index, path = run_index(tmp_path, at, store, built)
            try:
                with traced(StopHoldingCursor(at)):
                    uses(index)
            except KeyboardInterrupt:  # handled here: its traceback holds the frames it left
                index.close()
                assert beside(path) in ([], ["index.sqlite"]), at
            else:
                break
    finally:
        if collecting:
            gc.enable()
    index.close()
    assert beside(path) == ["index.sqlite"]
    assert at > 10  # every place a cursor was held was reached, and one more run ended
