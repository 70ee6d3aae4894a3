"""Ctrl-C on a running ``sessionref batch``: a real process group gets SIGINT, as from a terminal;
or SIGTERM goes to the batch's process alone, as from ``kill`` or ``timeout``.

The batch must exit 130 (SIGTERM: 143) with one line on stderr, keep every finished line in
``--out`` (so ``--resume`` completes it), and leave no temporary file and no process behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import LocalCluster

from sessionref.testing import write_session_store
from sessionref.testing.mutations import log_lines
from tests.conftest import run_script
from tests.logs import assistant, header, user

SESSIONS = 600
PATIENCE = 120.0
"""Seconds to wait for a state the test needs (the batch mid-run, processes gone): a bound on
a hung run, not a speed requirement."""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Many sessions of many turns each: enough work that a batch is mid-run when stopped."""
    root = tmp_path_factory.mktemp("store")
    turns = [
        (user if seq % 2 == 0 else assistant)(seq, f"turn {seq} " + "words " * 80)
        for seq in range(120)
    ]
    head = {key: value for key, value in header("s-0").items() if key != "type"}
    template = log_lines({"header": head, "events": turns})
    body = b"".join(line + b"\n" for line in template[1:])
    for index in range(SESSIONS):
        session_id = f"s-{index}"
        path = root / "--w--" / session_id / "session.jsonl"
        path.parent.mkdir(parents=True)
        path.write_bytes(json.dumps(header(session_id, index)).encode() + b"\n" + body)
    return root


def group_members(group: int) -> list[int]:
    """The processes of a process group, from /proc (no psutil)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(entry))
    return members


def wait_for(condition: object, what: str) -> None:
    started = time.monotonic()
    while not condition():  # type: ignore[operator]
        assert time.monotonic() - started < PATIENCE, f"gave up waiting for {what}"
        time.sleep(0.01)


@contextlib.contextmanager
def killed_if_left(running: subprocess.Popen[bytes]) -> Iterator[None]:
    """The block; then, if the command it started still runs (the block failed), its whole
    process group (it leads one) is killed and reaped, so that no test leaves it behind."""
    try:
        yield
    finally:
        if running.poll() is None:  # pragma: no cover - only when the test already failed
            os.killpg(running.pid, signal.SIGKILL)
            running.wait()


def temporary_files(directory: Path) -> list[Path]:
    return [path for path in directory.iterdir() if path.name.endswith(".tmp")]


def batch(store: Path, out: Path, *options: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sessionref",
            "batch",
            "--root",
            str(store),
            "--out",
            str(out),
            *options,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """The address of a dask.distributed cluster running in this process."""
    with LocalCluster(
        processes=False,
        protocol="tcp",  # reachable from the batch's process
        n_workers=1,
        threads_per_worker=2,
        dashboard_address=None,
    ) as cluster:
        yield cluster.scheduler_address


ENGINES = {
    "local": lambda request: ["--engine", "local"],
    "dask": lambda request: ["--engine", "dask"],
    "distributed": lambda request: [
        "--engine",
        "dask",
        "--scheduler",
        request.getfixturevalue("scheduler"),
    ],
}


STOPS = {
    "ctrl-c": (lambda pid: os.killpg(pid, signal.SIGINT), 130),
    "sigterm": (lambda pid: os.kill(pid, signal.SIGTERM), 143),
}
"""How a batch is stopped: Ctrl-C reaches the whole process group, SIGTERM the batch alone."""


@pytest.mark.parametrize("stop", list(STOPS))
@pytest.mark.parametrize("engine", list(ENGINES))
def test_a_stopped_batch_keeps_its_finished_lines(
    store: Path, tmp_path: Path, engine: str, stop: str, request: pytest.FixtureRequest
) -> None:
    send, status = STOPS[stop]
    out = tmp_path / "out.jsonl"
    running = batch(store, out, "--workers", "2", *ENGINES[engine](request))
    group = running.pid

    def mid_run() -> bool:
        assert running.poll() is None, "the batch ended before it could be interrupted"
        return any(path.stat().st_size for path in temporary_files(tmp_path))

    with killed_if_left(running):
        wait_for(mid_run, "the first finished lines")
        if engine != "distributed":  # whose workers are not the batch's processes
            assert len(group_members(group)) > 2, "the worker processes should be running"
        send(group)
        _, err = running.communicate(timeout=PATIENCE)
    wait_for(lambda: not group_members(group), "every process of the batch to end")

    assert running.returncode == status, err
    lines = out.read_bytes().splitlines(keepends=True)
    assert 0 < len(lines) < SESSIONS
    assert all(line.endswith(b"\n") and json.loads(line)["context"] for line in lines)
    assert err.decode() == (
        f"interrupted: {len(lines)} of {SESSIONS} sessions are in {out}; "
        "run the same command with --resume to do the rest\n"
    )
    assert temporary_files(tmp_path) == []

    resumed = batch(store, out, "--workers", "2", "--resume")
    _, err = resumed.communicate(timeout=PATIENCE)
    assert resumed.returncode == 0, err
    done = [json.loads(line)["sessionId"] for line in out.read_bytes().splitlines()]
    assert done == [f"s-{index}" for index in reversed(range(SESSIONS))]


HALF_BUILT = """
import os, signal, sys
from sessionref.cli.process import stop_on_signals

