"""``sessionref mcp`` as a client starts it: the MCP SDK's own client (``ClientSession`` over
``stdio_client``) talking to ``python -m sessionref mcp`` in a subprocess."""

from __future__ import annotations

import builtins
import importlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final, cast

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from sessionref.cli.common import OpenStore
from sessionref.cli.process import Terminated
from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.mcp import wire
from sessionref.mcp.catalog import TEMPLATE, Catalog, index_at, template_uri
from sessionref.mcp.server import serve_lines
from sessionref.testing import write_session_store
from tests.conftest import run_script
from tests.mcp_store import LISTED, session_log, write_store
from tests.test_api_titles import WRITTEN_TITLES, written_root  # noqa: F401  # a fixture

REPO = Path(__file__).resolve().parent.parent
ENV = {"PYTHONPATH": str(REPO)}
TIMEOUT = 60


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return write_store(tmp_path / "store", tmp_path / "project")


def server_parameters(
    root: Path,
    *options: str,
    command: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> Any:
    argv = command or [sys.executable, "-m", "sessionref", "mcp", "--root", str(root)]
    index = ["--index", f"{root.parent / 'indexes'}/"]  # a folder: one database per root
    return StdioServerParameters(
        command=argv[0],
        args=[*argv[1:], *index, *options],
        env={**ENV, **(env or {})},
        cwd=root.parent / "project",
    )


@asynccontextmanager
async def served(
    root: Path,
    *options: str,
    command: list[str] | None = None,
    seen: list[Any] | None = None,
    env: dict[str, str] | None = None,
    modern: bool = False,
) -> AsyncIterator[ClientSession]:
    """An initialized client of ``sessionref mcp`` (``seen`` collects what the server
    sends that is no answer; ``env`` is added to the server's environment; ``modern``: a
    2026-07-28 connection, by ``server/discover``, instead of the ``initialize`` handshake)."""

    async def handler(message: IncomingMessage) -> None:
        if seen is not None:
            seen.append(message)

    parameters = server_parameters(root, *options, command=command, env=env)
    with (root.parent / "server.log").open("w") as errlog:
        async with (
            stdio_client(parameters, errlog) as (read, write),
            ClientSession(read, write, message_handler=handler) as session,
        ):
            with anyio.fail_after(TIMEOUT):
                await (session.discover() if modern else session.initialize())
            yield session


def listed_and_read(root: Path, session_id: str) -> tuple[types.ListResourcesResult, str]:
    """What a client of ``sessionref mcp`` over ``root`` lists, and the text it reads of the
    resource of ``session_id``."""

    async def scenario() -> tuple[types.ListResourcesResult, str]:
        async with served(root) as session:
            listed = await session.list_resources()
            read = await session.read_resource(encode_session_reference_uri(session_id))
            return listed, cast(types.TextResourceContents, read.contents[0]).text

    return anyio.run(scenario)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "sessionref", *args]
    return subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **ENV})


def snapshot_prompt(root: Path, session_id: str) -> str:
    """What ``sessionref snapshot --json --label-from title`` puts in its context message."""
    done = cli("snapshot", "--root", str(root), "--json", "--label-from", "title", session_id)
    assert done.returncode == 0, done.stderr
    text: str = json.loads(done.stdout)["content"][0]["text"]
    return text


def test_resources_are_listed_read_and_found_by_completion(store: Path) -> None:
    async def scenario() -> tuple[Any, ...]:
        async with served(store) as session:
            listed = await session.list_resources()
            read = await session.read_resource(listed.resources[0].uri)
            templates = await session.list_resource_templates()
            reference = types.ResourceTemplateReference(uri=TEMPLATE)
            found = await session.complete(reference, {"name": "id", "value": "auth"})
            by_id = await session.read_resource(template_uri(found.completion.values[-1]))
            return listed, read, templates, found, by_id, session.server_capabilities

    listed, read, templates, found, by_id, capabilities = anyio.run(scenario)
    assert capabilities.resources.list_changed is True
    assert capabilities.tools is None  # tools only with --tools
    assert [r.uri for r in listed.resources] == [encode_session_reference_uri(i) for i in LISTED]
    # the title is what a picker shows (the spec's display field), the name what an older one does
    assert listed.resources[0].name == listed.resources[0].title == "Auth refactor"
    assert listed.resources[0].mime_type == "text/plain"
    assert listed.resources[0].description.startswith(f"{store.parent / 'project'} · dsh · ")
    [contents] = read.contents
    assert contents.text == snapshot_prompt(store, "s-auth")
    assert [t.uri_template for t in templates.resource_templates] == [TEMPLATE]
    assert found.completion.values == ["s-auth", "s-old"]
    assert by_id.contents[0].text == snapshot_prompt(store, "s-old")


