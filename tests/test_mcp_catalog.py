"""The MCP server's catalog and tools in this process: what is listed, in which order, how
often the store is looked at, completion, the tools' errors, and a client's cancel reaching
the resolver (``tests/test_mcp.py`` drives the real command over stdio)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

import sessionref.mcp.server as server_module
from sessionref.cli.common import OpenStore
from sessionref.codecs.jsstring import js_lower
from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.errors import SessionReferenceError
from sessionref.index import SessionIndex
from sessionref.log.harness_store import HarnessStore
from sessionref.log.store import DirectoryStore
from sessionref.mcp.catalog import Catalog, index_at, template_uri
from sessionref.mcp.server import SessionServer, in_memory
from sessionref.mcp.tools import Toolbox
from sessionref.testing import write_session_store
from tests.logs import title
from tests.mcp_store import LISTED, session_log, write_store
from tests.test_cli import FAR_TIMES
from tests.test_codex import THREAD, meta, rollout
from tests.test_codex_listed import OTHER, OTHER_ROLLOUT, ROLLOUT, asked
from tests.test_index_limits import settled_clock


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def open_catalog(tmp_path: Path, **options: Any) -> Catalog:
    project = tmp_path / "project"
    root = write_store(tmp_path / "store", project)
    age(root)
    opened = OpenStore(root, lister=index_at(tmp_path / "index.sqlite"), live=True)
    return Catalog(opened, cwd=str(project), max_bytes=65536, **options)


def age(root: Path) -> None:
    """Date every file and directory of a store a minute ago: the index reads a log changed
    in the last 2 seconds again on every look (its time could hide a change to come)."""
    past = time.time() - 60
    for path in [*root.rglob("*"), root]:
        os.utime(path, (past, past))


def add_session(catalog: Catalog, session_id: str) -> None:
    root = catalog.opened.store.root
    write_session_store(root, [session_log(session_id, 9000, None, None, "new")])
    age(root)


def test_resources_are_the_sessions_in_candidates_order_named_by_title(tmp_path: Path) -> None:
    catalog = open_catalog(tmp_path)
    resources = catalog.resources()
    assert [r["uri"] for r in resources] == [encode_session_reference_uri(i) for i in LISTED]
    assert [r["name"] for r in resources] == [
        "Auth refactor",
        "Old AUTH notes",
        "s-none",
        "Docs: dark mode",
    ]
    assert resources[2]["description"] == "no cwd · dsh · 1970-01-01 00:00 UTC"
    assert resources[3]["description"] == "/elsewhere/docs · dsh · 1970-01-01 00:00 UTC"
    assert {r["mimeType"] for r in resources} == {"text/plain"}
    assert catalog.resources(1, 2) == resources[1:3]


def test_completion_finds_part_of_a_title_or_id_this_project_first(tmp_path: Path) -> None:
    catalog = open_catalog(tmp_path)
    assert catalog.complete("AUTH", 10) == (["s-auth", "s-old"], False)
    assert catalog.complete("dark", 10) == (["s-docs"], False)
    assert catalog.complete("s-", 2) == (["s-auth", "s-old"], True)
    assert catalog.complete("", 10) == (LISTED, False)


#: (id, createdAt, cwd, title): case that lower-cases differently in JavaScript and Python
#: (İ, ẞ), a title that is not a string, one session untitled, one without a cwd, an astral
#: character, and two sessions created at the same time.
TRICKY = (
    ("S-Upper", 10, "/Proj/ÉCOLE", "Straße İSTANBUL ẞ"),
    ("s-number", 10, None, 7),
    ("s-untitled", 20, "/proj/x", None),
    ("s-emoji", 5, "/w", "Fix 🙂 now"),
    ("s-tie-b", 30, "/w", "tie"),
    ("s-tie-a", 30, "/w", "tie"),
)
QUERIES = ("", "s-", "É", "école", "STRASSE", "straße", "i̇stanbul", "ß", "7", "fix", "🙂", "tie")
QUERIES += ("upper\x00/proj", "\x00", "tie\x00", "no such words")  # a NUL never spans two texts


def tricky_store(root: Path) -> Path:
    logs = []
    for session_id, created_at, cwd, name in TRICKY:
        log = session_log(session_id, created_at, cwd, None, "said")
        if name is not None:
            data = {"title": name, "messageSeqs": [], "source": {"kind": "user"}}
            log["events"].append({"type": "session/title", "seq": 6, "time": 6, "data": data})
        logs.append(log)
    write_session_store(root, logs)
    age(root)
    return root


def test_completion_finds_what_the_index_finds_for_the_query(tmp_path: Path) -> None:
    root = tricky_store(tmp_path / "store")
    opened = OpenStore(root, lister=index_at(tmp_path / "index.sqlite"), live=True)
    catalog = Catalog(opened, cwd="/w", max_bytes=65536)
    index = SessionIndex(DirectoryStore(root), tmp_path / "other.sqlite")  # SQL, not the listing
    for query in QUERIES:
        for limit in (1, 2, 100):
            found = index.candidates(catalog.target, js_lower(query), limit + 1)
            assert found is not None
            ids = [header.id for header, _ in found]
            assert catalog.complete(query, limit) == (ids[:limit], len(ids) > limit), query
    assert catalog.complete("ß", 10) == (["S-Upper"], False)
    assert catalog.complete("\ud83d", 10) == (["s-emoji"], False)  # half of 🙂, as in JS
    assert catalog.complete("7", 10) == ([], False)  # a title that is not a string


def test_completion_answers_from_the_last_look_without_asking_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = open_catalog(tmp_path)
    catalog.refresh()

    def asked(*args: object) -> None:
        raise AssertionError("completion asked the index")

    monkeypatch.setattr(SessionIndex, "candidates", asked)
    assert catalog.complete("AUTH", 10) == (["s-auth", "s-old"], False)


def test_the_store_is_looked_at_again_only_when_the_last_look_is_old(tmp_path: Path) -> None:
    clock = Clock()
    catalog = open_catalog(tmp_path, fresh_for=0.5, clock=clock)
    catalog.fresh()
    assert catalog.changed() is False  # the first look lists, nothing changed
    add_session(catalog, "s-new")
    clock.now += 0.4
    catalog.fresh()
    assert catalog.changed() is False  # too soon: answers from the last look
    assert len(catalog.resources()) == 4
    clock.now += 0.2
    catalog.fresh()
    assert catalog.changed() is True
    assert catalog.changed() is False  # said once
    assert [r["name"] for r in catalog.resources()][2] == "s-new"
    clock.now += 1
    catalog.fresh()
    assert catalog.changed() is False


def test_a_slow_look_is_not_taken_again_before_four_times_its_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    catalog = open_catalog(tmp_path, fresh_for=0.5, clock=clock)
    refresh = catalog.indexes[0].refresh

    def slow_refresh() -> Any:
        clock.now += 1.0  # a busy machine: a look takes a second
        return refresh()

    monkeypatch.setattr(catalog.indexes[0], "refresh", slow_refresh)
    catalog.fresh()
    add_session(catalog, "s-new")
    clock.now += 3.9
    catalog.fresh()
    assert catalog.changed() is False and len(catalog.resources()) == 4
    clock.now += 0.2
    catalog.fresh()
    assert catalog.changed() is True and len(catalog.resources()) == 5


def test_a_read_of_a_session_not_listed_yet_looks_again(tmp_path: Path) -> None:
    catalog = open_catalog(tmp_path, fresh_for=3600)
    catalog.fresh()
    add_session(catalog, "s-new")
    assert "<referenced-sessions>" in catalog.prompt(["s-new"], None)
    assert catalog.changed() is True


def test_a_session_outside_the_roots_is_refused_before_any_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = open_catalog(tmp_path)
    reads: list[str] = []
    monkeypatch.setattr(DirectoryStore, "read", lambda store, session_id: reads.append(session_id))
    monkeypatch.setattr(SessionIndex, "read", lambda index, session_id: reads.append(session_id))
    for outside in ("nope", "../store/s-auth", "s-auth/.."):
        with pytest.raises(SessionReferenceError) as raised:
            catalog.prompt([outside], None)
        root = catalog.opened.store.root
        assert raised.value.message == f'session "{outside}" not found in --root {root}'
    assert reads == []


def test_tool_arguments_are_checked_against_their_schemas(tmp_path: Path) -> None:
    toolbox = Toolbox(open_catalog(tmp_path))
    bad = {
        "list_sessions": [{"limit": 0}, {"limit": "3"}, {"other": 1}],
        "search_sessions": [{}, {"query": ""}, {"query": " \t"}, {"query": "x", "limit": 501}],
        "reference_sessions": [
            {"sessions": []},
            {"sessions": ["a", "b", "c", "d"]},
            {"sessions": ["s-auth"], "max_bytes": 65537},
        ],
    }
    for name, cases in bad.items():
        for arguments in cases:
            answer = toolbox.call(name, arguments, None)
            assert answer.is_error, (name, arguments)
            assert answer.text.startswith(f"SESSION_REFERENCE_INVALID_CONFIG: invalid {name} ")
            assert "\n" not in answer.text


def test_a_bad_argument_is_quoted_as_the_client_wrote_it(tmp_path: Path) -> None:
    """A tester's trial from a JSON client: ``{"limit": true}`` was refused as ``True is not
    of type 'integer'``, ``{"sessions": ["a", "b", "c", "d"]}`` as ``['a', 'b', 'c', 'd'] is
    too long``: Python's writing of values no client sent."""
    toolbox = Toolbox(open_catalog(tmp_path))
    cases = [
        ("list_sessions", {"limit": True}, "limit: true is not of type 'integer'"),
        ("list_sessions", {"query": None}, "query: null is not of type 'string'"),
        ("search_sessions", {"query": 7, "limit": 1}, "query: 7 is not of type 'string'"),
        (
            "reference_sessions",
            {"sessions": ["a", "b", "c", "d"]},
            'sessions: ["a","b","c","d"] is too long',
        ),
        ("reference_sessions", {"sessions": "s'1"}, "sessions: \"s'1\" is not of type 'array'"),
    ]
    for name, arguments, said in cases:
        answer = toolbox.call(name, arguments, None)
        assert answer.is_error
        assert answer.text == f"SESSION_REFERENCE_INVALID_CONFIG: invalid {name} {said}"


