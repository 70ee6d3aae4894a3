"""The command line where things go wrong around it: odd --out, full disks, closed pipes,
signals at start-up, servers that are not dask schedulers, resumed batches, odd arguments."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sessionref.cli import main
from sessionref.cli.demo import sample_root
from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.errors import MAX_SAFE_INTEGER
from sessionref.testing.store import write_session_store
from tests.conftest import run_script
from tests.logs import assistant, header, other, user
from tests.mcp_store import session_log

PATIENCE = 120.0
"""Seconds a command may take before the test calls it hung: a bound, not a speed check."""
SAMPLE = str(sample_root())
SAMPLE_IDS = [
    "7f3c1e2a-auth-refactor",
    "c2e8a7d5-docs-dark-mode",
    "e5a90c11-scratch",
    "b91d04f0-flaky-ci",
]
"""The sample store's sessions in listing order (newest first)."""


def sessionref(*args: str, **options: Any) -> subprocess.CompletedProcess[bytes]:
    """``python -m sessionref ARGS`` run to its end (stdout captured unless redirected)."""
    options.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "sessionref", *args],
        stderr=subprocess.PIPE,
        timeout=PATIENCE,
        check=False,
        **options,
    )


def usage_error(done: subprocess.CompletedProcess[bytes]) -> str:
    """The last line of a usage error (exit 2)."""
    assert done.returncode == 2, done.stderr
    return done.stderr.decode().splitlines()[-1]


def store_with_a_corrupt_log(root: Path) -> Path:
    """Three sessions that snapshot and one with a line that is not JSON mid-log."""
    for index in range(3):
        events = [user(0, "q"), assistant(1, "a")]
        write_session_store(root, [{"header": header(f"s-{index}", index), "events": events}])
    events = [
        user(0, "q"),
        assistant(1, "a"),
        other(2, "turn/end", data={"turn": 1, "reason": {"kind": "completed"}}),
    ]
    (path,) = write_session_store(root, [{"header": header("bad", 9), "events": events}])
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*lines[:2], b"not json\n", *lines[2:]]))
    return root


# 1. --out


@pytest.mark.parametrize("out", ["", ".", "dir/.."])
def test_an_out_that_names_no_file_is_a_usage_error(tmp_path: Path, out: str) -> None:
    done = sessionref("batch", "--root", SAMPLE, "--out", out, cwd=tmp_path)
    assert (
        usage_error(done) == f"sessionref batch: error: argument --out: {out!r} is not a file name"
    )
    assert list(tmp_path.iterdir()) == []


def test_out_dash_writes_the_lines_to_stdout(tmp_path: Path) -> None:
    done = sessionref("batch", "--root", SAMPLE, "--out", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["sessionId"] for line in done.stdout.splitlines()] == SAMPLE_IDS
    assert done.stderr == b"4 sessions: 4 written, 0 failed \xe2\x86\x92 stdout\n"
    assert list(tmp_path.iterdir()) == []
    resumed = sessionref("batch", "--root", SAMPLE, "--out", "-", "--resume", cwd=tmp_path)
    assert usage_error(resumed).endswith("error: --resume needs an --out file, not - (stdout)")


# 2. stdout errors


@pytest.mark.parametrize(
    "args",
    [
        ["candidates", "--root", SAMPLE, "--json"],
        ["demo"],
        ["snapshot", "--root", SAMPLE, SAMPLE_IDS[0]],
        ["batch", "--root", SAMPLE, "--out", "-"],
        ["search", "--root", SAMPLE, "--no-index", "auth"],  # found by a newcomer's trial
        ["search", "--root", SAMPLE, "--no-index", "auth", "--json"],
        ["conform"],
    ],
)
def test_a_full_disk_is_one_line(args: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        done = sessionref(*args, stdout=full, input=b'{"op":"encode","id":"s"}\n')
    assert (done.returncode, done.stderr) == (1, b"cannot write output: No space left on device\n")


def test_stdout_is_written_in_one_place() -> None:
    # Every command writes stdout through cli.process, which makes a failed write one line:
    # search and conform wrote sys.stdout.buffer themselves and showed a traceback instead.
    writers = [
        path.name
        for path in Path(main.__code__.co_filename).parent.glob("*.py")
        if "sys.stdout.buffer" in path.read_text(encoding="utf-8")
    ]
    assert writers == ["process.py"]


@pytest.mark.parametrize("args", [["demo"], ["batch", "--root", SAMPLE, "--out", "-"]])
def test_a_closed_stdout_ends_quietly_with_status_0(args: list[str]) -> None:
    read, write = os.pipe()
    os.close(read)  # closed before the command writes: every write fails with EPIPE
    try:
        done = sessionref(*args, stdout=write)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, b"")