class HalfBuilt:
    def __init__(self):
        os.kill(os.getpid(), signal.{signal})  # the interruption lands in the constructor
        self.ready = True

    def __del__(self):
        self.ready  # AttributeError: the constructor never finished

stop_on_signals()
try:
    HalfBuilt()
except KeyboardInterrupt:
    sys.stderr.write("interrupted\\n")
"""


HALF_DONE_CALLBACK = """
import logging, os, signal, sys, threading
from sessionref.cli.process import stop_on_signals

logging.basicConfig()  # as distributed configures it: errors go to stderr

def callback():  # distributed's sync() cancels a future it had not started yet
    try:
        raise NameError("cannot access free variable 'future'")
    except NameError:
        logging.getLogger("tornado.application").exception("Exception in callback")

stop_on_signals()
try:
    os.kill(os.getpid(), signal.{signal})
except KeyboardInterrupt:
    loop = threading.Thread(target=callback)
    loop.start()
    loop.join()
    sys.stderr.write("interrupted\\n")
"""


@pytest.mark.parametrize("script", [HALF_BUILT, HALF_DONE_CALLBACK], ids=["finalizer", "logged"])
@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_what_an_interruption_left_half_done_prints_no_traceback(
    script: str, signal_name: str
) -> None:
    """A signal raises where the command is, maybe inside a library: a half-built object's
    failing finalizer (distributed's Future) must not print "Exception ignored", nor a failing
    callback on the library's own thread its logged traceback (distributed's sync, via tornado).
    """
    script = script.replace("{signal}", signal_name)
    done = run_script(script, capture_output=True, timeout=PATIENCE)
    assert done.stderr == b"interrupted\n"


def write_small_store(root: Path, sessions: int) -> None:
    """``sessions`` sessions without events, ``s0`` the oldest."""
    head = {"version": 0, "delegationDepth": 0, "cwd": "/w"}
    write_session_store(
        root,
        [
            {"header": {**head, "id": f"s{n}", "createdAt": n}, "events": []}
            for n in range(sessions)
        ],
    )


SIGNAL_IN_TEARDOWN = """
import os, signal, sys
from sessionref.cli import main

class Arguments(list):
    # CPython lets sys.argv go in its teardown, after it stopped handling signals in Python
    # (and after the command froze its objects: a finalizer of __main__'s would not run).
    def __del__(self):
        self.write(2, b"signal sent\\n")
        self.kill(self.pid, self.signum)

sys.argv = Arguments(sys.argv)
sys.argv.write, sys.argv.kill = os.write, os.kill
sys.argv.pid, sys.argv.signum = os.getpid(), signal.{signal}
sys.exit(main())
"""


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_signal_in_the_interpreters_teardown_leaves_the_commands_status(
    tmp_path: Path, signal_name: str
) -> None:
    """A trial sent two signals near the end of ``batch --workers 2``: 35 runs of 160 ended
    killed by a signal (status -2 or -15), the command's work done and its line written. The
    interpreter's teardown puts back each signal's default action; a signal there is now
    ignored, and the command's own status and line stand."""
    store_root, out = tmp_path / "store", tmp_path / "out.jsonl"
    write_small_store(store_root, 4)
    script = SIGNAL_IN_TEARDOWN.replace("{signal}", signal_name)
    argv = ["batch", "--root", str(store_root), "--out", str(out), "--workers", "2"]
    done = run_script(script, *argv, capture_output=True, timeout=PATIENCE)
    assert (done.returncode, done.stderr.decode()) == (
        0,
        f"4 sessions: 4 written, 0 failed \N{RIGHTWARDS ARROW} {out}\nsignal sent\n",
    )
    assert len(out.read_bytes().splitlines()) == 4