def test_a_blank_search_query_says_it_holds_no_word(tmp_path: Path) -> None:
    toolbox = Toolbox(open_catalog(tmp_path))
    answer = toolbox.call("search_sessions", {"query": " \t"}, None)
    assert answer.is_error
    assert answer.text == (
        "SESSION_REFERENCE_INVALID_CONFIG: invalid search_sessions query: holds no word to find"
    )


def test_an_integer_argument_written_as_a_float_is_that_integer(tmp_path: Path) -> None:
    """A newcomer's trial: JSON Schema takes ``2.0`` for an integer, and the tools failed on
    it with "internal error: slice indices must be integers"."""
    toolbox = Toolbox(open_catalog(tmp_path))
    for name, arguments in (
        ("list_sessions", {"limit": 1}),
        ("search_sessions", {"query": "the", "limit": 1}),
        ("reference_sessions", {"sessions": ["s-auth"], "max_bytes": 2000}),
    ):
        exact = toolbox.call(name, arguments, None)
        written = toolbox.call(
            name, {k: float(v) if type(v) is int else v for k, v in arguments.items()}, None
        )
        assert not exact.is_error, exact.text
        assert (written.is_error, written.text) == (False, exact.text), name


def test_reference_sessions_takes_ids_uris_and_mentions_alike(tmp_path: Path) -> None:
    catalog = open_catalog(tmp_path)
    toolbox = Toolbox(catalog)
    uri = encode_session_reference_uri("s-auth")
    prompts = {
        toolbox.call("reference_sessions", {"sessions": [given]}, None).text
        for given in ("s-auth", uri, f"@[anything]({uri})", "s-auth")
    }
    assert len(prompts) == 1
    [prompt] = prompts
    assert prompt == catalog.prompt(["s-auth"], None)
    assert '"label":"Auth refactor"' in prompt
    three = toolbox.call("reference_sessions", {"sessions": ["s-auth", "s-old", "s-auth"]}, None)
    assert not three.is_error and three.text.count('"sessionId"') == 2


