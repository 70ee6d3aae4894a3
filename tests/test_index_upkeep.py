"""Living with the index: what a first build says, answering without one, --stats, --prune,
and one default number of search hits."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sessionref.cli.indexing import NOTE_LOGS, IndexingProgress
from sessionref.errors import INVALID_CONFIG
from sessionref.index import SessionIndex
from sessionref.index.search import DEFAULT_SEARCH_LIMIT
from sessionref.index.upkeep import index_stats, prune_indexes
from sessionref.log.store import DirectoryStore
from sessionref.testing.store import write_session_store
from tests.conftest import CACHE
from tests.log_damage import place, plain_log
from tests.logs import assistant, header, title, turn_end, two_turns, user
from tests.test_cli_robustness import PATIENCE


def sessions(count: int, word: str = "kiwi") -> list[dict[str, Any]]:
    """``count`` sessions that all mention ``word``."""
    return [
        {
            "header": header(f"s{n:03}", n, "/w"),
            "events": [user(0, f"{word} {n}"), assistant(1, "ok"), title(2, f"T{n}")],
        }
        for n in range(count)
    ]


def settled(root: Path) -> Path:
    """``root`` with every file and directory dated a minute ago: no log is too fresh for
    the index to remember (it reads again a file changed in the last 2 seconds)."""
    past = time.time() - 60
    for path in [root, *root.rglob("*")]:
        os.utime(path, (past, past))
    return root


def command(*args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sessionref", *args],
        capture_output=True,
        env={"PATH": "", "HOME": "/nonexistent", "XDG_CACHE_HOME": CACHE, **env},
    )


def test_a_first_build_off_a_terminal_says_what_it_does_once(tmp_path: Path) -> None:
    root = tmp_path / "store"
    write_session_store(root, sessions(NOTE_LOGS))
    settled(root)
    folder = str(tmp_path / "indexes") + "/"
    first = command("candidates", "--root", str(root), "--index", folder, "--limit", "1")
    assert first.returncode == 0, first.stderr
    assert first.stderr.decode() == (
        f"sessionref: indexing {root} (reading {NOTE_LOGS} logs; later runs read only what "
        "changed)\n"
    )
    again = command("search", "kiwi", "--root", str(root), "--index", folder, "--limit", "1")
    assert again.returncode == 0 and again.stderr == b""


def test_a_build_that_saves_nothing_promises_nothing_of_later_runs(tmp_path: Path) -> None:
    """--no-index, or an index file sessionref may not use: every run reads every log again,
    and the line says so instead of promising that later runs read only what changed."""
    root = tmp_path / "store"
    write_session_store(root, sessions(NOTE_LOGS))
    settled(root)
    said = (
        f"sessionref: reading {NOTE_LOGS} logs of {root} (not indexed: later runs read them again)"
    )
    for _ in range(2):
        direct = command("search", "kiwi", "--root", str(root), "--no-index", "--limit", "1")
        assert direct.returncode == 0 and direct.stderr.decode() == said + "\n"
    foreign = tmp_path / "notes.txt"
    foreign.write_text("precious")
    bypassed = command("candidates", "--root", str(root), "--index", str(foreign), "--limit", "1")
    assert bypassed.stderr.decode().splitlines() == [
        f"sessionref: {foreign} is not an index (it is not an SQLite database); leaving it alone "
        "and reading the store directly",
        said,
    ]
    assert foreign.read_text() == "precious"


def test_an_index_path_that_is_no_regular_file_is_left_as_it_is(tmp_path: Path) -> None:
    """A FIFO (or a device: ``--index /dev/null`` as root used to be deleted and replaced by a
    database) named as the index is no index: every command reads the store directly, none
    waits for a writer of the FIFO, and it stays a FIFO."""
    root = tmp_path / "store"
    write_session_store(root, sessions(2))
    fifo = tmp_path / "index.fifo"
    os.mkfifo(fifo)
    why = f"{fifo} is not an index (it is not a regular file)"
    for args in (["candidates", "--limit", "1"], ["index"], ["index", "--stats"]):
        done = subprocess.run(
            [sys.executable, "-m", "sessionref", *args, "--root", str(root), "--index", str(fifo)],
            capture_output=True,
            env={"PATH": "", "HOME": "/nonexistent", "XDG_CACHE_HOME": CACHE},
            timeout=PATIENCE,  # a bound on a run that waits for a writer, not a speed check
        )
        assert why.encode() in done.stderr + done.stdout, done.stderr
        assert b"Traceback" not in done.stderr
    pruned = prune_indexes(fifo)
    assert pruned == [] and stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(os.listdir(tmp_path)) == ["index.fifo", "store"]


def test_on_a_terminal_a_build_shows_a_bar_naming_the_store() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    with IndexingProgress("/r", screen) as progress:
        progress(0, 3)
        progress(3, 3)
    assert "indexing /r" in screen.getvalue() and "3/3" in screen.getvalue()


def test_no_index_answers_the_same_and_saves_nothing(tmp_path: Path) -> None:
    root = tmp_path / "store"
    write_session_store(root, sessions(4))
    for args in (["candidates", "--json", "--query", "t2"], ["search", "kiwi", "--json"]):
        folder = tmp_path / args[0]
        env = {"SESSIONREF_INDEX": str(folder) + "/"}
        direct = command(*args, "--root", str(root), "--no-index", **env)
        assert direct.returncode == 0, direct.stderr
        assert not folder.exists()
        indexed = command(*args, "--root", str(root), **env)
        assert json.loads(direct.stdout) == json.loads(indexed.stdout) != []
        assert folder.exists()


def test_stats_say_where_the_index_is_what_it_holds_and_when_it_changed(tmp_path: Path) -> None:
    root = tmp_path / "store"
    write_session_store(root, sessions(3))
    folder = str(tmp_path / "indexes") + "/"
    before = command("index", "--stats", "--root", str(root), "--index", folder)
    path = SessionIndex(DirectoryStore(root), folder).path
    assert before.stdout.decode() == f"{root}: no index yet (it would be {path})\n"
    assert not path.exists()
    built = command("index", "--root", str(root), "--index", folder).stdout.decode()
    stats = index_stats(root, folder)
    assert (stats.path, stats.sessions) == (path, 3)
    # the build and the stats each closed the database: its write-ahead log folded in
    assert [entry.name for entry in path.parent.iterdir()] == [path.name]
    assert stats.size == path.stat().st_size
    shown = command("index", "--stats", "--root", str(root), "--index", folder).stdout.decode()
    assert shown.startswith(f"{root}: 3 sessions in {path}, ")
    assert f"last updated {stats.updated:%Y-%m-%d %H:%M:%S} UTC" in shown
    size = f"{stats.size / 1e6:.1f} MB"  # a newcomer's trial: the build said 0.4, --stats 0.2
    assert built.endswith(f" in {path}, {size}\n") and f" in {path}, {size}, " in shown


def test_stats_of_a_file_another_root_rebuilt_say_so(tmp_path: Path) -> None:
    """A newcomer's trial: ``--index FILE`` serves one root, and a command on another root
    rebuilds the file for that one (README §Index); ``--stats`` then gave the first root the
    other's count ("A: 2 sessions in FILE" for a root of 1 session)."""
    first, second, database = tmp_path / "first", tmp_path / "second", tmp_path / "one.sqlite"
    write_session_store(first, sessions(1))
    write_session_store(second, sessions(2))
    for root in (first, second):
        command("index", "--root", str(root), "--index", str(database))
    shown = command("index", "--stats", "--root", str(first), "--index", str(database))
    assert shown.returncode == 0
    assert shown.stdout.decode() == (
        f"{first}: {database} holds the index of another root, {second}; "
        "the next refresh rebuilds it for this one\n"
    )
    assert index_stats(first, database).sessions is None
    assert index_stats(second, database).sessions == 2