def test_a_bad_uri_is_an_error_and_the_server_goes_on(store: Path) -> None:
    async def scenario() -> tuple[list[MCPError], int]:
        errors = []
        async with served(store) as session:
            for uri in ("file:///etc/passwd", "dsh-session:!!", encode_session_reference_uri("x")):
                with pytest.raises(MCPError) as raised:
                    await session.read_resource(uri)
                errors.append(raised.value)
            return errors, len((await session.list_resources()).resources)

    (foreign, malformed, missing), count = anyio.run(scenario)
    assert foreign.code == malformed.code == types.INVALID_PARAMS
    assert (
        foreign.message
        == 'SESSION_REFERENCE_INVALID_REFERENCE: not a session URI: "file:///etc/passwd"'
    )
    assert missing.code == -32002
    line = cli("snapshot", "--root", str(store), "x").stderr.strip()
    assert (
        missing.message
        == line
        == f'SESSION_REFERENCE_READ_FAILED: session "x" not found in --root {store}'
    )
    assert count == 4


@pytest.mark.parametrize(("modern", "code"), [(False, -32002), (True, types.INVALID_PARAMS)])
def test_a_missing_session_is_the_resource_not_found_error_of_the_connections_version(
    store: Path, modern: bool, code: int
) -> None:
    """A tester's trial: over a 2026-07-28 connection a session the roots do not hold was
    ``-32002``, which SEP-2164 replaced with ``-32602`` (invalid params) from that version on;
    both versions' errors carry the URI as their data, as the specification's example has it."""
    uri = encode_session_reference_uri("x")

    async def scenario() -> tuple[MCPError, str | None]:
        async with served(store, modern=modern) as session:
            with pytest.raises(MCPError) as raised:
                await session.read_resource(uri)
            return raised.value, session.protocol_version

    error, version = anyio.run(scenario)
    assert version == ("2026-07-28" if modern else "2025-11-25")
    assert (error.code, error.error.data) == (code, {"uri": uri})
    assert error.message.startswith('SESSION_REFERENCE_READ_FAILED: session "x" not found')


@pytest.mark.parametrize("modern", [False, True])
def test_a_listed_session_whose_log_cannot_be_read_is_an_internal_error(
    store: Path, modern: bool
) -> None:
    """A session the server lists but whose log does not parse was ``-32002``, the code of a
    resource that does not exist, on either version. Its resource exists: both versions of
    the specification's resources page give ``-32603`` (internal error) for such a failure
    and keep the not-found code (``-32002``, ``-32602`` since SEP-2164) for a URI naming
    nothing; the message is still the command line's line."""
    (log,) = store.glob("*/s-auth/session.jsonl")
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join([*lines[:2], b"not json\n", *lines[2:]]))  # before turn/end
    uri = encode_session_reference_uri("s-auth")

    async def scenario() -> tuple[list[str], MCPError]:
        async with served(store, modern=modern) as session:
            listed = [str(r.uri) for r in (await session.list_resources()).resources]
            with pytest.raises(MCPError) as raised:
                await session.read_resource(uri)
            return listed, raised.value

    listed, error = anyio.run(scenario)
    assert uri in listed
    assert error.code == -32603
    line = cli("snapshot", "--root", str(store), "s-auth").stderr.strip()
    assert line.startswith('SESSION_REFERENCE_READ_FAILED: cannot read session "s-auth"')
    assert error.message == line