def test_a_session_created_past_the_year_9999_is_listed_and_completed(tmp_path: Path) -> None:
    """A log may say any safe integer as its creation time: resources/list and completion
    failed whole (``year 287396 is out of range``, an internal error) for one such session,
    which ``sessionref candidates --json`` lists."""
    root, project = tmp_path / "store", tmp_path / "project"
    project.mkdir()
    logs = [
        session_log(session_id, created_at, str(project), None, "hello")
        for session_id, (created_at, _) in FAR_TIMES.items()
    ]
    write_session_store(root, logs)
    opened = OpenStore(root, lister=index_at(tmp_path / "index.sqlite"), live=True)
    catalog = Catalog(opened, cwd=str(project), max_bytes=65536)
    described = {r["name"]: r["description"] for r in catalog.resources()}
    assert described == {
        session_id: f"{project} · dsh · {shown} UTC" for session_id, (_, shown) in FAR_TIMES.items()
    }
    assert catalog.complete("Y10K", 10) == (["y10k"], False)


def test_a_mention_with_more_text_around_it_is_not_one_mention(tmp_path: Path) -> None:
    """A newcomer's trial: ``@[x](uri) and more`` was taken as the mention, the words after
    it dropped unsaid; an argument that starts as a mention is that one mention alone."""
    toolbox = Toolbox(open_catalog(tmp_path))
    uri = encode_session_reference_uri("s-auth")
    for given in (f"@[auth]({uri}) and s-old", f"@[auth]({uri})@[old]({uri})"):
        answer = toolbox.call("reference_sessions", {"sessions": [given]}, None)
        assert answer.is_error, given
        assert answer.text == (f'SESSION_REFERENCE_INVALID_REFERENCE: not one mention: "{given}"')


