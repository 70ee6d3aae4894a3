"""Store roots (docs/roots.md): the one rule every command follows, each root's harness
recognized from its layout, and a store over several roots."""

from __future__ import annotations

import io
import json
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sessionref import DirectoryStore, MemoryStore, MultiStore, SessionReferenceResolver, Target
from sessionref.batch.core import listing_order, portable_store
from sessionref.batch.dask import snapshots_bag
from sessionref.batch.local import build_snapshots
from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.codex.store import CodexStore
from sessionref.errors import INVALID_CONFIG, READ_FAILED, SessionReferenceError
from sessionref.listing import candidates
from sessionref.log.multi import AmbiguousSession
from sessionref.log.protocol import CandidateSource, CountingStore, Store
from sessionref.log.store import SessionNotFound
from sessionref.log.structs import SessionHeader, SessionLog
from sessionref.roots import HARNESSES, Root, check_root, chosen_roots, open_store
from sessionref.testing.store import write_session_store
from tests.logs import assistant, header, title, user


def session(session_id: str, created_at: int, cwd: str | None, said: str) -> dict[str, Any]:
    """A DSH session of one exchange, titled after its id."""
    events = [user(0, said), assistant(1, f"{said}, answered"), title(2, f"T {session_id}")]
    return {"header": header(session_id, created_at, cwd), "events": events}


SESSIONS = [
    session("a", 5, "/w", "alpha"),
    session("b", 3, None, "bravo"),
    session("c", 9, "/x", "charlie"),
    session("d", 3, "/w", "delta"),
    session("e", 1, "/w", "echo"),
]


CODEX_THREAD = "0197a000-0000-7000-8000-0000000000c1"
"""The Codex thread of :func:`codex_home` and :func:`codex_session` (a UUID, as Codex names
its rollouts)."""


def two_roots(tmp_path: Path) -> tuple[Path, Path]:
    """SESSIONS split over two DSH roots."""
    one, two = tmp_path / "one", tmp_path / "two"
    write_session_store(one, SESSIONS[:2])
    write_session_store(two, SESSIONS[2:])
    return one, two


def claude_home(tmp_path: Path) -> Path:
    """A directory laid out as ``~/.claude``: one session log under ``projects/``."""
    home = tmp_path / "claude"
    (home / "projects" / "-w").mkdir(parents=True)
    (home / "projects" / "-w" / "0b7c.jsonl").write_text("{}\n")
    return home


def codex_home(tmp_path: Path, dated: bool = True) -> Path:
    """A directory laid out as ``~/.codex``: one rollout under ``sessions/``."""
    home = tmp_path / "codex"
    folder = home / "sessions" / ("2026/11/30" if dated else "")
    folder.mkdir(parents=True)
    (folder / f"rollout-2026-11-30T10-00-00-{CODEX_THREAD}.jsonl").write_text("{}\n")
    return home


# The root rule and the layouts


def test_a_root_that_is_a_link_loop_or_leads_nowhere_says_so(tmp_path: Path) -> None:
    # A hostile trial found a link loop named by --root called "no such directory".
    loop, dangling = tmp_path / "loop", tmp_path / "dangling"
    loop.symlink_to(loop)
    dangling.symlink_to(tmp_path / "gone")
    for root, said in ((loop, "cannot be looked at: "), (dangling, "a link to nothing")):
        with pytest.raises(SessionReferenceError) as raised:
            check_root(str(root))
        assert raised.value.code == INVALID_CONFIG
        assert str(raised.value).startswith(f"--root {root}: {said}")


def test_a_missing_directory_store_is_an_error_not_an_empty_store(tmp_path: Path) -> None:
    with pytest.raises(SessionReferenceError) as raised:
        DirectoryStore(tmp_path / "typo")
    assert raised.value.code == INVALID_CONFIG
    assert str(raised.value) == f"DSH store root {tmp_path / 'typo'}: no such directory"
    (tmp_path / "file").write_text("x")
    with pytest.raises(SessionReferenceError, match="not a directory"):
        DirectoryStore(tmp_path / "file")
    (tmp_path / "empty").mkdir()
    assert DirectoryStore(tmp_path / "empty").headers() == []  # the library lists an empty one


