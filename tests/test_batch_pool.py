"""How the batch feeds and starts its worker processes: chunks, the start method, the
listing passed on (the lines themselves are checked in test_batch.py and test_dask.py)."""

from __future__ import annotations

import concurrent.futures
import functools
import multiprocessing.connection
import os
import pickle
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import pytest

import sessionref.pool
from sessionref.batch.core import listing_order
from sessionref.batch.dask import iter_bag, result_lines_bag
from sessionref.batch.local import MAX_CHUNK, build_result_lines, chunks
from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.codex.store import CodexStore
from sessionref.errors import INVALID_CONFIG, READ_FAILED, SessionReferenceError
from sessionref.index import SessionIndex
from sessionref.log.harness_store import HarnessStore
from sessionref.log.store import DirectoryStore, MemoryStore
from sessionref.pool import WorkerPool, worker_pool
from sessionref.pool_start import process_context, single_threaded
from sessionref.testing import write_session_store
from sessionref.worker_deaths import RERAN_MAIN_STATUS, WorkerDied
from tests.conftest import run_script
from tests.test_batch import LISTING, MAX_BYTES, write_store
from tests.test_index_harnesses import Settled, claude_store, codex_store

LINUX = os.path.isdir("/proc/self/task")


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(tmp_path_factory.mktemp("store"))


@pytest.mark.parametrize("workers", [1, 2, 5])
@pytest.mark.parametrize("total", [0, 1, 7, 100, 1000])
def test_chunks_cover_the_items_in_order_and_shrink_to_one(workers: int, total: int) -> None:
    parts = list(chunks(range(total), workers))
    assert [item for part in parts for item in part] == list(range(total))
    sizes = [len(part) for part in parts]
    assert all(1 <= size <= MAX_CHUNK for size in sizes)
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[-workers:] == [1] * min(workers, total)  # the workers finish together


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return run_script(code, capture_output=True, text=True, env=environment, check=True)


def test_a_single_threaded_process_forks_its_workers() -> None:
    code = "from sessionref.pool_start import process_context as p; print(p().get_start_method())"
    assert run_python(code).stdout == ("fork\n" if LINUX else "forkserver\n")


def test_a_process_with_another_thread_does_not_fork() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not single_threaded(patience=0)
        assert process_context().get_start_method() != "fork"
    finally:
        stop.set()
        thread.join()


def test_forked_workers_do_not_write_the_parents_pending_output_again() -> None:
    code = """if True:
        import sys
        from sessionref.pool import worker_pool
        sys.stdout.write("pending")
        sys.stderr.write("pending")
        with worker_pool(2) as pool:
            print(pool.submit(abs, -1).result(), pool.submit(abs, -2).result())
    """
    done = run_python(code)
    assert (done.stdout, done.stderr) == ("pending1 2\n", "pending")