def test_words_before_a_mention_make_it_no_id_but_not_one_mention(tmp_path: Path) -> None:
    """An argument that held a mention after an id or words (``see @[x](uri)``) was looked up
    whole as a session id: ``session "see @[x](…)" not found``, as if the session were
    missing. Any argument holding a mention is refused as one that starts with it is."""
    toolbox = Toolbox(open_catalog(tmp_path))
    uri = encode_session_reference_uri("s-auth")
    for given in (
        f"see @[auth]({uri})",
        f"s-old @[auth]({uri})",
        f"{uri} @[auth]({uri})",
        f"s-old, @[auth]({uri}), s-docs",
    ):
        answer = toolbox.call("reference_sessions", {"sessions": [given]}, None)
        assert answer.is_error, given
        assert answer.text == f'SESSION_REFERENCE_INVALID_REFERENCE: not one mention: "{given}"'


def test_words_before_a_bare_uri_make_it_no_id_but_not_one_uri(tmp_path: Path) -> None:
    """The leftover of the test above: an argument that held a bare URI after words or an id
    (``see dsh-session:…``) was still looked up whole as a session id (``session "see
    dsh-session:…" not found``). It is refused as not one URI; a session whose id holds the
    scheme is read by its URI, as one whose id holds a mention is."""
    odd = "see dsh-session:x"
    write_session_store(tmp_path / "store", [session_log(odd, 6000, None, None, "odd id")])
    toolbox = Toolbox(open_catalog(tmp_path))
    uri = encode_session_reference_uri("s-auth")
    for given in (f"see {uri}", f"s-old {uri}", f" {uri}", f"s-old,{uri}", odd):
        answer = toolbox.call("reference_sessions", {"sessions": [given]}, None)
        assert answer.is_error, given
        assert answer.text == f'SESSION_REFERENCE_INVALID_REFERENCE: not one URI: "{given}"'
    by_uri = toolbox.call(
        "reference_sessions", {"sessions": [encode_session_reference_uri(odd)]}, None
    )
    assert not by_uri.is_error
    assert '"sessionId":"see dsh-session:x"' in by_uri.text