@pytest.mark.parametrize("kind", [DirectoryStore, ClaudeCodeStore, CodexStore])
def test_an_empty_root_is_an_error_not_the_current_directory(
    kind: Callable[[str], object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newcomer's trial: ``DirectoryStore("")`` served the current directory, as
    ``Path("")`` names it (an unset variable's empty text, say); ``--root ""`` said the
    current directory held no sessions."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SessionReferenceError) as raised:
        kind("")
    assert raised.value.code == INVALID_CONFIG
    assert str(raised.value).endswith("store root is empty: name a directory")
    with pytest.raises(SessionReferenceError) as raised:
        check_root("")
    assert str(raised.value) == "--root is empty: name a directory"


def test_each_harness_is_recognized_from_its_layout(tmp_path: Path) -> None:
    dsh = tmp_path / "dsh"
    write_session_store(dsh, SESSIONS[:1])
    claude, codex = claude_home(tmp_path), codex_home(tmp_path)
    archived = tmp_path / "old" / "archived_sessions"
    archived.mkdir(parents=True)
    (archived / f"rollout-2025-01-01T00-00-00-{CODEX_THREAD}.jsonl").write_text("{}\n")
    flat = codex_home(tmp_path / "flat", dated=False)
    assert check_root(str(dsh)) == Root(str(dsh), "dsh", str(dsh))
    assert check_root(str(claude)) == Root(str(claude), "claude-code", str(claude))
    assert check_root(str(claude / "projects")).path == str(claude)
    assert check_root(str(codex)) == Root(str(codex), "codex", str(codex))
    assert check_root(str(codex / "sessions")).path == str(codex)
    assert check_root(str(archived)) == Root(str(archived.parent), "codex", str(archived))
    assert check_root(str(flat)).harness == "codex"


def assert_no_codex_home(home: Path, near: str) -> None:
    """``home`` is refused as a root, found as any harness's or as Codex's, with one
    ``INVALID_CONFIG`` line that ends with ``near``, by the API and by the command line."""
    for harness, which in ((None, "sessions"), ("codex", "Codex sessions")):
        with pytest.raises(SessionReferenceError) as raised:
            check_root(str(home), harness)
        assert raised.value.code == INVALID_CONFIG
        assert str(raised.value).startswith(f"--root {home}: holds no {which} (looked for")
        assert str(raised.value).endswith(near)
    done = command("candidates", "--root", str(home / "sessions"), "--no-index")
    assert done.returncode == 1
    assert done.stderr.decode().count("\n") == 1
    assert done.stderr.decode().endswith(near + "\n")
    assert b"Traceback" not in done.stderr


def test_a_folder_of_files_codex_lists_no_rollout_of_is_no_codex_home(tmp_path: Path) -> None:
    """Review: a ``sessions/`` holding only ``rollout-*.jsonl`` files whose names Codex does
    not read was taken for a Codex home that then listed nothing. Codex's listing takes a
    file only when ``RolloutFileName::parse`` reads its name (openai/codex
    ``codex-rs/rollout/src/list.rs``, ``collect_bounded_candidates_in_dir``;
    ``codex-rs/rollout/src/rollout_file_name.rs``: a real time, then a UUID), so such a root
    holds no sessions, and the one error line says which file looked like a rollout and
    what Codex's rollouts are named."""
    home = tmp_path / "codex"
    folder = home / "sessions" / "2025" / "06" / "01"
    folder.mkdir(parents=True)
    (folder / "rollout-2025-06-01T10-00-00-0b7c.jsonl").write_text("{}\n")  # no UUID
    first = folder / f"rollout-2025-02-29T10-00-00-{CODEX_THREAD}.jsonl"  # no such day
    first.write_text("{}\n")
    near = (
        f"; {first} is no rollout: Codex lists only "
        "rollout-<YYYY-MM-DDThh-mm-ss>-<thread UUID>.jsonl (maybe .zst), of a real time"
    )
    assert_no_codex_home(home, near)
    (folder / f"rollout-2025-06-01T10-00-00-{CODEX_THREAD}.jsonl").write_text("{}\n")
    assert check_root(str(home)) == Root(str(home), "codex", str(home))


def test_a_folder_inside_a_codex_home_given_as_root_is_told_which_folder_to_give(
    tmp_path: Path,
) -> None:
    """Trial: ``--root ~/.codex/sessions/2026/11/30`` (one day's folder of rollouts, where a
    user finds the file of a session) said only that it "holds no sessions", while a Claude
    Code project folder is told which folder to give. Codex keeps its rollouts in
    ``<home>/sessions/YYYY/MM/DD/`` (the format brief, §2.1): the line says so and names the
    home to give, for each level below ``sessions/``."""
    home = codex_home(tmp_path)
    sessions = home / "sessions"
    for folder in (sessions / "2026", sessions / "2026" / "11", sessions / "2026/11/30"):
        near = f"; {folder} is a folder inside a Codex home's sessions/: give {home}"
        near += f" (or {sessions})"
        for harness in (None, "codex"):
            with pytest.raises(SessionReferenceError) as raised:
                check_root(str(folder), harness)
            assert raised.value.code == INVALID_CONFIG
            assert str(raised.value).endswith(near)
    day = sessions / "2026" / "11" / "30"
    done = command("candidates", "--root", str(day), "--no-index")
    assert done.returncode == 1
    assert done.stderr.decode().count("\n") == 1
    assert done.stderr.decode().endswith(f"give {home} (or {sessions})\n")
    with pytest.raises(SessionReferenceError) as raised:
        check_root(str(day), "dsh")  # only the harness that looks for it
    assert "Codex home" not in str(raised.value)
    empty = tmp_path / "elsewhere" / "sessions" / "x"  # no rollouts above it: no hint
    empty.mkdir(parents=True)
    with pytest.raises(SessionReferenceError) as raised:
        check_root(str(empty))
    assert str(raised.value).endswith("(each maybe .zst))")


def test_subagent_transcripts_alone_are_no_claude_code_sessions(tmp_path: Path) -> None:
    home = tmp_path / "claude"
    (home / "projects" / "-w").mkdir(parents=True)
    (home / "projects" / "-w" / "agent-1a2b.jsonl").write_text("{}\n")
    with pytest.raises(SessionReferenceError, match="holds no sessions"):
        check_root(str(home))


def test_a_claude_code_project_folder_given_as_root_is_told_which_folder_to_give(
    tmp_path: Path,
) -> None:
    """Trial: ``--root ~/.claude/projects/-home-dev-app`` (one project's folder, which holds
    session files) said it "holds no sessions". Claude Code's layout is
    ``<config dir>/projects/<project>/<session>.jsonl``: the line says the folder is a
    project's and names the config directory to give."""
    home = claude_home(tmp_path)
    project = home / "projects" / "-w"
    near = f"; {project} is a Claude Code project folder: give {home} (or {home / 'projects'})"
    for harness in (None, "claude-code"):
        with pytest.raises(SessionReferenceError) as raised:
            check_root(str(project), harness)
        assert raised.value.code == INVALID_CONFIG
        assert str(raised.value).endswith(near)
    done = command("candidates", "--root", str(project), "--no-index")
    assert done.returncode == 1
    assert done.stderr.decode().count("\n") == 1
    assert done.stderr.decode().endswith(near + "\n")
    with pytest.raises(SessionReferenceError) as raised:
        check_root(str(home / "projects" / "-w"), "dsh")  # only the harness that looks for it
    assert "project folder" not in str(raised.value)


def test_harness_forces_one_layout_and_names_what_it_looked_for(tmp_path: Path) -> None:
    claude = claude_home(tmp_path)
    with pytest.raises(SessionReferenceError) as raised:
        check_root(str(claude), "dsh")
    assert str(raised.value) == (
        f"--root {claude}: holds no DSH sessions (looked for DSH: "
        "<project>/<session>/session.jsonl or session.jsonl.zstd)"
    )
    assert check_root(str(claude), "claude-code").harness == "claude-code"


def test_roots_given_else_the_environment_else_the_defaults(tmp_path: Path) -> None:
    one, two = two_roots(tmp_path)
    environ = {"SESSIONREF_ROOT": f"{two}{os.pathsep}{one}", "HOME": str(tmp_path / "home")}
    assert [root.path for root in chosen_roots([str(one)], environ=environ)] == [str(one)]
    assert [root.path for root in chosen_roots([], environ=environ)] == [str(two), str(one)]
    home = tmp_path / "home"
    write_session_store(home / ".dsh" / "sessions", SESSIONS[:1])
    codex = codex_home(tmp_path)
    (home / ".claude").mkdir()  # exists, but holds no sessions: not a default root
    defaults = chosen_roots([], environ={"HOME": str(home), "CODEX_HOME": str(codex)})
    assert [(root.path, root.harness) for root in defaults] == [
        (str(home / ".dsh" / "sessions"), "dsh"),
        (str(codex), "codex"),
    ]
    only = chosen_roots([], "codex", environ={"HOME": str(home), "CODEX_HOME": str(codex)})
    assert [root.harness for root in only] == ["codex"]


def test_no_root_anywhere_names_every_default_location(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path)}
    with pytest.raises(SessionReferenceError) as raised:
        chosen_roots([], environ=environ)
    message = str(raised.value)
    assert message.startswith("no --root given, $SESSIONREF_ROOT is not set")
    for place in (".dsh/sessions (DSH)", ".claude (Claude Code)", ".codex (Codex)"):
        assert f"{tmp_path}/{place}" in message


def test_a_root_named_twice_is_read_once(tmp_path: Path) -> None:
    one, _ = two_roots(tmp_path)
    assert len(chosen_roots([str(one), f"{one}/", str(one / ".." / "one")])) == 1


def test_the_registry_names_every_harness_and_opens_a_dsh_store(tmp_path: Path) -> None:
    one, _ = two_roots(tmp_path)
    assert list(HARNESSES) == ["dsh", "claude-code", "codex"]
    store = open_store(Root(str(one), "dsh", str(one)), max_bytes=1234)
    assert isinstance(store, DirectoryStore) and store.max_bytes == 1234
    assert store.harness == "dsh"


# One protocol, and a store over several roots


def test_every_store_implements_the_one_protocol(tmp_path: Path) -> None:
    from sessionref.index import SessionIndex

    one, two = two_roots(tmp_path)
    index = SessionIndex(DirectoryStore(one), tmp_path / "i.sqlite", once=True)
    stores: list[Store] = [
        DirectoryStore(one),
        MemoryStore(SESSIONS),
        index,
        MultiStore({"1": DirectoryStore(one), "2": DirectoryStore(two)}),
    ]
    for store in stores:
        assert store.harness == "dsh"
        assert {h.id for h in store.headers()} <= {"a", "b", "c", "d", "e"}
        assert store.problems() == []
        for listed in store.headers():
            assert store.transcript(listed.id).session_id == listed.id
    assert isinstance(index, CandidateSource) and isinstance(index, CountingStore)
    assert not isinstance(DirectoryStore(one), CandidateSource | CountingStore)


def test_a_multi_store_serves_the_union_as_one_store_would(tmp_path: Path) -> None:
    one, two = two_roots(tmp_path)
    multi = MultiStore({str(one): DirectoryStore(one), str(two): DirectoryStore(two)})
    single = MemoryStore(SESSIONS)
    assert sorted(h.id for h in multi.headers()) == ["a", "b", "c", "d", "e"]
    target = Target("t", "/w")
    for query in ("", "t ", "char", "/w", "zzz"):
        for limit in (1, 3, 10):
            assert candidates(multi, target, query, limit) == candidates(
                single, target, query, limit
            )
    ours = SessionReferenceResolver(multi).snapshot(target, [{"sessionId": "c"}])
    theirs = SessionReferenceResolver(single).snapshot(target, [{"sessionId": "c"}])
    assert ours.prompt == theirs.prompt


class ReadsOnly:
    """A store of the user's own with what a store needs and no more (docs/differences.md
    §API: anything with ``headers()``, ``read()`` and ``title()`` will do)."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner

    def headers(self) -> list[SessionHeader]:
        return self.inner.headers()

    def read(self, session_id: str) -> SessionLog:
        return self.inner.read(session_id)

    def title(self, session_id: str) -> Any:
        return self.inner.title(session_id)


def test_a_multi_store_of_a_store_that_reads_only_is_a_whole_store() -> None:
    """A newcomer's trial: ``MultiStore`` took such a store, then its ``harness``,
    ``problems()``, ``harness_of()`` and ``transcript()`` raised ``AttributeError``. It is
    DSH's (as a log is by default), passes over nothing, and its transcript is its log's."""
    own, full = ReadsOnly(MemoryStore(SESSIONS[:2])), MemoryStore(SESSIONS[2:])
    multi = MultiStore({"own": own, "full": full})
    assert (multi.harness, multi.harness_of("a"), multi.problems()) == ("dsh", "dsh", [])
    assert multi.transcript("a") == own.inner.transcript("a")
    assert multi.transcript("c") == full.transcript("c")


def test_candidates_from_several_indexes_are_those_of_one_store(tmp_path: Path) -> None:
    from sessionref.index import SessionIndex

    one, two = two_roots(tmp_path)
    indexes = {
        str(root): SessionIndex(DirectoryStore(root), tmp_path / f"{root.name}.sqlite")
        for root in (one, two)
    }
    multi, single = MultiStore(indexes), MemoryStore(SESSIONS)
    for query in ("", "t ", "ALPHA", "/x"):
        target = Target("a", "/x")
        assert candidates(multi, target, query, 3) == candidates(single, target, query, 3)


def test_an_id_in_two_roots_is_an_error_naming_both(tmp_path: Path) -> None:
    one, two = two_roots(tmp_path)
    write_session_store(two, [session("a", 7, "/y", "again")])
    multi = MultiStore({str(one): DirectoryStore(one), str(two): DirectoryStore(two)})
    assert [h.id for h in multi.headers()].count("a") == 2
    with pytest.raises(AmbiguousSession) as raised:
        multi.read("a")
    assert str(raised.value) == (
        f'session "a" is in 2 roots: {one} and {two}; read it from one of them alone'
    )
    assert multi.title("a") is None
    with pytest.raises(SessionReferenceError) as failed:
        SessionReferenceResolver(multi).snapshot(Target("t"), [{"sessionId": "a"}])
    assert failed.value.code == READ_FAILED and str(one) in str(failed.value)
    alone = SessionReferenceResolver(multi.stores[str(two)])  # saying which one is meant
    assert "again" in alone.snapshot(Target("t"), [{"sessionId": "a"}]).prompt


@pytest.mark.parametrize("workers", [1, 2])
def test_batch_over_several_roots_equals_batch_over_one(tmp_path: Path, workers: int) -> None:
    one, two = two_roots(tmp_path)
    multi = MultiStore({str(one): DirectoryStore(one), str(two): DirectoryStore(two)})
    expected = list(build_snapshots(MemoryStore(SESSIONS), label="title"))
    assert list(build_snapshots(multi, label="title", workers=workers)) == expected
    bag = snapshots_bag(multi, label="title", partition_size=2)
    assert bag.compute(scheduler="synchronous") == expected


def test_a_root_path_given_to_batch_is_read_by_its_harness(tmp_path: Path) -> None:
    """A path given to ``build_snapshots`` or ``snapshots_bag`` follows the root rule, as
    ``--root`` does: it was read as a DSH store, so a Claude Code home gave no sessions."""
    home = tmp_path / "claude"
    prompt = (
        b'{"type":"user","uuid":"u","cwd":"/w","timestamp":"2025-06-01T10:00:00Z",'
        b'"message":{"content":"where is the config read"}}\n'
    )
    (home / "projects" / "-w").mkdir(parents=True)
    (home / "projects" / "-w" / "0b7c.jsonl").write_bytes(prompt)
    for root in (home, home / "projects", str(home)):
        [result] = build_snapshots(root)
        assert result["sessionId"] == "0b7c"
        assert "where is the config read" in result["context"]["content"][0]["text"]
        assert snapshots_bag(root).compute(scheduler="synchronous") == [result]
    (tmp_path / "empty").mkdir()
    for build in (build_snapshots, snapshots_bag):
        with pytest.raises(SessionReferenceError) as raised:
            build(tmp_path / "empty")
        assert raised.value.code == INVALID_CONFIG
        assert str(raised.value).startswith(
            f"{build.__name__} store {tmp_path / 'empty'}: holds no sessions"
        )


# The command line


def command(*args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    environ = {"PATH": "", "HOME": env.pop("HOME", "/nonexistent"), **env}
    return subprocess.run(
        [sys.executable, "-m", "sessionref", *args], capture_output=True, env=environ
    )


def test_every_command_takes_several_roots(tmp_path: Path) -> None:
    one, two = two_roots(tmp_path)
    roots = ["--root", str(one), "--root", str(two)]
    index = ["--index", str(tmp_path / "indexes") + os.sep]
    listed = command("candidates", *roots, *index, "--cwd", "/w", "--json")
    assert listed.returncode == 0, listed.stderr
    found = json.loads(listed.stdout)
    assert [row["sessionId"] for row in found] == ["a", "d", "e", "b", "c"]
    assert {row["harness"] for row in found} == {"dsh"}
    assert set(found[0]) == {"sessionId", "label", "cwd", "createdAt", "mention", "harness"}
    shot = command("snapshot", *roots, "b", "c")
    assert shot.returncode == 0 and b"bravo" in shot.stdout and b"charlie" in shot.stdout
    out = tmp_path / "out.jsonl"
    batch = command("batch", *roots, "--out", str(out))
    assert batch.returncode == 0, batch.stderr
    assert [json.loads(line)["sessionId"] for line in out.read_bytes().splitlines()] == [
        "c",
        "a",
        "b",
        "d",
        "e",
    ]
    hits = command("search", *roots, *index, "answered", "--json")
    assert sorted(hit["sessionId"] for hit in json.loads(hits.stdout)) == list("abcde")
    built = command("index", *roots, *index)
    assert built.stdout.decode().count("sessions indexed") == 2


def test_the_environment_names_the_roots_of_every_command(tmp_path: Path) -> None:
    one, two = two_roots(tmp_path)
    listed = command(
        "candidates", "--json", "--no-index", SESSIONREF_ROOT=f"{one}{os.pathsep}{two}"
    )
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)) == 5


def test_the_default_root_is_the_harness_home(tmp_path: Path) -> None:
    write_session_store(tmp_path / ".dsh" / "sessions", SESSIONS[:2])
    done = command("snapshot", "b", HOME=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert b"bravo" in done.stdout


def test_a_session_not_found_names_the_roots_by_what_named_them(tmp_path: Path) -> None:
    """A root no ``--root`` gave is not named as one: the message says where it came from,
    as the root rule's own errors do (``$SESSIONREF_ROOT DIR: no such directory``)."""
    one, two = two_roots(tmp_path)
    failed = 'SESSION_REFERENCE_READ_FAILED: session "nope" not found in'
    given = command("snapshot", "--root", str(one), "--root", str(two), "nope")
    assert given.stderr.decode() == f"{failed} --root {one} --root {two}\n"
    listed = command("snapshot", "nope", SESSIONREF_ROOT=f"{one}{os.pathsep}{two}")
    assert listed.stderr.decode() == f"{failed} $SESSIONREF_ROOT {one}, $SESSIONREF_ROOT {two}\n"
    home = tmp_path / "home"
    write_session_store(home / ".dsh" / "sessions", SESSIONS[:1])
    codex = codex_home(tmp_path)
    found = command("snapshot", "nope", HOME=str(home), CODEX_HOME=str(codex))
    assert found.stderr.decode().startswith(
        f"{failed} the default location {home / '.dsh' / 'sessions'}, $CODEX_HOME {codex};"
    )


def test_an_id_in_two_roots_is_one_error_line_saying_what_to_do(tmp_path: Path) -> None:
    one, two = two_roots(tmp_path)
    write_session_store(two, [session("a", 7, "/y", "again")])
    done = command("snapshot", "--root", str(one), "--root", str(two), "a")
    assert done.returncode == 1
    assert done.stderr.decode() == (
        'SESSION_REFERENCE_READ_FAILED: cannot read session "a": session "a" is in 2 roots: '
        f"{one} and {two}; read it from one of them alone (give that --root alone)\n"
    )
    alone = command("snapshot", "--root", str(two), "a")
    assert alone.returncode == 0 and b"again" in alone.stdout


def test_a_harness_whose_reader_is_missing_is_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = codex_session(tmp_path / "codex")
    missing = HARNESSES["codex"]._replace(store="sessionref.not_here.store:CodexStore")
    monkeypatch.setitem(HARNESSES, "codex", missing)
    with pytest.raises(SessionReferenceError) as raised:
        open_store(check_root(str(codex)))
    assert raised.value.code == INVALID_CONFIG
    assert str(raised.value) == (
        f"{codex}: Codex sessions cannot be read by this version of sessionref "
        "(sessionref.not_here.store is missing)"
    )


def claude_session(home: Path) -> Path:
    """A Claude Code config directory holding one short session."""
    records = [
        {"type": "user", "message": {"role": "user", "content": "claude asks"}},
        {
            "type": "assistant",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
            },
        },
    ]
    lines = []
    for n, record in enumerate(records):
        record.update(
            uuid=f"u{n}",
            parentUuid=f"u{n - 1}" if n else None,
            sessionId="cc-1",
            cwd="/w",
            isSidechain=False,
            timestamp=f"2025-06-01T10:00:0{n}.000Z",
        )
        lines.append(json.dumps(record))
    (home / "projects" / "-w").mkdir(parents=True)
    (home / "projects" / "-w" / "cc-1.jsonl").write_text("\n".join(lines) + "\n")
    return home


def codex_session(home: Path) -> Path:
    """A Codex home holding one short rollout."""

    def line(kind: str, payload: dict[str, Any]) -> str:
        return json.dumps(
            {"timestamp": "2025-06-02T10:00:00.000Z", "type": kind, "payload": payload}
        )

    item = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "codex asks"}],
    }
    lines = [
        line(
            "session_meta",
            {
                "id": CODEX_THREAD,
                "timestamp": "2025-06-02T10:00:00.000Z",
                "cwd": "/w",
                "originator": "codex_cli_rs",
                "cli_version": "0.40.0",
            },
        ),
        line("response_item", item),
        line("event_msg", {"type": "user_message", "message": "codex asks"}),
    ]
    folder = home / "sessions" / "2025" / "06" / "02"
    folder.mkdir(parents=True)
    (folder / f"rollout-2025-06-02T10-00-00-{CODEX_THREAD}.jsonl").write_text(
        "\n".join(lines) + "\n"
    )
    return home


