"""``--redact`` and ``--redact-pattern`` on the command line: nothing secret on stdout or
stderr, kinds and counts with ``--verbose``, one line when detect-secrets is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessionref.codecs.uri import parse_session_reference_text
from sessionref.errors import SessionReferenceError
from sessionref.testing.store import write_session_store
from tests.conftest import CACHE
from tests.logs import assistant, header, user
from tests.redact_corpus import leaked, secrets

GITHUB, AWS = (
    next(s for s in secrets(seed=3) if s.kind == kind)
    for kind in ("github-token", "aws-access-key-id")
)


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sessionref", *args],
        capture_output=True,
        env={"PATH": "", "XDG_CACHE_HOME": CACHE, **(env or {})},
    )


def store(root: Path) -> Path:
    events = [
        user(0, f"my token is {GITHUB.snippet}"),
        assistant(1, f"and <{AWS.snippet}>; TK-4242"),
    ]
    write_session_store(root, [{"header": header("s"), "events": events}])
    return root


def test_snapshot_redacts_and_verbose_lists_kinds_not_secrets(tmp_path: Path) -> None:
    root = str(store(tmp_path))
    plain = run("snapshot", "--root", root, "s")
    assert GITHUB.core.encode() in plain.stdout
    done = run(
        "snapshot", "--root", root, "--redact", "--redact-pattern", r"TK-\d+", "-v", "--json", "s"
    )
    assert done.returncode == 0, done.stderr
    for secret in (GITHUB, AWS):
        assert secret.core.encode() not in done.stdout + done.stderr
    stats = json.loads(done.stdout)["source"]["references"][0]
    assert stats["redacted"] == {"aws-access-key": 1, "custom": 1, "github-token": 1}
    assert (
        "note: s: redacted 3 secrets (aws-access-key 1, custom 1, github-token 1)"
        in done.stderr.decode()
    )
    assert b'"redacted"' not in run("snapshot", "--root", root, "--json", "s").stdout


def test_batch_redacts(tmp_path: Path) -> None:
    root = str(store(tmp_path / "store"))
    out = tmp_path / "out.jsonl"
    for workers in ("1", "2"):
        done = run(
            "batch", "--root", root, "--out", str(out), "--redact", "--workers", workers, "-v"
        )
        assert done.returncode == 0, done.stderr
        assert done.stderr.decode().splitlines()[-1] == (
            "redacted 2 secrets (aws-access-key 1, github-token 1) in 1 of 1 sessions"
        )
        assert GITHUB.core.encode() not in done.stderr
        text = out.read_text()
        assert GITHUB.core not in text and AWS.core not in text
        (line,) = text.splitlines()
        stats = json.loads(line)["context"]["source"]["references"][0]
        assert stats["redacted"] == {"aws-access-key": 1, "github-token": 1}
        out.unlink()


CLAUDE_CODE_ID = "77777777-7777-4777-8777-777777777777"


def claude_code_root(root: Path) -> str:
    """A Claude Code session of one prompt that holds a key: its title is that prompt."""
    project = root / ".claude" / "projects" / "p"
    project.mkdir(parents=True)
    record = {
        "type": "user",
        "uuid": "x1",
        "parentUuid": None,
        "sessionId": "s",
        "cwd": "/w",
        "timestamp": "2025-11-21T10:00:00.000Z",
        "message": {"role": "user", "content": f"AWS key {AWS.snippet}"},
    }
    (project / f"{CLAUDE_CODE_ID}.jsonl").write_text(json.dumps(record) + "\n")
    return str(root / ".claude")


def test_labels_are_redacted_and_counted(tmp_path: Path) -> None:
    """The newcomer's trial: a title that is a first prompt holding a key was printed whole
    as the label of a redacted snapshot (and three times in a batch line: its label, the
    reference's and the data object's)."""
    root = claude_code_root(tmp_path / "home")
    shown = "AWS key [REDACTED:aws-access-key]"
    titled = ("--redact", "--label-from", "title", "-v")
    done = run("snapshot", "--root", root, *titled, "--json", CLAUDE_CODE_ID)
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)["source"]["references"][0]
    assert (stats["label"], stats["redacted"]) == (shown, {"aws-access-key": 2})
    assert done.stderr.decode() == f"note: {shown}: redacted 2 secrets (aws-access-key 2)\n"
    out = tmp_path / "out.jsonl"
    batch = run("batch", "--root", root, *titled, "--out", str(out))
    assert batch.returncode == 0, batch.stderr
    assert json.loads(out.read_text())["label"] == shown
    given = run("snapshot", "--root", root, "--redact", "--label", GITHUB.snippet, CLAUDE_CODE_ID)
    assert given.returncode == 0, given.stderr
    assert '"label":"[REDACTED:github-token]"' in given.stdout.decode()
    for shown_text in (done.stdout + done.stderr, batch.stderr, out.read_bytes(), given.stdout):
        assert not leaked(AWS, shown_text.decode()) and not leaked(GITHUB, shown_text.decode())


def test_candidates_and_search_redact_labels_and_leave_snippets_out(tmp_path: Path) -> None:
    """The listing commands printed a Claude Code title (its first prompt, holding a key)
    whole, and search its snippet too; they take ``--redact`` as the MCP server does."""
    root = claude_code_root(tmp_path / "home")
    shown = "AWS key [REDACTED:aws-access-key]"
    index = ("--index", str(tmp_path / "index"))
    listing = [("candidates", "--root", root, *index), ("search", "--root", root, *index, "key")]
    for command in listing:
        plain = run(*command, "--json")
        assert plain.returncode == 0, plain.stderr
        assert leaked(AWS, plain.stdout.decode())  # what --redact is for
        for form in ((), ("--json",)):
            done = run(*command, "--redact", *form)
            assert done.returncode == 0, done.stderr
            assert not leaked(AWS, (done.stdout + done.stderr).decode())
            assert shown in done.stdout.decode()
    [hit] = json.loads(run(*listing[1], "--redact", "--json").stdout)
    assert (hit["label"], hit["snippet"]) == (shown, "")
    assert parse_session_reference_text(hit["mention"]).references[0].label == shown
    terminal = run(*listing[1], "--redact").stdout.decode().splitlines()
    assert terminal == [f"{shown}  (/w)", f"  {hit['mention']}"]
    probe = AWS.core[:8]  # a query must not find the session by its title's key
    assert probe in run(*listing[0], "--query", probe).stdout.decode()
    probed = run(*listing[0], "--redact", "--query", probe)
    assert (probed.returncode, probed.stdout) == (0, b"")
    assert run(*listing[0], "--redact", "--query", "REDACTED:aws").stdout.decode().count(shown) == 1


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("(x", "not a regular expression: missing ), unterminated subpattern at position 0"),
        ("", "empty: it would redact nothing"),  # found by a newcomer's trial: accepted, idle
        # two more newcomer's finds: a traceback each (OverflowError, RecursionError)
        ("a{99999999999}", "not a regular expression: the repetition number is too large"),
        ("(" * 2000 + "a" + ")" * 2000, "not a regular expression: nested too deeply"),
    ],
)
def test_a_bad_pattern_is_a_usage_error(tmp_path: Path, pattern: str, reason: str) -> None:
    done = run("snapshot", "--root", str(store(tmp_path)), "--redact-pattern", pattern, "s")
    assert (done.returncode, done.stdout) == (2, b"")
    assert (
        done.stderr.decode() == f"sessionref snapshot: error: argument --redact-pattern: {reason}\n"
    )


def test_without_detect_secrets_one_line_says_how_to_install_it(tmp_path: Path) -> None:
    hidden = tmp_path / "hide" / "detect_secrets"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(Path.cwd()), str(hidden.parent)])}
    root = str(store(tmp_path / "store"))
    for command in (["snapshot", "s"], ["batch", "--out", str(tmp_path / "o.jsonl")]):
        done = run(command[0], "--root", root, "--redact", *command[1:], env=env)
        assert done.returncode == 1 and done.stdout == b""
        assert done.stderr.decode().splitlines() == [
            "SESSION_REFERENCE_INVALID_CONFIG: --redact needs detect-secrets, not installed: "
            "pip install 'sessionref[redact]'"
        ]
    assert not (tmp_path / "o.jsonl").exists()
    assert run("snapshot", "--root", root, "s", env=env).returncode == 0


def test_the_mcp_catalog_redacts_what_it_reads(tmp_path: Path) -> None:
    from sessionref.cli.common import OpenStore
    from sessionref.mcp.catalog import Catalog, index_at
    from sessionref.mcp.tools import Toolbox
    from sessionref.redact import Redaction

    root = store(tmp_path / "store")
    opened = OpenStore(root, lister=index_at(tmp_path / "i"), live=True)
    for redaction in (None, Redaction()):
        catalog = Catalog(opened, cwd="/w", max_bytes=65536, redaction=redaction)
        prompt = catalog.prompt(["s"], None)
        assert (GITHUB.core in prompt) is (redaction is None)
        assert ("[REDACTED:github-token]" in prompt) is (redaction is not None)
        found = Toolbox(catalog).call("search_sessions", {"query": "token"}, None)
        (hit,) = json.loads(found.text)
        assert (GITHUB.core in hit["snippet"]) is (redaction is None)
        assert (hit["snippet"] == "") is (redaction is not None)


def test_mcp_refuses_to_serve_without_detect_secrets(tmp_path: Path) -> None:
    hidden = tmp_path / "hide" / "detect_secrets"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(Path.cwd()), str(hidden.parent)])}
    done = run("mcp", "--root", str(store(tmp_path / "store")), "--redact", env=env)
    assert done.returncode == 1 and done.stdout == b""
    assert b"--redact needs detect-secrets" in done.stderr


def test_export_and_show_redact(tmp_path: Path) -> None:
    root = str(store(tmp_path / "store"))
    for command in (
        ["export", "s"],
        ["export", "s", "--format", "html"],
        ["export", "s", "--format", "json"],
        ["show", "s"],
        ["show", "s", "--html", "-"],
        ["show", "s", "--max-bytes", "200"],
    ):
        plain = run(command[0], "--root", root, *command[1:])
        assert plain.returncode == 0, plain.stderr
        assert GITHUB.core.encode() in plain.stdout, command
        done = run(command[0], "--root", root, *command[1:], "--redact", "-v")
        assert done.returncode == 0, done.stderr
        for secret in (GITHUB, AWS):
            assert secret.core.encode() not in done.stdout + done.stderr, command
        assert b"REDACTED" in done.stdout, command
    exported = run("export", "--root", root, "s", "--redact", "-v")
    assert exported.stderr.decode().splitlines()[0] == (
        "note: s: redacted 2 secrets (aws-access-key 1, github-token 1)"
    )


def test_a_read_failure_quoting_a_secret_of_the_log_is_redacted(tmp_path: Path) -> None:
    """A tester's trial: a log whose unknown event type held a token failed to read with a
    message quoting the type, token and all, under --redact (snapshot, export, show, batch
    lines, MCP), though no secret is to be put in an error message (docs/redaction.md)."""
    from sessionref.cli.common import OpenStore
    from sessionref.mcp.catalog import Catalog, index_at
    from sessionref.redact import Redaction

    events = [user(0, "hi"), {"type": f"x/{GITHUB.snippet}", "seq": 1, "time": 1, "data": {}}]
    root = tmp_path / "store"
    write_session_store(root, [{"header": header("s"), "events": events}])
    plain = run("snapshot", "--root", str(root), "s")
    assert plain.returncode == 1 and GITHUB.core.encode() in plain.stderr
    out = tmp_path / "out.jsonl"
    for command in (["snapshot"], ["export"], ["show"], ["batch", "--out", str(out)]):
        done = run(
            command[0],
            "--root",
            str(root),
            "--redact",
            *command[1:],
            *(["s"] * (command[0] != "batch")),
        )
        assert done.returncode == 1, command
        shown = done.stdout + done.stderr + (out.read_bytes() if command[0] == "batch" else b"")
        assert b"[REDACTED:github-token]" in shown and not leaked(GITHUB, shown.decode()), command
    opened = OpenStore(root, lister=index_at(tmp_path / "i"), live=True)
    catalog = Catalog(opened, cwd="/w", max_bytes=65536, redaction=Redaction())
    with pytest.raises(SessionReferenceError) as raised:
        catalog.prompt(["s"], None)
    assert "[REDACTED:github-token]" in raised.value.message
    assert not leaked(GITHUB, raised.value.message)


def test_search_lists_a_log_passed_over_for_a_secret_it_quotes_redacted(tmp_path: Path) -> None:
    """A tester's trial: ``search --redact -v`` listed a log the index could not read with
    the reason quoting its unknown event type, a token in it, whole."""
    events = [user(0, "hi"), {"type": f"x/{GITHUB.snippet}", "seq": 1, "time": 1, "data": {}}]
    root = tmp_path / "store"
    write_session_store(root, [{"header": header("s"), "events": events}])
    index = ("--index", str(tmp_path / "index"))
    plain = run("search", "--root", str(root), *index, "-v", "hi")
    assert leaked(GITHUB, plain.stderr.decode())  # the reason, as the log owner sees it
    done = run("search", "--root", str(root), *index, "-v", "--redact", "hi")
    assert done.returncode == 0, done.stderr
    assert b"passed over " in done.stderr and b"[REDACTED:github-token]" in done.stderr
    assert not leaked(GITHUB, (done.stdout + done.stderr).decode())


@pytest.mark.parametrize(
    "command",
    [("candidates", "--no-index"), ("export", "s"), ("show", "s"), ("snapshot", "s")],
)
def test_a_header_passed_over_for_a_secret_it_quotes_is_redacted(
    tmp_path: Path, command: tuple[str, str]
) -> None:
    """A tester's trial: ``-v`` lists each log the listing passed over with why, and a header
    whose id is a token is passed over quoting it; under ``--redact`` every command that
    opens the store redacts the reason, as ``search`` does."""
    root = tmp_path / "store"
    write_session_store(root, [{"header": header("s"), "events": [user(0, "hi")]}])
    home = next(root.iterdir()) / "stray"
    home.mkdir()
    line = {"type": "session", "version": 0, "id": GITHUB.snippet, "createdAt": 1}
    (home / "session.jsonl").write_text(json.dumps({**line, "delegationDepth": 0}) + "\n")
    name, argument = command
    plain = run(name, "--root", str(root), "-v", argument)
    assert leaked(GITHUB, plain.stderr.decode())  # the reason, as the log's owner sees it
    done = run(name, "--root", str(root), "-v", "--redact", argument)
    assert done.returncode == 0, done.stderr
    assert b"passed over " in done.stderr and b"[REDACTED:github-token]" in done.stderr
    assert not leaked(GITHUB, (done.stdout + done.stderr).decode())


def chain_of(error: BaseException) -> list[BaseException]:
    """``error`` and every exception it holds as its cause or its context, transitively."""
    found: list[BaseException] = []
    waiting: list[BaseException | None] = [error]
    while waiting:
        current = waiting.pop()
        if current is not None and all(current is not seen for seen in found):
            found.append(current)
            waiting += (current.__cause__, current.__context__)
    return found


def test_a_redacted_read_failure_keeps_no_unredacted_error_in_its_chain(tmp_path: Path) -> None:
    """A reviewer's find: the redacted failure was raised inside the handler of the store's
    error, which stayed its context, the token in it, for any reporter that walks
    ``__context__`` (logging's tracebacks, error trackers). The resolver and the command
    line's read alike keep no exception whose text quotes the token."""
    from sessionref import SessionReferenceResolver
    from sessionref.cli.common import OpenStore
    from sessionref.cli.export import read_session
    from sessionref.log.store import DirectoryStore
    from sessionref.redact import Redaction

    events = [user(0, "hi"), {"type": f"x/{GITHUB.snippet}", "seq": 1, "time": 1, "data": {}}]
    root = tmp_path / "store"
    write_session_store(root, [{"header": header("s"), "events": events}])
    resolver = SessionReferenceResolver(DirectoryStore(root), redact=Redaction())
    with pytest.raises(SessionReferenceError) as resolved:
        resolver.snapshot("t", [{"sessionId": "s"}])
    opened = OpenStore(root)
    with pytest.raises(SessionReferenceError) as read:
        read_session(opened, "s", opened.listed.read, Redaction())
    for raised in (resolved.value, read.value):
        texts = [str(error) for error in chain_of(raised)]
        assert any("[REDACTED:github-token]" in text for text in texts), texts
        assert not any(leaked(GITHUB, text) for text in texts), texts


def test_an_ambiguous_session_under_redaction_still_says_what_to_do(tmp_path: Path) -> None:
    """A reviewer's find: under ``--redact`` a session in two roots failed as a plain log
    error (its text redacted as a log's), so the command line lost its advice; its message
    holds only the id and the roots, and keeps its kind."""
    roots = []
    for name in ("one", "two"):
        root = tmp_path / name
        write_session_store(root, [{"header": header("s"), "events": [user(0, "hi")]}])
        roots += ["--root", str(root)]
    plain = run("snapshot", *roots, "s")
    done = run("snapshot", *roots, "--redact-pattern", "one|two", "s")
    assert plain.returncode == done.returncode == 1
    assert plain.stderr.strip().endswith(b"(give that --root alone)"), plain.stderr
    assert done.stderr == plain.stderr
