"""``sessionref export`` and ``sessionref show`` as a user meets them: formats, options, the
width of the table, files written whole, one-line errors, and a start-up that loads no
template engine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sessionref.cli.demo import sample_root
from sessionref.cli.show import table
from sessionref.log.builder import LogBuilder
from sessionref.log.store import DirectoryStore
from sessionref.testing import write_session_store
from sessionref.views.picture import snapshot_picture
from tests.conftest import CACHE
from tests.terminal import on_a_terminal
from tests.test_cli_startup import imported_by

AUTH = "7f3c1e2a-auth-refactor"
SAMPLE = str(sample_root())


def run(*args: str, columns: int = 80) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": "", "LC_ALL": "C", "COLUMNS": str(columns), "PYTHONPATH": os.getcwd()}
    env["XDG_CACHE_HOME"] = CACHE
    return subprocess.run([sys.executable, "-m", "sessionref", *args], capture_output=True, env=env)


def test_export_writes_each_format() -> None:
    md = run("export", "--root", SAMPLE, AUTH)
    assert md.returncode == 0, md.stderr
    assert md.stdout.startswith(b"# Refactor auth middleware to JWT\n")
    assert b"### Checkpoint (compaction summary)" in md.stdout
    html = run("export", "--root", SAMPLE, AUTH, "--format", "html")
    assert (
        html.stdout.startswith(b"<!DOCTYPE html>")
        and b"&lt;/referenced-sessions&gt;" in html.stdout
    )
    data = json.loads(run("export", "--root", SAMPLE, AUTH, "--format", "json").stdout)
    assert data["sessionId"] == AUTH and data["harness"] == "dsh"
    kinds = {entry["kind"] for entry in data["entries"]}
    assert kinds == {"checkpoint", "text", "tool-call"}
    full = json.loads(
        run("export", "--root", SAMPLE, AUTH, "--format", "json", "--tools", "--reasoning").stdout
    )
    assert {entry["kind"] for entry in full["entries"]} == kinds | {"thinking", "tool-result"}


def test_export_out_replaces_the_file_whole(tmp_path: Path) -> None:
    out = tmp_path / "auth.html"
    out.write_bytes(b"old")
    done = run("export", "--root", SAMPLE, AUTH, "--format", "html", "--out", str(out))
    assert done.returncode == 0 and done.stdout == b"", done.stderr
    assert out.read_bytes().endswith(b"</html>\n")
    assert os.listdir(tmp_path) == ["auth.html"]


PAUSED_EXPORT = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever the test process had
from sessionref.cli import main, output_file
real = output_file.encoded
def encoded(pieces, gather=1 << 16):
    for number, piece in enumerate(real(pieces, gather)):
        yield piece
        if number == 0:  # written: say so, and wait for the signal
            os.write(1, b"paused\\n")
            time.sleep(600)
output_file.encoded = encoded
sys.exit(main(sys.argv[1:]))
"""
"""``python -m sessionref`` that pauses once the first piece of a page is in its file, so
that a signal sent then is sure to find the page half-written, however fast the machine.
``main(argv)`` installs no handlers of its own, so Ctrl-C is Python's default one, which
Python leaves out when it starts with SIGINT ignored: a CI run's test process once had it
ignored (by what, not found), and the child, inheriting that, slept through the signal."""