def test_roots_of_three_harnesses_are_one_listing(tmp_path: Path) -> None:
    dsh, _ = two_roots(tmp_path)
    claude = claude_session(tmp_path / "claude")
    codex = codex_session(tmp_path / "codex")
    roots = ["--root", str(dsh), "--root", str(claude / "projects"), "--root", str(codex)]
    listed = command("candidates", *roots, "--json", "--no-index", "--cwd", "/w")
    assert listed.returncode == 0, listed.stderr
    harness = {row["sessionId"]: row["harness"] for row in json.loads(listed.stdout)}
    assert harness == {"a": "dsh", "b": "dsh", "cc-1": "claude-code", CODEX_THREAD: "codex"}
    shot = command("snapshot", *roots, "cc-1", CODEX_THREAD, "a")
    assert shot.returncode == 0, shot.stderr
    for said in (b"claude asks", b"codex asks", b"alpha"):
        assert said in shot.stdout
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}.jsonl"
        batch = command("batch", *roots, "--out", str(out), "--workers", workers)
        assert batch.returncode == 0, batch.stderr
        lines = [json.loads(line) for line in out.read_bytes().splitlines()]
        assert sorted(line["sessionId"] for line in lines) == [CODEX_THREAD, "a", "b", "cc-1"]
        assert all("context" in line for line in lines)


