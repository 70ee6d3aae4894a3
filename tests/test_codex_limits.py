"""A Codex head scan under a read limit (docs/harnesses.md §Codex §Listed): the scan reads a
rollout's text as far as Codex's listing reads it, and where that goes past the store's
``max_bytes`` (``--max-log-bytes``) the listing cannot tell whether Codex shows the thread.
The rollout is then a problem naming the file and the limit, never a thread hidden for want
of a user message that lies past the limit (a tester's find: ``--max-log-bytes 70000`` said
"its head holds no user message" of a thread whose prompt sat at byte 75,000)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from sessionref.cli import main
from sessionref.codex.store import CodexStore
from sessionref.mcp.catalog import template_uri
from tests.test_codex import THREAD, line, meta, rollout
from tests.test_codex_listed import ROLLOUT, asked
from tests.test_codex_references import LIVE, SEGMENTS, reference, segment, segment_path
from tests.test_mcp import served

FILLER = line("turn_context", {"x": "y" * 1000})
"""A line the head scan counts and that says nothing (1,058 bytes with its newline)."""
LOW = 70_000
"""A limit below the prompt of :func:`prompted_late`, above its 64 KiB head."""
PAST = "goes on past the limit of 70000 bytes before Codex's listing can tell whether it shows"


def prompted_late(*after: bytes) -> bytes:
    """A rollout whose prompt lies past 80 lines of filler (at byte 85,000 or so): past the
    64 KiB head the listing reads first, and past :data:`LOW`; then ``after``."""
    return rollout(meta(), *[FILLER] * 80, asked("fix the build"), *after)


def write(home: Path, relative: str, data: bytes) -> Path:
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_a_scan_cut_by_the_limit_names_the_file_and_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The store's problem, ``-v`` with and without the index, the index's note, ``snapshot``
    and an MCP read all say the limit, and none says the head holds no user message."""
    home = tmp_path / "home"
    path = write(home, ROLLOUT, prompted_late())
    assert len(rollout(meta(), *[FILLER] * 80)) > LOW  # the prompt is past the limit
    store = CodexStore(home, max_bytes=LOW)
    assert store.headers() == []
    [problem] = store.problems()
    assert problem.path == str(path)
    assert problem.message == f"its head {PAST} the thread"
    limit = ["--max-log-bytes", str(LOW)]
    for index in (["--index", str(tmp_path / "index.db")], ["--no-index"]):
        for _ in range(2):  # the index built, then warm
            assert main(["candidates", "--root", str(home), *index, *limit, "-v"]) == 0
            err = capsys.readouterr().err.splitlines()
            assert err[0] == f"passed over {path}: its head {PAST} the thread"
    assert main(["snapshot", "--root", str(home), *limit, THREAD]) == 1
    [failed] = capsys.readouterr().err.splitlines()
    expected = f'cannot read session "{THREAD}": {path}: its head {PAST} the thread'
    assert failed == f"SESSION_REFERENCE_READ_FAILED: {expected}"
    assert "no user message" not in failed

    async def read() -> str:
        (tmp_path / "project").mkdir()
        async with served(home, *limit) as session:
            with pytest.raises(MCPError) as raised:
                await session.read_resource(template_uri(THREAD))
            return raised.value.error.message

    assert anyio.run(read) == failed
    # under a limit the scan stays within, the thread lists as Codex lists it
    assert [h.id for h in CodexStore(home, max_bytes=1 << 20).headers()] == [THREAD]


def test_a_scan_done_before_the_limit_lists_the_thread(tmp_path: Path) -> None:
    """The scan stops once it has what Codex looks for (a meta, a preview, a first user
    message), so text past the limit after that is not read and the thread lists; reading it
    whole then fails on the limit, as any rollout over it does."""
    home = tmp_path / "home"
    path = write(home, ROLLOUT, prompted_late(*[FILLER] * 40))
    limit = len(prompted_late()) + 10  # the prompt within, the rest of the file past
    assert path.stat().st_size > limit
    store = CodexStore(home, max_bytes=limit)
    assert [h.id for h in store.headers()] == [THREAD]
    assert store.problems() == []
    with pytest.raises(Exception, match=f"over the limit of {limit}"):
        store.transcript(THREAD)


def test_a_referred_rollout_cut_by_the_limit_is_named(tmp_path: Path) -> None:
    """A live rollout whose prompt is in the segment its head refers to: the segment's text
    past the limit is not taken for an empty head (as Codex takes one it cannot read), the
    problem names the segment and the limit."""
    home = tmp_path / "home"
    frozen = write(
        home,
        segment_path(SEGMENTS[1]),
        segment(1, *[FILLER] * 80, asked("from a segment")),
    )
    path = write(home, LIVE, rollout(meta(), reference(frozen, SEGMENTS[1])))
    assert [h.id for h in CodexStore(home).headers()] == [THREAD]
    store = CodexStore(home, max_bytes=LOW)
    assert store.headers() == []
    [problem] = store.problems()
    assert problem.path == str(path)
    assert problem.message == f"the rollout its head refers to, {frozen}, {PAST} the thread"