SECOND_SIGNAL = """
import atexit, os, signal, sys
from sessionref.cli import batch, main, process

count, write = batch.Tally.count, process.ForgivingWriter.write

def counted_then_terminated(self, result):
    count(self, result)
    if self.written == 2:
        os.kill(os.getpid(), signal.SIGTERM)  # the batch stops on it, and says so

def written_then_interrupted(self, data):  # stderr's writes
    written = write(self, data)
    if bytes(data).startswith(b"interrupted:"):
        if {when!r} == "as it is said":
            os.kill(os.getpid(), signal.SIGINT)
        else:  # among the exit functions, before the interpreter's teardown
            atexit.register(os.kill, os.getpid(), signal.SIGINT)
    return written

batch.Tally.count = counted_then_terminated
process.ForgivingWriter.write = written_then_interrupted
sys.exit(main())
"""


@pytest.mark.parametrize("when", ["as it is said", "at exit"])
def test_a_second_signal_after_the_first_is_said_adds_nothing(tmp_path: Path, when: str) -> None:
    """A trial sent SIGTERM then SIGINT near the end of ``batch --workers 2``: the batch said
    the first in its line, then the second added ``interrupted`` and made the status 130.
    Here the second comes as the first's line is written, or once the command has returned."""
    store_root, out = tmp_path / "store", tmp_path / "out.jsonl"
    write_small_store(store_root, 4)
    script = SECOND_SIGNAL.replace("{when!r}", repr(when))
    argv = ["batch", "--root", str(store_root), "--out", str(out), "--workers", "2"]
    done = run_script(script, *argv, capture_output=True, timeout=PATIENCE)
    assert (done.returncode, done.stderr.decode()) == (
        143,
        f"interrupted: 2 of 4 sessions are in {out}; "
        "run the same command with --resume to do the rest\n",
    )
    assert [json.loads(line)["sessionId"] for line in out.read_bytes().splitlines()] == [
        "s3",
        "s2",
    ]


ORPHAN_BOUND = 20.0
"""Seconds a worker may outlive its killed parent before the test fails (it must go within
2 s; the bound leaves room for a loaded machine, and a worker left behind never goes)."""