def test_search_on_an_index_made_once_answers_from_its_first_look(tmp_path: Path) -> None:
    root = write_store(tmp_path / "store", tmp_path / "project")
    index = SessionIndex(DirectoryStore(root), tmp_path / "index.sqlite", once=True)
    assert [hit.session_id for hit in index.search("toggle")] == ["s-docs"]
    write_session_store(root, [session_log("s-more", 9000, None, None, "another toggle")])
    assert [hit.session_id for hit in index.search("toggle")] == ["s-docs"]
    index.refresh()
    assert [hit.session_id for hit in index.search("toggle")] == ["s-more", "s-docs"]


def test_a_cancelled_read_sets_the_resolvers_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = open_catalog(tmp_path)
    started, release = threading.Event(), threading.Event()

    def hanging_read(session_id: str) -> Any:
        started.set()
        release.wait(30)
        raise OSError("released")

    monkeypatch.setattr(catalog.indexes[0], "read", hanging_read)
    logged: list[str] = []
    cancelled = threading.Event()

    def log(line: str) -> None:
        logged.append(line)
        cancelled.set()

    monkeypatch.setattr(server_module, "log", log)

    async def scenario() -> list[types.Resource]:
        async with in_memory(SessionServer(catalog)) as client:
            async with anyio.create_task_group() as group:  # the read alone is cancelled
                group.start_soon(client.read_resource, encode_session_reference_uri("s-auth"))
                assert await anyio.to_thread.run_sync(started.wait, 20)
                group.cancel_scope.cancel()
            assert await anyio.to_thread.run_sync(cancelled.wait, 20)
            return (await client.list_resources()).resources

    try:
        resources = anyio.run(scenario)
    finally:
        release.set()
    uri = encode_session_reference_uri("s-auth")
    assert logged == [
        f"sessionref mcp: resources/read {uri}: SESSION_REFERENCE_CANCELLED: "
        "session reference preparation was cancelled"
    ]
    assert len(resources) == 4


