"""SessionIndex: search answers checked against the independent reference model, and the index
as a cache that is never trusted blindly (corrupt, foreign, unwritable, killed, raced).

Which files the index may remember depends on its clock (a file modified within 2 s is racy):
tests set it (:class:`tests.store_clock.StoreClock`) instead of waiting for time to pass."""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sessionref.index.reread as reread
import sessionref.index.tables as tables
from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.cli.app import main
from sessionref.cli.index import stats_line
from sessionref.codecs.uri import format_session_reference_mention
from sessionref.codex.store import CodexStore
from sessionref.errors import INVALID_CONFIG, SessionReferenceError
from sessionref.index import SessionIndex
from sessionref.index.refresh import CachedHeaderStore
from sessionref.index.schema import PAGE_BYTES
from sessionref.index.search import MARK_CLOSE, MARK_OPEN, RANKED_LIMIT
from sessionref.index.upkeep import index_stats
from sessionref.index.walk import RACY_NS
from sessionref.log.store import DirectoryStore, LogUnreadable, StoreProblem
from sessionref.resolver import SessionReferenceResolver
from sessionref.testing import LogRecords as SessionLog
from sessionref.testing import projected_units, session_stores, write_session_store
from sessionref.types import Target
from tests.conftest import examples, run_script
from tests.log_damage import place, plain_log
from tests.logs import header, turn, turn_end, two_turns
from tests.store_clock import StoreClock
from tests.test_mcp_roots import CLAUDE, CODEX, claude_session, codex_session

PHRASES = [
    "refresh the auth token",
    "Flaky CI test in invoices",
    "认证令牌刷新失败",
    "dark mode toggle",
    "日本語のテキスト",
    "Zebra crossing",
]
REPO = Path(__file__).resolve().parents[1]


def write_store(root: Path, logs: list[SessionLog], *, compress: bool = False) -> None:
    """Write logs in the store layout (the files are as new as they are)."""
    write_session_store(root, logs, compress=compress)


def index_of(root: Path, tmp: Path, **options: Any) -> SessionIndex:
    """An index of ``root``; without a ``clock``, one a day ahead: every file on disk settled,
    so the index remembers what it reads (a test that changes the store then dates what it
    changed: :meth:`StoreClock.date`)."""
    options.setdefault("clock", StoreClock("settled"))
    return SessionIndex(DirectoryStore(root), tmp / "index.sqlite", **options)


def settled_store(root: Path) -> StoreClock:
    """A clock a day ahead of ``root``, whose entries it dated (step 0)."""
    clock = StoreClock("settled")
    clock.date(root)
    return clock