def test_one_session_and_one_log_are_said_in_the_singular(tmp_path: Path) -> None:
    root = tmp_path / "store"
    write_session_store(root, sessions(1))
    folder = str(tmp_path / "indexes") + "/"
    path = SessionIndex(DirectoryStore(root), folder).path
    built = command("index", "--root", str(root), "--index", folder).stdout.decode()
    assert built.startswith(f"1 session indexed (1 log read, 0 removed) in {path}, ")
    shown = command("index", "--stats", "--root", str(root), "--index", folder).stdout.decode()
    assert shown.startswith(f"{root}: 1 session in {path}, ")


def test_a_database_file_named_for_several_roots_is_a_one_line_error(tmp_path: Path) -> None:
    """One file holds one root's index: shared, each root's refresh would rebuild it from
    nothing and --stats would count the last root's sessions for every root. Every command
    that keeps indexes says so before touching anything; a directory holds one per root."""
    roots = [tmp_path / "one", tmp_path / "two"]
    for root, count in zip(roots, (3, 2), strict=True):
        write_session_store(root, sessions(count))
        settled(root)
    named = tmp_path / "shared.sqlite"
    given = [arg for root in roots for arg in ("--root", str(root))]
    reason = (
        f"one database file holds the index of one root, not of 2 ({roots[0]}, {roots[1]}); "
        "name a directory instead (it holds one per root), or give one --root\n"
    )
    for args in (["index"], ["index", "--stats"], ["search", "kiwi"], ["candidates"], ["mcp"]):
        done = command(*args, *given, "--index", str(named))
        assert (done.returncode, done.stdout) == (1, b""), done.stderr
        assert done.stderr.decode() == f"{INVALID_CONFIG}: --index {named}: {reason}"
        by_env = command(*args, *given, SESSIONREF_INDEX=str(named))
        assert by_env.stderr.decode() == f"{INVALID_CONFIG}: $SESSIONREF_INDEX {named}: {reason}"
    direct = command("search", "kiwi", "--json", "--no-index", *given, SESSIONREF_INDEX=str(named))
    assert len(json.loads(direct.stdout)) == 5, direct.stderr
    assert not named.exists()
    folder = str(tmp_path / "indexes") + "/"
    runs = [command("index", *given, "--index", folder).stdout.decode() for _ in range(2)]
    assert [[line.split(" in ")[0] for line in run.splitlines()] for run in runs] == [
        [
            "3 sessions indexed (3 logs read, 0 removed)",
            "2 sessions indexed (2 logs read, 0 removed)",
        ],
        [
            "3 sessions indexed (0 logs read, 0 removed)",
            "2 sessions indexed (0 logs read, 0 removed)",
        ],
    ]