def test_a_read_after_a_refresh_finds_its_log_without_listing_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server refreshes every half second; listing 10,000 logs again before each read
    would take longer than the read."""
    root = write_store(tmp_path / "store", tmp_path / "project")
    age(root)
    time.sleep(2.1)  # the directories' ctime (which no one can set back) settles
    index = SessionIndex(DirectoryStore(root), tmp_path / "index.sqlite", once=True)
    index.refresh()
    assert index.refresh().read == 0  # nothing changed: the index lists nothing

    def no_listing(store: DirectoryStore) -> Any:
        raise AssertionError("the store was listed")

    monkeypatch.setattr(DirectoryStore, "_scan", no_listing)
    assert index.read("s-docs").header.id == "s-docs"
    with (root / "--elsewhere-docs--" / "s-docs" / "session.jsonl").open("a") as log:
        log.write(json.dumps(title(7, "Renamed")) + "\n")  # one log changed, not the listing
    assert index.refresh().read == 1
    assert index.read("s-auth").header.id == "s-auth"
    assert index.title("s-docs") == "Renamed"


def test_a_session_another_command_indexed_first_is_still_listed(tmp_path: Path) -> None:
    """``sessionref search`` refreshes the same index: the server's look then reads nothing
    new, yet the listing must change."""
    catalog = open_catalog(tmp_path)
    catalog.fresh()
    add_session(catalog, "s-new")
    SessionIndex(catalog.opened.store, catalog.indexes[0].path).refresh()  # another process
    catalog.refresh()
    assert catalog.changed() is True
    assert "s-new" in [r["name"] for r in catalog.resources()]


def test_the_watcher_looks_only_while_no_request_is_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A look stats every log; taken during a read it would slow the read down."""
    catalog = open_catalog(tmp_path, fresh_for=0)
    looks: list[int] = []
    refresh = catalog.indexes[0].refresh
    monkeypatch.setattr(catalog.indexes[0], "refresh", lambda: looks.append(1) or refresh())
    started, release = threading.Event(), threading.Event()
    read = catalog.indexes[0].read

    def held_read(session_id: str) -> Any:
        started.set()
        release.wait(30)
        return read(session_id)

    monkeypatch.setattr(catalog.indexes[0], "read", held_read)

    async def scenario() -> tuple[int, int]:
        server = SessionServer(catalog, watch_seconds=0.01)
        async with in_memory(server) as client, anyio.create_task_group() as group:
            group.start_soon(client.read_resource, encode_session_reference_uri("s-auth"))
            assert await anyio.to_thread.run_sync(started.wait, 20)
            before = len(looks)
            await anyio.sleep(0.3)
            during = len(looks) - before
            release.set()
            with anyio.fail_after(20):
                while len(looks) <= before + during:
                    await anyio.sleep(0.01)
            return during, len(looks) - before

    try:
        during, after = anyio.run(scenario)
    finally:
        release.set()
    assert during == 0 and after > 0


async def refused_cursor(client: ClientSession, cursor: str) -> str:
    """The message of the invalid-params error ``resources/list`` gives for ``cursor``."""
    with pytest.raises(MCPError) as raised:
        await client.list_resources(params=types.PaginatedRequestParams(cursor=cursor))
    assert raised.value.error.code == types.INVALID_PARAMS
    return raised.value.error.message