def snapshot_of_tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below ``root`` with its bytes and modification time."""
    return {
        str(p): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


texts = st.sampled_from(PHRASES)
stores = session_stores(max_sessions=4, texts=texts, max_turns=2)
queries = st.sampled_from(
    ["auth", "AUTH TOKEN", "令牌", "テキスト", "ck", "zebra", "in", "nothing"]
)


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(logs=stores, query=queries, compress=st.booleans())
def test_search_finds_exactly_the_sessions_whose_units_hold_every_word_between_them(
    tmp_path_factory: Any, logs: list[SessionLog], query: str, compress: bool
) -> None:
    tmp = tmp_path_factory.mktemp("search")
    (tmp / "store").mkdir()
    write_store(tmp / "store", logs, compress=compress)
    index = index_of(tmp / "store", tmp)
    hits = index.search(query, 100)
    words = [w.lower() for w in query.split()]

    def matches(log: SessionLog) -> bool:
        units = [unit["text"].lower() for unit in projected_units(log)]
        return all(any(w in unit for unit in units) for w in words)

    assert {hit.session_id for hit in hits} == {log["header"]["id"] for log in logs if matches(log)}
    for hit in hits:
        marked = hit.snippet.split(MARK_OPEN)[1].split(MARK_CLOSE)[0]
        assert marked.lower() in words
        assert hit.mention == format_session_reference_mention(hit.session_id, hit.label)
    index.close()


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(logs=stores, query=queries, limit=st.integers(1, 5))
def test_the_best_hits_are_the_first_of_every_hit_ranked(
    tmp_path_factory: Any, logs: list[SessionLog], query: str, limit: int
) -> None:
    """A search within :data:`RANKED_LIMIT` lets the full-text query keep its best hits; one
    beyond it ranks every hit joined to its session: the same hits, in the same order."""
    tmp = tmp_path_factory.mktemp("ranked")
    (tmp / "store").mkdir()
    write_store(tmp / "store", logs)
    index = index_of(tmp / "store", tmp)
    assert index.search(query, limit) == index.search(query, RANKED_LIMIT + 1)[:limit]
    index.close()


def write_copies(root: Path, copies: list[tuple[str, int]]) -> None:
    """Copies of the sample's dark-mode session (same text, same score), each with its id
    and ``createdAt``."""
    sample = DirectoryStore(REPO / "sessionref" / "sample")
    lines = sample.path_of("c2e8a7d5-docs-dark-mode").read_bytes()
    body = zstandard.ZstdDecompressor().stream_reader(lines, read_across_frames=True).read()
    header, rest = body.split(b"\n", 1)
    fields = json.loads(header)
    for session_id, created in copies:
        fields.update(id=session_id, createdAt=created)
        path = root / "--home-dev-docs-site--" / session_id / "session.jsonl"
        path.parent.mkdir(parents=True)
        path.write_bytes(json.dumps(fields).encode() + b"\n" + rest)


def test_equal_scores_rank_newest_first_and_limit_keeps_the_first(tmp_path: Path) -> None:
    write_copies(tmp_path / "store", [("old", 5), ("new", 9), ("mid", 7)])
    index = index_of(tmp_path / "store", tmp_path)
    for query in ("dark", "da"):
        hits = index.search(query, 10)
        assert [hit.session_id for hit in hits] == ["new", "mid", "old"]
        assert len({hit.score for hit in hits}) == 1
    assert [hit.session_id for hit in index.search("dark", 2)] == ["new", "mid"]


def test_a_session_indexed_last_still_wins_a_tie_by_being_newest(tmp_path: Path) -> None:
    """The full-text query's best hits tie with the next one: which of them are kept is
    decided by time, not by the order the index met them in."""
    store = tmp_path / "store"
    write_copies(store, [("old", 5), ("mid", 7)])
    clock = settled_store(store)
    index = index_of(store, tmp_path, clock=clock)
    index.refresh()
    write_copies(store, [("new", 9)])
    clock.date(store)
    index.refresh()
    assert [hit.session_id for hit in index.search("dark", 1)] == ["new"]
    assert [hit.session_id for hit in index.search("dark", 2)] == ["new", "mid"]


def test_sample_store_search_and_candidates_through_the_cli(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    monkeypatch.setenv("SESSIONREF_INDEX", str(tmp_path))
    sample = REPO / "sessionref" / "sample"
    assert main(["search", "--root", str(sample), "DARK mode", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"sessionId":"c2e8a7d5-docs-dark-mode"' in out
    assert f"{MARK_OPEN}dark{MARK_CLOSE}" in out
    assert main(["candidates", "--root", str(sample), "--query", "auth"]) == 0
    assert "Refactor auth middleware to JWT" in capsys.readouterr().out
    assert main(["index", "--root", str(sample)]) == 0
    assert "4 sessions indexed (0 logs read" in capsys.readouterr().out
    assert len(list(tmp_path.glob("*.sqlite"))) == 1  # one database per store root


def small_store(root: Path, count: int = 12) -> list[SessionLog]:
    logs = [
        {
            "header": {"version": 0, "id": f"s{n}", "createdAt": n, "delegationDepth": 0},
            "events": [
                {"type": "session/title", "seq": 0, "time": 1, "data": {"title": f"title {n}"}}
            ],
        }
        for n in range(count)
    ]
    write_store(root, logs)
    return logs


def assert_answers_right(index: SessionIndex, root: Path) -> None:
    plain = DirectoryStore(root)
    assert index.headers() == plain.headers()
    assert [index.title(h.id) for h in plain.headers()] == [
        plain.title(h.id) for h in plain.headers()
    ]


def test_corrupt_and_foreign_indexes_are_rebuilt_without_a_word(tmp_path: Path) -> None:
    """In a folder of indexes (the cache, or one named) every database is sessionref's."""
    small_store(tmp_path / "store")
    (tmp_path / "indexes").mkdir()
    warnings: list[str] = []
    store = DirectoryStore(tmp_path / "store")
    index = SessionIndex(store, tmp_path / "indexes", warn=warnings.append)
    index.refresh()
    index.close()
    [database] = (tmp_path / "indexes").glob("*.sqlite")
    database.write_bytes(b"this is not a database" * 100)
    assert_answers_right(index, tmp_path / "store")
    index.close()
    with sqlite3.connect(database) as db:
        db.execute("UPDATE meta SET value = 999 WHERE key = 'schema'")
    db.close()
    index = SessionIndex(store, tmp_path / "indexes", warn=warnings.append)
    assert index.refresh().read == 12  # rebuilt from nothing
    assert_answers_right(index, tmp_path / "store")
    assert warnings == [] and not index.bypassed


