"""The command line as a user meets it: output, help, exit codes, one-line errors in its terms."""

from __future__ import annotations

import argparse
import importlib
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from sessionref.batch.core import LABELS
from sessionref.cli.app import COMMANDS, build_parser, main
from sessionref.cli.common import LABEL_SOURCES
from sessionref.cli.demo import SAMPLE_CWD, sample_root
from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.pipeline.escape_and_serialize import PROMPT_PREFIX
from sessionref.testing.store import write_session_store
from tests.conftest import CACHE
from tests.logs import assistant, header, title, turn_end, user

AUTH = "7f3c1e2a-auth-refactor"
AUTH_TITLE = "Refactor auth middleware to JWT"
README = Path(__file__).resolve().parent.parent / "README.md"
STORE_SAID = f"The sample store is {sample_root()}; every command reads it with --root:"


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sessionref", *args],
        capture_output=True,
        env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C", "PATH": "", "XDG_CACHE_HOME": CACHE},
    )


def one_error_line(done: subprocess.CompletedProcess[bytes], code: str) -> str:
    """The message of the single ``CODE: message`` line a failed command printed."""
    assert done.returncode == 1, done.stderr
    assert done.stdout == b""
    lines = done.stderr.decode("utf-8").splitlines()
    assert len(lines) == 1 and lines[0].startswith(code + ": "), lines
    return lines[0].removeprefix(code + ": ")


def titled_store(root: Path) -> Path:
    """Two sessions, one titled, plus a log whose header does not read."""
    events = [user(0, "中文 🙂"), assistant(1, "é"), title(2, "T")]
    write_session_store(root, [{"header": header("s", cwd=None), "events": events}])
    write_session_store(root, [{"header": header("u", cwd="/w"), "events": [user(0, "q")]}])
    broken = root / "--w--" / "broken" / "session.jsonl"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"not a header\n")
    return root


def test_demo_prints_one_bounded_snapshot() -> None:
    done = run("demo")
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode("utf-8")
    assert out.count("<referenced-sessions>") == 1
    assert out.count("</referenced-sessions>") == 1
    assert AUTH_TITLE in out
    assert "\\u003c/referenced-sessions>" in out


def test_demo_says_whose_sessions_come_first_and_how_to_go_on() -> None:
    """A newcomer's trial: the demo listed "this project first" (which project, from a shell in
    any directory?) and never said where the sample store is, so no other command could be
    tried on it after `pip install .`. Each command it suggests runs."""
    done = run("demo")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode("utf-8").splitlines()
    assert SAMPLE_CWD in lines[0]
    suggested = [shlex.split(line) for line in lines[lines.index(STORE_SAID) + 1 :]]
    assert len(suggested) == 3
    assert {words[3] for words in suggested} >= {"candidates", "show"}
    for words in suggested:
        assert words[:3] == [sys.executable, "-m", "sessionref"]  # PATH holds no sessionref
        assert words[words.index("--root") + 1] == str(sample_root())
        tried = run(*words[3:])
        assert tried.returncode == 0 and tried.stdout and not tried.stderr, (words, tried)


def test_demo_suggests_commands_as_the_shell_that_ran_it_can_run_them(tmp_path: Path) -> None:
    """A newcomer's trial: after the quick start (`.venv/bin/sessionref demo`) the demo
    suggested `sessionref candidates …`, which that shell could not find: sessionref was
    not on PATH. It now names the program as it was started, and `sessionref` only when that
    name finds the same program."""
    script = Path(sys.executable).parent / "sessionref"
    env = {"LC_ALL": "C", "XDG_CACHE_HOME": CACHE}
    for path, expected in (("", str(script)), (str(script.parent), "sessionref")):
        done = subprocess.run([str(script), "demo"], capture_output=True, env={**env, "PATH": path})
        assert done.returncode == 0, done.stderr
        lines = done.stdout.decode("utf-8").splitlines()
        suggested = [shlex.split(line) for line in lines[lines.index(STORE_SAID) + 1 :]]
        assert [words[0] for words in suggested] == [expected] * 3