def test_tools_only_with_the_option(store: Path) -> None:
    async def scenario() -> tuple[Any, ...]:
        async with served(store, "--tools") as session:
            names = [tool.name for tool in (await session.list_tools()).tools]
            listed = await session.call_tool("list_sessions", {"query": "auth"})
            hits = await session.call_tool("search_sessions", {"query": "toggle"})
            mention = hits.structured_content["hits"][0]["mention"]
            referenced = await session.call_tool("reference_sessions", {"sessions": [mention]})
            missing = await session.call_tool("reference_sessions", {"sessions": ["nope"]})
            return names, listed, hits, referenced, missing

    names, listed, hits, referenced, missing = anyio.run(scenario)
    assert names == ["list_sessions", "search_sessions", "reference_sessions"]
    assert [s["sessionId"] for s in listed.structured_content["sessions"]] == ["s-auth", "s-old"]
    assert json.loads(listed.content[0].text) == listed.structured_content["sessions"]
    [hit] = hits.structured_content["hits"]
    assert (hit["sessionId"], hit["snippet"]) == ("s-docs", "add a dark mode «toggle»")
    assert hit["mention"] == f"@[Docs: dark mode]({encode_session_reference_uri('s-docs')})"
    assert not referenced.is_error
    assert referenced.content[0].text == snapshot_prompt(store, "s-docs")
    assert missing.is_error
    assert missing.content[0].text == cli("snapshot", "--root", str(store), "nope").stderr.strip()


def test_structured_content_writes_a_title_as_the_text_does(
    written_root: Path,  # noqa: F811  # the fixture imported
) -> None:
    """A title the log holds as ``1.0`` came back in ``structuredContent`` as ``1.0``, where
    the text (as the real stack's listing) has ``1``."""
    (written_root.parent / "project").mkdir()

    async def scenario() -> types.CallToolResult:
        async with served(written_root, "--tools") as session:
            return await session.call_tool("list_sessions", {"cwd": "/w", "limit": 50})

    listed = anyio.run(scenario)
    structured = {s["sessionId"]: s["label"] for s in listed.structured_content["sessions"]}
    texts = {s["sessionId"]: s["label"] for s in json.loads(listed.content[0].text)}
    for session_id, (_, written) in WRITTEN_TITLES.items():
        wanted = json.dumps(json.loads(written))  # 1 stays 1; 1.0 would be written 1.0
        assert json.dumps(structured[session_id]) == json.dumps(texts[session_id]) == wanted


def test_a_cancelled_read_leaves_the_server_answering(store: Path) -> None:
    async def scenario() -> int:
        async with served(store) as session:
            with anyio.move_on_after(0.01):  # given up: the client sends a cancel
                await session.read_resource(encode_session_reference_uri("s-auth"))
            return len((await session.list_resources()).resources)

    assert anyio.run(scenario) == 4


def test_a_session_added_while_serving_is_notified_and_listed(store: Path) -> None:
    seen: list[Any] = []

    async def scenario() -> list[str]:
        async with served(store, seen=seen) as session:
            assert len((await session.list_resources()).resources) == 4
            write_session_store(store, [session_log("s-new", 9000, None, "Fresh", "hello")])
            with anyio.fail_after(TIMEOUT):
                while not any(isinstance(m, types.ResourceListChangedNotification) for m in seen):
                    await anyio.sleep(0.05)
            return [r.name for r in (await session.list_resources()).resources]

    names = anyio.run(scenario)
    assert names == ["Auth refactor", "Old AUTH notes", "Fresh", "s-none", "Docs: dark mode"]


HELLO: Final = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
).encode()
"""A client's first request, as a line of JSON-RPC."""


def raw_server(root: Path, *options: str) -> subprocess.Popen[bytes]:
    """``sessionref mcp`` over ``root`` (with ``options``) in a process group of its own, its
    pipes ours."""
    params = server_parameters(root, *options)
    return subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **ENV},
        cwd=params.cwd,
        start_new_session=True,
    )


def exchange(root: Path, lines: list[bytes], answers: int) -> list[Any]:
    """:func:`exchanged_lines`, each answer parsed."""
    return [json.loads(line) for line in exchanged_lines(root, lines, answers)]


def exchanged_lines(root: Path, lines: list[bytes], answers: int, *options: str) -> list[bytes]:
    """Send ``lines`` to ``sessionref mcp OPTIONS`` over ``root``, read ``answers`` lines back
    as bytes, end its input and see it exit 0; an answer that never comes fails the test (the
    server is killed after :data:`TIMEOUT`)."""
    server = raw_server(root, *options)
    assert server.stdin is not None and server.stdout is not None
    watchdog = threading.Timer(TIMEOUT, server.kill)
    watchdog.start()
    try:
        server.stdin.write(b"".join(line + b"\n" for line in lines))
        server.stdin.flush()
        read = [server.stdout.readline() for _ in range(answers)]
        server.stdin.close()  # after the answers: the input's end stops the server
        assert server.wait(TIMEOUT) == 0
    finally:
        watchdog.cancel()
    return read


