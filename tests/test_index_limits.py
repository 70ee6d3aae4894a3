"""A warm index answers under the read limits it is asked with, not those it was built under:
a log over ``--max-log-bytes`` or with a line over ``--max-line-bytes`` is found by no search
(README §Index and search), the library's, the command line's and the MCP server's alike.

The expected answers come from the files themselves (their sizes and longest lines) and from
an index that saves nothing (``--no-index``), never from the warm index."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.cli.app import main
from sessionref.cli.common import OpenStore
from sessionref.index import SessionIndex, is_indexed_store
from sessionref.index.refresh import IndexedStore
from sessionref.log.frames import DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_LINE_BYTES
from sessionref.log.protocol import Store
from sessionref.log.store import DirectoryStore
from sessionref.mcp.catalog import Catalog, index_at
from sessionref.mcp.tools import Toolbox
from sessionref.roots import chosen_roots
from sessionref.testing import write_session_store
from tests.logs import turn
from tests.test_index_harnesses import claude_lines

WORD = "keyword"
"""Said in every session: a search for it finds every session a store reads."""
LOG_LIMIT, LINE_LIMIT = 20_000, 2_000
DEFAULTS = (DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_LINE_BYTES)
ROUNDS = (DEFAULTS, (LOG_LIMIT, DEFAULT_MAX_LINE_BYTES), (LOG_LIMIT, LINE_LIMIT), DEFAULTS)
"""The limits of each use in turn: built under the defaults, then smaller, then back."""


def dsh_log(session_id: str, prompts: list[str], cwd: str = "/w") -> dict[str, Any]:
    """A DSH log of one turn per prompt, each answered "ok"."""
    header = {"version": 0, "id": session_id, "createdAt": 1, "delegationDepth": 0, "cwd": cwd}
    events = [e for n, said in enumerate(prompts) for e in turn(6 * n, n + 1, said, "ok")]
    return {"header": header, "events": events}


class Stores(NamedTuple):
    """Two roots (DSH and Claude Code) and each session's log file, by id."""

    dsh: Path
    claude: Path
    logs: dict[str, Path]


@pytest.fixture
def stores(tmp_path: Path) -> Stores:
    """Sessions of every kind a limit tells apart: small, with one long line (a prompt, or
    the header's cwd), and many short lines adding up to a large log; every file dated a
    minute back, so a warm index trusts what it remembers (nothing is racy)."""
    dsh, projects = tmp_path / "dsh", tmp_path / "claude" / "projects" / "-w"
    long = f"{WORD} " + "w" * 4000
    written = write_session_store(
        dsh,
        [
            dsh_log("d-small", [WORD]),
            dsh_log("d-long-line", [long]),
            dsh_log("d-long-head", [WORD], cwd="/" + "c" * 4000),
            dsh_log("d-many", [f"{WORD} {n}" for n in range(80)]),
        ],
    )
    logs = {path.parent.name: path for path in written}
    projects.mkdir(parents=True)
    for session, prompts in (
        ("aaaa1111", [WORD]),
        ("bbbb2222", [long]),
        ("cccc3333", [f"{WORD} {n}" for n in range(100)]),
    ):
        logs[session] = projects / f"{session}.jsonl"
        logs[session].write_bytes(claude_lines(session, "/w", prompts))
    past = time.time() - 60
    for path in tmp_path.rglob("*"):
        os.utime(path, (past, past))
    return Stores(dsh, tmp_path / "claude", logs)


def within(path: Path, limits: tuple[int, int]) -> bool:
    """Whether a (plain) log is within ``limits``: its size and each of its lines, measured
    well away from either limit (so whether a limit itself is in does not matter)."""
    data = path.read_bytes()
    longest = max(len(line) for line in data.split(b"\n"))
    for size, limit in ((len(data), limits[0]), (longest, limits[1])):
        assert not 0.8 * limit < size < 1.2 * limit, (path, size, limit)
    return len(data) < limits[0] and longest < limits[1]


def expected(logs: dict[str, Path], limits: tuple[int, int]) -> tuple[set[str], int]:
    """The sessions of ``logs`` a search finds under ``limits``, and how many logs are
    passed over."""
    found = {session for session, path in logs.items() if within(path, limits)}
    return found, len(logs) - len(found)


def test_the_fixture_tells_every_limit_apart(stores: Stores) -> None:
    found = [expected(stores.logs, limits)[0] for limits in ROUNDS]
    assert found[0] == found[3] == set(stores.logs)
    assert found[1] == {"d-small", "d-long-line", "d-long-head", "aaaa1111", "bbbb2222"}
    assert found[2] == {"d-small", "aaaa1111"}


def dsh_store(stores: Stores, limits: tuple[int, int]) -> DirectoryStore:
    """The DSH root read under ``limits``."""
    return DirectoryStore(stores.dsh, max_bytes=limits[0], max_line_bytes=limits[1])


def test_a_warm_index_answers_under_the_limits_it_is_asked_with(
    stores: Stores, tmp_path: Path
) -> None:
    dsh_logs = {session: path for session, path in stores.logs.items() if session[:2] == "d-"}
    for limits in ROUNDS:
        for persist in (True, False):  # warm, then as --no-index
            with SessionIndex(
                dsh_store(stores, limits), tmp_path / "index.sqlite", persist=persist
            ) as index:
                found = {hit.session_id for hit in index.search(WORD, limit=100)}
                passed_over = len(index.problems()) + len(index.unread())
            assert (found, passed_over) == expected(dsh_logs, limits), (limits, persist)


