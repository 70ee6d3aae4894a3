"""A session file that is there but empty, named by its session's id.

A newcomer's trial: a Claude Code ``<uuid>.jsonl`` of 0 bytes, referenced by its id, was
"session not found", with the file right there. Each harness keeps its rules for such a file
(docs/harnesses.md, docs/format.md): Claude Code lists no session from it and it is no
problem; a Codex rollout without a ``session_meta`` and a DSH log without a header line are
problems of the listing. Referenced by id, each is ``READ_FAILED`` (the code stays), and the
message names the file and says it is empty.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionref.cli import main
from sessionref.cli.common import OpenStore
from sessionref.mcp.catalog import Catalog, index_at
from sessionref.mcp.tools import Toolbox

THREAD = "0e9b7a1c-1111-4222-8333-444455556666"
EMPTY = "the file is empty (0 bytes)"


def empty_file(root: Path, harness: str) -> tuple[Path, str]:
    """A root of ``harness`` holding one session file of 0 bytes: the file and its id."""
    if harness == "claude-code":
        path = root / "projects" / "-w" / f"{THREAD}.jsonl"
    elif harness == "codex":
        path = (
            root / "sessions" / "2025" / "01" / "02" / f"rollout-2025-01-02T03-04-05-{THREAD}.jsonl"
        )
    else:
        name = "session.jsonl.zstd" if harness == "dsh-zstd" else "session.jsonl"
        path = root / "--w--" / "s-empty" / name
    path.parent.mkdir(parents=True)
    path.touch()
    return path, THREAD if harness in ("claude-code", "codex") else "s-empty"


HARNESSES = ["claude-code", "codex", "dsh", "dsh-zstd"]


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("command", ["snapshot", "export", "show"])
def test_an_empty_session_file_named_by_its_id_is_said_to_be_empty(
    harness: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, session_id = empty_file(tmp_path / "root", harness)
    assert main([command, "--root", str(tmp_path / "root"), session_id]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("SESSION_REFERENCE_READ_FAILED: ")
    assert f"{path}: {EMPTY}" in line or f"{path} was passed over: {EMPTY}" in line


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_listing_keeps_its_rules_for_an_empty_file(
    harness: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Claude Code does not list an empty file and it is no problem; Codex and DSH pass it
    over as a problem, now saying why."""
    path, _ = empty_file(tmp_path / "root", harness)
    assert main(["candidates", "--root", str(tmp_path / "root"), "--verbose"]) == 0
    passed = [line for line in capsys.readouterr().err.splitlines() if line.startswith("passed")]
    expected = [] if harness == "claude-code" else [f"passed over {path}: {EMPTY}"]
    assert passed == expected


@pytest.mark.parametrize("indexed", [False, True])
@pytest.mark.parametrize("harness", HARNESSES)
def test_the_mcp_tool_says_the_file_is_empty(harness: str, indexed: bool, tmp_path: Path) -> None:
    path, session_id = empty_file(tmp_path / "root", harness)
    lister = index_at(tmp_path / "index.sqlite") if indexed else None
    opened = OpenStore(tmp_path / "root", lister=lister, live=True)
    toolbox = Toolbox(Catalog(opened, cwd="/w", max_bytes=65536))
    answer = toolbox.call("reference_sessions", {"sessions": [session_id]}, None)
    assert answer.is_error
    assert answer.text.startswith("SESSION_REFERENCE_READ_FAILED: ")
    assert f"{path}: {EMPTY}" in answer.text or f"{path} was passed over: {EMPTY}" in answer.text


def test_only_a_plain_file_name_is_looked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An id that is a path to the empty file is no session id: it is not found."""
    empty_file(tmp_path / "root", "claude-code")
    for session_id in (f"../-w/{THREAD}", f"-w/{THREAD}"):
        assert main(["snapshot", "--root", str(tmp_path / "root"), "--", session_id]) == 1
        [line] = capsys.readouterr().err.splitlines()
        assert line == (
            f'SESSION_REFERENCE_READ_FAILED: session "{session_id}" not found in --root '
            f"{tmp_path / 'root'}"
        )