def count_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A one-item list counting how often any directory store scans its root from now on."""
    scans = [0]
    real_scan = DirectoryStore._scan

    def counted(self: DirectoryStore) -> Any:
        scans[0] += 1
        return real_scan(self)

    monkeypatch.setattr(DirectoryStore, "_scan", counted)
    return scans


def test_an_index_goes_to_workers_that_do_not_fork(store_root: Path, tmp_path: Path) -> None:
    """With another thread running, the workers are not forked: what they are given is
    pickled, and an index (its database, its lock) is given as the store it indexes."""
    store = DirectoryStore(store_root)
    expected = [line.line for line in build_result_lines(store, max_reference_bytes=MAX_BYTES)]
    index = SessionIndex(store, tmp_path / "index.sqlite")
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        lines = list(build_result_lines(index, max_reference_bytes=MAX_BYTES, workers=2))
        assert [line.session_id for line in lines] == LISTING  # as the store is written
        assert [line.line for line in lines] == expected
    finally:
        stop.set()
        thread.join()
        index.close()


def test_workers_read_where_the_parent_listed(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = DirectoryStore(store_root)
    ids = listing_order(store)
    expected = [line.line for line in build_result_lines(store, max_reference_bytes=MAX_BYTES)]
    scans = count_scans(monkeypatch)  # in this process: the dask partitions run here
    bag = result_lines_bag(store, max_reference_bytes=MAX_BYTES, session_ids=ids)
    assert [line.line for line in iter_bag(bag)] == expected
    assert scans == [0]


def test_a_session_the_listing_did_not_find_is_still_looked_up(store_root: Path) -> None:
    store = DirectoryStore(store_root)
    ids = [*listing_order(store), "not-stored"]
    local = [line.line for line in build_result_lines(store, session_ids=ids, workers=2)]
    bag = result_lines_bag(store, session_ids=ids, partition_size=3)
    assert [line.line for line in iter_bag(bag, workers=2)] == local
    assert b'"sessionId":"not-stored","error"' in local[-1]


STORES: dict[str, Callable[[Path], DirectoryStore | HarnessStore]] = {
    "dsh": lambda root: DirectoryStore(write_store(root)),
    "claude-code": lambda root: ClaudeCodeStore(claude_store(root, Settled())),
    "codex": lambda root: CodexStore(codex_store(root, Settled())),
}


def files_of(store: DirectoryStore | HarnessStore, session_id: str) -> list[Path]:
    if isinstance(store, DirectoryStore):
        return [store.path_of(session_id)]
    return store.paths_of(session_id)


@pytest.mark.parametrize("gone", ["root", "one log"])
@pytest.mark.parametrize("harness", sorted(STORES))
def test_what_goes_during_a_batch_fails_alike_with_one_or_more_workers(
    harness: str, gone: str, tmp_path: Path
) -> None:
    """Files removed after the listing (the ids given, so each engine works from the listing
    its store made before; ``not-stored``, last, has the store list the root again). A worker
    rebuilt a directory store through its checking constructor, so a root gone was
    INVALID_CONFIG (the whole pooled batch raised), and another harness's worker looked a
    listed session up again (``not found``), where one process reads each listed log and fails
    naming it. Now the sessions still there give what they gave before, and each one gone is
    a read failure naming its file, with 1 worker, 2 workers and dask alike."""
    store = STORES[harness](tmp_path / "root")
    ids = [*listing_order(store), "not-stored"]
    before = [line.line for line in build_result_lines(store, session_ids=ids)]
    vanished = ids[:-1] if gone == "root" else ids[:1]
    files = {session_id: files_of(store, session_id) for session_id in vanished}
    stores = [type(store)(tmp_path / "root") for _ in range(3)]  # one per engine, each listed
    assert all(listing_order(each) == ids[:-1] for each in stores)  # before the files go
    if gone == "root":
        shutil.rmtree(tmp_path / "root")
    else:
        for path in files[ids[0]]:
            path.unlink()
    alone = list(build_result_lines(stores[0], session_ids=ids))
    pooled = build_result_lines(stores[1], session_ids=ids, workers=2)
    bag = iter_bag(result_lines_bag(stores[2], session_ids=ids, partition_size=2))
    assert [line.line for line in pooled] == [line.line for line in alone]
    assert [line.line for line in bag] == [line.line for line in alone]
    for session_id, then, line in zip(ids, before, alone, strict=True):
        if session_id not in vanished:
            assert line.line == then
            continue
        error = line.decoded()["error"]
        assert error["code"] == READ_FAILED
        assert str(files[session_id][0]) in error["message"]
    assert list(build_result_lines(type(store)(tmp_path), workers=2)) == []  # an empty root


ORPHANED = """if True:
    import os
    from sessionref.pool_worker import _watch_parent
    parent = os.getpid()
    child = os.fork()
    if child == 0:
        _watch_parent(parent)  # returns never: it exits the child once its parent is gone
    print(child, flush=True)
    os._exit(0)
"""
ORPHAN_BOUND = 20.0
"""Seconds an orphaned worker may take to go before the test fails (it must go within 2 s;
the bound leaves room for a loaded machine)."""


def running(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        stat = Path("/proc", str(pid), "stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_worker_sees_its_parent_go_without_the_kernels_signal() -> None:
    """The fallback alone (no PR_SET_PDEATHSIG asked for): the watch ends the orphan."""
    child = int(run_python(ORPHANED).stdout)
    started = time.monotonic()
    try:
        while running(child):
            assert time.monotonic() - started < ORPHAN_BOUND, "the orphan did not exit"
            time.sleep(0.05)
    finally:
        if running(child):  # pragma: no cover - only when the test failed
            os.kill(child, signal.SIGKILL)


def _sigint_state() -> tuple[bool, bool]:
    """In a worker: whether SIGINT is ignored, and whether it is blocked."""
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    return ignored, signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())


def test_a_worker_starts_with_ctrl_c_held_until_it_ignores_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Ctrl-C between a worker's fork and its initializer ended it with a traceback on
    stderr (``Process ForkProcess-2:``): SIGINT is blocked while a worker is started, and the
    worker unblocks it once it ignores it; the parent's mask is as it was."""
    masks: list[set[int]] = []
    start = BaseProcess.start

    def starting(process: BaseProcess) -> None:  # the fork (or spawn) itself
        masks.append(set(signal.pthread_sigmask(signal.SIG_BLOCK, set())))
        start(process)

    monkeypatch.setattr(BaseProcess, "start", starting)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    with WorkerPool(1) as pool:
        assert pool.submit(_sigint_state).result() == (True, False)
    assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before
    assert masks and all(signal.SIGINT in mask for mask in masks)


