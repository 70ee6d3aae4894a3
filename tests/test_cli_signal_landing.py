"""A second signal that comes while a command stops on a first one, landing at each point of
the command line's own code (every call into ``sessionref.cli`` and the ``signal`` module)
between the first and the process's end, one run per point.

A trial sent two signals (INT/TERM or TERM/INT, at most 100 ms apart) near the end of
``sessionref batch --workers 2``: some runs ended with a ``Terminated`` traceback, some killed
by SIGINT. Landed at each point in turn, the second signal showed more: in the middle of a
hold (one signal's handler changed, the other's not yet) it lost the batch's finished lines
("interrupted before any session was done"), or replaced its line by a bare
``interrupted``, with the second signal's status; as ``main`` began to say the first, it
escaped as a traceback. The first signal decides: its status, its one line, and the lines
the batch finished stay in ``--out``. (The batch runs with ``--workers 1`` here: what it does
as it stops is the same, and each run is that much shorter.)

And one signal that comes as the command line sets its handlers at start-up.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_script
from tests.test_cli_interrupt import PATIENCE, temporary_files, write_small_store

SWEEP = r"""
import json, os, signal, sys
from sessionref.cli import batch, demo, main

command, folder, store = sys.argv[1], sys.argv[4], sys.argv[5:]
first, second = signal.Signals[sys.argv[2]], signal.Signals[sys.argv[3]]
WATCHED = (os.path.join("sessionref", "cli", ""), os.sep + "signal.py")
landing_at, seen, points = 0, 0, 0


def landing(frame, event, arg):
    # every call into the watched code after the first signal: the second comes at the
    # landing_at-th (its handler runs there, as the call begins)
    global seen
    name = frame.f_code.co_filename
    if event != "call" or not (WATCHED[0] in name or name.endswith(WATCHED[1])):
        return
    seen += 1
    os.write(points, f"{frame.f_code.co_name} ({os.path.basename(name)})\n".encode())
    if seen == landing_at:
        sys.setprofile(None)
        os.kill(os.getpid(), second)


def first_signal():
    try:
        os.kill(os.getpid(), first)
    finally:
        sys.setprofile(landing)


count = batch.Tally.count
context_for = demo.context_for


def counted_then_stopped(self, result):
    count(self, result)
    if self.written == 2:
        first_signal()


def stopped_before_the_context(*args, **kwargs):
    first_signal()
    return context_for(*args, **kwargs)


batch.Tally.count = counted_then_stopped
demo.context_for = stopped_before_the_context


def run(at):
    # a forked copy of this process runs the command, as its own command line
    run_folder = os.path.join(folder, str(at))
    os.mkdir(run_folder)
    sys.stdout.flush()
    child = os.fork()
    if child == 0:
        global landing_at, points
        landing_at = at
        points = os.open(os.path.join(run_folder, "points"), os.O_WRONLY | os.O_CREAT)
        for descriptor, name in ((1, "stdout"), (2, "stderr")):
            os.dup2(os.open(os.path.join(run_folder, name), os.O_WRONLY | os.O_CREAT), descriptor)
        out = os.path.join(run_folder, "out.jsonl")
        sys.argv = ["sessionref", command]
        if command == "batch":
            sys.argv += ["--root", *store, "--out", out, "--workers", "1"]
        sys.exit(main())
    status = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    def read(name):
        with open(os.path.join(run_folder, name), "rb") as file:
            return file.read().decode()
    reached = read("points").splitlines()
    print(json.dumps({
        "at": at,
        "point": reached[at - 1] if 0 < at <= len(reached) else None,
        "status": status,
        "stdout": read("stdout"),
        "stderr": read("stderr"),
        "reached": len(reached),
    }))
    return len(reached)


points_in_all = run(0)  # no second signal: how many points there are
for at in range(1, points_in_all + 1):
    run(at)
"""


def sweep(command: str, first: str, second: str, tmp_path: Path) -> list[dict[str, object]]:
    """One run of ``command`` for each point of the command line's code the second signal
    can land on, after the first stopped it: each run's outcome."""
    store = tmp_path / "store"
    write_small_store(store, 4)
    runs = tmp_path / "runs"
    runs.mkdir()
    done = run_script(
        SWEEP,
        command,
        first,
        second,
        str(runs),
        str(store),
        capture_output=True,
        timeout=PATIENCE * 4,
    )
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in done.stdout.splitlines()]


STATUS = {"SIGINT": 130, "SIGTERM": 143}
ORDERS = [("SIGINT", "SIGTERM"), ("SIGTERM", "SIGINT")]


@pytest.mark.parametrize(("first", "second"), ORDERS)
def test_a_second_signal_anywhere_leaves_the_batch_as_the_first_stopped_it(
    tmp_path: Path, first: str, second: str
) -> None:
    """The first signal came after 2 of 4 sessions were written: wherever the second lands,
    the batch exits with the first's status, says so in its one line, keeps the 2 lines."""
    outcomes = sweep("batch", first, second, tmp_path)
    assert len(outcomes) > 50  # the file kept, the line said, the process ended: many points
    wrong = []
    for outcome in outcomes:
        out = tmp_path / "runs" / str(outcome["at"]) / "out.jsonl"
        lines = out.read_bytes().splitlines(keepends=True) if out.exists() else []
        said = (
            f"interrupted: 2 of 4 sessions are in {out}; "
            "run the same command with --resume to do the rest\n"
        )
        kept = [json.loads(line)["sessionId"] for line in lines if line.endswith(b"\n")]
        if (outcome["status"], outcome["stderr"], kept, len(lines)) != (
            STATUS[first],
            said,
            ["s3", "s2"],
            2,
        ) or temporary_files(out.parent):
            wrong.append(outcome)
    assert wrong == []


@pytest.mark.parametrize(("first", "second"), ORDERS)
def test_a_second_signal_anywhere_leaves_one_line_and_the_first_status(
    tmp_path: Path, first: str, second: str
) -> None:
    """``demo`` does not catch the interruption: ``main`` says it. Wherever the second signal
    lands (once as ``main`` began to say the first, it escaped as a traceback), the command
    says ``interrupted`` once, and exits with the first's status."""
    outcomes = sweep("demo", first, second, tmp_path)
    assert len(outcomes) > 20
    wrong = [
        outcome
        for outcome in outcomes
        if (outcome["status"], outcome["stdout"], outcome["stderr"])
        != (STATUS[first], "", "interrupted\n")
    ]
    assert wrong == []


HANDLERS_BEING_SET = """
import os, signal, sys

set_handler = signal.signal

def set_then_signalled(signum, handler):
    old = set_handler(signum, handler)
    if signum == signal.SIGINT and callable(handler):  # SIGTERM's handler is not set yet
        os.kill(os.getpid(), signal.SIGTERM)
    return old

signal.signal = set_then_signalled
from sessionref.cli import main
sys.exit(main())
"""


def test_a_signal_as_the_handlers_are_set_is_one_line() -> None:
    """A SIGTERM that came as the command line set its handlers, SIGINT's set and SIGTERM's
    not yet, killed the process (status -15, no line): it now waits for both."""
    done = run_script(HANDLERS_BEING_SET, "demo", capture_output=True, timeout=PATIENCE)
    assert (done.returncode, done.stdout, done.stderr) == (143, b"", b"interrupted\n")