def after_hello(answers: list[Any]) -> list[Any]:
    """The answers but the one to :data:`HELLO`, in the order they came: an answer to a line
    that is no message goes out at once, so it may come before that one (a request is
    answered by the server, in its own time)."""
    [hello] = [answer for answer in answers if answer.get("id") == 1]
    assert hello["result"]["serverInfo"]["name"] == "sessionref"
    return [answer for answer in answers if answer is not hello]


def test_the_server_ends_with_its_input_and_leaves_no_process(store: Path) -> None:
    server = raw_server(store)
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(HELLO + b"\n")
    server.stdin.flush()
    answer = json.loads(server.stdout.readline())
    assert answer["result"]["serverInfo"]["name"] == "sessionref"
    server.stdin.close()
    assert server.wait(TIMEOUT) == 0
    time.sleep(0.1)
    with pytest.raises(ProcessLookupError):
        os.killpg(server.pid, 0)  # nothing is left of its process group


def test_a_client_that_closes_the_servers_output_ends_it_quietly(store: Path) -> None:
    """A client gone mid-conversation (its end of stdout closed, then its input): the server
    ends as any command on a closed stdout does, status 0 and nothing on stderr, not with an
    exception group's traceback."""
    server = raw_server(store)
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(HELLO + b"\n")
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["result"]["serverInfo"]["name"] == "sessionref"
    server.stdout.close()
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    server.stdin.write(json.dumps(ping).encode() + b"\n")
    server.stdin.flush()
    server.stdin.close()
    assert server.wait(TIMEOUT) == 0
    assert server.stderr is not None and server.stderr.read() == b""


def base_exception_group(message: str, members: list[BaseException]) -> BaseException:
    """A ``BaseExceptionGroup`` (Python 3.11's, or the backport anyio uses before it)."""
    kind = getattr(builtins, "BaseExceptionGroup", None)
    if kind is None:
        kind = importlib.import_module("exceptiongroup").BaseExceptionGroup
    return cast(BaseException, kind(message, members))


@pytest.mark.parametrize("signal_kind", [KeyboardInterrupt, Terminated])
def test_a_signal_a_task_group_gathered_ends_the_server_as_the_signal(
    signal_kind: type[KeyboardInterrupt],
) -> None:
    """The README's test command once saw the server end with status 1 on SIGINT, where 130
    is every command's (not reproduced in 90 stressed runs): a signal that lands in one of
    the server's tasks may come out of ``anyio.run`` gathered in the task group's exception
    group, which no handler of a signal catches (a traceback, status 1). It is the signal
    itself that ends the server, as it ends any command."""

    async def main() -> None:
        raise base_exception_group("unhandled errors in a TaskGroup", [signal_kind()])

    with pytest.raises(signal_kind) as raised:
        wire.run_served(main)
    assert type(raised.value) is signal_kind


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_ends_the_server_while_its_input_is_open(
    store: Path, signum: int, status: int
) -> None:
    """The MCP spec has a client end a stdio server with SIGTERM: the server hung, its
    input still open, as the thread blocked reading it was joined at exit. It ends with the
    status of the signal, as every command does, and no traceback."""
    server = raw_server(store)
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(HELLO + b"\n")
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        server.send_signal(signum)
        ended = server.wait(TIMEOUT)
        assert server.stderr is not None
        said = server.stderr.read()
        assert (ended, b"Traceback" in said) == (status, False), said
    finally:
        server.kill()
        server.wait()


def test_a_line_that_is_no_message_is_answered_and_the_server_goes_on(store: Path) -> None:
    # Found by a newcomer's trial: the SDK's stdio transport answered nothing to a line it
    # could not read. JSON-RPC 2.0 asks for an error with a null id: -32700 for text that
    # is not JSON, -32600 for JSON that is no message.
    first, second, third = exchange(store, [b"garbage", b"[1,2]", HELLO], 3)
    parse_error = {"code": -32700, "message": "Parse error"}
    assert first == {"jsonrpc": "2.0", "id": None, "error": parse_error}
    invalid = {"code": -32600, "message": "Invalid Request"}
    assert second == {"jsonrpc": "2.0", "id": None, "error": invalid}
    assert third["id"] == 1 and third["result"]["serverInfo"]["name"] == "sessionref"