def test_demo_json_is_one_json_document() -> None:
    done = run("demo", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["candidates"][0]["sessionId"] == AUTH
    labels = [stats["label"] for stats in document["context"]["source"]["references"]]
    assert labels == [c["label"] for c in document["candidates"][:2]]


def test_demo_json_lists_the_candidates_as_the_candidates_command_does() -> None:
    """A newcomer's trial: ``demo --json``'s candidates had no ``harness``, which
    ``candidates --json`` gives each, for the same store and project."""
    sample = str(sample_root())
    listed = run("candidates", "--root", sample, "--cwd", SAMPLE_CWD, "--json", "--no-index")
    assert listed.returncode == 0, listed.stderr
    demo = run("demo", "--json")
    assert json.loads(demo.stdout)["candidates"] == json.loads(listed.stdout)


def test_snapshot_output_is_utf8_whatever_the_locale(tmp_path: Path) -> None:
    done = run("snapshot", "--root", str(titled_store(tmp_path)), "s")
    assert done.returncode == 0, done.stderr
    prompt = done.stdout.decode("utf-8")
    assert prompt.startswith(PROMPT_PREFIX) and prompt.endswith("</referenced-sessions>\n")
    assert "中文 🙂" in prompt


def labels_of(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["snapshot", "--json", *argv]) == 0
    return [stats["label"] for stats in json.loads(capsys.readouterr().out)["source"]["references"]]


def test_labels_by_id_by_default_as_the_harness_and_batch_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = ["--root", str(titled_store(tmp_path))]
    assert labels_of(capsys, *root, "s", "u") == ["s", "u"]
    assert labels_of(capsys, *root, "--label-from", "title", "s", "u") == ["T", "u"]
    out = tmp_path / "batch.jsonl"
    assert main(["batch", *root, "--out", str(out)]) == 0
    assert sorted(json.loads(line)["label"] for line in out.read_bytes().splitlines()) == ["s", "u"]
    assert labels_of(capsys, *root, "--label", "A", "--label", "B", "s", "u") == ["A", "B"]
    with pytest.raises(SystemExit) as usage:
        main(["snapshot", *root, "--label", "A", "s", "u"])
    assert usage.value.code == 2
    assert "--label is given 1 time for 2 sessions" in capsys.readouterr().err


def test_sessions_by_uri() -> None:
    uri = encode_session_reference_uri(AUTH)
    done = run("snapshot", "--root", str(sample_root()), "--json", "--label-from", "title", uri)
    (stats,) = json.loads(done.stdout)["source"]["references"]
    assert stats["sessionId"] == AUTH and stats["label"] == AUTH_TITLE and stats["compacted"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ["dsh-session:!!"],
            "SESSION_REFERENCE_INVALID_REFERENCE",
            'invalid session reference URI "dsh-session:!!"',
        ),
        (
            ["a", "b", "c", "d", "a"],
            "SESSION_REFERENCE_TOO_MANY",
            "4 sessions given; at most 3 at once",
        ),
        (
            ["--target", "a", "a"],
            "SESSION_REFERENCE_SELF_REFERENCE",
            '--target "a" is also given as a SESSION',
        ),
    ],
)
def test_argument_errors_come_before_the_store_is_read(
    args: list[str], code: str, message: str
) -> None:
    assert one_error_line(run("snapshot", "--root", "/nonexistent", *args), code) == message


NO_SESSIONS = "holds no sessions (looked for DSH: <project>/<session>/session.jsonl or "