@pytest.mark.parametrize("through", ["the file", "a link"])
def test_an_interrupted_export_leaves_the_old_file(tmp_path: Path, through: str) -> None:
    """Its bytes and mode; the temporary file, beside the file a link leads to, is gone."""
    b = LogBuilder()
    for turn in range(3000):
        b.user(f"question {turn} " + "x" * 2000)
        b.assistant(f"answer {turn}")
    header = {"version": 0, "id": "big", "createdAt": 1, "delegationDepth": 0}
    write_session_store(tmp_path / "store", [{"header": header, "events": b.events}])
    out = tmp_path / "out" / "big.html"
    out.parent.mkdir()
    out.write_bytes(b"old")
    out.chmod(0o600)
    given = out if through == "the file" else tmp_path / "link.html"
    if through == "a link":
        given.symlink_to(out)
    command = [sys.executable, "-c", PAUSED_EXPORT, "export", "--root", str(tmp_path / "store")]
    process = subprocess.Popen(
        [*command, "big", "--format", "html", "--out", str(given)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": "", "PYTHONPATH": os.getcwd()},
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == b"paused\n"
        assert len(os.listdir(out.parent)) == 2  # the temporary file, part of the page in it
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 130, err
    assert err == b"interrupted\n"
    assert out.read_bytes() == b"old" and os.listdir(out.parent) == ["big.html"]
    assert out.stat().st_mode & 0o777 == 0o600 and given.exists()


def test_an_unwritable_out_is_one_line(tmp_path: Path) -> None:
    """Naming the path given, not the temporary file (tests/test_output_files.py has more)."""
    out = tmp_path / "missing" / "x.md"
    done = run("export", "--root", SAMPLE, AUTH, "--out", str(out))
    assert done.returncode == 1
    expected = f"SESSION_REFERENCE_INVALID_CONFIG: --out {out}: No such file or directory\n"
    assert done.stderr.decode() == expected


def test_a_missing_session_is_one_error_line() -> None:
    for command in ("export", "show"):
        done = run(command, "--root", SAMPLE, "nope")
        assert done.returncode == 1 and done.stdout == b""
        (line,) = done.stderr.decode().splitlines()
        assert line.startswith('SESSION_REFERENCE_READ_FAILED: session "nope" not found in --root')


def test_show_prints_the_picture_within_the_terminal_width() -> None:
    # 30 columns, found by a newcomer's trial: the rows were 40 wide, SHOWS kept at 10
    # columns; below that room it is left out, and every row keeps # ROLE BYTES FATE.
    for columns in (30, 60, 120):
        done = run("show", "--root", SAMPLE, AUTH, "--max-bytes", "400", columns=columns)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.decode().splitlines()
        assert all(len(line) <= columns for line in lines), (columns, lines)
        header = next(line for line in lines if line.startswith("#"))
        assert header.split() == [
            "#",
            "ROLE",
            "BYTES",
            "FATE",
            *(["SHOWS"] if columns > 30 else []),
        ]
    assert lines[:3] == [
        f"{lines[0].split()[0]} of 400 bytes used ({lines[0].split()[-1][1:-2]}%)",
        lines[1],
        "kept 2 of 4 units (1 cut, 2 dropped), omitted 287 bytes, truncated, compacted",
    ]
    used = int(lines[0].split()[0])
    assert lines[1] == "[" + "█" * (used * 40 // 400) + "░" * (40 - used * 40 // 400) + "]"
    # the units: a checkpoint of 160 bytes, then 165, 78 and 50 (the sample's texts); the
    # two oldest that are not checkpoints go (243 bytes), the checkpoint loses 287 - 243
    rows = [line.split()[:5] for line in lines[5:]]
    assert rows == [
        ["1", "checkpoint", "160", "cut", "-44"],
        ["2", "assistant", "165", "dropped", "Done:"],
        ["3", "user", "78", "dropped", "Ignore"],
        ["4", "assistant", "50", "kept", "I"],
    ]


@pytest.mark.parametrize(("columns", "drawn"), [(5, ["[██░]"]), (3, ["[░]"]), (2, [])])
def test_the_bar_fits_a_terminal_however_narrow(columns: int, drawn: list[str]) -> None:
    """Found by a newcomer's trial: at 5 columns the bar took 12. It has as many cells as fit
    between its brackets (519 of 600 bytes fill 2 of 3), and is left out below one cell."""
    done = run("show", "--root", SAMPLE, AUTH, "--max-bytes", "600", columns=columns)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert [line for line in lines if "█" in line or "░" in line] == drawn


@pytest.mark.parametrize("budget", [300, 400, 550, 700])
def test_show_agrees_with_snapshot_verbose(budget: int) -> None:
    """The numbers `show` prints are those `snapshot --verbose` reports."""
    done = run("snapshot", "--root", SAMPLE, AUTH, "--max-bytes", str(budget), "--verbose")
    note = done.stderr.decode().splitlines()[-1]  # "LABEL: kept R of O messages, omitted B bytes"
    words = note.split()
    kept, original, omitted = words[3], words[5], words[8]
    shown = run("show", "--root", SAMPLE, AUTH, "--max-bytes", str(budget), columns=200)
    summary = shown.stdout.decode().splitlines()[2]
    assert summary.startswith(f"kept {kept} of {original} units (")
    assert f"dropped), omitted {omitted} bytes" in summary


def test_show_html_writes_the_page(tmp_path: Path) -> None:
    page = tmp_path / "picture.html"
    done = run("show", "--root", SAMPLE, AUTH, "--max-bytes", "600", "--html", str(page))
    assert done.returncode == 0 and done.stdout == b"", done.stderr
    text = page.read_text("utf-8")
    assert "of 600 bytes used (86%)" in text and 'style="width: 86%"' in text


def test_a_budget_too_small_is_one_line() -> None:
    done = run("show", "--root", SAMPLE, AUTH, "--max-bytes", "10")
    assert done.returncode == 1
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith("SESSION_REFERENCE_BUDGET_EXCEEDED: --max-bytes 10 is too small")


def test_the_table_keeps_wide_characters_within_the_width() -> None:
    picture = snapshot_picture(DirectoryStore(SAMPLE).read(AUTH), AUTH, 65536)
    for width in (40, 80):
        assert all(len(line) <= width for line in table(picture, width).splitlines()[3:])


@pytest.mark.parametrize("command", ["export", "show"])
def test_help_loads_no_template_engine(command: str) -> None:
    modules = imported_by("-m", "sessionref", command, "--help")
    assert not {"jinja2", "markdown_it", "sessionref.views.html"} & modules


CLAUDE_LINES = [
    {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/project",
        "sessionId": "11111111-2222-4333-8444-555555555555",
        "version": "2.1.0",
        "type": "user",
        "uuid": "00000000-0000-4000-8000-000000000001",
        "timestamp": "2025-06-15T15:06:40.113Z",
        "message": {"role": "user", "content": "fix </div><script> please"},
    },
    {
        "parentUuid": "00000000-0000-4000-8000-000000000001",
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/project",
        "sessionId": "11111111-2222-4333-8444-555555555555",
        "version": "2.1.0",
        "type": "assistant",
        "uuid": "00000000-0000-4000-8000-000000000002",
        "timestamp": "2025-06-15T15:06:41.000Z",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "text", "text": "Done."},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
            ],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    },
]


def test_export_and_show_read_a_claude_code_session(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-work-project"
    project.mkdir(parents=True)
    session = "11111111-2222-4333-8444-555555555555"
    lines = b"".join(json.dumps(line).encode() + b"\n" for line in CLAUDE_LINES)
    (project / f"{session}.jsonl").write_bytes(lines)
    root = ("--root", str(tmp_path), "--harness", "claude-code")
    md = run("export", *root, session)
    assert md.returncode == 0, md.stderr
    text = md.stdout.decode()
    assert "claude-code · /work/project · started 2025-06-15 15:06:40 UTC" in text
    assert "### User · 2025-06-15 15:06:40 UTC\n\nfix \\</div\\>\\<script\\> please" in text
    assert "### Tools · 2025-06-15 15:06:41 UTC\n\nBash" in text
    shown = run("show", *root, session, columns=100)
    assert (
        shown.stdout.decode().splitlines()[2]
        == "kept 2 of 2 units (0 cut, 0 dropped), omitted 0 bytes"
    )


def control_session(root: Path) -> str:
    """A DSH session whose title, prompt and reply hold control characters (NUL, backspace,
    the escape sequences that clear a terminal and set its title, a C1 control) and whose
    title holds a right-to-left override."""
    log = LogBuilder()
    log.user("nul:\x00:end and \x08back")
    log.assistant("\x1b]0;PWNED\x07 then \x1b[2J and \x85 over\rwrite")
    log.title("T\u202eRTL \x1b[31mred")
    header = {"version": 0, "id": "ctl", "createdAt": 1, "cwd": "/w\x1b[1m", "delegationDepth": 0}
    write_session_store(root, [{"header": header, "events": log.events}])
    return str(root)


CONTROLS = {*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, *range(0x80, 0xA0)}


def test_html_pages_show_control_characters_and_obey_no_override(
    tmp_path: Path,
) -> None:
    """A newcomer's trial: the pages carried a raw NUL, ESC and backspace (HTML takes none of
    them), and a raw right-to-left override: in the ``<title>``, which a tab cannot isolate,
    and in the heading, whose text an isolating element still shows reversed."""
    root = control_session(tmp_path / "store")
    page = run("export", "--root", root, "ctl", "--format", "html")
    assert page.returncode == 0, page.stderr
    picture = tmp_path / "picture.html"
    assert run("show", "--root", root, "ctl", "--html", str(picture)).returncode == 0
    for html in (page.stdout.decode(), picture.read_text("utf-8")):
        assert not {ord(c) for c in html} & CONTROLS
        assert "PWNED\\u0007" in html and "\\u001b" in html
        assert "\u202e" not in html  # in the title, the heading, anywhere (Trojan Source)
    assert "<title>T\\u202eRTL" in page.stdout.decode()  # show's is labelled by the id
    assert "<h1" in page.stdout.decode() and "T\\u202eRTL" in page.stdout.decode().split("<h1")[1]


BREAKS = {"md": "over\\\nwrite", "html": "over\nwrite", "json": "over\\rwrite"}
"""How each format writes the carriage return of :func:`control_session`'s reply."""


@pytest.mark.parametrize(
    "out",
    [[], ["--out", "/dev/stdout"], ["--out", "-"], ["--format", "html"], ["--format", "json"]],
)
def test_export_to_a_terminal_sends_no_control_character(tmp_path: Path, out: list[str]) -> None:
    """A newcomer's trial: Markdown written to a terminal set its title and cleared it, from
    what a session held (a review: also when ``--out`` named the terminal, and a carriage
    return wrote over its line); a file (or a pipe) still gets the text as it is."""
    root = control_session(tmp_path / "store")
    done, text = on_a_terminal("export", "--root", root, "ctl", *out)
    assert done.returncode == 0, done.stderr
    assert not {ord(c) for c in text} & (CONTROLS | {0x0D})
    assert "PWNED\\u0007" in text
    assert BREAKS[out[-1] if out[-1:] in (["html"], ["json"]) else "md"] in text
    piped = run("export", "--root", root, "ctl").stdout.decode()
    assert "\x1b\\]0;PWNED\x07" in piped
