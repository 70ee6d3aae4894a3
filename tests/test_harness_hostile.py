"""Claude Code and Codex stores damaged as a real disk damages them, through the library and
the command line (docs/harnesses.md §Reading): a link that loops where a session file or a
folder belongs, a compressed rollout that shrinks while it is read, JSON nested too deep.

Each store holds one good session beside the damage: the damage is passed over or reported,
the good session is still served, and nothing raises but a ``SessionReferenceError``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.codex.store import CodexStore
from sessionref.log.harness_store import HarnessStore
from tests.conftest import script_output

SESSION = "11111111-1111-4111-8111-111111111111"
THREAD = "0197a000-0000-7000-8000-0000000000aa"
OTHER = "0197a000-0000-7000-8000-0000000000bb"
DAY = Path("sessions", "2025", "06", "01")


def claude_code_file(root: Path, session: str = SESSION) -> Path:
    """A Claude Code session file of one prompt, written under ``root``; its path."""
    line = {
        "type": "user",
        "uuid": "u0",
        "parentUuid": None,
        "cwd": "/w",
        "timestamp": "2025-06-01T10:00:00.000Z",
        "message": {"role": "user", "content": "hello"},
    }
    path = root / "projects" / "-w" / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(json.dumps(line).encode() + b"\n")
    return path


def rollout_path(root: Path, thread: str, second: int = 0) -> Path:
    """Where Codex writes the rollout of ``thread`` started at 10:00:``second``."""
    return root / DAY / f"rollout-2025-06-01T10-00-{second:02}-{thread}.jsonl"


def codex_file(root: Path, thread: str = THREAD) -> Path:
    """A Codex rollout of one prompt, written under ``root``; its path."""
    stamp = "2025-06-01T10:00:00.000Z"
    meta = {"id": thread, "timestamp": stamp, "cwd": "/w", "originator": "codex_cli_rs"}
    said = {"type": "user_message", "message": "hello"}
    lines = [
        {"timestamp": stamp, "type": "session_meta", "payload": {**meta, "cli_version": "0.40.0"}},
        {"timestamp": stamp, "type": "event_msg", "payload": said},
    ]
    path = rollout_path(root, thread)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    return path


def looping_link(path: Path) -> Path:
    """A link at ``path`` to itself: following it fails with ELOOP."""
    os.symlink(path.name, path)
    return path


def stores(root: Path) -> dict[str, tuple[HarnessStore, str, Path]]:
    """Each harness's store of ``root`` with its good session and the folder its files are in."""
    return {
        "claude-code": (ClaudeCodeStore(root / "cc"), SESSION, root / "cc" / "projects" / "-w"),
        "codex": (CodexStore(root / "codex"), OTHER, root / "codex" / DAY),
    }


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_a_link_that_loops_in_place_of_a_session_file_is_a_problem(
    harness: str, tmp_path: Path
) -> None:
    """Claude Code: ``projects/-w/<id>.jsonl -> itself``; Codex: a rollout name that loops.
    The good session is listed, the link is a problem naming it and ELOOP's reason."""
    claude_code_file(tmp_path / "cc")
    looping_link(tmp_path / "cc" / "projects" / "-w" / "22222222-2222-4222-8222-222222222222.jsonl")
    codex_file(tmp_path / "codex", OTHER)
    looping_link(rollout_path(tmp_path / "codex", THREAD, second=1))
    store, good, folder = stores(tmp_path)[harness]
    assert [h.id for h in store.headers()] == [good]
    (problem,) = store.problems()
    assert Path(problem.path).parent == folder
    assert "Too many levels of symbolic links" in problem.message


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_a_link_that_loops_in_place_of_a_folder_is_passed_over_as_a_dangling_one(
    harness: str, tmp_path: Path
) -> None:
    """A link that leads to no directory (it loops) is no folder of sessions, as a dangling
    link is none: the listing passes it over and serves the rest."""
    claude_code_file(tmp_path / "cc")
    looping_link(tmp_path / "cc" / "projects" / "loop")
    codex_file(tmp_path / "codex", OTHER)
    looping_link(tmp_path / "codex" / "sessions" / "loop")
    looping_link(tmp_path / "codex" / DAY / "loop")
    store, good, _ = stores(tmp_path)[harness]
    assert [h.id for h in store.headers()] == [good]
    assert store.problems() == []