def test_a_store_over_harnesses_travels_to_a_worker_process(tmp_path: Path) -> None:
    dsh, _ = two_roots(tmp_path)
    roots = [check_root(str(dsh)), check_root(str(codex_session(tmp_path / "codex")))]
    multi = MultiStore({root.named: open_store(root) for root in roots})
    ids = listing_order(multi)
    travelled = pickle.loads(pickle.dumps(portable_store(multi, ids)))()
    assert listing_order(travelled) == ids == [CODEX_THREAD, "a", "b"]
    for session_id in ids:
        assert travelled.read(session_id) == multi.read(session_id)
    assert travelled.harness_of(CODEX_THREAD) == "codex"


def test_harness_on_the_command_line_forces_every_root(tmp_path: Path) -> None:
    claude = claude_session(tmp_path / "claude")
    wrong = command("candidates", "--root", str(claude), "--harness", "codex", "--no-index")
    assert wrong.returncode == 1
    assert wrong.stderr.decode().startswith(
        f"SESSION_REFERENCE_INVALID_CONFIG: --root {claude}: holds no Codex sessions (looked for"
    )
    right = command(
        "candidates", "--root", str(claude), "--harness", "claude-code", "--json", "--no-index"
    )
    assert right.returncode == 0, right.stderr
    assert [row["harness"] for row in json.loads(right.stdout)] == ["claude-code"]