def test_a_request_with_a_lone_surrogate_escape_is_answered(store: Path) -> None:
    """A newcomer's trial: the SDK's stdio reader refuses ``"\\ud83d"`` (its JSON parser
    wants well-formed text), so the request was answered as a parse error with a null id and
    the client waited for its own answer forever. ``JSON.parse`` reads such a line."""
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    complete = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "completion/complete",
        "params": {
            "ref": {"type": "ref/resource", "uri": "sessionref:session/{id}"},
            "argument": {"name": "id", "value": "\ud83d"},
        },
    }
    lines = [HELLO, json.dumps(initialized).encode(), json.dumps(complete).encode()]
    answers = exchange(store, lines, 2)
    assert answers[1]["id"] == 2 and answers[1]["result"]["completion"]["values"] == []


def test_a_line_nested_too_deeply_is_a_parse_error_and_the_server_goes_on(store: Path) -> None:
    """A review of the change above: a line nested deeper than Python's parser goes (5,000
    arrays) made reading it again raise RecursionError, and the server died unanswering."""
    deep = b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"q":' + b"[" * 5000
    ping = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}).encode()
    answers = exchange(store, [HELLO, deep + b"]" * 5000 + b"}}", ping], 3)
    assert after_hello(answers) == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        {"jsonrpc": "2.0", "id": 3, "result": {}},
    ]


def test_a_malformed_request_is_answered_with_its_id_if_it_has_one_mcp_takes(
    store: Path,
) -> None:
    """A tester's trial: a request with bad params or method was answered with a null id
    although its id was an integer, and one whose id was null, 1.5, true or an object was
    taken for a notification and answered nothing. MCP takes string and integer ids."""
    requests: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 3, "method": "resources/list", "params": [1]},
        {"jsonrpc": "2.0", "id": "four", "method": "ping", "params": "x"},
        {"jsonrpc": "2.0", "id": 5, "method": 7},
        *({"jsonrpc": "2.0", "id": bad, "method": "ping"} for bad in (None, 1.5, True, {})),
    ]
    escaped = b'{"jsonrpc":"2.0","\\u0069d":2.5,"method":"ping"}'  # the key "id", escaped
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    lines = [HELLO, *(json.dumps(r).encode() for r in [*requests, initialized]), escaped]
    answers = exchange(store, [*lines, json.dumps(ping).encode()], 10)
    invalid = {"code": -32600, "message": "Invalid Request"}
    assert after_hello(answers) == [
        *({"jsonrpc": "2.0", "id": given, "error": invalid} for given in (3, "four", 5)),
        *({"jsonrpc": "2.0", "id": None, "error": invalid} for _ in range(5)),
        {"jsonrpc": "2.0", "id": 9, "result": {}},  # the notification was no request
    ]