def test_a_named_index_file_is_rebuilt_only_when_sessionref_made_it(tmp_path: Path) -> None:
    """A file named as the index that sessionref did not make (text, another program's
    database) is never changed: one warning, and the answers come from the store."""
    small_store(tmp_path / "store")
    ours = tmp_path / "ours.sqlite"
    index = SessionIndex(DirectoryStore(tmp_path / "store"), ours)
    index.refresh()
    index.close()
    with sqlite3.connect(ours) as db:
        db.execute("UPDATE meta SET value = 999 WHERE key = 'schema'")
    db.close()
    index = SessionIndex(DirectoryStore(tmp_path / "store"), ours)
    assert index.refresh().read == 12 and not index.bypassed  # ours, stale: rebuilt
    index.close()
    (tmp_path / "notes.txt").write_text("precious")
    with sqlite3.connect(tmp_path / "other.db") as db:
        db.execute("CREATE TABLE accounts (name TEXT)")
    db.close()
    for name in ("notes.txt", "other.db"):
        before = (tmp_path / name).read_bytes()
        warnings: list[str] = []
        index = SessionIndex(
            DirectoryStore(tmp_path / "store"), tmp_path / name, warn=warnings.append
        )
        assert_answers_right(index, tmp_path / "store")
        assert index.bypassed and index.search("title") == []
        assert len(warnings) == 1 and "not an index" in warnings[0]
        assert (tmp_path / name).read_bytes() == before
        assert not Path(f"{tmp_path / name}-wal").exists()


def test_a_named_index_that_is_not_a_regular_file_is_left_alone(tmp_path: Path) -> None:
    """A FIFO named as the index was opened to read its head (waiting for a writer for
    ever); a device (`--index /dev/null`) was opened by SQLite, found empty, written into,
    and on the rebuild that followed deleted and replaced by a regular file."""
    small_store(tmp_path / "store")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    named = [fifo]
    device = tmp_path / "null"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
        named.append(device)
    except OSError:  # not root: the FIFO alone
        pass
    for path in named:
        kind = stat.S_IFMT(path.stat().st_mode)
        warnings: list[str] = []
        index = SessionIndex(DirectoryStore(tmp_path / "store"), path, warn=warnings.append)
        assert_answers_right(index, tmp_path / "store")
        assert index.bypassed
        assert warnings == [
            f"sessionref: {path} is not an index (it is not a regular file); leaving it alone "
            "and reading the store directly"
        ]
        index.close()
        assert stat.S_IFMT(path.stat().st_mode) == kind
        assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()
        assert "is not an index" in str(index_stats(tmp_path / "store", path).unusable)


def damage(path: Path, start: int, length: int) -> None:
    """Overwrite ``length`` bytes of the file at ``path`` from ``start`` with noise (the
    same noise every run)."""
    with path.open("r+b") as file:
        file.seek(start)
        file.write(random.Random(start).randbytes(length))


def test_a_named_index_file_damaged_past_its_schema_is_rebuilt_without_a_word(
    tmp_path: Path,
) -> None:
    """Its first page (the header and the schema) says sessionref made it, whatever the
    damage to its other pages: it is rebuilt, as it is in the cache folder; --stats says it
    cannot be read until then."""
    small_store(tmp_path / "store")
    named = tmp_path / "named.sqlite"
    index = SessionIndex(DirectoryStore(tmp_path / "store"), named)
    index.refresh()
    index.close()
    damage(named, PAGE_BYTES, named.stat().st_size - PAGE_BYTES)  # every page but the first
    with pytest.raises(sqlite3.DatabaseError), sqlite3.connect(named) as db:
        db.execute("SELECT count(*) FROM sessions").fetchall()
    db.close()
    stats = index_stats(tmp_path / "store", named)
    assert stats.sessions is None and stats_line(stats).endswith("; the next refresh rebuilds it")
    warnings: list[str] = []
    index = SessionIndex(DirectoryStore(tmp_path / "store"), named, warn=warnings.append)
    assert index.refresh().read == 12 and not index.bypassed
    assert_answers_right(index, tmp_path / "store")
    assert warnings == []
    index.close()
    assert index_stats(tmp_path / "store", named).sessions == 12


def test_a_named_file_whose_schema_is_damaged_is_left_alone_and_the_warning_says_why(
    tmp_path: Path,
) -> None:
    """With its schema unreadable, nothing says who made the file: it is not touched, and
    the warning does not claim it is someone else's."""
    small_store(tmp_path / "store")
    named = tmp_path / "named.sqlite"
    index = SessionIndex(DirectoryStore(tmp_path / "store"), named)
    index.refresh()
    index.close()
    damage(named, 100, PAGE_BYTES - 100)
    before = named.read_bytes()
    warnings: list[str] = []
    index = SessionIndex(DirectoryStore(tmp_path / "store"), named, warn=warnings.append)
    assert_answers_right(index, tmp_path / "store")
    assert index.bypassed and named.read_bytes() == before
    assert warnings == [
        f"sessionref: {named} may not be an index: its schema cannot be read (database disk "
        "image is malformed); leaving it alone and reading the store directly"
    ]