def test_a_cursor_is_only_one_the_server_gave(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tester's trial: a cursor of 5,000 digits failed with error code 0 (Python's limit on
    converting digits to an int), and forged cursors ("0500" for "500") gave pages. Only a
    cursor the server gave is taken."""
    monkeypatch.setattr(server_module, "PAGE", 2)
    catalog = open_catalog(tmp_path)

    async def scenario() -> tuple[Any, ...]:
        async with in_memory(SessionServer(catalog, watch_seconds=None)) as client:
            first = await client.list_resources()
            assert first.next_cursor is not None
            params = types.PaginatedRequestParams(cursor=first.next_cursor)
            second = await client.list_resources(params=params)
            named = first.next_cursor.partition(".")[2]
            forged = ["9" * 5000, f"0{first.next_cursor}", f"{named}.1", f"1.{named}=", "2"]
            refused = [await refused_cursor(client, cursor) for cursor in forged]
            with pytest.raises(MCPError) as templates:
                await client.list_resource_templates(
                    params=types.PaginatedRequestParams(cursor="1")
                )
            return first, second, forged, refused, templates.value.error.message

    first, second, forged, refused, templates = anyio.run(scenario)
    uris = [encode_session_reference_uri(session_id) for session_id in LISTED]
    assert [r.uri for r in first.resources] == uris[:2]
    assert [r.uri for r in second.resources] == uris[2:]
    # the cursor names the page's last session by its URI's base64url text (uris[1])
    assert (first.next_cursor, second.next_cursor) == ("1." + uris[1].partition(":")[2], None)
    assert refused == [
        "not a cursor of this server: '" + "9" * 40 + "'…",
        *(f"not a cursor of this server: {cursor!r}" for cursor in forged[1:]),
    ]
    assert templates == "not a cursor of this server: '1'"


def test_a_cursor_outlives_sessions_added_and_removed_while_paging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A demanding client's trial: any session added (an agent starting one, which happens
    all the time on a machine where agents run) made every cursor given before it an error,
    while the MCP specification asks for stable cursors. A cursor now names the session it
    continues after: paging goes on after sessions are added and removed, each session
    listed throughout comes once, and only a cursor whose own session was removed is
    refused."""
    monkeypatch.setattr(server_module, "PAGE", 2)
    catalog = open_catalog(tmp_path)
    root = catalog.opened.store.root

    def remove(session_id: str) -> None:
        [log] = [path for path in root.rglob("*.jsonl") if path.parent.name == session_id]
        log.unlink()
        log.parent.rmdir()
        age(root)
        catalog.refresh()

    async def scenario() -> tuple[Any, ...]:
        async with in_memory(SessionServer(catalog, watch_seconds=None)) as client:
            first = await client.list_resources()
            add_session(catalog, "s-new")  # no cwd, newest: right after the project's two
            catalog.refresh()
            params = types.PaginatedRequestParams(cursor=first.next_cursor)
            second = await client.list_resources(params=params)
            remove("s-auth")  # before the cursor's session
            params = types.PaginatedRequestParams(cursor=second.next_cursor)
            third = await client.list_resources(params=params)
            remove("s-none")  # the session the second page's cursor names
            gone = await refused_cursor(client, str(second.next_cursor))
            return first, second, third, gone

    first, second, third, gone = anyio.run(scenario)
    # the project's sessions, then those without a cwd newest first, then the other project's
    pages = [["s-auth", "s-old"], ["s-new", "s-none"], ["s-docs"]]
    assert [[r.uri for r in page.resources] for page in (first, second, third)] == [
        [encode_session_reference_uri(session_id) for session_id in page] for page in pages
    ]
    assert third.next_cursor is None
    assert gone == (
        "the session this cursor continues after is no longer listed: list them from the start"
    )


def test_every_malformed_percent_escape_is_an_invalid_uri(tmp_path: Path) -> None:
    """A tester's trial: ``%zz`` and a lone ``%`` were kept as they are and read as session
    ids ('session "%zz" not found', -32002), while ``%ff`` was an invalid URI (-32602)."""
    catalog = open_catalog(tmp_path)
    uris = [f"sessionref:session/{quoted}" for quoted in ("%zz", "%", "a%2", "%ff", "%C3")]

    async def scenario() -> list[tuple[int, str]]:
        refused = []
        async with in_memory(SessionServer(catalog, watch_seconds=None)) as client:
            for uri in uris:
                with pytest.raises(MCPError) as raised:
                    await client.read_resource(uri)
                refused.append((raised.value.error.code, raised.value.error.message))
        return refused

    assert anyio.run(scenario) == [
        (-32602, f'SESSION_REFERENCE_INVALID_REFERENCE: not a session URI: "{uri}"') for uri in uris
    ]