@pytest.mark.parametrize("command", ["snapshot", "candidates", "batch", "search", "index"])
@pytest.mark.parametrize(
    ("root", "complaint"),
    [
        ("missing", "no such directory"),
        ("file", "not a directory"),
        ("other", NO_SESSIONS),
        ("empty", NO_SESSIONS),
    ],
)
def test_a_wrong_root_is_one_line_and_exit_1(
    tmp_path: Path, command: str, root: str, complaint: str
) -> None:
    """The one root rule: every command refuses a root that holds no sessions (an empty
    directory too), naming what it looked for."""
    (tmp_path / "file").write_text("x")
    (tmp_path / "other" / "etc").mkdir(parents=True)
    (tmp_path / "other" / "passwd").write_text("x")
    (tmp_path / "empty").mkdir()
    path = tmp_path / root
    extra = {
        "snapshot": ["s"],
        "candidates": [],
        "batch": ["--out", str(tmp_path / "o.jsonl")],
        "search": ["word", "--index", str(tmp_path / "i.sqlite")],
        "index": ["--index", str(tmp_path / "i.sqlite")],
    }
    message = one_error_line(
        run(command, "--root", str(path), *extra[command]), "SESSION_REFERENCE_INVALID_CONFIG"
    )
    assert message.startswith(f"--root {path}: {complaint}")
    assert not (tmp_path / "o.jsonl").exists()
    assert not (tmp_path / "i.sqlite").exists()


def test_logs_passed_over_are_counted_and_listed_with_verbose(tmp_path: Path) -> None:
    root = str(titled_store(tmp_path))
    done = run("candidates", "--root", root)
    assert done.returncode == 0
    assert done.stderr == b"note: 1 log passed over (--verbose lists them)\n"
    verbose = run("candidates", "--root", root, "--verbose")
    broken = tmp_path / "--w--" / "broken" / "session.jsonl"
    assert verbose.stderr.decode().startswith(
        f"passed over {broken}: line 1 is not a header the listing takes"
    )
    missing = one_error_line(
        run("snapshot", "--root", root, "nope"), "SESSION_REFERENCE_READ_FAILED"
    )
    assert missing == (
        f'session "nope" not found in --root {tmp_path}; 1 log passed over (--verbose lists them)'
    )


@pytest.mark.parametrize(
    "command",
    [
        ["candidates"],
        ["search", "q", "--no-index"],
        ["index", "--index", "{tmp}/indexes/"],
        ["snapshot", "s"],
        ["show", "s"],
        ["export", "s"],
        ["batch", "--out", "{tmp}/out.jsonl"],
    ],
)
def test_verbose_lists_the_logs_passed_over_and_points_nowhere_else(
    tmp_path: Path, command: list[str]
) -> None:
    """Each command: the listing, and no note telling to pass --verbose, which was passed."""
    root = titled_store(tmp_path / "store")
    given = [arg.replace("{tmp}", str(tmp_path)) for arg in command]
    done = run(*given, "--root", str(root), "--verbose")
    assert done.returncode == 0, done.stderr
    broken = root / "--w--" / "broken" / "session.jsonl"
    listed = f"passed over {broken}: line 1 is not a header the listing takes\n"
    written = f"2 sessions: 2 written, 0 failed \u2192 {tmp_path}/out.jsonl\n"
    assert done.stderr.decode() == listed + (written if command[0] == "batch" else "")


def test_a_missing_session_counts_the_logs_verbose_listed_without_pointing_to_it(
    tmp_path: Path,
) -> None:
    root = titled_store(tmp_path)
    done = run("snapshot", "--root", str(root), "nope", "--verbose")
    assert (done.returncode, done.stdout) == (1, b"")
    broken = root / "--w--" / "broken" / "session.jsonl"
    assert done.stderr.decode().splitlines() == [
        f"passed over {broken}: line 1 is not a header the listing takes",
        "SESSION_REFERENCE_READ_FAILED: "
        f'session "nope" not found in --root {root}; 1 log passed over',
    ]


def test_errors_speak_the_command_line() -> None:
    done = run("snapshot", "--root", str(sample_root()), "--max-bytes", "50", AUTH)
    message = one_error_line(done, "SESSION_REFERENCE_BUDGET_EXCEEDED")
    assert message.startswith(f'--max-bytes 50 is too small for session "{AUTH}"')
    usage = run("snapshot", "--root", "x", "--max-bytes", "lots", "s")
    assert usage.returncode == 2
    assert usage.stderr.decode().endswith(
        "argument --max-bytes: 'lots' is not a positive integer\n"
    )