def test_the_logs_a_refresh_could_not_read_are_kept_with_the_stores_reason(
    tmp_path: Path,
) -> None:
    """A log corrupt after its header is served (listed) but never searched: the index keeps
    why, as the store words it, until the log is mended."""
    root = tmp_path / "store"
    small_store(root, 3)
    corrupt = plain_log([*two_turns(), b"not json\n", turn_end(12)], header("bad", 3, None))
    log = place(root, corrupt, "bad", None, compress=False)
    clock = settled_store(root)
    index = index_of(root, tmp_path, clock=clock)
    index.refresh()
    # Line 1 is the header, lines 2-13 the two turns: the 14th does not parse, and a
    # turn/end after it makes the log corrupt (docs/format.md, the committed prefix).
    reason = "corrupt session log: unparsable committed event at line 14"
    expected = [StoreProblem(str(log), reason)]
    assert index.unread() == expected and index.search("question") == []
    assert index.holds("bad") and index.problems() == []
    index.close()
    again = index_of(root, tmp_path, clock=clock)
    assert again.refresh().read == 0 and again.unread() == expected
    log.write_bytes(plain_log(two_turns(), header("bad", 3, None)))
    clock.date(root)
    assert again.refresh().read == 1 and again.unread() == []
    assert [hit.session_id for hit in again.search("question")] == ["bad"]


BAD_ARGUMENTS: dict[str, tuple[Any, str]] = {
    "query": (lambda i: i.search(None), ".search query must be a string, not NoneType"),
    "bytes": (lambda i: i.search(b"title"), ".search query must be a string, not bytes"),
    "limit": (
        lambda i: i.search("title", -1),
        ".search limit must be a positive safe integer, not -1",
    ),
    "half": (
        lambda i: i.search("title", 2.5),
        ".search limit must be a positive safe integer, not 2.5",
    ),
    "huge": (
        lambda i: i.search("title", 2**53),
        f".search limit must be a positive safe integer, not {2**53}",
    ),
    "cwd": (
        lambda i: i.search("title", 3, 5),
        ".search cwd must be a string, an os.PathLike or None, not int",
    ),
    "cwd bytes": (
        lambda i: i.search("title", 3, b"/w"),
        ".search cwd must be a string, an os.PathLike or None, not bytes",
    ),
    "holds": (lambda i: i.holds(7), ".holds session_id must be a string, not int"),
    "target": (lambda i: i.candidates("t", "", 3), ".candidates target must be a Target, not str"),
    "needle": (
        lambda i: i.candidates(Target("t"), None, 3),
        ".candidates needle must be a string, not NoneType",
    ),
    "candidates": (
        lambda i: i.candidates(Target("t"), "", 0),
        ".candidates limit must be a positive safe integer, not 0",
    ),
    "store": (
        lambda i: SessionIndex(None, i.path),
        " store must be a DirectoryStore or a HarnessStore, not NoneType",
    ),
    "path": (
        lambda i: SessionIndex(i.store, 5),
        " path must be a string, an os.PathLike or None, not int",
    ),
    "workers": (
        lambda i: SessionIndex(i.store, i.path, workers=0),
        " workers must be a positive safe integer, not 0",
    ),
}
"""A call with one bad argument, and what its error says after ``SessionIndex``."""


@pytest.mark.parametrize("call, message", BAD_ARGUMENTS.values(), ids=BAD_ARGUMENTS.keys())
def test_a_bad_argument_is_a_coded_error_that_names_it_before_anything_is_done(
    tmp_path: Path, call: Any, message: str
) -> None:
    small_store(tmp_path / "store")
    index = index_of(tmp_path / "store", tmp_path)
    with pytest.raises(SessionReferenceError) as raised:
        call(index)
    assert (raised.value.code, raised.value.message) == (INVALID_CONFIG, f"SessionIndex{message}")
    assert not index.path.exists()  # nothing was refreshed


def test_an_unwritable_index_is_bypassed_with_one_warning(tmp_path: Path) -> None:
    logs = small_store(tmp_path / "store")
    (tmp_path / "blocker").write_text("a file where the index folder should be")
    warnings: list[str] = []
    store = DirectoryStore(tmp_path / "store")
    index = SessionIndex(store, tmp_path / "blocker" / "index.sqlite", warn=warnings.append)
    assert_answers_right(index, tmp_path / "store")
    assert [h.session_id for h in index.search("title", 3)] == []  # titles are not units
    assert index.search("title", 3) == [] and index.bypassed
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert len(logs) == len(index.headers())


def test_the_store_is_never_written(tmp_path: Path) -> None:
    sample = REPO / "sessionref" / "sample"
    before = snapshot_of_tree(sample)
    index = SessionIndex(DirectoryStore(sample), tmp_path / "i.sqlite")
    index.refresh()
    index.search("auth")
    assert snapshot_of_tree(sample) == before


REFRESH_AND_DIE = textwrap.dedent(
    """
    import os, signal, sys, time
    from sessionref.index import store as index_store
    from sessionref.index import SessionIndex
    from sessionref.log.store import DirectoryStore
    index_store.WRITE_BATCH = 3
    def die(done, total):
        if done >= 6:
            os.kill(os.getpid(), signal.SIGKILL)
    day_ahead = lambda: time.time_ns() + 86_400 * 10**9  # every file settled
    SessionIndex(DirectoryStore(sys.argv[1]), sys.argv[2], clock=day_ahead).refresh(die)
    """
)