def damaged_store(root: Path) -> list[str]:
    """Two sessions that mention kiwi, a log the listing passes over (empty), and one corrupt
    after its header (the listing serves it, no reader loads it): what --verbose says of
    the two, in that order, worded from the store's own reasons."""
    write_session_store(root, sessions(2))
    place(root, b"", "empty", compress=False)
    corrupt = plain_log([*two_turns(), b"not json\n", turn_end(12)], header("bad", 3))
    place(root, corrupt, "bad", compress=False)
    settled(root)
    store = DirectoryStore(root)
    assert sorted(h.id for h in store.headers()) == ["bad", "s000", "s001"]
    [listed] = store.problems()
    assert listed.path.endswith("/empty/session.jsonl")
    unread = "corrupt session log: unparsable committed event at line 14"  # 2 turns, then junk
    return [
        f"passed over {listed.path}: {listed.message}",
        f"passed over {store.path_of('bad')}: {unread}",
    ]


def test_search_and_index_say_which_logs_they_passed_over(tmp_path: Path) -> None:
    """As every command that reads a store, on stderr after what they print: how many, or with
    --verbose each and why; a log that does not load counts too, as search never finds its
    session (candidates list it, as the harness does, so count only the listing's)."""
    root = tmp_path / "store"
    verbose = damaged_store(root)
    counted = "note: 2 logs passed over (--verbose lists them)"
    given = ["--root", str(root), "--index", str(tmp_path / "indexes") + "/"]
    direct = [*given[:2], "--no-index"]  # --index and --no-index are one or the other
    for args in (
        ["search", "question", *given],
        ["search", "question", *direct],
        ["index", *given],
    ):
        for _ in range(2):  # a build, then a refresh that reads nothing
            quiet = command(*args)
            assert quiet.returncode == 0, quiet.stderr
            assert quiet.stderr.decode().splitlines()[-1] == counted
            listed = command(*args, "--verbose").stderr.decode().splitlines()
            assert listed[-2:] == verbose and counted not in listed
    found = command("search", "kiwi", *given)
    assert found.stdout.count(b"@[T") == 2 and found.stderr.decode() == counted + "\n"
    unmatched = command("search", "question", *given).stderr.decode()
    assert unmatched == f'(no sessions match "question")\n{counted}\n'
    listing = command("candidates", *given)
    assert b"bad" in listing.stdout
    assert listing.stderr.decode() == "note: 1 log passed over (--verbose lists them)\n"


def test_prune_drops_only_the_indexes_of_roots_that_are_gone(tmp_path: Path) -> None:
    kept, gone = tmp_path / "kept", tmp_path / "gone"
    write_session_store(kept, sessions(1))
    write_session_store(gone, sessions(2))
    folder = tmp_path / "indexes"
    for root in (kept, gone):  # closed: an index another process has open is not pruned
        with SessionIndex(DirectoryStore(root), str(folder) + "/") as index:
            index.refresh()
    foreign = folder / "notes.sqlite"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.commit()
    doomed = SessionIndex(DirectoryStore(gone), str(folder) + "/").path
    for part in sorted(gone.rglob("*"), reverse=True):
        part.unlink() if part.is_file() else part.rmdir()
    gone.rmdir()
    done = command("index", "--prune", "--index", str(folder) + "/")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == f"removed {doomed} (its store {gone} is gone)\n1 index pruned\n"
    assert sorted(p.name for p in folder.iterdir() if p.suffix == ".sqlite") == sorted(
        [SessionIndex(DirectoryStore(kept), str(folder) + "/").path.name, "notes.sqlite"]
    )
    assert not Path(f"{doomed}-wal").exists()
    assert prune_indexes(str(folder) + "/") == []