class LockedStore(MemoryStore):
    """A store of the caller's that holds a lock: it cannot pickle."""

    def __init__(self, sessions: list[dict[str, Any]]) -> None:
        super().__init__(sessions)
        self.lock = threading.Lock()


def test_a_store_that_cannot_pickle_for_spawned_workers_is_invalid_config() -> None:
    """A newcomer's trial: with another thread running, workers are not forked, and a store
    that does not pickle failed with a bare TypeError from inside the pool."""
    header = {"version": 0, "createdAt": 1, "delegationDepth": 0}
    store = LockedStore([{"header": {**header, "id": f"s{n}"}, "events": []} for n in range(3)])
    done = threading.Event()
    waiting = threading.Thread(target=done.wait, daemon=True)
    waiting.start()
    try:
        assert process_context().get_start_method() != "fork"
        with pytest.raises(SessionReferenceError) as raised:
            list(build_result_lines(store, workers=2))
    finally:
        done.set()
        waiting.join()
    assert raised.value.code == INVALID_CONFIG
    assert "cannot pickle '_thread.lock' object" in raised.value.message
    assert sorted(line.session_id for line in build_result_lines(store)) == ["s0", "s1", "s2"]


SCRIPT_STARTS = """\
import sys, threading
from sessionref.errors import SessionReferenceError
threading.Thread(target=threading.Event().wait, daemon=True).start()
"""
SCRIPT_BATCH = """\
from sessionref.batch import build_snapshots
try:
    print(len(list(build_snapshots(sys.argv[1], workers=2))))
except SessionReferenceError as exc:
    print(exc.code, exc.message)
"""
SCRIPT_POOL = """\
from sessionref.pool import worker_pool
try:
    with worker_pool(2, len, (b"x" * 300_000,)) as pool:  # more than a pipe holds
        print(pool.submit(abs, -2).result())
except SessionReferenceError as exc:
    print(exc.code, exc.message)
"""


@pytest.mark.parametrize("guarded", [False, True])
@pytest.mark.parametrize("work", [SCRIPT_BATCH, SCRIPT_POOL])
def test_a_script_that_starts_workers_unguarded_is_told_to_guard_it(
    store_root: Path, tmp_path: Path, work: str, guarded: bool
) -> None:
    """A newcomer's trial: a script with another thread and no ``if __name__ ==
    '__main__':`` failed with ``cannot start 2 worker processes (started 0): Broken pipe;
    ask for fewer`` (a worker died later, when what it was sent fit in its pipe). Workers
    that are not forked run the main module again as they start (the multiprocessing docs'
    "safe importing of main module"), so fewer never helps: the error says so, with no
    traceback of the workers; guarded, the same script works."""
    body = "".join(f"    {line}\n" for line in work.splitlines()) if guarded else work
    guard = "if __name__ == '__main__':\n" if guarded else ""
    script = tmp_path / "api6.py"
    script.write_text(SCRIPT_STARTS + guard + body)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(script), str(store_root)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stderr) == (0, "")
    if guarded:
        assert done.stdout == ("14\n" if work == SCRIPT_BATCH else "2\n")
        return
    advice = (
        f"each runs the main module {script} again as it starts, which must not start workers"
        " itself; guard the script's top level with if __name__ == '__main__': (the"
        " multiprocessing docs' safe importing of main module)\n"
    )
    assert done.stdout.startswith(f"{INVALID_CONFIG} "), done.stdout
    assert done.stdout.endswith(advice), done.stdout