def test_a_reader_that_stops_early_ends_it_quietly() -> None:
    """As ``sessionref demo | head -1``: the status is the same whenever the reader goes."""
    running = subprocess.Popen(
        [sys.executable, "-m", "sessionref", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert running.stdout is not None and running.stderr is not None
    running.stdout.readline()
    running.stdout.close()
    err = running.stderr.read()
    assert (running.wait(PATIENCE), err) == (0, b"")


# 3. a --scheduler that is not a dask scheduler


@pytest.fixture(params=["silent", "http"])
def not_a_scheduler(request: pytest.FixtureRequest) -> Iterator[str]:
    """A local TCP server that accepts and says nothing, or answers as an HTTP server."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            accepted.append(connection)
            if request.param == "http":
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for connection in accepted:
            connection.close()


def test_a_server_that_is_not_a_dask_scheduler_is_one_line(
    not_a_scheduler: str, tmp_path: Path
) -> None:
    out = tmp_path / "o.jsonl"
    options = ("--engine", "dask", "--scheduler", not_a_scheduler)
    done = sessionref("batch", "--root", SAMPLE, "--out", str(out), *options)
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.decode().splitlines()
    code, message = line.split(": ", 1)
    assert code == "SESSION_REFERENCE_INVALID_CONFIG"
    assert message.startswith(f"cannot connect to the dask scheduler {not_a_scheduler}: ")
    assert not out.exists()


# 4. a signal during start-up


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("command", ["batch", "snapshot", "candidates"])
def test_a_signal_while_a_command_loads_is_one_line(
    command: str, signum: int, status: int, tmp_path: Path
) -> None:
    """The signal arrives while ``main`` imports the command's module (the heavy part)."""
    code = f"""
import importlib, os, sys
from sessionref.cli import main
real = importlib.import_module
def import_module(name, *rest):
    if name.startswith("sessionref.cli.{command}"):
        os.kill(os.getpid(), {int(signum)})
    return real(name, *rest)
importlib.import_module = import_module
sys.argv = ["sessionref", "{command}", "--root", {SAMPLE!r}, "--out", "o", "x"][:5]
sys.exit(main())
"""
    done = run_script(code, capture_output=True, timeout=PATIENCE, cwd=tmp_path)
    assert (done.returncode, done.stderr, done.stdout) == (status, b"interrupted\n", b"")


def test_importing_the_command_line_loads_nothing_but_os_and_signal() -> None:
    """Found by a newcomer's trial: a Ctrl-C while ``sessionref.cli`` imported its stream and
    signal helpers (threading, io, ...) printed Python's traceback. What ``main`` needs before
    its handlers are set is ``os`` and ``signal`` and the modules they load themselves."""
    code = """
import sys
before = set(sys.modules)
import __future__, importlib, os, signal
theirs = set(sys.modules) - before
import sessionref.cli
print(sorted(set(sys.modules) - before - theirs))
"""
    done = run_script(code, capture_output=True, timeout=PATIENCE)
    assert done.stdout.decode().strip() == str(
        ["sessionref", "sessionref.cli", "sessionref.cli.early"]
    )


# 6, 7. the batch summary and --resume


def test_the_summary_counts_failures_apart_from_written(tmp_path: Path) -> None:
    root = store_with_a_corrupt_log(tmp_path / "store")
    out = tmp_path / "o.jsonl"
    done = sessionref("batch", "--root", str(root), "--out", str(out))
    assert done.returncode == 1
    assert done.stderr.decode() == f'4 sessions: 3 written, 1 failed → {out} (failed: "bad")\n'


def test_resume_says_what_was_already_done(tmp_path: Path) -> None:
    root = store_with_a_corrupt_log(tmp_path / "store")
    out = tmp_path / "o.jsonl"
    sessionref("batch", "--root", str(root), "--out", str(out))
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:2]))  # "bad" (newest) and one good session
    done = sessionref("batch", "--root", str(root), "--out", str(out), "--resume")
    assert done.returncode == 1
    assert done.stderr.decode() == (
        f"4 sessions: 2 already done, 2 written, 0 failed → {out}; "
        "1 failed line kept (--retry-failed retries it)\n"
    )
    assert out.read_bytes().splitlines(keepends=True) == lines