def test_a_tool_the_server_does_not_have_is_a_protocol_error_as_documented(
    tmp_path: Path,
) -> None:
    """A tester's reading: docs/mcp.md said nothing but a result with ``isError`` comes out
    of a tool call, while an unknown tool is the protocol error the specification asks for."""
    catalog = open_catalog(tmp_path)

    async def scenario() -> tuple[types.ErrorData, types.CallToolResult]:
        async with in_memory(SessionServer(catalog, tools=True, watch_seconds=None)) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("nope", {})
            return raised.value.error, await client.call_tool("search_sessions", {"query": " "})

    unknown, failed = anyio.run(scenario)
    assert (unknown.code, unknown.message) == (-32602, "no tool 'nope'")
    assert failed.is_error
    docs = (Path(__file__).parent.parent / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert "`-32602` (invalid params), `no tool 'nope'`" in docs


def test_an_error_tells_an_id_holding_the_text_of_an_escape_from_a_control(
    tmp_path: Path,
) -> None:
    """A trial: an id holding a line feed and one holding the text ``\\u000a`` were refused
    with the same message, the line feed written as that text. Each ``\\uXXXX`` in the
    message now stands for one character, any other backslash for itself."""
    catalog = open_catalog(tmp_path)
    ids = ["a\nb", "a\\u000ab", "a\\b"]

    async def scenario() -> list[tuple[str, str]]:
        said = []
        async with in_memory(SessionServer(catalog, tools=True, watch_seconds=None)) as client:
            for session_id in ids:
                with pytest.raises(MCPError) as raised:
                    await client.read_resource(template_uri(session_id))
                tool = await client.call_tool("reference_sessions", {"sessions": [session_id]})
                said.append((raised.value.error.message, tool.content[0].text))
        return said

    root = catalog.opened.store.root
    shown = ["a\\u000ab", "a\\u005cu000ab", "a\\b"]
    assert anyio.run(scenario) == [
        (line, line)
        for line in (
            f'SESSION_REFERENCE_READ_FAILED: session "{text}" not found in --root {root}'
            for text in shown
        )
    ]


def test_every_tool_says_it_only_reads(tmp_path: Path) -> None:
    """A tester's reading of the specification: a tool with no annotations is, by their
    defaults, one that may destroy what it reaches in an open world (``destructiveHint`` and
    ``openWorldHint`` true), so a client asks before each call of these read-only tools."""
    catalog = open_catalog(tmp_path)

    async def scenario() -> list[types.Tool]:
        async with in_memory(SessionServer(catalog, tools=True, watch_seconds=None)) as client:
            return (await client.list_tools()).tools

    tools = anyio.run(scenario)
    assert [tool.name for tool in tools] == [
        "list_sessions",
        "search_sessions",
        "reference_sessions",
    ]
    for tool in tools:
        assert tool.annotations is not None, tool.name
        hints = tool.annotations.model_dump(by_alias=True, exclude_none=True)
        assert hints == {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        }


def test_an_id_no_harness_root_serves_is_refused_without_listing_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session a Codex root neither lists nor passes over is no session of it (a thread
    Codex's listing hides is a problem of the listing, read by its id through it): the
    catalog refuses such an id as the command line does, from its warm index, without
    listing the root. It asked the root's own store whether it read the id, which listed
    every rollout of the root (each head read, in a process that had read none) for each id
    a client made up, and whose answer never changed the outcome."""
    home = tmp_path / "codex"
    hidden, unknown = THREAD, "0197a000-0000-7000-8000-0000000000cc"
    for path, lines in ((ROLLOUT, [meta()]), (OTHER_ROLLOUT, [meta(OTHER), asked("fix it")])):
        (home / path).parent.mkdir(parents=True, exist_ok=True)
        (home / path).write_bytes(rollout(*lines))
    database = tmp_path / "index.sqlite"
    opened = OpenStore(
        home,
        lister=lambda store: SessionIndex(store, database, once=True, clock=settled_clock),
        live=True,
    )
    catalog = Catalog(opened, cwd="/w", max_bytes=65536)
    assert catalog.listed().order == [OTHER]

    def no_listing(store: HarnessStore) -> Any:
        raise AssertionError("the root was listed")

    monkeypatch.setattr(HarnessStore, "_scan", no_listing)
    with pytest.raises(SessionReferenceError) as raised:
        catalog.prompt([unknown], None)
    passed = "1 log passed over (--verbose lists them)"  # the hidden thread
    assert raised.value.message == f'session "{unknown}" not found in --root {home}; {passed}'
    assert hidden in catalog.prompt([hidden], None)  # read by its id, as it is passed over