def test_a_well_formed_request_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a line the SDK refused, or a notification whose text may hold an ``id``, is read
    again to find what to answer."""
    monkeypatch.setattr(wire, "_json", lambda line: pytest.fail(f"read again: {line}"))
    for line in (json.dumps(json.loads(HELLO)), '{"jsonrpc":"2.0","method":"ping"}'):
        item = SessionMessage(types.jsonrpc_message_adapter.validate_json(line))
        assert wire.read_item(item, line) == (item, False)


@pytest.mark.parametrize("missing", ["mcp", "anyio"])
def test_without_the_sdk_the_command_says_how_to_get_it(
    store: Path, tmp_path: Path, missing: str
) -> None:
    # Without the extra, anyio (the SDK's own dependency, imported first) is missing too: a
    # newcomer's trial found that case printing a traceback.
    shadow = tmp_path / "shadow" / missing
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        f"raise ModuleNotFoundError(\"No module named '{missing}'\", name='{missing}')\n"
    )
    argv = [sys.executable, "-m", "sessionref", "mcp", "--root", str(store)]
    path = os.pathsep.join([str(shadow.parent), str(REPO)])
    done = subprocess.run(
        argv, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path}
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "SESSION_REFERENCE_INVALID_CONFIG: sessionref mcp needs the MCP SDK: "
        'pip install "sessionref[mcp]"\n'
    )


def documented_commands(text: str) -> dict[str, list[str]]:
    """The command lines docs/mcp.md gives for Claude Code, Codex and ``mcpServers``."""
    claude = re.search(r"^claude mcp add .*? -- (.*)$", text, re.M)
    codex = re.search(r'\[mcp_servers\.sessionref\]\ncommand = (".*")\nargs = (\[.*\])', text)
    generic = re.search(r'```json\n(\{\n  "mcpServers".*?)```', text, re.S)
    assert claude is not None and codex is not None and generic is not None
    entry = json.loads(generic.group(1))["mcpServers"]["sessionref"]
    return {
        "claude": shlex.split(claude.group(1)),
        "codex": [json.loads(codex.group(1)), *json.loads(codex.group(2))],
        "mcpServers": [entry["command"], *entry["args"]],
    }


@pytest.mark.parametrize("client", ["claude", "codex", "mcpServers"])
def test_the_documented_set_up_starts_the_server(store: Path, client: str) -> None:
    for page in (REPO / "docs" / "mcp.md", REPO / "README.md"):
        written = documented_commands(page.read_text(encoding="utf-8"))[client]
        assert written[:4] == ["sessionref", "mcp", "--root", "~/.dsh/sessions"], page
    command = [sys.executable, "-m", "sessionref", "mcp", "--root", str(store), *written[4:]]

    async def scenario() -> int:
        async with served(store, command=command) as session:
            return len((await session.list_resources()).resources)

    assert anyio.run(scenario) == 4


def test_no_command_but_mcp_loads_the_sdk() -> None:
    """Every command's options load (as ``sessionref COMMAND --help`` does) without the MCP
    SDK, so the other commands start as fast as before it."""
    code = (
        "import sys; from sessionref.cli.app import build_parser; build_parser(); "
        "print(sorted(n for n in sys.modules if n.split('.')[0] in ('mcp', 'mcp_types', 'anyio')))"
    )
    done = run_script(code, capture_output=True, text=True, env={**os.environ, **ENV})
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


def test_max_bytes_bounds_every_read(store: Path) -> None:
    async def scenario() -> tuple[str, types.CallToolResult, types.CallToolResult]:
        async with served(store, "--max-bytes", "400", "--tools") as session:
            cut = await session.read_resource(encode_session_reference_uri("s-auth"))
            tighter = {"sessions": ["s-auth"], "max_bytes": 100}
            too_small = await session.call_tool("reference_sessions", tighter)
            looser = {"sessions": ["s-auth"], "max_bytes": 401}
            return (
                cut.contents[0].text,
                too_small,
                await session.call_tool("reference_sessions", looser),
            )

    text, too_small, refused = anyio.run(scenario)
    options = ("snapshot", "--root", str(store), "--label-from", "title", "s-auth")
    done = cli(*options, "--json", "--max-bytes", "400")
    assert text == json.loads(done.stdout)["content"][0]["text"]
    line = cli(*options, "--max-bytes", "100").stderr.strip()
    assert line.startswith("SESSION_REFERENCE_BUDGET_EXCEEDED: --max-bytes 100 is too small")
    # the tool names its own argument, not the command line's option
    assert too_small.is_error
    assert too_small.content[0].text == line.replace("--max-bytes 100", "max_bytes 100", 1)
    assert refused.is_error
    assert refused.content[0].text == (
        "SESSION_REFERENCE_INVALID_CONFIG: invalid reference_sessions max_bytes: "
        "401 is greater than the maximum of 400"
    )


def test_a_budget_the_server_set_is_named_as_the_servers(store: Path) -> None:
    """A newcomer's trial: a ``reference_sessions`` call that gave no ``max_bytes`` was told
    that ``--max-bytes`` was too small, an option the tool does not have; the budget was the
    server's, and the message says so, while a resource read (which has no arguments) keeps
    the command line's line."""

    async def scenario() -> tuple[types.CallToolResult, MCPError]:
        async with served(store, "--max-bytes", "100", "--tools") as session:
            called = await session.call_tool("reference_sessions", {"sessions": ["s-auth"]})
            with pytest.raises(MCPError) as raised:
                await session.read_resource(encode_session_reference_uri("s-auth"))
            return called, raised.value

    called, read = anyio.run(scenario)
    options = ("snapshot", "--root", str(store), "--label-from", "title", "s-auth")
    line = cli(*options, "--max-bytes", "100").stderr.strip()
    assert line.startswith("SESSION_REFERENCE_BUDGET_EXCEEDED: --max-bytes 100 is too small")
    assert read.message == line
    assert called.is_error
    assert called.content[0].text == line.replace(
        "--max-bytes 100", "the server's --max-bytes 100", 1
    )