def test_resume_warns_of_sessions_from_another_store(tmp_path: Path) -> None:
    root = store_with_a_corrupt_log(tmp_path / "store")
    out = tmp_path / "o.jsonl"
    assert sessionref("batch", "--root", SAMPLE, "--out", str(out)).returncode == 0
    done = sessionref("batch", "--root", str(root), "--out", str(out), "--resume")
    warning, summary = done.stderr.decode().splitlines()
    assert warning == (
        f"warning: {out} holds 4 sessions not in --root {root} "
        f'(such as "{min(SAMPLE_IDS)}"): was it written from another store?'
    )
    assert summary.startswith("4 sessions: 3 written, 1 failed")


# 8. logs passed over, said by every command


def test_snapshot_counts_logs_passed_over(tmp_path: Path) -> None:
    write_session_store(tmp_path, [{"header": header("s"), "events": [user(0, "q")]}])
    broken = tmp_path / "--w--" / "broken" / "session.jsonl"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"not a header\n")
    done = sessionref("snapshot", "--root", str(tmp_path), "s")
    assert done.returncode == 0
    assert done.stderr == b"note: 1 log passed over (--verbose lists them)\n"


def test_an_entry_in_place_of_a_log_is_named_with_its_own_reason(tmp_path: Path) -> None:
    """A FIFO and a directory where logs belong are passed over, each said with its reason,
    and a session whose log is one of them is missing because of it, not of another log."""
    write_session_store(tmp_path, [{"header": header("s"), "events": [user(0, "q")]}])
    broken = tmp_path / "--w--" / "broken" / "session.jsonl"
    fifo = tmp_path / "--w--" / "fifo" / "session.jsonl"
    folder = tmp_path / "--w--" / "folder" / "session.jsonl"
    for path in (broken, fifo, folder):
        path.parent.mkdir(parents=True)
    broken.write_bytes(b"not a header\n")
    os.mkfifo(fifo)
    folder.mkdir()
    done = sessionref("snapshot", "--root", str(tmp_path), "fifo")
    assert done.stderr.decode().splitlines() == [
        f'SESSION_REFERENCE_READ_FAILED: session "fifo" not found in --root {tmp_path}; '
        f"its log {fifo} was passed over: a FIFO in place of a log file"
    ]
    verbose = sessionref("snapshot", "--root", str(tmp_path), "s", "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    assert sorted(verbose.stderr.decode().splitlines()[:3]) == [
        f"passed over {broken}: line 1 is not a header the listing takes",
        f"passed over {fifo}: a FIFO in place of a log file",
        f"passed over {folder}: a directory in place of a log file",
    ]


def test_a_codex_rollout_passed_over_is_named_once(tmp_path: Path) -> None:
    """The Codex store's reason starts with the file; the line names it once, as for a DSH log."""
    name = "rollout-2025-06-01T10-00-00-0197a000-0000-7000-8000-0000000000aa.jsonl"
    rollout = tmp_path / "sessions" / "2025" / "06" / "01" / name
    rollout.parent.mkdir(parents=True)
    rollout.write_bytes(b'{"type":"response_item","payload":{}}\n')
    given = ["--root", str(tmp_path), "--harness", "codex", "--no-index", "--verbose"]
    done = sessionref("candidates", *given)
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode() == (
        f"passed over {rollout}: no session_meta line with an id in its first lines\n"
        "(no sessions)\n"
    )