def test_a_refresh_killed_half_way_leaves_a_usable_index(tmp_path: Path) -> None:
    small_store(tmp_path / "store", 20)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    store, index = str(tmp_path / "store"), str(tmp_path / "index.sqlite")
    done = run_script(REFRESH_AND_DIE, store, index, env=env, check=False)
    assert done.returncode == -9
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        assert db.execute("SELECT count(*) FROM sessions").fetchone() == (6,)
    db.close()
    index = index_of(tmp_path / "store", tmp_path)
    assert index.refresh().read == 14  # only what the killed run did not finish
    assert_answers_right(index, tmp_path / "store")


REFRESH = textwrap.dedent(
    """
    import sys, time
    from sessionref.index import SessionIndex
    from sessionref.log.store import DirectoryStore
    day_ahead = lambda: time.time_ns() + 86_400 * 10**9  # every file settled
    index = SessionIndex(DirectoryStore(sys.argv[1]), sys.argv[2], warn=sys.exit, clock=day_ahead)
    print(len(index.headers()))
    """
)


def test_two_processes_refreshing_at_once_stay_consistent(tmp_path: Path) -> None:
    small_store(tmp_path / "store", 300)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = [sys.executable, "-c", REFRESH, str(tmp_path / "store"), str(tmp_path / "i.sqlite")]
    runs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE) for _ in range(2)]
    outputs = [run.communicate()[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0]
    assert outputs == [b"300\n", b"300\n"]
    index = SessionIndex(
        DirectoryStore(tmp_path / "store"), tmp_path / "i.sqlite", clock=StoreClock("settled")
    )
    assert index.refresh().read == 0
    assert_answers_right(index, tmp_path / "store")


def test_an_index_per_root_in_the_cache_folder(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("SESSIONREF_INDEX", str(tmp_path))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = SessionIndex(DirectoryStore(tmp_path / "a"))
    two = SessionIndex(DirectoryStore(tmp_path / "b"))
    assert one.path.parent == two.path.parent == tmp_path
    assert one.path != two.path
    key = hashlib.sha256(os.fsencode(os.path.realpath(tmp_path / "a"))).hexdigest()
    assert one.path.name.startswith(key[:24])


def _header_line(session_id: str, cwd: str | None = None) -> bytes:
    fields: dict[str, Any] = {
        "type": "session",
        "version": 0,
        "id": session_id,
        "createdAt": 3,
        "delegationDepth": 0,
    }
    if cwd is not None:
        fields["cwd"] = cwd
    return json.dumps(fields).encode() + b"\n"


def _edge_store(root: Path, shape: str) -> None:
    """Stores shaped like the oracle's reproduction cases of discovery."""

    def put(relative: str, body: bytes) -> None:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".zstd":
            body = b"".join(
                zstandard.ZstdCompressor().compress(line + b"\n") for line in body.splitlines()
            )
        path.write_bytes(body)

    put("--w--/ok/session.jsonl", _header_line("ok", "/w"))
    if shape == "duplicate-id":
        put("--a--/dup/session.jsonl", _header_line("dup", "/a"))
        put("--b--/dup/session.jsonl", _header_line("dup", "/b"))
    elif shape == "header-dir-mismatch":
        put("--w--/elsewhere/session.jsonl", _header_line("named"))
    elif shape == "unreadable-header":
        put("--w--/bad/session.jsonl", b"{not json\n")
        put("--w--/empty/session.jsonl", b"")
    elif shape == "mixed-encoding":
        put("--w--/two/session.jsonl", _header_line("two", "/w"))
        put("--w--/two/session.jsonl.zstd", _header_line("two", "/w"))
    elif shape == "symlink-session-dir":
        put("outside/linked/session.jsonl", _header_line("linked", "/w"))
        os.symlink(root / "outside" / "linked", root / "--w--" / "linked")
    elif shape == "file-at-project-level":
        put("--w--/flat.jsonl", _header_line("flat", "/w"))


EDGE_SHAPES = [
    "duplicate-id",
    "header-dir-mismatch",
    "unreadable-header",
    "mixed-encoding",
    "symlink-session-dir",
    "file-at-project-level",
]


@pytest.mark.parametrize("shape", EDGE_SHAPES)
def test_discovery_edge_stores_list_as_the_store_does(tmp_path: Path, shape: str) -> None:
    root = tmp_path / "store"
    _edge_store(root, shape)
    clock = StoreClock("racy")
    index = index_of(root, tmp_path, clock=clock)
    plain = DirectoryStore(root)
    assert_answers_right(index, root)
    assert index.headers() == plain.headers()
    assert index.problems() == plain.problems()
    clock.state = "settled"
    clock.date(root)
    assert_answers_right(index, root)  # settled: now remembered
    assert index.refresh().read == 0
    (root / "--w--" / "ok" / "session.jsonl").unlink()
    clock.date(root)
    assert_answers_right(index, root)
    assert index.headers() == plain.headers()
    assert index.problems() == plain.problems()


def test_a_log_the_file_system_failed_to_read_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_store(tmp_path / "store", 3)
    clock = settled_store(tmp_path / "store")
    index = index_of(tmp_path / "store", tmp_path, clock=clock)
    assert index.refresh().read == 3
    log = tmp_path / "store" / "_no-cwd" / "s1" / "session.jsonl"
    with log.open("ab") as file:
        file.write(b'{"type":"session/title","seq":1,"time":2,"data":{"title":"later"}}\n')
    clock.date(tmp_path / "store")

    def fails(self: DirectoryStore, session_id: str) -> None:
        raise LogUnreadable("cannot read it: Permission denied")  # as DirectoryStore.read

    with monkeypatch.context() as patch:
        patch.setattr(CachedHeaderStore, "read", fails)
        assert index.refresh().read == 1
        assert index.title("s1") is None
    assert index.refresh().read == 1  # not remembered as unreadable
    assert_answers_right(index, tmp_path / "store")
    assert index.refresh().read == 0


def test_a_build_in_worker_processes_gives_the_same_index(tmp_path: Path) -> None:
    small_store(tmp_path / "store", 200)
    index = index_of(tmp_path / "store", tmp_path, workers=2)
    assert index.refresh().read == 200
    assert_answers_right(index, tmp_path / "store")
    serial = SessionIndex(DirectoryStore(tmp_path / "store"), tmp_path / "serial.sqlite")
    assert serial.refresh().read == 200
    assert [index.title(h.id) for h in index.headers()] == [
        serial.title(h.id) for h in serial.headers()
    ]


def test_a_file_added_to_a_session_directory_is_seen_though_its_times_were_put_back(
    tmp_path: Path,
) -> None:
    """An unchanged session directory is not listed again, its files are statted: adding a log
    beside another and setting the directory's times back must still be noticed (by its
    ctime, which the file system sets to its clock's time: the test waits for it to move)."""
    root = tmp_path / "store"
    small_store(root, 3)
    index = index_of(root, tmp_path, clock=settled_store(root))
    assert index.refresh().read == 3
    assert index.refresh().read == 0
    folder = root / "_no-cwd" / "s1"
    before = folder.stat()
    plain = (folder / "session.jsonl").read_bytes()
    (folder / "session.jsonl.zstd").write_bytes(zstandard.ZstdCompressor().compress(plain))
    put_times_back(folder, before)
    assert_answers_right(index, root)
    plain = DirectoryStore(root)
    assert index.headers() == plain.headers()
    assert index.problems() == plain.problems() != []


def put_times_back(path: Path, before: os.stat_result) -> None:
    """Set ``path``'s times back to ``before``'s, once the file system's clock has moved past
    ``before``'s ctime (a tick is milliseconds; each try sets the ctime to the clock's time)."""
    while True:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        status = path.stat()
        if status.st_ctime_ns != before.st_ctime_ns:
            assert status.st_mtime_ns == before.st_mtime_ns
            return


def test_a_nul_or_a_lone_surrogate_hides_no_text_from_search(tmp_path: Path) -> None:
    """SQLite's text functions stop at NUL and UTF-8 cannot hold a lone surrogate: neither
    may cut off the rest of a session's conversation."""
    logs: list[SessionLog] = [
        {
            "header": {"version": 0, "id": session_id, "createdAt": n, "delegationDepth": 0},
            "events": [*turn(0, 1, before, "ok"), *turn(6, 2, "refresh the auth token", "ok")],
        }
        for n, (session_id, before) in enumerate(
            [("nul", "a\x00b"), ("surrogate", "a\ud800b"), ("plain", "ab")]
        )
    ]
    write_store(tmp_path / "store", logs)
    index = index_of(tmp_path / "store", tmp_path)
    assert {hit.session_id for hit in index.search("auth", 10)} == {"nul", "surrogate", "plain"}
    assert {hit.session_id for hit in index.search("token", 10)} == {"nul", "surrogate", "plain"}


def test_a_query_that_holds_a_lone_surrogate_is_answered(tmp_path: Path, capsys: Any) -> None:
    """An argument that is not UTF-8 reaches Python as lone surrogates (surrogateescape)."""
    where = ["--root", str(REPO / "sessionref" / "sample"), "--index", str(tmp_path / "i")]
    assert main(["search", "\udcff", *where]) == 0
    assert '(no sessions match "\\udcff")' in capsys.readouterr().err


def test_a_refresh_that_commits_after_another_keeps_nothing_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lists the store; a session appears in another project and B refreshes and commits
    first; then A commits what it listed. The next use must still see the new session."""
    root = tmp_path / "store"

    def session_in_x(session_id: str, where: Path) -> None:
        header = {"version": 0, "id": session_id, "createdAt": 9, "cwd": "/x"}
        write_store(where, [{"header": {**header, "delegationDepth": 0}, "events": []}])

    small_store(root, 3)
    session_in_x("x0", root)
    session_in_x("x1", tmp_path / "more")
    clock = settled_store(root)
    index = index_of(root, tmp_path, clock=clock)
    index.refresh()
    (root / "_no-cwd" / "s2").rename(root / "_no-cwd" / "s2-moved")  # A will list again
    clock.date(root)
    finish = tables.finish

    def finish_after_another(*args: Any) -> int:
        monkeypatch.setattr(tables, "finish", finish)
        (tmp_path / "more" / "--x--" / "x1").rename(root / "--x--" / "x1")
        clock.date(root)
        index_of(root, tmp_path, clock=clock).refresh()  # B, committing first
        return finish(*args)

    monkeypatch.setattr(tables, "finish", finish_after_another)
    index.refresh()  # A
    assert "x1" in [h.id for h in index_of(root, tmp_path, clock=clock).headers()]
    assert_answers_right(index_of(root, tmp_path, clock=clock), root)


def test_a_log_removed_while_it_is_read_again_is_no_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "store"
    small_store(root, 3)
    clock = settled_store(root)
    index = index_of(root, tmp_path, clock=clock)
    index.refresh()
    log = root / "_no-cwd" / "s1" / "session.jsonl"
    with log.open("ab") as file:
        file.write(b"\n")
    clock.date(root)
    read = reread.read_session

    def removed_first(store: Any, session_id: str) -> Any:
        log.unlink()
        return read(store, session_id)

    monkeypatch.setattr(reread, "read_session", removed_first)
    index.refresh()
    monkeypatch.setattr(reread, "read_session", read)
    assert_answers_right(index, root)


def test_a_header_read_while_its_file_was_racy_is_not_trusted_later(tmp_path: Path) -> None:
    """Two writes in one timestamp tick, same size: the line read in between must not be
    remembered (the file was racy), or the second write would go unseen. The index's clock is
    set by hand, so a slow machine cannot move the first refresh out of the racy window."""
    root = tmp_path / "store"
    small_store(root, 2)
    log = root / "_no-cwd" / "s1" / "session.jsonl"
    status = log.stat()
    now = status.st_mtime_ns + 1_000_000  # 1 ms later: racy
    index = index_of(root, tmp_path, clock=lambda: now)
    index.refresh()
    log.write_bytes(log.read_bytes().replace(b'"createdAt":1', b'"createdAt":7'))
    os.utime(log, ns=(status.st_atime_ns, status.st_mtime_ns))  # the same tick
    now = status.st_mtime_ns + 10 * RACY_NS  # long settled
    assert_answers_right(index, root)
    assert sorted(h.created_at for h in index.headers()) == [0, 7]


def test_a_log_deleted_while_the_store_is_listed_only_drops_that_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's own errors are not the index's: it is not rebuilt, nor bypassed."""
    root = tmp_path / "store"
    small_store(root, 12)
    warnings: list[str] = []
    clock = settled_store(root)
    index = index_of(root, tmp_path, warn=warnings.append, clock=clock)
    index.refresh()
    small_store(tmp_path / "more", 13)
    (tmp_path / "more" / "_no-cwd" / "s12").rename(root / "_no-cwd" / "s12")
    clock.date(root)
    walk = CachedHeaderStore._walk

    def walk_then_delete(self: CachedHeaderStore) -> Any:
        found = walk(self)
        (root / "_no-cwd" / "s7" / "session.jsonl").unlink()
        return found

    monkeypatch.setattr(CachedHeaderStore, "_walk", walk_then_delete)
    report = index.refresh()
    monkeypatch.setattr(CachedHeaderStore, "_walk", walk)
    assert (report.read, report.removed, warnings, index.bypassed) == (1, 1, [], False)
    clock.date(root)
    assert_answers_right(index, root)


def test_a_root_whose_path_is_not_utf8_is_indexed(tmp_path: Path) -> None:
    root = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9"))
    small_store(root, 2)
    index = index_of(root, tmp_path)
    assert_answers_right(index, root)
    assert not index.bypassed


def test_the_resolver_reads_an_index_from_its_threads(tmp_path: Path) -> None:
    """With a cancel token (and for several references) the resolver reads in threads of its
    own: an index must answer from them as the store does, however many at once."""
    root = REPO / "sessionref" / "sample"
    plain, index = DirectoryStore(root), index_of(root, tmp_path)
    ids = [h.id for h in plain.headers()][:3]
    target = {"id": "elsewhere", "session": {"header": {"id": "elsewhere", "cwd": "/w"}}}
    references = [{"sessionId": session_id} for session_id in ids]

    def answers(store: Any) -> list[Any]:
        resolver = SessionReferenceResolver(store)
        token = threading.Event()
        jobs = [
            lambda: resolver.list_candidates(target, "", 50, token),
            lambda: resolver.mention_candidates(target, "e", 5, token),
            lambda: resolver.snapshot(target, references, token, message_id="m"),
        ] * 4
        with ThreadPoolExecutor(len(jobs)) as pool:
            return list(pool.map(lambda job: job(), jobs))

    assert answers(index) == answers(plain)


def open_descriptors(path: Path) -> int:
    """How many of this process's file descriptors are open on ``path`` (Linux)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == str(path)
        except OSError:  # the directory's own descriptor, gone by now
            continue
    return count


def test_an_index_in_a_with_block_is_closed_at_its_end(tmp_path: Path) -> None:
    small_store(tmp_path / "store")
    with index_of(tmp_path / "store", tmp_path) as index:
        assert len(index.headers()) == 12
        assert open_descriptors(index.path) == 1
    assert open_descriptors(index.path) == 0
    assert len(index.headers()) == 12  # a use after it opens it again
    index.close()


@pytest.mark.parametrize("change", ["recompressed", "moved to another project", "removed"])
def test_a_read_after_the_log_moved_since_the_last_refresh_is_the_stores_answer(
    tmp_path: Path, change: str
) -> None:
    """A newcomer's trial: a read goes where the last refresh placed the log, without a
    listing; a log recompressed (plain to zstd) or moved after that failed to read through
    the index ("No such file or directory") though the store read it. The read through the
    index must give what a store with no index gives, session found or not."""
    root = tmp_path / "store"
    logs = small_store(root, 3)
    clock = settled_store(root)
    index = index_of(root, tmp_path, clock=clock)
    assert sorted(h.id for h in index.headers()) == ["s0", "s1", "s2"]  # the logs are placed
    old = DirectoryStore(root).path_of("s1")
    if change == "recompressed":  # the whole root: a DSH root holds one kind of log
        for log in logs:
            DirectoryStore(root).path_of(log["header"]["id"]).unlink()
        write_store(root, logs, compress=True)
    else:
        old.unlink()
    if change == "moved to another project":
        write_store(root, [{**logs[1], "header": {**logs[1]["header"], "cwd": "/elsewhere"}}])
    clock.date(root)
    plain = DirectoryStore(root)
    if change == "removed":
        for reads in ((plain.read, index.read), (plain.transcript, index.transcript)):
            failures = []
            for read in reads:
                with pytest.raises(Exception) as raised:
                    read("s1")
                failures.append((type(raised.value), str(raised.value)))
            assert failures[0] == failures[1]
        return
    assert index.read("s1") == plain.read("s1")
    assert index.transcript("s1") == plain.transcript("s1")
    assert DirectoryStore(root).path_of("s1") != old


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
@pytest.mark.parametrize("change", ["moved", "removed"])
def test_a_harness_log_moved_since_the_last_refresh_is_read_where_it_is_now(
    tmp_path: Path, harness: str, change: str
) -> None:
    """A Claude Code or Codex log moved (to another project; another day) after the last
    refresh placed it failed to read through the index ("cannot read ...: No such file or
    directory"), though the store itself read it: the read through the index gives what the
    store with no index gives, session found or not."""
    home = tmp_path / harness
    if harness == "claude-code":
        claude_session(home, CLAUDE, "Fix the flaky login test", 1)
        store: ClaudeCodeStore | CodexStore = ClaudeCodeStore(home / "projects")
        session_id = CLAUDE
    else:
        codex_session(home)
        store, session_id = CodexStore(home / "sessions"), CODEX
    index = SessionIndex(store, tmp_path / "index.sqlite")
    assert [h.id for h in index.headers()] == [session_id]  # placed
    [log] = [path for path in home.rglob("*.jsonl")]
    if change == "moved":
        elsewhere = log.parent.parent / "elsewhere"
        elsewhere.mkdir()
        log.rename(elsewhere / log.name)
    else:
        log.unlink()
    plain = type(store)(store.root)
    for reads in ((plain.read, index.read), (plain.transcript, index.transcript)):
        answers = []
        for read in reads:
            try:
                answers.append(read(session_id))
            except Exception as exc:  # compared: the same error as the store's
                answers.append((type(exc), str(exc)))
        assert answers[0] == answers[1]
        assert change == "removed" or not isinstance(answers[0], tuple)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"once": "no"}, "SessionIndex once must be True or False, not str"),
        ({"persist": 0}, "SessionIndex persist must be True or False, not int"),
        ({"warn": 5}, "SessionIndex warn must be a function, not int"),
        ({"progress": "bar"}, "SessionIndex progress must be a function or None, not str"),
        ({"clock": None}, "SessionIndex clock must be a function, not NoneType"),
    ],
)
def test_an_option_of_the_wrong_kind_is_refused_before_anything_is_written(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    """A newcomer's trial: ``once="no"`` was taken as true and ``warn=5`` failed only when a
    warning came (a TypeError from deep inside); each is now INVALID_CONFIG naming it, and no
    index file is made."""
    path = tmp_path / "index.sqlite"
    with pytest.raises(SessionReferenceError) as raised:
        SessionIndex(DirectoryStore(tmp_path), path, **options)
    assert (raised.value.code, raised.value.message) == (INVALID_CONFIG, message)
    assert not path.exists()
