"""Commands started with a standard stream closed (``>&-``, ``2>&-``, ``<&-``): each runs as
it does with that stream on ``/dev/null``, with no traceback, and keeps every other output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli_robustness import PATIENCE, SAMPLE, SAMPLE_IDS

COMMANDS = {
    "demo": ["demo"],
    "snapshot": ["snapshot", "--root", SAMPLE, SAMPLE_IDS[0]],
    "candidates": ["candidates", "--root", SAMPLE],
    "search": ["search", "--root", SAMPLE, "--index", "index.sqlite", "auth"],
    "batch to stdout": ["batch", "--root", SAMPLE, "--out", "-"],
    "batch to a file": ["batch", "--root", SAMPLE, "--out", "out.jsonl"],
}


def run(
    args: list[str], tmp: Path, closing: str, **streams: int
) -> subprocess.CompletedProcess[bytes]:
    """``python -m sessionref ARGS`` in a shell that closes what ``closing`` says (``>&-``…)
    before the command starts, in the fresh folder ``tmp`` (where files it names go)."""
    tmp.mkdir()
    return subprocess.run(
        ["sh", "-c", f'exec "$@" {closing}', "sh", sys.executable, "-m", "sessionref", *args],
        cwd=tmp,
        timeout=PATIENCE,
        check=False,
        **{"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **streams},
    )


def written(tmp: Path) -> bytes | None:
    """What a batch wrote to its ``--out`` file (``None``: no file)."""
    out = tmp / "out.jsonl"
    return out.read_bytes() if out.exists() else None


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_closed_stdout_is_as_dev_null(tmp_path: Path, name: str) -> None:
    args = COMMANDS[name]
    null = run(args, tmp_path / "null", "", stdout=subprocess.DEVNULL)
    closed = run(args, tmp_path / "closed", ">&-")
    assert null.returncode == 0, null.stderr
    assert (closed.returncode, closed.stderr) == (null.returncode, null.stderr)
    assert written(tmp_path / "closed") == written(tmp_path / "null")


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_closed_stderr_loses_no_output(tmp_path: Path, name: str) -> None:
    args = COMMANDS[name]
    open_ = run(args, tmp_path / "open", "")
    closed = run(args, tmp_path / "closed", "2>&-")
    assert open_.returncode == 0, open_.stderr
    assert (closed.returncode, closed.stdout) == (open_.returncode, open_.stdout)
    assert written(tmp_path / "closed") == written(tmp_path / "open")


def test_a_batch_with_every_stream_closed_writes_its_file(tmp_path: Path) -> None:
    args = ["batch", "--root", SAMPLE, "--out", "out.jsonl", "--workers", "2"]
    open_ = run(args, tmp_path / "open", "")
    closed = run(args, tmp_path / "closed", ">&- 2>&- <&-")
    assert open_.returncode == closed.returncode == 0, open_.stderr
    assert written(tmp_path / "closed") == written(tmp_path / "open") != None  # noqa: E711


FAILING = {
    "a missing session": ["snapshot", "--root", SAMPLE, "nope"],
    "wrong usage": ["snapshot", "--root", SAMPLE],
    "no command": [],
}


@pytest.mark.parametrize("name", [*COMMANDS, *FAILING])
def test_a_stderr_whose_reader_went_changes_neither_status_nor_output(
    tmp_path: Path, name: str
) -> None:
    """As ``2> >(head -c 0)``: every write to stderr fails (EPIPE); the command goes on as
    if stderr were read."""
    args = {**COMMANDS, **FAILING}[name]
    read, write = os.pipe()
    os.close(read)
    try:
        gone = run(args, tmp_path / "gone", "", stderr=write)
    finally:
        os.close(write)
    read_ = run(args, tmp_path / "read", "")
    assert (gone.returncode, gone.stdout) == (read_.returncode, read_.stdout), read_.stderr
    assert written(tmp_path / "gone") == written(tmp_path / "read")