# 9. --cwd


@pytest.mark.parametrize(
    "cwd", ["/home/dev/docs-site/", "/home/dev/./docs-site", "/home//dev/docs-site"]
)
def test_cwd_is_normalized(cwd: str) -> None:
    done = sessionref("candidates", "--root", SAMPLE, "--json", "--cwd", cwd)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["cwd"] == "/home/dev/docs-site"


def test_a_relative_cwd_is_made_absolute(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_session_store(
        tmp_path / "store",
        [
            {"header": header("mine", 1, cwd=str(project)), "events": []},
            {"header": header("newer-elsewhere", 2, cwd="/elsewhere"), "events": []},
        ],
    )
    args = ("candidates", "--root", "store", "--json", "--cwd", "project/")
    done = sessionref(*args, cwd=tmp_path)
    assert [c["sessionId"] for c in json.loads(done.stdout)] == ["mine", "newer-elsewhere"]


def test_candidates_rank_the_current_directory_first(tmp_path: Path) -> None:
    project = tmp_path / "payments-api"
    project.mkdir()
    write_session_store(
        tmp_path / "store",
        [
            {"header": header("mine", 1, cwd=str(project)), "events": []},
            {"header": header("newer-elsewhere", 2, cwd="/elsewhere"), "events": []},
        ],
    )
    done = sessionref("candidates", "--root", str(tmp_path / "store"), "--json", cwd=project)
    assert [c["sessionId"] for c in json.loads(done.stdout)] == ["mine", "newer-elsewhere"]


# 10. counts the library cannot take


@pytest.mark.parametrize("option", ["--max-bytes", "--max-log-bytes", "--max-line-bytes"])
@pytest.mark.parametrize("value", [str(MAX_SAFE_INTEGER + 1), "9" * 5000])
def test_counts_above_2_53_are_usage_errors(option: str, value: str) -> None:
    done = sessionref("snapshot", "--root", SAMPLE, option, value, SAMPLE_IDS[0])
    assert usage_error(done).endswith(
        f"argument {option}: {value!r} is too large (at most {MAX_SAFE_INTEGER})"
    )


@pytest.mark.parametrize("query", ["", "   ", "\t"])
def test_a_search_for_no_word_is_a_usage_error(query: str) -> None:
    """A newcomer's trial: a blank query said ``(no sessions match)`` with status 0."""
    done = sessionref("search", "--root", SAMPLE, "--no-index", query)
    assert usage_error(done) == "sessionref search: error: argument QUERY: holds no word to find"


#: A URI whose JSON is 5,000 arrays deep, which Python's parser refuses with RecursionError
#: (a tester of the MCP server: a traceback here, error code 0 there).
DEEP_URI = "dsh-session:" + base64.urlsafe_b64encode(b"[" * 5000).decode().rstrip("=")


@pytest.mark.parametrize("command", ["snapshot", "export", "show"])
@pytest.mark.parametrize("uri", ["dsh-session:!!", "dsh-session:e30", "dsh-session:", DEEP_URI])
def test_a_bad_session_uri_is_one_line(command: str, uri: str) -> None:
    """A newcomer's trial: export and show printed a traceback for it (decoded by argparse)."""
    done = sessionref(command, "--root", SAMPLE, uri)
    assert done.returncode == 1
    assert done.stderr.decode() == (
        f'SESSION_REFERENCE_INVALID_REFERENCE: invalid session reference URI "{uri}"\n'
    )


ODD_IDS = {
    "s-\udcff": "s-\\udcff",
    "s-\x1b[2J\u009b\u202e\n": "s-\\u001b[2J\\u009b\\u202e\\u000a",
    'a"b\\u0041\\x': 'a""b\\u005cu0041\\x',
    '"q"': '""q""',
}
"""Session ids (a file name that is no UTF-8, escape sequences, a bidi override, a line
break, the text of an escape, double quotes) and how a message shows each: the line's own
escapes, once, and each double quote in the quoted id doubled (``"a""b"`` is the id ``a"b``,
where ``"a"b"`` could be ``a`` followed by text)."""


@pytest.mark.parametrize("session_id", ODD_IDS)
def test_a_message_quoting_an_odd_id_escapes_it_once(tmp_path: Path, session_id: str) -> None:
    """A trial: a message quoted an id as JSON writes it, and the line's writer then escaped
    the backslash of each JSON escape again, so that a person read ``"s-\\u005cudcff"`` for
    ``"s-\\udcff"``, and ``"s-\\u005cu001b[2J\\u009b"`` (JSON's escape twice, the line's
    once) for an escape sequence. Every quoted text is now escaped by the line alone."""
    root = tmp_path / "store"
    write_session_store(root, [session_log(session_id, 1000, "/w", "Odd", "hello")])
    uri, shown = encode_session_reference_uri(session_id), ODD_IDS[session_id]
    lines = {
        ("snapshot", "--target", uri): (
            f'SESSION_REFERENCE_SELF_REFERENCE: --target "{shown}" is also given as a SESSION'
        ),
        ("show", "--max-bytes", "100"): (
            f'SESSION_REFERENCE_BUDGET_EXCEEDED: --max-bytes 100 is too small for session "{shown}"'
            ": even cut short, its snapshot needs more"
        ),
    }
    for args, line in lines.items():
        done = sessionref(*args, "--root", str(root), uri)
        assert (done.returncode, done.stderr.decode()) == (1, line + "\n")


def test_a_search_that_finds_nothing_quotes_its_query_one_line_and_terminal_safe(
    tmp_path: Path,
) -> None:
    """A trial: the query was written raw to stderr, its C1 controls and bidi controls too."""
    root = tmp_path / "store"
    write_session_store(root, [session_log("s-1", 1000, "/w", "Odd", "hello")])
    done = sessionref("search", "--no-index", "--root", str(root), "zz\u009b\x1b\u202e")
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr.decode() == '(no sessions match "zz\\u009b\\u001b\\u202e")\n'


@pytest.mark.parametrize("command", ["snapshot", "export", "show"])
@pytest.mark.parametrize("prefix", ["see ", " ", "s-alpha "])
def test_a_uri_after_other_text_is_not_looked_up_as_an_id(command: str, prefix: str) -> None:
    """It was looked up whole as an id and reported as a missing session."""
    argument = prefix + "dsh-session:InMtYmV0YSI"
    done = sessionref(command, "--root", SAMPLE, argument)
    assert done.returncode == 1
    assert done.stderr.decode() == (
        f'SESSION_REFERENCE_INVALID_REFERENCE: not one URI: "{argument}"\n'
    )


def test_the_largest_count_is_taken() -> None:
    done = sessionref("snapshot", "--root", SAMPLE, "--max-bytes", str(MAX_SAFE_INTEGER), "x")
    assert done.returncode == 1  # past the parser: the session is missing
    assert done.stderr.startswith(b"SESSION_REFERENCE_READ_FAILED: ")


# 11. smaller things


def test_an_unknown_command_does_not_offer_hidden_ones() -> None:
    message = usage_error(sessionref("foo"))
    assert message == (
        "sessionref: error: argument command: invalid choice: 'foo' "
        "(choose from 'snapshot', 'candidates', 'batch', 'demo', 'index', 'search', 'mcp', "
        "'export', 'show')"
    )
    assert "conform" not in message


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--root", SAMPLE, "candidates"],
            "sessionref: error: --root is an option of the command: give it after the "
            "command (sessionref candidates --root …)",
        ),
        (
            ["--json", "candidates", "--root", SAMPLE],
            "sessionref: error: --json is an option of the command: give it after the "
            "command (sessionref candidates --json …)",
        ),
        (
            ["--max-bytes=10", "snapshot", "x"],
            "sessionref: error: --max-bytes is an option of the command: give it after the "
            "command (sessionref snapshot --max-bytes …)",
        ),
        (
            ["-v"],
            "sessionref: error: -v is an option of the command: give it after the "
            "command (sessionref COMMAND -v …)",
        ),
    ],
)
def test_an_option_before_the_command_says_where_it_goes(args: list[str], line: str) -> None:
    """A newcomer's trial: ``sessionref --root DIR candidates`` (as ``git -C DIR log`` goes)
    said ``invalid choice: 'DIR'``, and ``sessionref --json candidates`` that candidates has
    no ``--json``."""
    done = sessionref(*args)
    assert (done.returncode, done.stdout, done.stderr.decode()) == (2, b"", line + "\n")


