"""The command line as a user meets it: output, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sessionref.cli.app import main, sample_root
from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.pipeline.escape_and_serialize import PROMPT_PREFIX
from sessionref.testing.store import write_session_store
from tests.logs import assistant, header, user

AUTH = "7f3c1e2a-auth-refactor"


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sessionref", *args],
        capture_output=True,
        env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C", "PATH": ""},
    )


def test_demo_prints_one_bounded_snapshot() -> None:
    done = run("demo")
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode("utf-8")
    assert out.count("<referenced-sessions>") == 1
    assert out.count("</referenced-sessions>") == 1
    assert "Refactor auth middleware to JWT" in out
    assert "\\u003c/referenced-sessions>" in out


def test_snapshot_output_is_utf8_whatever_the_locale(tmp_path: Path) -> None:
    log = {"header": header("s", cwd=None), "events": [user(0, "中文 🙂"), assistant(1, "é")]}
    write_session_store(tmp_path, [log])
    done = run("snapshot", "--root", str(tmp_path), "s")
    assert done.returncode == 0, done.stderr
    prompt = done.stdout.decode("utf-8")
    assert prompt.startswith(PROMPT_PREFIX) and prompt.endswith("</referenced-sessions>\n")
    assert "中文 🙂" in prompt


def test_sessions_by_uri_and_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    uri = encode_session_reference_uri(AUTH)
    assert main(["snapshot", "--root", str(sample_root()), "--json", "--label", "auth", uri]) == 0
    message = json.loads(capsys.readouterr().out)
    assert message["role"] == "user" and message["id"]
    (stats,) = message["source"]["references"]
    assert stats["sessionId"] == AUTH and stats["label"] == "auth" and stats["compacted"]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["snapshot", "--root", "/nonexistent", "missing"], "SESSION_REFERENCE_READ_FAILED"),
        (["snapshot", "--root", "/x", "dsh-session:!!"], "SESSION_REFERENCE_INVALID_REFERENCE"),
        (["snapshot", "--root", "/x", "a", "b", "c", "d"], "SESSION_REFERENCE_TOO_MANY"),
        (["snapshot", "--root", "/x", "--target", "a", "a"], "SESSION_REFERENCE_SELF_REFERENCE"),
    ],
)
def test_errors_are_one_line_and_exit_1(args: list[str], code: str) -> None:
    done = run(*args)
    assert done.returncode == 1
    assert done.stdout == b""
    lines = done.stderr.decode("utf-8").splitlines()
    assert len(lines) == 1 and lines[0].startswith(code + ": ")


def test_budget_exceeded_through_the_cli() -> None:
    done = run("snapshot", "--root", str(sample_root()), "--max-bytes", "50", AUTH)
    assert done.returncode == 1
    assert done.stderr.decode().startswith("SESSION_REFERENCE_BUDGET_EXCEEDED: ")


def test_usage_errors_exit_2() -> None:
    assert run("snapshot").returncode == 2
    assert run("snapshot", "--root", "x", "--max-bytes", "0", "s").returncode == 2
    assert run("nope").returncode == 2


def test_candidates_this_project_first(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["candidates", "--root", str(sample_root()), "--cwd", "/home/dev/payments-api"]
    assert main([*argv, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [c["cwd"] for c in found[:2]] == ["/home/dev/payments-api"] * 2
    assert all(c["mention"].startswith("@[") for c in found)
    assert main([*argv, "--query", "DARK", "--limit", "1"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert "Docs site: dark mode" in line