@pytest.mark.parametrize(
    ("stores", "message"),
    [
        (
            [MemoryStore([]), MemoryStore([])],
            "MultiStore stores must be a mapping of names to stores, not list",
        ),
        ({}, "MultiStore stores must name at least one store"),
        (
            {"/a": MemoryStore([]), "/b": "/b"},
            "MultiStore stores['/b'] must be a store (with headers(), read() and title()), not str",
        ),
    ],
)
def test_a_multi_store_of_anything_but_named_stores_is_invalid_config(
    stores: Any, message: str
) -> None:
    """A list was a TypeError, an empty mapping a ValueError, and a path among the stores
    failed at the first listing."""
    with pytest.raises(SessionReferenceError) as raised:
        MultiStore(stores)
    assert (raised.value.code, raised.value.message) == (INVALID_CONFIG, message)


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (SessionNotFound("a"), 'session "a" not found'),
        (
            AmbiguousSession("a", ["/r1", "/r2"]),
            'session "a" is in 2 roots: /r1 and /r2; read it from one of them alone',
        ),
    ],
)
def test_a_store_error_crosses_a_process_boundary_as_it_was(error: Exception, said: str) -> None:
    """A newcomer's trial, reading a store in a process pool: a ``SessionNotFound`` came back
    as ``session "session "a" not found" not found``, and an ``AmbiguousSession`` could not be
    unpickled at all (its ``__init__`` takes the roots). Pickled by the classes alone: importing
    dask registers tblib's reducer for every exception class then defined, hiding this."""
    sent = io.BytesIO()
    pickler = pickle.Pickler(sent)
    pickler.dispatch_table = {}  # not copyreg's, which dask's import may have changed
    pickler.dump(error)
    travelled = pickle.loads(sent.getvalue())
    assert type(travelled) is type(error) and str(travelled) == said
    assert vars(travelled) == vars(error)