@pytest.mark.parametrize("count", [" 100", "1_000", "\u0663\u0660\u0660", "+5", "1e3", "-1"])
def test_a_count_is_ascii_digits_alone(count: str) -> None:
    # int() takes the first four (a newcomer's trial passed --max-bytes '1_000' and Arabic-
    # Indic digits); the command line takes what it documents, a positive integer.
    usage = run("snapshot", "--root", "x", f"--max-bytes={count}", "s")
    assert usage.returncode == 2
    assert usage.stderr.decode() == (
        f"sessionref snapshot: error: argument --max-bytes: {count!r} is not a positive integer\n"
    )


def test_a_read_failure_names_the_file(tmp_path: Path) -> None:
    events = [user(0, "q"), turn_end(1)]
    (path,) = write_session_store(tmp_path, [{"header": header("s"), "events": events}])
    lines = path.read_bytes().splitlines(keepends=True)
    # A line that is not JSON before the last turn/end: the harness refuses the log.
    path.write_bytes(b"".join([*lines[:2], b"not json\n", *lines[2:]]))
    message = one_error_line(
        run("snapshot", "--root", str(tmp_path), "s"), "SESSION_REFERENCE_READ_FAILED"
    )
    assert message.startswith(f'cannot read session "s" from {path}: ')


def test_store_limits_on_the_command_line(tmp_path: Path) -> None:
    write_session_store(tmp_path, [{"header": header("s"), "events": [user(0, "q" * 500)]}])
    assert run("snapshot", "--root", str(tmp_path), "s").returncode == 0
    for option, words in (
        ("--max-log-bytes", "exceeds 400 bytes"),
        ("--max-line-bytes", "longer than 400"),
    ):
        done = run("snapshot", "--root", str(tmp_path), option, "400", "s")
        assert words in one_error_line(done, "SESSION_REFERENCE_READ_FAILED")


def test_usage_errors_exit_2() -> None:
    assert run("snapshot").returncode == 2
    assert run("snapshot", "--root", "x", "--max-bytes", "0", "s").returncode == 2
    assert run("nope").returncode == 2


def test_bare_command_is_wrong_usage_and_helps_and_version_answers() -> None:
    bare = run()
    assert bare.returncode == 2 and bare.stdout == b""
    assert bare.stderr == run("--help").stdout
    shown = bare.stderr.decode()
    assert (
        "{snapshot,candidates,batch,demo,index,search,mcp,export,show}" in shown
        and "conform" not in shown
    )
    assert "exit status:" in shown and "130" in shown
    version = run("--version")
    assert re.fullmatch(rb"sessionref \d+\.\d+\.\d+\S*\n", version.stdout), version.stdout


def test_every_option_is_explained_with_its_default() -> None:
    for name, sub in subcommands().items():
        assert (sub.epilog and "examples:" in sub.epilog) or name == "conform", name
        assert "(default: )" not in sub.format_help(), name  # an empty default is not shown
        for action in sub._actions:
            assert action.help, (name, action.option_strings)
            default = action.default
            in_words = "(default: " in action.help  # as --root's: $SESSIONREF_ROOT, else …
            if action.option_strings and default not in (None, False, "", "==SUPPRESS=="):
                assert in_words or f"(default: {default})" in " ".join(sub.format_help().split()), (
                    name,
                    action.option_strings,
                )


def test_every_command_reports_its_errors_as_one_line() -> None:
    for command in COMMANDS:
        run = importlib.import_module(command.module).run
        assert run.__wrapped__, f"{command.module}.run needs @reporting_errors"


def test_label_choices_are_the_engines() -> None:
    assert LABEL_SOURCES == LABELS