def settled_clock() -> int:
    """A clock a day ahead: every file a test writes is settled (never racy)."""
    return time.time_ns() + 86_400 * 10**9


def test_two_indexes_of_one_database_under_two_limits_answer_each_under_its_own(
    stores: Stores, tmp_path: Path
) -> None:
    """A user alternating limits (a server under one, commands under others): each use
    answers under its own limits while the store changes, whichever built the database."""
    logs = {session: path for session, path in stores.logs.items() if session[:2] == "d-"}
    indexes = [
        (
            SessionIndex(dsh_store(stores, limits), tmp_path / "i.sqlite", clock=settled_clock),
            limits,
        )
        for limits in ROUNDS[:3]
    ]
    for n in range(2):
        for index, limits in [*indexes, *indexes[::-1]]:
            found = {hit.session_id for hit in index.search(WORD, limit=100)}
            assert (found, len(index.problems()) + len(index.unread())) == expected(logs, limits)
        [added] = write_session_store(stores.dsh, [dsh_log(f"d-new-{n}", [WORD])])
        logs[f"d-new-{n}"] = added
    for index, _ in indexes:
        index.close()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    main(list(argv))
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_search_and_index_with_a_warm_index_answer_as_without_one(
    stores: Stores, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    roots = ("--root", str(stores.dsh), "--root", str(stores.claude))
    index = ("--index", f"{tmp_path / 'indexes'}{os.sep}")
    assert run(capsys, "index", *roots, *index)[1] == ""  # built under the defaults
    for limits in ROUNDS:
        given = ("--max-log-bytes", str(limits[0]), "--max-line-bytes", str(limits[1]))
        search = ("search", *roots, *given, WORD, "--limit", "100", "--json")
        warm = run(capsys, *search, *index)
        assert warm == run(capsys, *search, "--no-index"), limits
        assert warm == run(capsys, *search, *index)  # and warm again
        wanted, over = expected(stores.logs, limits)
        assert {hit["sessionId"] for hit in json.loads(warm[0])} == wanted
        note = f"note: {over} logs passed over (--verbose lists them)\n" if over else ""
        assert warm[1] == note
        assert run(capsys, "index", *roots, *given, *index)[1] == note


def mcp_answers(
    stores: Stores, limits: tuple[int, int], lister: Callable[[Store], Store]
) -> list[str]:
    """What the MCP server's list_sessions and search_sessions answer under ``limits``."""
    roots = chosen_roots([str(stores.dsh), str(stores.claude)], None)
    opened = OpenStore(
        roots, max_bytes=limits[0], max_line_bytes=limits[1], lister=lister, live=True
    )
    toolbox = Toolbox(Catalog(opened, cwd="/w", max_bytes=65536))
    return [
        toolbox.call(name, arguments, None).text
        for name, arguments in (
            ("list_sessions", {"limit": 100}),
            ("search_sessions", {"query": WORD, "limit": 100}),
        )
    ]


def test_the_mcp_tools_with_a_warm_index_answer_as_without_one(
    stores: Stores, tmp_path: Path
) -> None:
    warm = index_at(f"{tmp_path / 'indexes'}{os.sep}")

    def unsaved(store: Store) -> Store:
        return SessionIndex(store, persist=False) if is_indexed_store(store) else store

    for limits in ROUNDS:
        listed, searched = mcp_answers(stores, limits, warm)
        assert [listed, searched] == mcp_answers(stores, limits, unsaved), limits
        wanted = expected(stores.logs, limits)[0]
        assert {hit["sessionId"] for hit in json.loads(searched)} == wanted


def store_of(stores: Stores, harness: str, limits: tuple[int, int]) -> IndexedStore:
    """The root of ``harness`` (``dsh`` or ``claude``) read under ``limits``."""
    if harness == "dsh":
        return dsh_store(stores, limits)
    return ClaudeCodeStore(stores.claude, max_bytes=limits[0], max_line_bytes=limits[1])


@pytest.mark.parametrize("harness", ["dsh", "claude"])
def test_higher_limits_read_again_only_the_logs_the_lower_ones_failed(
    stores: Stores, tmp_path: Path, harness: str
) -> None:
    """A limit only makes a read fail: under higher limits a log that loaded reads the same,
    so only the logs that did not load under the lower ones are read again (a limit change
    rebuilt the index, reading every log); lower limits still rebuild it. The answers are
    those of the files under the limits asked with."""
    logs = {s: p for s, p in stores.logs.items() if (s[:2] == "d-") == (harness == "dsh")}
    low, high = ROUNDS[2], DEFAULTS
    database = tmp_path / "i.sqlite"
    reads = []
    for limits in (low, high, high, low):
        store = store_of(stores, harness, limits)
        with SessionIndex(store, database, clock=settled_clock) as index:
            reads.append(index.refresh().read)
            found = {hit.session_id for hit in index.search(WORD, limit=100)}
            passed_over = len(index.problems()) + len(index.unread())
        assert (found, passed_over) == expected(logs, limits), limits
    loaded_under_low = len(expected(logs, low)[0])
    built, raised, again, lowered = reads
    assert (raised, again) == (len(logs) - loaded_under_low, 0)
    assert lowered == built  # lower limits: read as the first build did