@pytest.mark.parametrize("args", [["--version"], ["--vers"], ["-h"], ["--help"], ["--he"]])
def test_the_options_of_sessionref_itself_still_go_first(args: list[str]) -> None:
    done = sessionref(*args)
    assert done.returncode == 0
    assert done.stdout.startswith((b"sessionref ", b"usage: sessionref"))


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["demo", "extra"], "sessionref demo: error: unrecognized arguments: extra"),
        (
            ["snapshot", "--max-bytes", "0", "s"],
            "sessionref snapshot: error: argument --max-bytes: '0' is not a positive integer",
        ),
        (["batch"], "sessionref batch: error: the following arguments are required: --out"),
    ],
)
def test_a_usage_error_is_one_line_naming_the_command(args: list[str], line: str) -> None:
    # One line, as every error of the command line; a newcomer's trial found the usage block
    # printed above it. --help shows the usage.
    done = sessionref(*args)
    assert (done.returncode, done.stdout, done.stderr.decode()) == (2, b"", line + "\n")


@pytest.mark.parametrize("command", ["snapshot", "candidates", "batch", "search", "index"])
def test_help_gives_each_default_once(command: str) -> None:
    # --root's help says its default in words; argparse added "(default: [])" after it.
    done = sessionref(command, "--help")
    assert done.returncode == 0
    entries = re.split(rb"\n  (?=-)", done.stdout.split(b"\noptions:\n")[1])
    assert [entry.split()[0] for entry in entries if entry.count(b"(default:") > 1] == []
    assert b"(default: [])" not in done.stdout


