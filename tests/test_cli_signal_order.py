"""Signals that come once a command has finished, and signals that come together.

A trial sent two signals near the end of ``sessionref batch``: when the batch had already put
its file in place and said its summary, a signal still added ``interrupted`` and made the
status 130 or 143. And of two signals waiting together for the main thread, CPython runs the
Python handlers in the order of their numbers (SIGINT's first), so a SIGTERM that came first
lost to the SIGINT after it. Each test runs the command line in its own process, as its own
``main``, and sends real signals to it at the point it names.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_script
from tests.test_cli_interrupt import PATIENCE, write_small_store

STATUS = {"SIGINT": 130, "SIGTERM": 143}

ALONE = """
import sys
from sessionref.cli import main

sys.exit(main())
"""
AFTER_MAIN = """
import os, signal, sys
from sessionref.cli import main

status = main()
os.kill(os.getpid(), signal.{signal})  # its handler runs as this call returns
os._exit(99)  # not reached: the handler ends the process
"""


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize(
    ("argv", "status"),
    [(["demo"], 0), (["snapshot", "--root", "/nonexistent", "x"], 1)],
    ids=["done", "failed"],
)
def test_a_signal_once_main_has_returned_leaves_the_commands_status(
    signal_name: str, argv: list[str], status: int
) -> None:
    """``main`` has returned the command's status (the interpreter is about to join threads
    and run exit functions): a signal now ends the process at once with that status, and
    adds no ``interrupted``; what the command wrote stands."""
    script = AFTER_MAIN.replace("{signal}", signal_name)
    alone = run_script(ALONE, *argv, capture_output=True, timeout=PATIENCE)
    signalled = run_script(script, *argv, capture_output=True, timeout=PATIENCE)
    assert alone.returncode == status
    assert (signalled.returncode, signalled.stdout, signalled.stderr) == (
        status,
        alone.stdout,
        alone.stderr,
    )


AS_THE_SUMMARY_IS_SAID = """
import os, signal, sys
from sessionref.cli import batch, main

summary = batch.Tally.summary
signals = [signal.Signals[name] for name in sys.argv[1].split(",")]

def signalled_then_said(self, where):
    for signum in signals:
        os.kill(os.getpid(), signum)  # its handler runs as this call returns
    return summary(self, where)

batch.Tally.summary = signalled_then_said
sys.argv = ["sessionref", *sys.argv[2:]]
sys.exit(main())
"""


def batch_signalled_at_its_summary(
    tmp_path: Path, signals: list[str]
) -> tuple[subprocess.CompletedProcess[bytes], Path]:
    """A batch of 4 sessions sent ``signals`` once its file is in place, as it says its
    summary: how it ended, and its file."""
    store_root, out = tmp_path / "store", tmp_path / "out.jsonl"
    write_small_store(store_root, 4)
    argv = ["batch", "--root", str(store_root), "--out", str(out), "--workers", "1"]
    done = run_script(
        AS_THE_SUMMARY_IS_SAID,
        ",".join(signals),
        *argv,
        capture_output=True,
        timeout=PATIENCE,
    )
    return done, out


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_signal_once_the_batch_is_written_leaves_it_finished(
    tmp_path: Path, signal_name: str
) -> None:
    """The batch's file is in place when the signal comes: it says its summary whole and
    exits 0, as it finished (it said ``interrupted`` and exited 130 or 143)."""
    done, out = batch_signalled_at_its_summary(tmp_path, [signal_name])
    assert (done.returncode, done.stderr.decode()) == (
        0,
        f"4 sessions: 4 written, 0 failed \N{RIGHTWARDS ARROW} {out}\n",
    )
    assert len(out.read_bytes().splitlines()) == 4


def test_a_second_signal_once_the_batch_is_written_ends_it_as_it_finished(
    tmp_path: Path,
) -> None:
    """A first signal after the file is in place waits for the summary; a second does not
    (a summary stuck on a stderr nobody reads): the process ends at once, with the status
    the batch finished with, the file whole."""
    done, out = batch_signalled_at_its_summary(tmp_path, ["SIGTERM", "SIGINT"])
    assert (done.returncode, done.stderr) == (0, b"")
    assert len(out.read_bytes().splitlines()) == 4


TOGETHER = """
import os, signal, sys, threading
from sessionref.cli import demo, main

first, second = signal.Signals[sys.argv[1]], signal.Signals[sys.argv[2]]
both = {first, second}
context_for = demo.context_for

def send():
    # this thread alone takes the signals: each one's C-level handler runs as it comes,
    # and their Python handlers wait for the main thread
    signal.pthread_sigmask(signal.SIG_UNBLOCK, both)
    os.kill(os.getpid(), first)
    os.kill(os.getpid(), second)
    sent.release()

def both_come_while_it_waits(*args, **kwargs):
    signal.pthread_sigmask(signal.SIG_BLOCK, both)
    threading.Thread(target=send).start()
    sent.acquire()  # the main thread waits in C, its handlers run once this returns
    signal.pthread_sigmask(signal.SIG_UNBLOCK, both)
    return context_for(*args, **kwargs)

sent = threading.Lock()
sent.acquire()
demo.context_for = both_come_while_it_waits
sys.argv = ["sessionref", "demo"]
sys.exit(main())
"""


@pytest.mark.parametrize(("first", "second"), [("SIGTERM", "SIGINT"), ("SIGINT", "SIGTERM")])
def test_of_two_signals_waiting_together_the_first_to_come_decides(first: str, second: str) -> None:
    """Both signals came while the main thread waited: the command stops on the one that
    came first, with its status (a SIGTERM then a SIGINT exited 130)."""
    done = run_script(TOGETHER, first, second, capture_output=True, timeout=PATIENCE)
    assert (done.returncode, done.stdout, done.stderr) == (STATUS[first], b"", b"interrupted\n")


FORKED_CHILD_SIGNALLED = """
import os, signal, sys, time
from sessionref.cli import demo, main

context_for = demo.context_for

def a_child_terminated_then_interrupted(*args, **kwargs):
    child = os.fork()
    if child == 0:  # a worker of its own, with its own SIGTERM handler (as a pool's has)
        signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(0))
        os.kill(os.getpid(), signal.SIGTERM)
        os._exit(1)  # not reached
    assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0
    os.kill(os.getpid(), signal.SIGINT)
    return context_for(*args, **kwargs)

demo.context_for = a_child_terminated_then_interrupted
sys.argv = ["sessionref", "demo"]
sys.exit(main())
"""


def test_a_forked_childs_signals_are_not_the_commands() -> None:
    """A forked child (a pool's worker) ended by its own SIGTERM: the command, interrupted
    after it by Ctrl-C, says it was Ctrl-C (the child's signal, written to the pipe of
    arrivals it shared, came first)."""
    done = run_script(FORKED_CHILD_SIGNALLED, capture_output=True, timeout=PATIENCE)
    assert (done.returncode, done.stdout, done.stderr) == (130, b"", b"interrupted\n")
