"""The index over Claude Code and Codex stores: it reads only what changed, never answers
stale, and answers as the store itself does (docs/harnesses.md §Index)."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sessionref import listing
from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.codex.store import CodexStore
from sessionref.index import SessionIndex
from sessionref.log.harness_store import HarnessStore
from sessionref.log.multi import AmbiguousSession, MultiStore
from sessionref.log.protocol import harness_of
from sessionref.types import Target

DAY_NS = 86_400 * 10**9
QUERIES = ("", "fix", "deploy", "renamed", "/srv", "zz-none")
T1, T2, T3, T9 = (f"0197d000-0000-7000-8000-00000000000{n}" for n in (1, 2, 3, 9))
"""The Codex threads (UUIDs, as Codex names its rollouts)."""


def claude_lines(session: str, cwd: str, prompts: list[str], title: str | None = None) -> bytes:
    """A Claude Code transcript: each prompt answered once, and a custom title if given."""
    lines: list[dict[str, Any]] = []
    parent = None
    for n, prompt in enumerate(prompts):
        for role, text in (("user", prompt), ("assistant", f"done: {prompt}")):
            uuid = f"{session[:8]}-{n}-{role}"
            content: Any = text if role == "user" else [{"type": "text", "text": text}]
            message = {"role": role, "content": content}
            if role == "assistant":
                message["id"] = f"msg-{session[:8]}-{n}"
            lines.append(
                {
                    "type": role,
                    "uuid": uuid,
                    "parentUuid": parent,
                    "sessionId": session,
                    "cwd": cwd,
                    "timestamp": f"2025-06-0{1 + n % 9}T10:00:00.000Z",
                    "message": message,
                }
            )
            parent = uuid
    if title is not None:
        lines.append({"type": "custom-title", "customTitle": title, "sessionId": session})
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def codex_lines(thread: str, cwd: str, prompts: list[str], day: int = 1) -> bytes:
    """A Codex rollout: the thread's meta, then each prompt answered once."""

    def item(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": f"2025-06-0{day}T10:00:00.000Z", "type": kind, "payload": payload}

    meta = {
        "id": thread,
        "timestamp": f"2025-06-0{day}T10:00:00.000Z",
        "cwd": cwd,
        "originator": "codex_cli_rs",
        "cli_version": "0.40.0",
    }
    lines = [item("session_meta", meta)]
    for prompt in prompts:
        for role, kind, event in (
            ("user", "input_text", "user_message"),
            ("assistant", "output_text", "agent_message"),
        ):
            text = prompt if role == "user" else f"done: {prompt}"
            message = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
            lines += [
                item("response_item", message),
                item("event_msg", {"type": event, "message": text}),
            ]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


class Settled:
    """Writes store files each with an mtime of its own, a day back, and gives the index a
    clock a day ahead, which finds them and the directories settled (never racy)."""

    def __init__(self) -> None:
        self.step = 0
        self.base = time.time_ns() - DAY_NS

    def __call__(self) -> int:
        return time.time_ns() + DAY_NS

    def write(self, path: Path, data: bytes, mode: str = "wb") -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open(mode) as file:
            file.write(data)
        self.date(path)

    def date(self, path: Path) -> None:
        self.step += 1
        stamp = self.base + self.step * 10**9
        os.utime(path, ns=(stamp, stamp))


def claude_store(root: Path, clock: Settled) -> Path:
    projects = root / "projects"
    clock.write(
        projects / "-w" / "aaaa1111.jsonl", claude_lines("aaaa1111", "/w", ["fix the build"])
    )
    clock.write(
        projects / "-w" / "bbbb2222.jsonl",
        claude_lines("bbbb2222", "/w", ["deploy it", "and again"], title="Deploy day"),
    )
    clock.write(projects / "-srv" / "cccc3333.jsonl", claude_lines("cccc3333", "/srv", ["hello"]))
    clock.write(projects / "-srv" / "agent-dddd4444.jsonl", claude_lines("dddd4444", "/srv", ["x"]))
    clock.write(projects / "-srv" / "empty.jsonl", b"")
    return root


def codex_store(root: Path, clock: Settled) -> Path:
    day = root / "sessions" / "2025" / "06" / "01"
    clock.write(
        day / f"rollout-2025-06-01T10-00-00-{T1}.jsonl", codex_lines(T1, "/w", ["fix tests"])
    )
    clock.write(
        day / f"rollout-2025-06-01T11-00-00-{T2}.jsonl", codex_lines(T2, "/srv", ["deploy now"])
    )
    clock.write(
        root / "archived_sessions" / f"rollout-2025-06-01T12-00-00-{T3}.jsonl",
        codex_lines(T3, "/w", ["old work"], day=2),
    )
    clock.write(
        root / "session_index.jsonl",
        b'{"id":"%s","thread_name":"Deploy thread","updated_at":"2025-06-02T10:00:00Z"}\n'
        % T2.encode(),
    )
    return root


def answers(store: Any) -> Any:
    """Everything a listing tells: headers, each title, the problems, and the candidates of
    every query for two targets."""
    headers = store.headers()
    found = [
        [(header.id, label) for header, label in listing.candidates(store, target, query, 3)]
        for query in QUERIES
        for target in (Target("t", "/w"), Target("aaaa1111", None))
    ]
    titles = {header.id: store.title(header.id) for header in headers}
    problems = sorted((problem.path, problem.message) for problem in store.problems())
    return headers, titles, problems, found


def fresh(store: HarnessStore) -> HarnessStore:
    """The same root read by a store that remembers nothing (as a new process's)."""
    return type(store)(store.root)


@pytest.fixture(params=["claude-code", "codex"])
def harness(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[HarnessStore, Settled]]:
    clock = Settled()
    if request.param == "claude-code":
        yield ClaudeCodeStore(claude_store(tmp_path / "claude", clock)), clock
    else:
        yield CodexStore(codex_store(tmp_path / "codex", clock)), clock


def indexed(store: HarnessStore, path: Path, clock: Callable[[], int]) -> SessionIndex:
    return SessionIndex(fresh(store), path, clock=clock)


def counting_heads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every file whose head a store reads from now on."""
    read: list[Path] = []
    for kind in (ClaudeCodeStore, CodexStore):
        original = kind.head

        def head(self: Any, path: Path, lines: list[bytes], original: Any = original) -> Any:
            read.append(path)
            return original(self, path, lines)

        monkeypatch.setattr(kind, "head", head)
    return read


def test_a_warm_use_reads_no_file_and_writes_nothing(
    harness: tuple[HarnessStore, Settled], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, clock = harness
    database = tmp_path / "i.sqlite"
    first = indexed(store, database, clock)
    assert first.refresh().read == 3
    assert answers(first) == answers(fresh(store))
    first.close()
    heads = counting_heads(monkeypatch)
    written = os.stat(database)
    again = indexed(store, database, clock)
    assert again.refresh() == (3, 0, 0)
    assert heads == []
    assert answers(again) == answers(fresh(store))
    again.close()
    now = os.stat(database)
    assert (now.st_size, now.st_mtime_ns) == (written.st_size, written.st_mtime_ns)


def append_prompt(store: HarnessStore, clock: Settled) -> str:
    if isinstance(store, ClaudeCodeStore):
        path = store.root / "projects" / "-w" / "aaaa1111.jsonl"
        lines = claude_lines("aaaa1111", "/w", ["fix the build", "now renamed"])
        clock.write(path, lines.splitlines(keepends=True)[-2], "ab")
        clock.write(path, lines.splitlines(keepends=True)[-1], "ab")
        return "aaaa1111"
    path = (
        store.root / "sessions" / "2025" / "06" / "01" / f"rollout-2025-06-01T10-00-00-{T1}.jsonl"
    )
    clock.write(path, codex_lines(T1, "/w", ["now renamed"]).split(b"\n", 1)[1], "ab")
    return T1


def add_session(store: HarnessStore, clock: Settled) -> str:
    if isinstance(store, ClaudeCodeStore):
        path = store.root / "projects" / "-new" / "eeee5555.jsonl"
        clock.write(path, claude_lines("eeee5555", "/new", ["renamed project"]))
        return "eeee5555"
    path = (
        store.root / "sessions" / "2025" / "06" / "03" / f"rollout-2025-06-03T10-00-00-{T9}.jsonl"
    )
    clock.write(path, codex_lines(T9, "/new", ["renamed project"], day=3))
    return T9


def move_session(store: HarnessStore, clock: Settled) -> str:
    """Rename a session's file: a Claude Code session is named by its file (another id), a
    Codex thread by its meta (the same id, another place)."""
    if isinstance(store, ClaudeCodeStore):
        old = store.root / "projects" / "-srv" / "cccc3333.jsonl"
        old.rename(old.with_name("ffff6666.jsonl"))
        return "ffff6666"
    old = store.root / "archived_sessions" / f"rollout-2025-06-01T12-00-00-{T3}.jsonl"
    new = store.root / "sessions" / "2025" / "06" / "02" / old.name
    new.parent.mkdir(parents=True)
    shutil.move(old, new)
    return T3


def remove_session(store: HarnessStore, clock: Settled) -> str:
    if isinstance(store, ClaudeCodeStore):
        (store.root / "projects" / "-w" / "bbbb2222.jsonl").unlink()
        return "bbbb2222"
    (
        store.root / "sessions" / "2025" / "06" / "01" / f"rollout-2025-06-01T11-00-00-{T2}.jsonl"
    ).unlink()
    return T2


def retitle_session(store: HarnessStore, clock: Settled) -> str:
    """A new title: Claude Code appends one to the session's file; Codex writes the thread's
    new name in ``session_index.jsonl``, its rollout unchanged."""
    if isinstance(store, ClaudeCodeStore):
        line = {"type": "custom-title", "customTitle": "Renamed", "sessionId": "bbbb2222"}
        clock.write(
            store.root / "projects" / "-w" / "bbbb2222.jsonl",
            json.dumps(line).encode() + b"\n",
            "ab",
        )
        return "bbbb2222"
    clock.write(
        store.root / "session_index.jsonl",
        b'{"id":"%s","thread_name":"Renamed","updated_at":"2025-06-03T10:00:00Z"}\n' % T2.encode(),
        "ab",
    )
    return T2


def break_session(store: HarnessStore, clock: Settled) -> str:
    """A file whose head can no longer be read: a problem, its session gone."""
    if isinstance(store, ClaudeCodeStore):
        clock.write(store.root / "projects" / "-w" / "aaaa1111.jsonl", b"not json\n")
        return "aaaa1111"
    path = (
        store.root / "sessions" / "2025" / "06" / "01" / f"rollout-2025-06-01T10-00-00-{T1}.jsonl"
    )
    clock.write(path, b'{"type":"event_msg","payload":{}}\n')
    return T1


CHANGES = {
    "append": (append_prompt, 1),
    "add": (add_session, 1),
    "move": (move_session, 1),
    "remove": (remove_session, 0),
    "retitle": (retitle_session, 1),
    "break": (break_session, 0),
}


@pytest.mark.parametrize("change", CHANGES)
def test_the_next_use_after_a_change_reads_only_it_and_answers_as_the_store(
    harness: tuple[HarnessStore, Settled], tmp_path: Path, change: str
) -> None:
    store, clock = harness
    database = tmp_path / "i.sqlite"
    index = indexed(store, database, clock)
    before = answers(index)
    index.close()
    make, read = CHANGES[change]
    changed = make(store, clock)
    after = indexed(store, database, clock)
    report = after.refresh()
    assert report.read == read
    assert answers(after) == answers(fresh(store))
    ids = {header.id for header in after.headers()}
    assert (changed in ids) == (change not in ("remove", "break"))
    if change == "retitle":
        assert after.title(changed) == "Renamed" != before[1][changed]
    if change == "append":  # the title is the first prompt: only the text shows it
        assert [hit.session_id for hit in after.search("now renamed")] == [changed]
    if change in ("append", "move"):
        assert after.transcript(changed) == fresh(store).transcript(changed)


def test_codex_titles_follow_session_index_in_one_process(tmp_path: Path) -> None:
    clock = Settled()
    store = CodexStore(codex_store(tmp_path / "codex", clock))
    assert store.title(T2) == "Deploy thread"
    clock.write(
        store.root / "session_index.jsonl",
        b'{"id":"%s","thread_name":"Renamed","updated_at":"2025-06-03T10:00:00Z"}\n' % T2.encode(),
        "ab",
    )
    assert store.title(T2) == "Renamed"


def test_a_racy_file_is_read_each_time_until_it_settles(
    harness: tuple[HarnessStore, Settled], tmp_path: Path
) -> None:
    store, clock = harness
    changed = append_prompt(store, clock)
    path = next(p for p in store.paths_of(changed))
    now = time.time_ns()
    os.utime(path, ns=(now, now))
    database = tmp_path / "i.sqlite"
    for clock_now, read in ((now, 3), (now, 1), (now + DAY_NS, 1), (now + DAY_NS, 0)):
        index = indexed(store, database, lambda clock_now=clock_now: clock_now)
        assert index.refresh().read == read
        assert answers(index) == answers(fresh(store))
        index.close()


def test_roots_behind_indexes_say_where_a_session_is_without_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Settled()
    claude = ClaudeCodeStore(claude_store(tmp_path / "claude", clock))
    codex = CodexStore(codex_store(tmp_path / "codex", clock))
    copy = tmp_path / "copy"
    shutil.copytree(claude.root, copy)
    stores = {"c": claude, "x": codex, "copy": ClaudeCodeStore(copy)}
    both = MultiStore(
        {
            name: SessionIndex(store, tmp_path / "i", once=True, clock=clock)
            for name, store in stores.items()
        }
    )
    monkeypatch.setattr(SessionIndex, "headers", lambda self: pytest.fail("listed"))
    assert [harness_of(both, sid) for sid in (T2, "cccc3333")] == ["codex", "claude-code"]
    assert both.homes(T2) == ["x"] and both.homes("cccc3333") == ["c", "copy"]
    assert both.homes("nothing") == []
    with pytest.raises(AmbiguousSession):
        both.read("cccc3333")


def test_a_session_being_written_is_read_by_each_use_without_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Settled()
    store = ClaudeCodeStore(claude_store(tmp_path / "claude", clock))
    database = tmp_path / "i.sqlite"
    indexed(store, database, clock).refresh()
    listings: list[int] = []
    files = ClaudeCodeStore.files
    monkeypatch.setattr(
        ClaudeCodeStore, "files", lambda self, passed: listings.append(1) or files(self, passed)
    )
    append_prompt(store, clock)
    path = store.root / "projects" / "-w" / "aaaa1111.jsonl"
    writing = clock()  # modified as the index looks: racy
    os.utime(path, ns=(writing, writing))
    for read in (1, 1):
        index = indexed(store, database, clock)
        assert index.refresh().read == read
        assert listings == []
        assert answers(index) == answers(fresh(store))
        listings.clear()  # the store's own listing, for the answers
    clock.date(path)  # settled
    assert [indexed(store, database, clock).refresh().read for _ in range(2)] == [1, 0]
    assert listings == []
    assert [hit.session_id for hit in indexed(store, database, clock).search("now renamed")] == [
        "aaaa1111"
    ]