def sessionref(*args: str) -> subprocess.CompletedProcess[bytes]:
    """``python -m sessionref ARGS``, run to its end within a minute."""
    return subprocess.run(
        [sys.executable, "-m", "sessionref", *args], capture_output=True, timeout=60, check=False
    )


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_a_dangling_link_in_place_of_a_session_file_is_named_once(
    harness: str, tmp_path: Path
) -> None:
    """Trial: a session file that is a link to nothing was passed over as ``passed over F:
    cannot read F: No such file or directory``, and ``snapshot ID`` said ``cannot read
    session "ID": F: cannot read F: …``: the file twice. Every other reason names the file
    once (tests/test_read_errors.py), so this one does too, in the problem, in ``-v`` and in
    the error line."""
    if harness == "claude-code":
        claude_code_file(tmp_path)
        session = "22222222-2222-4222-8222-222222222222"
        link = tmp_path / "projects" / "-w" / f"{session}.jsonl"
        store: HarnessStore = ClaudeCodeStore(tmp_path)
    else:
        codex_file(tmp_path, OTHER)
        session, link = THREAD, rollout_path(tmp_path, THREAD, second=1)
        store = CodexStore(tmp_path)
    os.symlink(tmp_path / "gone", link)
    store.headers()
    assert [(p.path, p.message) for p in store.problems()] == [
        (str(link), "No such file or directory")
    ]
    listed = sessionref("candidates", "--no-index", "-v", "--root", str(tmp_path))
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.decode().splitlines() == [f"passed over {link}: No such file or directory"]
    done = sessionref("snapshot", "--root", str(tmp_path), session)
    assert done.returncode == 1
    assert done.stderr.decode().splitlines() == [
        f'SESSION_REFERENCE_READ_FAILED: cannot read session "{session}": {link}: '
        "No such file or directory"
    ]


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_a_root_holding_links_that_loop_lists_its_sessions(harness: str, tmp_path: Path) -> None:
    """The root is recognized from its good session whatever loops beside it (a session file
    and a folder that loop), and the command lists it, saying what it passed over."""
    if harness == "claude-code":
        claude_code_file(tmp_path)
        looping_link(tmp_path / "projects" / "-w" / "22222222-2222-4222-8222-222222222222.jsonl")
        looping_link(tmp_path / "projects" / "-w" / "loop")
        good = SESSION
    else:
        codex_file(tmp_path, OTHER)
        looping_link(rollout_path(tmp_path, THREAD, second=1))
        looping_link(tmp_path / "sessions" / "loop")
        good = OTHER
    done = sessionref("candidates", "--no-index", "--json", "--root", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert [c["sessionId"] for c in json.loads(done.stdout)] == [good]
    assert done.stderr == b"note: 1 log passed over (--verbose lists them)\n"


SHRINKING = """
import os, sys
from pathlib import Path
import sessionref.codex.rollouts as rollouts
from sessionref.codex.store import CodexStore

decompress = rollouts.complete_frames

def shrunk_first(compressed, *args, **kwargs):
    os.truncate(sys.argv[2], 0)  # the file shrinks once it is open, before it is decompressed
    return decompress(compressed, *args, **kwargs)

rollouts.complete_frames = shrunk_first
store = CodexStore(sys.argv[1])
print([h.id for h in store.headers()], [p.message for p in store.problems()])
"""


def test_a_compressed_rollout_that_shrinks_while_it_is_read_is_no_crash(tmp_path: Path) -> None:
    """A compressed rollout truncated while its head is read: mapped into memory, the pages
    past its new end were a SIGBUS that killed the process (an MCP server with it). Its
    compressed bytes are taken whole before they are decompressed, so the listing answers."""
    plain = codex_file(tmp_path)
    compressed = plain.with_name(plain.name + ".zst")
    compressed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    plain.unlink()
    assert script_output(SHRINKING, str(tmp_path), str(compressed)) == f"['{THREAD}'] []\n"


DEEP = b"[" * 100_000 + b"]" * 100_000
"""A JSON value nested 100,000 deep: past msgspec's recursion limit (and serde_json's 128)."""


def with_deep_member(path: Path, line: int) -> None:
    """Give line ``line`` (0-based) of the file at ``path`` a member holding :data:`DEEP`."""
    lines = path.read_bytes().splitlines()
    lines[line] = lines[line][:-1] + b',"deep":' + DEEP + b"}"
    path.write_bytes(b"".join(item + b"\n" for item in lines))


def test_a_rollout_whose_meta_is_nested_too_deep_is_a_problem(tmp_path: Path) -> None:
    """Its ``session_meta`` cannot be read (Codex's parser refuses it too), so the rollout
    holds no thread: a problem, and reading it one line naming the file; the decoder's
    ``RecursionError`` was a traceback from the root's recognition on."""
    path = codex_file(tmp_path)
    with_deep_member(path, 0)
    codex_file(tmp_path, OTHER)
    store = CodexStore(tmp_path)
    assert [h.id for h in store.headers()] == [OTHER]
    assert [(p.path, p.message) for p in store.problems()] == [
        (str(path), "no session_meta line with an id in its first lines")
    ]
    done = sessionref("snapshot", "--root", str(tmp_path), THREAD)
    assert done.returncode == 1
    assert done.stderr.decode().splitlines() == [
        f'SESSION_REFERENCE_READ_FAILED: cannot read session "{THREAD}": {path}: '
        "no session_meta line with an id in its first lines"
    ]


def test_a_rollout_whose_prompt_is_nested_too_deep_is_not_listed(tmp_path: Path) -> None:
    """Its only prompt cannot be read: Codex lists no thread without one (docs/harnesses.md
    §Codex §Listed), which is passed over saying so, and the listing goes on to the others."""
    deep = codex_file(tmp_path)
    with_deep_member(deep, 1)
    codex_file(tmp_path, OTHER)
    store = CodexStore(tmp_path)
    assert [h.id for h in store.headers()] == [OTHER]
    assert [problem.path for problem in store.problems()] == [str(deep)]


def test_an_entry_passed_over_whose_name_is_no_utf8_is_remembered_by_the_index(
    tmp_path: Path,
) -> None:
    """A FIFO named ``\\xff.jsonl`` beside a Claude Code session: the index remembers why it
    was passed over (its message names it, a lone surrogate in its path), which SQLite could
    not take as text: every indexed command was a UnicodeEncodeError traceback. Listed twice,
    the second time from what the index remembered, it is said the same way."""
    root = tmp_path / "home"
    claude_code_file(root)
    fifo = os.path.join(os.fsencode(root / "projects" / "-w"), b"\xff.jsonl")
    os.mkfifo(fifo)
    os.utime(fifo, (1_700_000_000, 1_700_000_000))  # settled: its answer is remembered
    index = str(tmp_path / "index.sqlite")
    given = ["candidates", "--json", "--verbose", "--root", str(root), "--index", index]
    shown = root / "projects" / "-w" / "\\udcff.jsonl"  # stderr escapes what is no UTF-8
    said = f"passed over {shown}: a FIFO in place of a log file"
    for _ in range(2):
        done = sessionref(*given)
        assert done.returncode == 0, done.stderr
        assert [c["sessionId"] for c in json.loads(done.stdout)] == [SESSION]
        assert done.stderr.decode().splitlines() == [said]