def test_a_harness_variable_naming_no_sessions_is_a_warning_when_other_roots_are_read(
    tmp_path: Path,
) -> None:
    """``$CODEX_HOME`` or ``$CLAUDE_CONFIG_DIR`` set where no sessions of that harness are (a
    typo) is not passed over in silence: one warning line on stderr names the variable, the
    path and why, the way a ``--root`` there would be refused; stdout (JSON) stays clean."""
    home = tmp_path / "home"
    write_session_store(home / ".dsh" / "sessions", SESSIONS[:1])
    typo, empty = tmp_path / "typo", tmp_path / "empty"
    empty.mkdir()
    warned: list[str] = []
    environ = {"HOME": str(home), "CODEX_HOME": str(typo), "CLAUDE_CONFIG_DIR": str(empty)}
    roots = chosen_roots([], environ=environ, warn=warned.append)
    assert [root.harness for root in roots] == ["dsh"]
    assert warned[0] == (
        f"warning: $CLAUDE_CONFIG_DIR {empty}: holds no Claude Code sessions (looked for "
        "Claude Code: projects/<project>/<session>.jsonl); no Claude Code sessions are read"
    )
    assert warned[1:] == [
        f"warning: $CODEX_HOME {typo}: no such directory; no Codex sessions are read"
    ]
    done = command("candidates", "--json", HOME=str(home), CODEX_HOME=str(typo))
    assert done.returncode == 0, done.stderr
    assert [c["sessionId"] for c in json.loads(done.stdout)] == ["a"]
    assert done.stderr.decode() == (
        f"warning: $CODEX_HOME {typo}: no such directory; no Codex sessions are read\n"
    )
    quiet = command("candidates", "--json", HOME=str(home))
    assert quiet.stderr == b""


def test_an_id_in_two_roots_is_quoted_with_its_double_quotes_doubled() -> None:
    """sessionref's own messages quote an id as the command line's do (README): each ``"`` in
    it doubled, so ``"a""b"`` is the id ``a"b``, where ``"a"b"`` could end at ``a``. Only the
    harness's own wording, ``session "a"b" not found``, keeps the id as the harness writes it."""
    said = str(AmbiguousSession('a"b', ["/r1", "/r2"]))
    assert said == 'session "a""b" is in 2 roots: /r1 and /r2; read it from one of them alone'
    assert str(SessionNotFound('a"b')) == 'session "a"b" not found'