STARTS_A_POOL = """\
from sessionref.pool import worker_pool
with worker_pool(1) as pool:
    print(pool.submit(abs, -2).result())
"""
RUN_AGAIN = """\
import multiprocessing, runpy, sys  # a worker runs it again with multiprocessing imported
runpy.run_path(sys.argv[1], run_name="__mp_main__")
"""
LAUNCHER = """\
import multiprocessing, runpy, sys  # a launcher (a debugger, coverage run) that imported it
runpy.run_path(sys.argv[1], run_name="__main__")
"""


@pytest.mark.parametrize(
    ("runner", "expected"),
    [
        (None, (0, b"2\n", b"")),  # the script run as itself
        (RUN_AGAIN, (RERAN_MAIN_STATUS, b"", b"")),  # as a worker runs it again
        (LAUNCHER, (0, b"2\n", b"")),  # as a launcher runs it
    ],
)
def test_a_main_module_run_again_as_a_worker_runs_it_starts_no_workers(
    tmp_path: Path, runner: str | None, expected: tuple[int, bytes, bytes]
) -> None:
    """A worker that is not forked runs the main module again as ``__mp_main__`` with runpy
    (the multiprocessing docs' "safe importing of main module"; ``spawn._fixup_main_from_path``
    in CPython): a pool started there ends the process at once with the status its pool reads
    as that, by the modules alone (no private flag of multiprocessing's, which a plain runpy
    run as the worker's does not set); run as itself, the script starts its pool. So does a
    script a launcher that imported multiprocessing runs as ``__main__`` (runpy, as debuggers
    and ``coverage run`` do; a reviewer's find: its ``__mp_main__`` is apart from
    ``__main__`` as a rerun's is, and the pool ended the process silently)."""
    script = tmp_path / "main.py"
    script.write_text(STARTS_A_POOL)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = [] if runner is None else ["-c", runner]
    done = subprocess.run(
        [sys.executable, *runs, str(script)], capture_output=True, env=environment, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == expected


def limited_open_files(count: int) -> None:
    """In a child before it runs: at most ``count`` open files."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))


ON_32_CPUS = """if True:
    import sys
    import sessionref.pool_start
    sessionref.pool_start.usable_cpus = lambda: 32  # a batch starts at most 2 per CPU
    from sessionref.cli import main
    sys.argv[0] = "sessionref"
    sys.exit(main())
"""
"""``sessionref`` on a machine of 32 CPUs, whatever this one has."""


@pytest.mark.parametrize("command", ["batch", "index"])
def test_workers_beyond_the_open_file_limit_are_one_line_at_once(
    tmp_path: Path, command: str
) -> None:
    """A hostile trial: with 64 open files allowed, --workers 40 left the pool half started;
    the parent then waited on idle workers that no SIGTERM ends (an hour, or until killed),
    and a SIGTERM from outside printed its note but did not end it. (On 32 CPUs, as a batch
    starts no more than 2 workers per CPU.)"""
    store_root = tmp_path / "store"  # enough sessions to keep 60 workers busy
    header = {"version": 0, "delegationDepth": 0, "cwd": "/w"}
    write_session_store(
        store_root,
        [{"header": {**header, "id": f"s{n}", "createdAt": n}, "events": []} for n in range(90)],
    )
    out = tmp_path / "out.jsonl"
    where = ["--out", str(out)] if command == "batch" else ["--index", str(tmp_path / "i.db")]
    done = run_script(
        ON_32_CPUS,
        command,
        "--root",
        str(store_root),
        *where,
        "--workers",
        "60",
        capture_output=True,
        timeout=60,
        preexec_fn=functools.partial(limited_open_files, 64),
    )
    assert done.returncode == 1
    message = done.stderr.decode()
    assert message.count("\n") == 1, message
    assert message.startswith("SESSION_REFERENCE_INVALID_CONFIG: cannot start "), message
    assert message.endswith(": Too many open files; ask for fewer\n"), message
    assert not out.exists()


def _die() -> None:
    """In a worker: die as the OOM killer ends a process."""
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_that_dies_is_one_coded_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed outright broke the pool with a bare ``BrokenProcessPool``; and a
    future cancelled before any worker took it (as the index's reading withdraws one) failed
    the pool's own thread (a traceback on stderr), leaving the other workers to be killed
    after a wait. Every future not done fails with the error; the cancelled one stays so."""
    failed_threads: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", failed_threads.append)
    with pytest.raises(WorkerDied) as raised, worker_pool(1) as pool:
        worker = pool.submit(os.getpid).result()
        dying = pool.submit(_die)
        waiting = [pool.submit(abs, -n) for n in range(8)]  # more than its worker holds
        assert waiting[-1].cancel()
        try:
            dying.result()
        finally:
            assert all(isinstance(future.exception(), WorkerDied) for future in waiting[:-1])
            assert waiting[-1].cancelled()
    assert raised.value.code == READ_FAILED
    assert (
        raised.value.message == f"worker process {worker} died (killed by SIGKILL) while it worked"
    )
    assert failed_threads == []
    assert not running(worker)


DIES_MID_RESULT = """if True:
    import os, signal, sys, threading, time
    from sessionref.pool import worker_pool
    from sessionref.worker_deaths import WorkerDied

    def killed_as_it_sends(marker):
        # a thread kills this worker once its main thread is inside the write of its result
        writing = f"/proc/self/task/{threading.main_thread().native_id}/wchan"

        def kill_mid_send():
            while "pipe_write" not in open(writing).read():
                time.sleep(0.0002)
            with open(marker, "w") as file:
                file.write(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)

        threading.Thread(target=kill_mid_send, daemon=True).start()
        return b"x" * (64 << 20)

    try:
        with worker_pool(2) as pool:
            pool.submit(killed_as_it_sends, sys.argv[1]).result()
    except WorkerDied as exc:
        print(time.time() - os.stat(sys.argv[1]).st_mtime, exc.message)
"""
PROMPTLY = 5.0
"""Seconds within which a worker's death fails its pool (it takes milliseconds; the bound
leaves room for a loaded machine, and is half the time the pool gives an ended worker)."""


def test_a_worker_killed_as_it_sends_a_result_does_not_hang_the_pool(tmp_path: Path) -> None:
    """The pool's own thread waited for the rest of a result forever: the pool never broke,
    and a batch whose worker the OOM killer ended hung (1 run in 8 of a batch). Here a
    worker is killed as it writes a 64 MiB result, part of it sent."""
    marker = tmp_path / "killed"
    done = run_script(
        DIES_MID_RESULT,
        str(marker),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=120,  # a bound on a hang, not a speed requirement
    )
    assert done.stderr == ""
    seconds, said = done.stdout.split(" ", 1)
    assert said == f"worker process {marker.read_text()} died (killed by SIGKILL) while it worked\n"
    assert float(seconds) < PROMPTLY


def _wait_for(path: str) -> None:
    """In a worker: wait until ``path`` exists."""
    while not os.path.exists(path):
        time.sleep(0.01)


def _touch(path: str) -> str:
    """In a worker: create ``path``."""
    Path(path).touch()
    return path


def test_a_queued_task_that_is_cancelled_never_runs(tmp_path: Path) -> None:
    go = tmp_path / "go"
    paths = [str(tmp_path / f"task{n}") for n in range(4)]
    with worker_pool(1) as pool:
        first = pool.submit(_wait_for, str(go))
        queued = [pool.submit(_touch, path) for path in paths]  # the worker holds one at most
        assert queued[-1].cancel()
        go.touch()
        assert first.result() is None
        _, not_done = concurrent.futures.wait(queued, timeout=PROMPTLY)
        assert not not_done  # the cancelled one too: a wait on it does not hang
        assert [future.result() for future in queued[:-1]] == paths[:-1]
    assert queued[-1].cancelled()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["go", "task0", "task1", "task2"]


def _hold(started: str, release: str) -> int:
    """In a worker: write its pid to ``started``, wait until ``release`` exists, return its pid."""
    Path(f"{started}.tmp").write_text(str(os.getpid()))
    os.replace(f"{started}.tmp", started)  # whole once it is there
    _wait_for(release)
    return os.getpid()


def test_a_result_that_comes_after_the_pool_broke_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One worker is killed while another runs a task; that task's result reaches the pool
    after the death was seen and before the pool broke (driven so: the pool's thread, once it
    has seen the death, releases the task and waits until its result is in the pipe). The
    caller gets the death's error naming the killed worker, never the result nor a hang; the
    result is not set on the future already failed (which would fail the pool's own thread);
    no worker is left."""
    failed_threads: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", failed_threads.append)
    started, release = tmp_path / "started", tmp_path / "release"
    with pytest.raises(WorkerDied) as raised, worker_pool(2) as pool:
        late = pool.submit(_hold, str(started), str(release))
        _wait_for(str(started))
        holder = int(started.read_text())
        victim = pool.submit(os.getpid).result()  # the other worker: the holder runs a task
        (pipe,) = [worker.results for worker in pool._workers if worker.process.pid == holder]
        seen = sessionref.pool.worker_died

        def result_comes_then_break(pid: int, status: int | None) -> WorkerDied:
            release.touch()
            assert multiprocessing.connection.wait([pipe], PROMPTLY), "no result came"
            return seen(pid, status)

        monkeypatch.setattr(sessionref.pool, "worker_died", result_comes_then_break)
        os.kill(victim, signal.SIGKILL)
        late.result(timeout=PROMPTLY)
    death = f"worker process {victim} died (killed by SIGKILL) while it worked"
    assert raised.value.message == death
    assert isinstance(late.exception(), WorkerDied)
    assert failed_threads == []
    assert release.exists()  # the result came late, not before the death
    assert not running(holder) and not running(victim)


def test_a_ctrl_c_as_the_pool_is_told_to_end_does_not_hang_its_next_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found by a trial of two signals near a batch's end (1 run in about 400): the first
    Ctrl-C ended the pool, the second landed as the pool's thread was woken for it; the
    wake-up counted as sent, so the next ``end`` (the batch's generator closed) waited for a
    thread never woken, forever. Here the Ctrl-C lands in the wake-up's send."""
    send = multiprocessing.connection.Connection.send_bytes
    landed = []

    def interrupted(self: multiprocessing.connection.Connection, buf: Any, *args: Any) -> None:
        if buf == b"" and not landed and threading.current_thread() is threading.main_thread():
            landed.append(True)
            raise KeyboardInterrupt  # as the CLI's handler raises it, before the write
        send(self, buf, *args)

    pool = WorkerPool(1)
    worker = pool.submit(os.getpid).result()
    monkeypatch.setattr(multiprocessing.connection.Connection, "send_bytes", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pool.end()
    ending = threading.Thread(target=pool.end, daemon=True)
    ending.start()
    ending.join(PROMPTLY)
    try:
        assert not ending.is_alive(), "the pool's end hung"
    finally:
        if running(worker):  # pragma: no cover - only when the test failed
            os.kill(worker, signal.SIGKILL)
    assert landed and not running(worker)


class Unpicklable(Exception):
    """An error that holds a lock: it cannot pickle."""

    def __init__(self) -> None:
        super().__init__("locked")
        self.lock = threading.Lock()


def _raise_unpicklable() -> None:
    raise Unpicklable


def test_what_does_not_pickle_fails_its_future_alone() -> None:
    """A result or an error that does not pickle, or a task that does not, fails that future
    with the pickling error, and the pool goes on."""
    with worker_pool(1) as pool:
        result = pool.submit(threading.Lock)
        error = pool.submit(_raise_unpicklable)
        task = pool.submit(abs, threading.Lock())
        after = pool.submit(abs, -3)
        lock = "cannot pickle '_thread.lock' object"
        with pytest.raises(
            pickle.PicklingError, match=f"^the task's result does not pickle: {lock}$"
        ):
            result.result()
        with pytest.raises(
            pickle.PicklingError, match=f"^the task's error does not pickle: {lock}$"
        ):
            error.result()
        with pytest.raises(TypeError, match=f"^{lock}$"):
            task.result()
        assert after.result() == 3


def test_a_tasks_error_comes_back_as_it_was_raised() -> None:
    with worker_pool(2) as pool:
        with pytest.raises(ValueError, match="invalid literal for int"):
            pool.submit(int, "x").result()
        refused = SessionReferenceError("refused", INVALID_CONFIG)
        failed = pool.submit(_raise, refused).exception()
    assert type(failed) is SessionReferenceError
    assert (failed.code, failed.message) == (INVALID_CONFIG, "refused")


def _raise(error: BaseException) -> None:
    raise error


def test_an_initializer_that_fails_fails_every_task_with_its_error() -> None:
    """Not a worker's death: its error, on each future."""
    refused = SessionReferenceError("no store here", INVALID_CONFIG)
    with worker_pool(1, _raise, (refused,)) as pool:
        futures = [pool.submit(abs, -n) for n in range(3)]
        assert [str(future.exception()) for future in futures] == ["no store here"] * 3