COMMANDS_WITHOUT_A_BUDGET = ["candidates", "search", "export"]


@pytest.mark.parametrize(
    "command", [*COMMANDS_WITHOUT_A_BUDGET, "snapshot", "show", "batch", "mcp"]
)
def test_help_says_what_this_command_does(command: str) -> None:
    # A newcomer's trial found -v promising "what each snapshot cut" in commands that make
    # no snapshot, and --redact "before the budget" in commands that have none.
    text = b" ".join(sessionref(command, "--help").stdout.split())
    assert (b"snapshot cut" in text) == (command == "snapshot")
    assert (b"budget" in text) == (command not in COMMANDS_WITHOUT_A_BUDGET)


def test_the_table_aligns_wide_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_session_store(
        tmp_path,
        [
            {"header": header("中文会话", 2, cwd="/工作"), "events": []},
            {"header": header("ascii", 1, cwd="/w"), "events": []},
        ],
    )
    assert main(["candidates", "--root", str(tmp_path), "--cwd", "/w"]) == 0
    rows = capsys.readouterr().out.splitlines()
    # "中文会话" is 4 characters, 8 columns wide: the next column starts 2 + 8 columns on.
    columns = [row[:18] + "|" + row[18:] for row in rows]
    assert columns[1].startswith("1970-01-01 00:00  |ascii     /w")
    assert columns[2].startswith("1970-01-01 00:00  |中文会话  /工作")


def test_verbose_snapshot_says_what_it_cut() -> None:
    args = [
        "snapshot",
        "--root",
        SAMPLE,
        "--max-bytes",
        "700",
        "--label-from",
        "title",
        SAMPLE_IDS[0],
    ]
    quiet = sessionref(*args)
    assert (quiet.returncode, quiet.stderr) == (0, b"")
    verbose = sessionref(*args, "--verbose")
    assert verbose.stdout == quiet.stdout
    assert verbose.stderr.decode() == (
        "note: Refactor auth middleware to JWT: kept 3 of 4 messages, omitted 165 bytes, "
        "compacted\n"
    )


def test_an_empty_label_is_kept() -> None:
    done = sessionref("snapshot", "--root", SAMPLE, "--json", "--label", "", SAMPLE_IDS[2])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["source"]["references"][0]["label"] == ""