def test_a_lone_surrogate_in_a_title_or_an_id_is_written_well_formed(tmp_path: Path) -> None:
    """A title cut inside an emoji, an id that is no UTF-8: the SDK's stdio writer cannot
    encode them, and the server died with a traceback. Each such string goes out with U+FFFD
    in place of the lone surrogate; the resource's URI still reads its session, completion
    leaves such an id out, and the server goes on."""
    root = tmp_path / "store"
    (tmp_path / "project").mkdir()
    write_session_store(
        root,
        [
            session_log("s-cut", 2000, str(tmp_path / "project"), "split \ud83d emoji", "hi"),
            session_log("s-\udcff", 1000, str(tmp_path / "project"), None, "bytes"),
        ],
    )

    async def scenario() -> tuple[Any, ...]:
        async with served(root, "--tools") as session:
            listed = await session.list_resources()
            reads = [await session.read_resource(r.uri) for r in listed.resources]
            reference = types.ResourceTemplateReference(uri=TEMPLATE)
            found = await session.complete(reference, {"name": "id", "value": "s-"})
            tool = await session.call_tool("list_sessions", {})
            return listed, reads, found, tool, await session.send_ping()

    listed, reads, found, tool, _ = anyio.run(scenario)
    assert [(r.name, r.uri) for r in listed.resources] == [
        ("split \ufffd emoji", encode_session_reference_uri("s-cut")),
        ("s-\ufffd", encode_session_reference_uri("s-\udcff")),
    ]
    assert [read.contents[0].text for read in reads] == [
        snapshot_prompt(root, "s-cut"),
        snapshot_prompt(root, encode_session_reference_uri("s-\udcff")),
    ]
    assert found.completion.values == ["s-cut"]  # no text the client sends back holds "s-\udcff"
    # the tools' text is JSON, in which a lone surrogate is an escape: exact
    assert [item["label"] for item in json.loads(tool.content[0].text)] == [
        "split \ud83d emoji",
        "s-\udcff",
    ]


def test_a_carriage_return_inside_a_request_does_not_split_it(store: Path) -> None:
    """A review: the input was read with universal newlines, so a bare CR (white space JSON
    allows between tokens) split a request in two parse errors, and it went unanswered."""
    ping = b'{"jsonrpc":"2.0","id":8,\r"method":"ping"}'
    answers = exchange(store, [HELLO, ping], 2)
    assert answers[1] == {"jsonrpc": "2.0", "id": 8, "result": {}}


class Output:
    """The output the SDK's stdio transport writes to: what it was given, in order;
    ``answered`` is set once ``answers`` lines were written."""

    def __init__(self, answers: int) -> None:
        self.text = ""
        self.answers = answers
        self.answered = threading.Event()

    async def write(self, text: str) -> None:
        self.text += text
        if self.text.count("\n") >= self.answers:
            self.answered.set()

    async def flush(self) -> None:
        pass


