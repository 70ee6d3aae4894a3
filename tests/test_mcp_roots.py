"""``sessionref mcp`` over the roots every command takes (docs/roots.md): a DSH store, a
Claude Code home and a Codex home at once, through the MCP SDK's own client."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.mcp.catalog import template_uri
from tests.mcp_store import write_store
from tests.test_mcp import TIMEOUT, cli, served

CLAUDE = "5e55a000-0000-4000-8000-0000000000c1"
CLAUDE_LATER = "5e55a000-0000-4000-8000-0000000000c2"
CODEX = "0197a000-0000-7000-8000-0000000000aa"
# the project's DSH sessions, the one without a cwd, then the other projects' newest first:
# the Codex one (2025-06-02), the Claude Code one (2025-06-01), s-docs (1970)
LISTED = ["s-auth", "s-old", "s-none", CODEX, CLAUDE, "s-docs"]


def claude_session(home: Path, session_id: str, said: str, day: int) -> None:
    """A Claude Code session of one exchange under ``home/projects/``."""
    stamp = f"2025-06-{day:02}T10:00:00.000Z"
    common = {"sessionId": session_id, "cwd": "/work/app", "isSidechain": False}
    lines = [
        {
            "type": "user",
            "uuid": f"{session_id}-u",
            "parentUuid": None,
            "timestamp": stamp,
            "message": {"role": "user", "content": said},
            **common,
        },
        {
            "type": "assistant",
            "uuid": f"{session_id}-a",
            "parentUuid": f"{session_id}-u",
            "timestamp": stamp,
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "text", "text": "done"}],
            },
            **common,
        },
    ]
    path = home / "projects" / "-work-app" / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def codex_session(home: Path) -> None:
    """A Codex rollout of one exchange under ``home/sessions/YYYY/MM/DD/``."""

    def line(kind: str, payload: dict[str, Any]) -> str:
        return json.dumps(
            {"timestamp": "2025-06-02T10:00:00.000Z", "type": kind, "payload": payload}
        )

    meta = {
        "id": CODEX,
        "timestamp": "2025-06-02T10:00:00.000Z",
        "cwd": "/w",
        "originator": "codex_cli_rs",
        "cli_version": "0.40.0",
    }
    lines = [line("session_meta", meta)]
    for role, kind, event, text in (
        ("user", "input_text", "user_message", "Bump the codex parser"),
        ("assistant", "output_text", "agent_message", "bumped"),
    ):
        item = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
        lines += [line("response_item", item), line("event_msg", {"type": event, "message": text})]
    path = home / "sessions" / "2025" / "06" / "02" / f"rollout-2025-06-02T10-00-00-{CODEX}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(item + "\n" for item in lines))


@pytest.fixture
def roots(tmp_path: Path) -> list[Path]:
    """A DSH store (the server's index and cwd sit beside it), ``~/.claude``, ``~/.codex``."""
    dsh = write_store(tmp_path / "store", tmp_path / "project")
    claude_session(tmp_path / "claude", CLAUDE, "Fix the flaky login test", 1)
    codex_session(tmp_path / "codex")
    return [dsh, tmp_path / "claude", tmp_path / "codex"]


def command(roots: list[Path], *options: str) -> list[str]:
    given = [arg for root in roots for arg in ("--root", str(root))]
    return [sys.executable, "-m", "sessionref", "mcp", *given, *options]


def snapshot_prompt(roots: list[Path], session_id: str) -> str:
    """What ``sessionref snapshot --json --label-from title`` gives, with the same roots."""
    given = [arg for root in roots for arg in ("--root", str(root))]
    done = cli("snapshot", *given, "--json", "--label-from", "title", session_id)
    assert done.returncode == 0, done.stderr
    text: str = json.loads(done.stdout)["content"][0]["text"]
    return text


def test_every_roots_sessions_are_listed_read_and_completed(roots: list[Path]) -> None:
    async def scenario() -> tuple[Any, ...]:
        async with served(roots[0], command=command(roots)) as session:
            listed = await session.list_resources()
            claude = await session.read_resource(encode_session_reference_uri(CLAUDE))
            codex = await session.read_resource(encode_session_reference_uri(CODEX))
            reference = types.ResourceTemplateReference(uri="sessionref:session/{id}")
            found = await session.complete(reference, {"name": "id", "value": "FLAKY"})
            return listed, claude, codex, found

    listed, claude, codex, found = anyio.run(scenario)
    assert [r.uri for r in listed.resources] == [encode_session_reference_uri(i) for i in LISTED]
    by_uri = {r.uri: r for r in listed.resources}
    claude_resource = by_uri[encode_session_reference_uri(CLAUDE)]
    assert claude_resource.name == "Fix the flaky login test"
    assert claude_resource.description == "/work/app · claude-code · 2025-06-01 10:00 UTC"
    assert by_uri[encode_session_reference_uri(CODEX)].description.startswith("/w · codex · ")
    assert by_uri[encode_session_reference_uri("s-auth")].description.split(" · ")[1] == "dsh"
    assert claude.contents[0].text == snapshot_prompt(roots, CLAUDE)
    assert '"harness":"claude-code"' in claude.contents[0].text
    assert codex.contents[0].text == snapshot_prompt(roots, CODEX)
    assert found.completion.values == [CLAUDE]


def test_the_tools_reach_every_root_and_search_every_one(roots: list[Path]) -> None:
    async def scenario() -> tuple[Any, ...]:
        async with served(roots[0], command=command(roots, "--tools")) as session:
            listed = await session.call_tool("list_sessions", {"query": "codex"})
            mention = listed.structured_content["sessions"][0]["mention"]
            referenced = await session.call_tool("reference_sessions", {"sessions": [mention]})
            searched = await session.call_tool("search_sessions", {"query": "token refresh"})
            others = [
                await session.call_tool("search_sessions", {"query": query})
                for query in ("flaky login", "codex parser")
            ]
            return listed, referenced, searched, others

    listed, referenced, searched, others = anyio.run(scenario)
    found = [[h["sessionId"] for h in hits.structured_content["hits"]] for hits in others]
    assert found == [[CLAUDE], [CODEX]]
    assert [s["sessionId"] for s in listed.structured_content["sessions"]] == [CODEX]
    assert listed.structured_content["sessions"][0]["harness"] == "codex"
    assert referenced.is_error is False
    assert referenced.content[0].text == snapshot_prompt(roots, CODEX)
    assert [h["sessionId"] for h in searched.structured_content["hits"]] == ["s-auth"]


def test_listed_sessions_carry_their_harness_as_candidates_json_does(roots: list[Path]) -> None:
    async def scenario() -> Any:
        async with served(roots[0], command=command(roots, "--tools")) as session:
            return await session.call_tool(
                "list_sessions", {"cwd": str(roots[0].parent / "project")}
            )

    listed = anyio.run(scenario)
    harnesses = {"s-auth": "dsh", "s-old": "dsh", "s-none": "dsh", "s-docs": "dsh"}
    harnesses |= {CLAUDE: "claude-code", CODEX: "codex"}
    sessions = listed.structured_content["sessions"]
    assert [(s["sessionId"], s["harness"]) for s in sessions] == [(i, harnesses[i]) for i in LISTED]
    given = [arg for root in roots for arg in ("--root", str(root))]
    done = cli("candidates", *given, "--cwd", str(roots[0].parent / "project"), "--json")
    assert json.loads(listed.content[0].text) == sessions == json.loads(done.stdout)


def test_roots_come_from_the_environment_as_for_every_command(roots: list[Path]) -> None:
    env = {"SESSIONREF_ROOT": os.pathsep.join(str(root) for root in roots[1:])}

    async def scenario() -> list[str]:
        argv = [sys.executable, "-m", "sessionref", "mcp"]
        async with served(roots[0], command=argv, env=env) as session:
            return [r.uri for r in (await session.list_resources()).resources]

    assert anyio.run(scenario) == [encode_session_reference_uri(i) for i in (CODEX, CLAUDE)]


def test_a_claude_code_session_added_while_serving_is_notified_and_listed(
    roots: list[Path],
) -> None:
    async def scenario() -> tuple[list[str], list[str], list[Any]]:
        seen: list[Any] = []
        async with served(roots[0], command=command(roots), seen=seen) as session:
            before = [r.uri for r in (await session.list_resources()).resources]
            claude_session(roots[1], CLAUDE_LATER, "Later work", 3)
            with anyio.fail_after(TIMEOUT):
                while not any(isinstance(m, types.ResourceListChangedNotification) for m in seen):
                    await anyio.sleep(0.05)
            after = [r.uri for r in (await session.list_resources()).resources]
            return before, after, seen

    before, after, _ = anyio.run(scenario)
    assert encode_session_reference_uri(CLAUDE_LATER) not in before
    assert after[3] == encode_session_reference_uri(CLAUDE_LATER)  # the newest other project's


def test_a_session_the_listing_passed_over_fails_as_on_the_command_line(tmp_path: Path) -> None:
    """A tester's trial: a Claude Code session id in two project directories, and a directory
    in place of a log, read over MCP said 'session "s1" not found … 2 logs passed over' where
    ``sessionref snapshot`` says why the session cannot be read, naming its log."""
    home = tmp_path / "claude"
    (tmp_path / "project").mkdir()
    claude_session(home, CLAUDE, "Fix the flaky login test", 1)
    first, second = (home / "projects" / name / "s1.jsonl" for name in ("-a", "-b"))
    for path in (first, second):
        path.parent.mkdir(parents=True)
        path.write_bytes((home / "projects" / "-work-app" / f"{CLAUDE}.jsonl").read_bytes())
    (home / "projects" / "-a" / "s2.jsonl").mkdir()

    named = ("s1", "s2", "../-a/s1")
    # the first two exist and cannot be read (the spec's internal error); the last names none
    codes = {"s1": -32603, "s2": -32603, "../-a/s1": -32002}

    async def scenario() -> list[str]:
        messages = []
        async with served(home, "--tools") as session:
            for session_id in named:
                with pytest.raises(MCPError) as raised:
                    await session.read_resource(template_uri(session_id))
                assert raised.value.error.code == codes[session_id]
                tool = await session.call_tool("reference_sessions", {"sessions": [session_id]})
                assert tool.is_error and tool.content[0].text == raised.value.error.message
                messages.append(raised.value.error.message)
        return messages

    lines = [cli("snapshot", "--root", str(home), i).stderr.strip() for i in named]
    failed = "SESSION_REFERENCE_READ_FAILED:"
    directory = first.parent / "s2.jsonl"
    assert lines == [
        f'{failed} cannot read session "s1": {first}: session "s1" is also in {second}',
        f'{failed} cannot read session "s2": {directory}: a directory in place of a log file',
        f'{failed} session "../-a/s1" not found in --root {home}; '
        "3 logs passed over (--verbose lists them)",
    ]
    assert anyio.run(scenario) == lines


def test_completion_gives_each_id_once_and_only_for_the_templates_argument(
    tmp_path: Path,
) -> None:
    """A tester's trial: an id in two roots was completed twice, and an argument the
    template does not have (``other``) was completed as if it were ``id``."""
    both = [write_store(tmp_path / name, tmp_path / "project") for name in ("store", "copy")]
    reference = types.ResourceTemplateReference(uri="sessionref:session/{id}")

    async def scenario() -> tuple[list[str], list[str], list[str]]:
        async with served(both[0], command=command(both)) as session:
            listed = [r.uri for r in (await session.list_resources()).resources]
            found = await session.complete(reference, {"name": "id", "value": "auth"})
            other = await session.complete(reference, {"name": "other", "value": ""})
            return listed, found.completion.values, other.completion.values

    listed, found, other = anyio.run(scenario)
    assert listed.count(encode_session_reference_uri("s-auth")) == 2  # listed in each root
    assert (found, other) == (["s-auth", "s-old"], [])