def test_the_library_and_the_command_line_give_as_many_hits(tmp_path: Path) -> None:
    root = tmp_path / "store"
    write_session_store(root, sessions(DEFAULT_SEARCH_LIMIT + 3))
    index = SessionIndex(DirectoryStore(root), tmp_path / "i.sqlite")
    assert len(index.search("kiwi")) == DEFAULT_SEARCH_LIMIT == 10
    index.close()
    found = command(
        "search", "kiwi", "--json", "--root", str(root), "--index", str(tmp_path / "i.sqlite")
    )
    assert len(json.loads(found.stdout)) == DEFAULT_SEARCH_LIMIT


def test_stats_say_the_read_limits_the_index_was_built_under(tmp_path: Path) -> None:
    """The limits given to the build are those --stats shows (and ``index_stats`` gives),
    whatever limits --stats itself is given: it refreshes nothing. A build under other limits
    rebuilds the index, and --stats then shows those."""
    root = tmp_path / "store"
    write_session_store(root, sessions(2))
    given = ["--root", str(root), "--index", str(tmp_path / "indexes") + "/"]
    limits = ["--max-log-bytes", "5000000", "--max-line-bytes", "400000"]
    assert command("index", *given, *limits).returncode == 0
    assert index_stats(root, given[3]).limits == (5_000_000, 400_000)
    for asked in ([], limits, ["--max-line-bytes", "123456"]):
        shown = command("index", "--stats", *given, *asked).stdout.decode()
        assert shown.endswith(", read limits --max-log-bytes 5000000 --max-line-bytes 400000\n")
    assert command("index", *given, *limits[:2], "--max-line-bytes", "123456").returncode == 0
    shown = command("index", "--stats", *given).stdout.decode()
    assert shown.endswith(", read limits --max-log-bytes 5000000 --max-line-bytes 123456\n")


def test_index_lines_name_a_strange_root_on_one_line_as_stderr_does(tmp_path: Path) -> None:
    """A newcomer's trial: a root whose name held a line feed, a bidi override and a byte
    that is no UTF-8 came out of ``index``, ``--stats`` and ``--prune`` raw (its line split in
    two, the override obeyed on a terminal, the byte a ``?``). Each line names it with the
    escapes every line on stderr uses, so one root is one line."""
    root = Path(os.fsdecode(bytes(tmp_path) + b"/st\nore\xe2\x80\xaex\xff"))
    write_session_store(root, sessions(1))
    shown = f"{tmp_path}/st\\u000aore\\u202ex\\udcff"
    folder = str(tmp_path / "indexes") + "/"
    built = command("index", "--root", str(root), "--index", folder)
    stats = command("index", "--stats", "--root", str(root), "--index", folder)
    for done in (built, stats):
        assert done.returncode == 0, done.stderr
        assert done.stdout.count(b"\n") == 1 and b"\xe2\x80\xae" not in done.stdout
    assert stats.stdout.decode().startswith(f"{shown}: 1 session in ")
    for part in sorted(root.rglob("*"), reverse=True):
        part.unlink() if part.is_file() else part.rmdir()
    root.rmdir()
    pruned = command("index", "--prune", "--index", folder)
    assert pruned.returncode == 0, pruned.stderr
    removed, count = pruned.stdout.decode().splitlines()
    assert removed.endswith(f" (its store {shown} is gone)") and count == "1 index pruned"


def test_prune_leaves_an_index_another_process_has_open(tmp_path: Path) -> None:
    """A command still at work on a root just deleted has its index open: prune deleted the
    files under it (which it then wrote into, or failed on). Now it is left for a later prune."""
    gone, folder = tmp_path / "gone", str(tmp_path / "indexes") + "/"
    write_session_store(gone, sessions(2))
    with SessionIndex(DirectoryStore(gone), folder) as index:
        index.refresh()
        for part in sorted(gone.rglob("*"), reverse=True):
            part.unlink() if part.is_file() else part.rmdir()
        gone.rmdir()
        assert prune_indexes(folder) == [] and index.path.exists()
    assert prune_indexes(folder) == [(index.path, str(gone))] and not index.path.exists()