def test_each_message_is_serialized_once_on_its_way_out(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review: each answer was serialized to JSON twice, once to see whether the transport
    could write it and once by the transport. Over the stdio transport, each answer is now
    serialized once, and the bytes are those the transport writes of the message itself."""
    dumped: list[Any] = []
    dump = types.JSONRPCResponse.model_dump_json

    def counted(message: types.JSONRPCResponse, **options: Any) -> str:
        dumped.append(message.id)
        return dump(message, **options)

    monkeypatch.setattr(types.JSONRPCResponse, "model_dump_json", counted)
    catalog = Catalog(
        OpenStore(store, lister=index_at(store.parent / "index.sqlite"), live=True),
        cwd=str(store.parent / "project"),
        max_bytes=65536,
    )
    listing = {"jsonrpc": "2.0", "id": 2, "method": "resources/list"}
    output = Output(answers=2)

    def lines() -> Iterator[str]:  # the input ends once both are answered
        yield HELLO.decode() + "\n"
        yield json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
        yield json.dumps(listing) + "\n"
        output.answered.wait(TIMEOUT)

    sent_to = cast("anyio.AsyncFile[str]", output)
    anyio.run(lambda: serve_lines(catalog, lines(), stdout=sent_to))
    assert sorted(dumped) == [1, 2]
    answers = [json.loads(line) for line in output.text.splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2]
    assert [r["uri"] for r in answers[1]["result"]["resources"]] == [
        encode_session_reference_uri(i) for i in LISTED
    ]
    expected = [
        dump(types.JSONRPCResponse.model_validate(answer), by_alias=True, exclude_unset=True)
        for answer in answers
    ]
    assert output.text.splitlines() == expected


def test_structured_content_is_written_as_the_command_line_writes_it(
    written_root: Path,  # noqa: F811  # the fixture imported
) -> None:
    """The command line's JSON is the reference, to the byte: a title the log holds as
    ``0.000001`` went out in ``structuredContent`` as ``1e-6``, as pydantic writes a float,
    where JavaScript, ``sessionref candidates --json`` and the tool's own text write
    ``0.000001``; a search score under 0.00001 did the same. Both write each ``<`` as
    ``\\u003c`` (tests/test_mcp_shown.py), where the command line's pipe keeps it."""
    index = written_root.parent / "index.sqlite"
    opened = OpenStore(written_root, lister=index_at(index), live=True)
    catalog = Catalog(opened, cwd="/w", max_bytes=65536)
    calls = {  # id: the tool, its arguments, its structured content's key, the command
        2: ("list_sessions", {"cwd": "/w", "limit": 50}, "sessions", ["candidates", "--cwd", "/w"]),
        3: ("search_sessions", {"query": "hello", "limit": 50}, "hits", ["search", "hello"]),
    }
    output = Output(answers=3)

    def lines() -> Iterator[str]:  # the input ends once all are answered
        yield HELLO.decode() + "\n"
        yield json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
        for number, (name, arguments, _, _) in calls.items():
            params = {"name": name, "arguments": arguments}
            call = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}
            yield json.dumps(call) + "\n"
        output.answered.wait(TIMEOUT)

    sent_to = cast("anyio.AsyncFile[str]", output)
    anyio.run(lambda: serve_lines(catalog, lines(), tools=True, stdout=sent_to))
    answers = {json.loads(line)["id"]: line.encode() for line in output.text.splitlines()}
    for number, (_, _, key, command) in calls.items():
        line = answers[number]
        head = b'"structuredContent":{"%s":' % key.encode()
        structured = line[line.index(head) + len(head) : -len(b"}}}")]  # the last member
        text = json.loads(line)["result"]["content"][0]["text"].encode()
        where = ["--root", str(written_root), "--index", str(index), "--limit", "50"]
        listed = cli(*command, *where, "--json")
        assert listed.returncode == 0, listed.stderr
        piped = listed.stdout.encode().rstrip(b"\n")  # a title of the store holds "<x>"
        assert b"<" in piped and structured == text == piped.replace(b"<", b"\\u003c"), command
    assert b'"label":0.000001,' in answers[2]


def test_names_are_one_line_and_an_echoed_huge_id_is_cut(tmp_path: Path) -> None:
    """A newcomer's trial: a title's line break and right-to-left override reached an ``@``
    picker as they were, and a 100,000-character id came back whole in each error."""
    root, project = tmp_path / "store", tmp_path / "project"
    project.mkdir()
    write_session_store(root, [session_log("odd", 1, "/w\nx", "Fix\n\u202eCI", "hello")])
    huge = "x" * 100_000

    async def scenario() -> tuple[Any, ...]:
        async with served(root, "--tools") as session:
            listed = (await session.list_resources()).resources
            with pytest.raises(MCPError) as raised:
                await session.read_resource(template_uri(huge))
            called = await session.call_tool("reference_sessions", {"sessions": [huge]})
            return listed, raised.value, called

    listed, protocol_error, tool_answer = anyio.run(scenario)
    assert [(r.name, r.description[:5]) for r in listed] == [("Fix  CI", "/w x ")]
    tool_text = cast(types.TextContent, tool_answer.content[0]).text
    assert tool_answer.is_error
    for message in (protocol_error.message, tool_text):
        assert len(message) < 2_100, len(message)
        assert message.startswith('SESSION_REFERENCE_READ_FAILED: session "xxxxxxxx')
        assert message.endswith(f'xxxx" not found in --root {root}')
        assert re.search(r" … \(\d+ characters left out\) … ", message)