def index_command(store: Path, index: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "sessionref", "index", "--root", str(store)),
            *("--workers", "3", "--index", str(index)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


KILLED = {
    "batch": lambda store, tmp: batch(store, tmp / "out.jsonl", "--workers", "2"),
    "batch dask": lambda store, tmp: batch(
        store, tmp / "out.jsonl", "--workers", "2", "--engine", "dask"
    ),
    "index": lambda store, tmp: index_command(store, tmp / "index.sqlite"),
}


@pytest.mark.parametrize("command", list(KILLED))
def test_no_worker_outlives_a_killed_parent(store: Path, tmp_path: Path, command: str) -> None:
    """``kill -9`` of the command (as the OOM killer does it): its workers go with it."""
    running = KILLED[command](store, tmp_path)
    group = running.pid
    try:
        wait_for(lambda: len(group_members(group)) > 2, "the worker processes")
        assert running.poll() is None, "the command ended before it could be killed"
        workers = set(group_members(group)) - {running.pid}
        os.kill(running.pid, signal.SIGKILL)
        assert running.wait(PATIENCE) == -signal.SIGKILL
        killed = time.monotonic()
        while set(group_members(group)) & workers:
            assert time.monotonic() - killed < ORPHAN_BOUND, "workers outlived their parent"
            time.sleep(0.05)
    finally:
        for pid in group_members(group):  # pragma: no cover - only when the test failed
            os.kill(pid, signal.SIGKILL)
        running.communicate()


def test_resume_after_a_kill_goes_on_from_what_it_left(store: Path, tmp_path: Path) -> None:
    """A killed batch cannot clean up: its temporary file stays, and the next ``--resume``
    takes it over (its finished lines are kept) and leaves nothing temporary behind."""
    out = tmp_path / "out.jsonl"
    running = batch(store, out, "--workers", "2")
    group = running.pid
    try:
        # A finished line, not just bytes: a line's bytes reach the file a page at a time
        # within one write, and a kill during that write leaves part of a line.
        wait_for(lambda: any(b"\n" in p.read_bytes() for p in temporary_files(tmp_path)), "a line")
        os.kill(running.pid, signal.SIGKILL)
        running.communicate()
    finally:
        for pid in group_members(group):  # pragma: no cover - only when the test failed
            os.kill(pid, signal.SIGKILL)
    (left,) = temporary_files(tmp_path)
    finished = left.read_bytes().count(b"\n")
    assert not out.exists() and finished > 0
    resumed = batch(store, out, "--workers", "2", "--resume")
    _, err = resumed.communicate(timeout=PATIENCE)
    assert resumed.returncode == 0, err
    assert err.decode().splitlines() == [
        f"note: resuming from the lines a killed batch left ({left.name})",
        f"{SESSIONS} sessions: {finished} already done, {SESSIONS - finished} written, "
        f"0 failed → {out}",
    ]
    done = [json.loads(line)["sessionId"] for line in out.read_bytes().splitlines()]
    assert done == [f"s-{index}" for index in reversed(range(SESSIONS))]
    assert temporary_files(tmp_path) == []


BROKE = "SESSION_REFERENCE_READ_FAILED:"


def mid_run(running: subprocess.Popen[bytes], tmp_path: Path, command: str) -> bool:
    """Whether a command of :data:`KILLED` is well into its work: a batch has finished a
    line, an index build has written."""
    assert running.poll() is None, "the command ended before its worker could be killed"
    if command == "index":
        return (tmp_path / "index.sqlite-wal").exists()
    return any(b"\n" in path.read_bytes() for path in temporary_files(tmp_path))


@pytest.mark.parametrize("command", list(KILLED))
def test_a_worker_killed_outright_is_one_coded_line(
    store: Path, tmp_path: Path, command: str
) -> None:
    """``kill -9`` of one worker (as the OOM killer does it): the command stops with one
    coded line naming it, ends its other workers and leaves nothing temporary; a batch keeps
    its finished lines, and ``--resume`` does the rest."""
    running = KILLED[command](store, tmp_path)
    group = running.pid
    with killed_if_left(running):
        wait_for(lambda: len(group_members(group)) > 2, "the worker processes")
        wait_for(lambda: mid_run(running, tmp_path, command), "the work under way")
        worker = max(set(group_members(group)) - {running.pid})
        os.kill(worker, signal.SIGKILL)
        _, err = running.communicate(timeout=PATIENCE)
    wait_for(lambda: not group_members(group), "every process of the command to end")
    assert running.returncode == 1, err
    said = re.fullmatch(r"(.* died \(killed by SIGKILL\) while it worked)(.*)\n", err.decode())
    assert said is not None, err
    line, rest = said.groups()
    assert line == f"{BROKE} worker process {worker} died (killed by SIGKILL) while it worked"
    if command == "index":
        assert rest == ""
        assert sorted(path.name for path in tmp_path.iterdir()) == ["index.sqlite"]
        return
    out = tmp_path / "out.jsonl"
    lines = out.read_bytes().splitlines(keepends=True)
    assert all(line.endswith(b"\n") and json.loads(line)["context"] for line in lines)
    assert rest == (
        f": {len(lines)} of {SESSIONS} sessions are in {out}; "
        "run the same command with --resume to do the rest"
    )
    assert temporary_files(tmp_path) == []
    resumed = batch(store, out, "--resume")
    _, err = resumed.communicate(timeout=PATIENCE)
    assert resumed.returncode == 0, err
    done = [json.loads(line)["sessionId"] for line in out.read_bytes().splitlines()]
    assert done == [f"s-{index}" for index in reversed(range(SESSIONS))]