def test_candidates_table_has_a_header_and_ids(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["candidates", "--root", str(sample_root()), "--cwd", "/home/dev/payments-api"]
    assert main([*argv, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [c.get("cwd") for c in found] == [
        "/home/dev/payments-api",
        "/home/dev/payments-api",
        None,
        "/home/dev/docs-site",
    ]
    assert all(c["mention"].startswith("@[") for c in found)
    assert main(argv) == 0
    head, *rows = capsys.readouterr().out.splitlines()
    assert head.split() == ["CREATED", "(UTC)", "ID", "CWD", "LABEL"]
    assert [row.split()[2] for row in rows] == [c["sessionId"] for c in found]
    assert main([*argv, "--query", "DARK", "--limit", "1"]) == 0
    (_, line) = capsys.readouterr().out.splitlines()
    assert "Docs site: dark mode" in line


def test_a_lone_surrogate_is_a_replacement_character_in_tables_as_in_the_views(
    tmp_path: Path,
) -> None:
    """Not a blank: a table shows that something was there, as export and show do."""
    events = [user(0, "q"), title(1, "surrogate \ud800 end")]
    write_session_store(tmp_path, [{"header": header("s", cwd="/w\udc00"), "events": events}])
    listed = run("candidates", "--root", str(tmp_path), "--no-index")
    assert listed.stdout.decode().split("\n") == [
        "CREATED (UTC)     ID  CWD  LABEL",
        "1970-01-01 00:00  s   /w\ufffd  surrogate \ufffd end",
        "",
    ]
    found = run("search", "q", "--root", str(tmp_path), "--no-index")
    assert found.stdout.decode().splitlines()[0] == "surrogate \ufffd end  (/w\ufffd)"


# Creation times past the year 9999, where Python's dates end, as GNU date writes them
# (date -u -d @SECONDS '+%Y-%m-%d %H:%M'): the largest safe integer, the last time a
# JavaScript Date holds (8.64e15 ms, which it writes +275760-09-13T00:00:00.000Z) and the
# first moment of the year 10000.
FAR_TIMES = {
    "max-safe": (2**53 - 1, "287396-10-12 08:59"),
    "js-last": (8_640_000_000_000_000, "275760-09-13 00:00"),
    "y10k": (253_402_300_800_000, "10000-01-01 00:00"),
}


def test_a_time_past_the_year_9999_is_shown_in_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log may say any safe integer as its creation time, and the harness lists it; the
    table died with a traceback (``year 287396 is out of range``) where --json listed it."""
    logs = [
        {"header": header(session_id, created_at), "events": [user(0, "q")]}
        for session_id, (created_at, _) in FAR_TIMES.items()
    ]
    write_session_store(tmp_path, logs)
    assert main(["candidates", "--root", str(tmp_path), "--no-index", "--cwd", "/w"]) == 0
    _, *rows = capsys.readouterr().out.splitlines()
    shown = {row.split()[2]: " ".join(row.split()[:2]) for row in rows}
    assert shown == {session_id: text for session_id, (_, text) in FAR_TIMES.items()}


def test_a_search_that_cwd_empties_names_the_cwd(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A newcomer's trial: ``search auth --cwd DIR`` said ``(no sessions match "auth")``
    while sessions of other projects did match it; ``--cwd`` keeps only DIR's sessions."""
    args = ["search", "--root", str(sample_root()), "--no-index", "auth"]
    assert main(args) == 0
    assert "Refactor auth middleware to JWT" in capsys.readouterr().out  # it does match
    elsewhere = tmp_path / "elsewhere"
    assert main([*args, "--cwd", str(elsewhere)]) == 0
    assert capsys.readouterr() == ("", f'(no sessions of {elsewhere} match "auth")\n')


def test_candidates_with_no_match_say_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["candidates", "--root", str(sample_root()), "--query", "zz\n"]) == 0
    assert capsys.readouterr() == ("", '(no sessions match "zz\\u000a")\n')


def test_candidates_help_explains_the_order() -> None:
    shown = run("candidates", "--help").stdout.decode()
    words = " ".join(shown.split())
    assert "--cwd (by default the current directory) first, then sessions without a cwd" in words
    assert "newest first" in shown


def test_scheduler_needs_the_dask_engine_and_a_reachable_address(tmp_path: Path) -> None:
    done = run("batch", "--root", str(tmp_path), "--out", "o", "--scheduler", "tcp://x:1")
    assert done.returncode == 2
    assert done.stderr.decode().endswith("error: --scheduler needs --engine dask\n")
    options = ("--engine", "dask", "--scheduler", "inproc://10.0.0.1/42/1")
    done = run("batch", "--root", str(tmp_path), "--out", "o", *options)
    assert done.returncode == 2
    assert done.stderr.decode().endswith("an inproc:// address is not reachable from here\n")


@pytest.mark.parametrize("address", ["", "  "])
def test_an_empty_scheduler_address_is_a_usage_error(tmp_path: Path, address: str) -> None:
    """Not an attempt to reach a host named "" ("cannot reach the dask scheduler : Name or
    service not known")."""
    options = ("--engine", "dask", "--scheduler", address)
    done = run("batch", "--root", str(tmp_path), "--out", str(tmp_path / "o"), *options)
    assert done.returncode == 2
    assert done.stderr.decode().endswith("error: --scheduler needs an address\n")
    assert not (tmp_path / "o").exists()


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """Each command's parser, as ``sessionref COMMAND --help`` shows it."""
    (commands,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


def test_a_command_line_builds_the_parser_of_its_command_alone() -> None:
    # the nine other parsers took some 7 ms of a command's start; the main help lists all
    (commands,) = [
        a for a in build_parser(["show"])._actions if isinstance(a, argparse._SubParsersAction)
    ]
    assert list(commands.choices) == ["show"]
    assert list(subcommands()) == [command.name for command in COMMANDS]
    (listed,) = [a for a in build_parser([])._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(listed.choices) == [command.name for command in COMMANDS]


def synopsis() -> dict[str, set[str]]:
    """The options of each command in the README's command-line synopsis."""
    found = re.search(r"## Command line\n\n```\n(.*?)```", README.read_text("utf-8"), re.S)
    assert found is not None
    block = found.group(1)
    store_line = re.search(r"^\s*STORE OPTIONS:(.*)$", block, re.M)
    assert store_line is not None
    option = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)")
    options: dict[str, set[str]] = {}
    command = ""
    for line in block[: store_line.start()].splitlines():
        words = line.split("#")[0].split()
        if words[:1] == ["sessionref"]:
            command = words[1]
            options[command] = set()
        options[command] |= set(option.findall(" ".join(words)))
        if "[STORE OPTIONS]" in line:
            options[command] |= set(option.findall(store_line.group(1)))
    return options


def test_the_readme_synopsis_is_the_help() -> None:
    readme = synopsis()
    assert list(readme) == [command.name for command in COMMANDS]
    for name, sub in subcommands().items():
        named = {sub._option_string_actions[option].dest for option in readme[name]}
        in_help = {action.dest for action in sub._actions if action.option_strings} - {"help"}
        assert named == in_help, name


@pytest.mark.parametrize(("label", "shown"), [("", '""'), ("two\nlines", '"two\\nlines"')])
def test_a_note_names_a_blank_or_broken_label_in_json(label: str, shown: str) -> None:
    # A newcomer's trial found "note: : kept ..." for --label "": a label that shows nothing
    # or would break the line is written as a JSON string.
    done = run(
        "snapshot", "--root", str(sample_root()), "--label", label, "--max-bytes", "600", "-v", AUTH
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().startswith(f"note: {shown}: kept ")
    assert done.stderr.count(b"\n") == 1


CONTROL_BYTES = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
"""A C0 control but line feed, DEL, or a C1 control, as UTF-8 bytes."""


def test_file_names_reach_the_terminal_with_their_controls_escaped(tmp_path: Path) -> None:
    """A directory named with an OSC sequence (which sets a terminal's title) and one named
    with a line break: each log passed over is one line, its name escaped, on stderr."""
    root = titled_store(tmp_path / "store")
    names = {"\x1b]0;hi\x07": "\\u001b]0;hi\\u0007", "two\nlines\x9b": "two\\u000alines\\u009b"}
    for name in names:
        (root / "--p--" / name).mkdir(parents=True)
        (root / "--p--" / name / "session.jsonl").write_bytes(b"garbage\n")
    done = run("candidates", "--root", str(root), "-v", "--no-index")
    assert done.returncode == 0, done.stderr
    assert not CONTROL_BYTES.search(done.stderr), done.stderr
    reason = "line 1 is not a header the listing takes"
    shown = [f"--p--/{name}" for name in names.values()] + ["--w--/broken"]
    assert sorted(done.stderr.decode().splitlines()) == sorted(
        f"passed over {root}/{name}/session.jsonl: {reason}" for name in shown
    )


def test_an_error_line_escapes_the_controls_of_a_path(tmp_path: Path) -> None:
    missing = tmp_path / "no\x1b[2Jsuch" / "out.md"
    done = run("export", "--root", str(sample_root()), AUTH, "--out", str(missing))
    shown = str(missing).replace("\x1b", "\\u001b")
    assert one_error_line(done, "SESSION_REFERENCE_INVALID_CONFIG") == (
        f"--out {shown}: No such file or directory"
    )
    assert not CONTROL_BYTES.search(done.stderr)


def test_an_error_line_escapes_the_bidi_controls_of_a_path(tmp_path: Path) -> None:
    """A trial: a right-to-left override in a path reached the terminal as it was, so the
    line showed the rest of the path reversed (what is read is not what is there), while
    the views already wrote such controls as escapes."""
    missing = tmp_path / "a\u202ed.md\u2066x" / "out.md"
    done = run("export", "--root", str(sample_root()), AUTH, "--out", str(missing))
    assert one_error_line(done, "SESSION_REFERENCE_INVALID_CONFIG") == (
        f"--out {tmp_path}/a\\u202ed.md\\u2066x/out.md: No such file or directory"
    )


def test_an_error_line_tells_text_that_reads_as_an_escape_from_a_control(tmp_path: Path) -> None:
    """A review: a line feed was written as ``\\u000a`` and a backslash left as it was, so a
    path holding the text ``\\u000a`` printed as one holding a line break; and the error line
    was escaped twice on its way to stderr. Each ``\\uXXXX`` in the line now stands for one
    character, any other backslash for itself."""
    shown = {}
    for name in ("a\nb", "a\\u000ab", "c:\\x"):
        missing = tmp_path / name / "out.md"
        done = run("export", "--root", str(sample_root()), AUTH, "--out", str(missing))
        shown[name] = one_error_line(done, "SESSION_REFERENCE_INVALID_CONFIG")
    where = f"--out {tmp_path}"
    assert shown == {
        "a\nb": f"{where}/a\\u000ab/out.md: No such file or directory",
        "a\\u000ab": f"{where}/a\\u005cu000ab/out.md: No such file or directory",
        "c:\\x": f"{where}/c:\\x/out.md: No such file or directory",
    }


@pytest.mark.parametrize("command", ["candidates", "search"])
def test_index_and_no_index_together_are_wrong_usage(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A newcomer's trial: the README's synopsis has ``[--index PATH | --no-index]``, one or
    the other, but both were taken and ``--index`` silently ignored."""
    index = tmp_path / "i.sqlite"
    query = ["auth"] if command == "search" else []
    argv = [command, "--root", str(sample_root()), "--index", str(index), "--no-index", *query]
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    said = capsys.readouterr().err.splitlines()
    assert said[-1] == (
        f"sessionref {command}: error: argument --no-index: not allowed with argument --index"
    )
    assert not index.exists()
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "[--index PATH | --no-index]" in capsys.readouterr().out
