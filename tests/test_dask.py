"""The dask engine gives the local engine's lines, on every scheduler (the ``dask`` extra)."""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from distributed import Client, LocalCluster

from sessionref.batch import build_snapshots
from sessionref.batch.dask import iter_bag, result_lines_bag, snapshots_bag
from sessionref.cli.demo import sample_root
from sessionref.codecs.jsjson import js_json
from sessionref.errors import INVALID_CONFIG, SessionReferenceError, describe
from sessionref.log.store import DirectoryStore
from tests.test_batch import LISTING, MAX_BYTES, run_batch, write_store

PATIENCE = 120.0
"""Seconds a command may take before the test calls it hung: a bound, not a speed check."""


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(tmp_path_factory.mktemp("store"))


@pytest.fixture(scope="module")
def local_lines(store_root: Path) -> list[bytes]:
    """The local engine's lines, the reference for every scheduler."""
    store = DirectoryStore(store_root)
    return [js_json(r) for r in build_snapshots(store, max_reference_bytes=MAX_BYTES)]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(
        processes=False,
        protocol="tcp",  # an address a command-line process could reach
        n_workers=1,
        threads_per_worker=2,
        dashboard_address=None,
    ) as local:
        yield local


def lines(results: Any) -> list[bytes]:
    return [js_json(result) for result in results]


def test_bag_is_partitioned_in_listing_order(store_root: Path, local_lines: list[bytes]) -> None:
    bag = snapshots_bag(store_root, max_reference_bytes=MAX_BYTES, partition_size=4)
    assert bag.npartitions == 4
    partitions = [part.compute(scheduler="synchronous") for part in bag.to_delayed()]
    assert [[r["sessionId"] for r in part] for part in partitions] == [
        LISTING[i : i + 4] for i in range(0, len(LISTING), 4)
    ]
    assert lines(bag.compute(scheduler="synchronous")) == local_lines


@pytest.mark.parametrize("partition_size", [len(LISTING) + 1, 2**53 - 1])
def test_a_partition_larger_than_the_store_is_one_partition(
    store_root: Path, local_lines: list[bytes], partition_size: int
) -> None:
    """A newcomer's trial: ``partition_size=2**53 - 1``, a count the check takes, raised a
    bare ``MemoryError`` (dask's partitioning allocates one slot per unit of the size)."""
    bag = snapshots_bag(store_root, max_reference_bytes=MAX_BYTES, partition_size=partition_size)
    assert bag.npartitions == 1
    assert lines(bag.compute(scheduler="synchronous")) == local_lines
    whole = result_lines_bag(store_root, partition_size=partition_size, session_ids=[])
    assert whole.npartitions == 1 and whole.compute(scheduler="synchronous") == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"workers": -1}, "iter_bag workers must be a positive safe integer, not -1"),
        ({"workers": 0}, "iter_bag workers must be a positive safe integer, not 0"),
        ({"workers": "2"}, "iter_bag workers must be a positive safe integer, not '2'"),
        ({"scheduler": 8786}, "iter_bag scheduler must be a string, not int"),
        ({"bag": [b"a line"]}, "iter_bag bag must be a dask bag, not list"),
    ],
)
def test_iter_bag_refuses_options_it_cannot_run_with(
    store_root: Path, options: dict[str, Any], message: str
) -> None:
    """A newcomer's trial: ``workers=-1`` yielded nothing at all (a negative window), and 0,
    a string or a port number as the scheduler raised Python's own errors from inside, as
    did a list where the bag goes (``AttributeError``)."""
    given = {"bag": result_lines_bag(store_root, max_reference_bytes=MAX_BYTES), **options}
    with pytest.raises(SessionReferenceError) as raised:
        iter_bag(**given)
    assert (raised.value.code, raised.value.message) == (INVALID_CONFIG, message)


def test_processes_scheduler(store_root: Path, local_lines: list[bytes]) -> None:
    bag = snapshots_bag(store_root, max_reference_bytes=MAX_BYTES, partition_size=3)
    assert lines(bag.compute(scheduler="processes", num_workers=2)) == local_lines


class LockedStore:
    """A caller's own store that holds a lock, as a store shared by threads may: it does not
    pickle."""

    def __init__(self, root: Path) -> None:
        self.inner = DirectoryStore(root)
        self.lock = threading.Lock()

    def headers(self) -> Any:
        return self.inner.headers()

    def read(self, session_id: str) -> Any:
        return self.inner.read(session_id)

    def title(self, session_id: str) -> Any:
        return self.inner.title(session_id)


def test_a_store_that_does_not_pickle_is_a_coded_error_for_a_processes_scheduler(
    store_root: Path, local_lines: list[bytes]
) -> None:
    """A newcomer's trial: a custom store that does not pickle failed inside
    ``compute(scheduler="processes")`` with cloudpickle's bare ``TypeError``; it is
    INVALID_CONFIG saying what to do, while threads, which need no pickling, read it."""
    bag = snapshots_bag(LockedStore(store_root), max_reference_bytes=MAX_BYTES, partition_size=3)
    assert lines(bag.compute(scheduler="threads")) == local_lines
    with pytest.raises(SessionReferenceError) as raised:
        bag.compute(scheduler="processes", num_workers=2)
    assert raised.value.code == INVALID_CONFIG
    assert raised.value.message == (
        "the store does not pickle, and the scheduler sends it to worker processes"
        f" ({describe(pickling_error(threading.Lock()))}): give a store that pickles, a root"
        " path, or the threads scheduler"
    )


def pickling_error(value: object) -> Exception:
    """What pickling ``value`` raises (the standard library's own words)."""
    try:
        pickle.dumps(value)
    except Exception as exc:
        return exc
    raise AssertionError(f"{value!r} pickles")


def test_distributed_local_cluster(
    store_root: Path, local_lines: list[bytes], cluster: LocalCluster
) -> None:
    bag = snapshots_bag(store_root, max_reference_bytes=MAX_BYTES, partition_size=5)
    with Client(cluster, set_as_default=False) as client:
        assert lines(bag.compute(scheduler=client)) == local_lines
    address = cluster.scheduler_address
    assert lines(iter_bag(bag, scheduler=address)) == local_lines


def test_label_id(store_root: Path) -> None:
    bag = snapshots_bag(store_root, max_reference_bytes=MAX_BYTES, label="id")
    local = build_snapshots(DirectoryStore(store_root), max_reference_bytes=MAX_BYTES, label="id")
    assert lines(bag.compute(scheduler="synchronous")) == lines(local)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_cli_dask_engine_matches_local(store_root: Path, tmp_path: Path, workers: str) -> None:
    local, with_dask = tmp_path / "local.jsonl", tmp_path / "dask.jsonl"
    options = ("--max-bytes", str(MAX_BYTES), "--workers", workers)
    assert run_batch(store_root, local, *options) == 1
    assert run_batch(store_root, with_dask, *options, "--engine", "dask") == 1
    assert with_dask.read_bytes() == local.read_bytes()


def test_cli_scheduler_address(store_root: Path, tmp_path: Path, cluster: LocalCluster) -> None:
    local, with_dask = tmp_path / "local.jsonl", tmp_path / "dask.jsonl"
    assert run_batch(store_root, local) == 1
    address = cluster.scheduler_address
    assert run_batch(store_root, with_dask, "--engine", "dask", "--scheduler", address) == 1
    assert with_dask.read_bytes() == local.read_bytes()


def batch_command(
    root: str, out: Path, cwd: Path, *options: str
) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "sessionref", "batch", "--root", root, "--out", str(out)]
    return subprocess.run([*command, *options], cwd=cwd, capture_output=True, timeout=PATIENCE)


def test_a_relative_root_is_the_one_the_command_names(
    store_root: Path, tmp_path: Path, cluster: LocalCluster
) -> None:
    """The command's directory is not the workers': the root is made absolute before any
    work is sent (the workers here run in this process, from another directory)."""
    local, with_dask = tmp_path / "local.jsonl", tmp_path / "dask.jsonl"
    assert run_batch(store_root, local) == 1
    assert Path.cwd() != store_root.parent
    address = cluster.scheduler_address
    done = batch_command(
        store_root.name, with_dask, store_root.parent, "--engine", "dask", "--scheduler", address
    )
    assert done.returncode == 1, done.stderr
    assert with_dask.read_bytes() == local.read_bytes()


def test_a_root_a_worker_cannot_read_is_one_error_line(
    store_root: Path, tmp_path: Path, cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked on a worker before the run: here the workers run in this process, where the
    root is made unreadable (the command, in its own process, reads it)."""
    scandir = os.scandir

    def denied(path: Any = ".") -> Any:
        if os.fspath(path) == str(store_root):
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", denied)
    out = tmp_path / "out.jsonl"
    address = cluster.scheduler_address
    done = batch_command(str(store_root), out, tmp_path, "--engine", "dask", "--scheduler", address)
    worker = next(iter(cluster.scheduler_info["workers"]))
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == (
        f"{INVALID_CONFIG}: the store {store_root} cannot be read on the dask worker {worker}: "
        "Permission denied\n"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("option", "value", "wanted"),
    [
        ("partition_size", 0, "a positive safe integer"),
        ("max_reference_bytes", "64", "a positive safe integer"),
        ("label", "cwd", "one of title, id"),
    ],
)
def test_bag_options_are_checked_naming_the_function_and_the_value(
    store_root: Path, option: str, value: object, wanted: str
) -> None:
    for build in (snapshots_bag, result_lines_bag):
        with pytest.raises(SessionReferenceError) as caught:
            build(store_root, **{option: value})
        expected = f"{build.__name__} {option} must be {wanted}, not {value!r}"
        assert (caught.value.code, caught.value.message) == (INVALID_CONFIG, expected)


def test_unreachable_scheduler_is_a_one_line_error(
    store_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused at once: no waiting out distributed's 30-second connect timeout."""
    out = tmp_path / "o.jsonl"
    status = run_batch(store_root, out, "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9")
    assert status == 1
    err = capsys.readouterr().err
    assert err == (
        f"{INVALID_CONFIG}: cannot reach the dask scheduler tcp://127.0.0.1:9: Connection refused\n"
    )
    assert not out.exists()


def test_import_without_dask_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in sys.modules if name == "dask" or name.startswith("dask.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "sessionref.batch.dask")
    with pytest.raises(ImportError, match=r"pip install 'sessionref\[dask\]'"):
        importlib.import_module("sessionref.batch.dask")


def test_workers_keep_the_store_limits(store_root: Path, local_lines: list[bytes]) -> None:
    limited = DirectoryStore(store_root, max_line_bytes=300)
    expected = lines(build_snapshots(limited, max_reference_bytes=MAX_BYTES))
    assert expected != local_lines, "the limit must fail some sessions for this test to tell"
    bag = snapshots_bag(limited, max_reference_bytes=MAX_BYTES, partition_size=5)
    assert lines(bag.compute(scheduler="processes", num_workers=2)) == expected


def test_both_engines_take_a_store_and_a_root_path_alike(
    store_root: Path, local_lines: list[bytes]
) -> None:
    for store in (str(store_root), store_root, DirectoryStore(store_root)):
        bag = snapshots_bag(store, max_reference_bytes=MAX_BYTES)
        assert lines(bag.compute(scheduler="synchronous")) == local_lines
        assert lines(build_snapshots(store, max_reference_bytes=MAX_BYTES)) == local_lines


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"session_ids": "abc"}, "session_ids must be a list, not str"),
        ({"session_ids": [7]}, "session_ids[0] must be a string, not int"),
        (
            {"store": None},
            "store must be a store (with headers(), read() and title()) or a root path, "
            "not NoneType",
        ),
    ],
)
def test_both_engines_refuse_the_same_wrong_kinds(
    store_root: Path, arguments: dict[str, Any], message: str
) -> None:
    call = {"store": store_root, **arguments}
    for engine in (snapshots_bag, build_snapshots):
        with pytest.raises(SessionReferenceError) as raised:
            engine(**call)
        named = f"{engine.__name__} {message}"
        assert (raised.value.code, raised.value.message) == (INVALID_CONFIG, named)


def test_result_lines_bag_is_snapshots_bag_with_its_defaults() -> None:
    """``result_lines_bag``'s label defaulted to the title where ``snapshots_bag``'s is the id."""
    root = sample_root()
    lines = [line.decoded() for line in result_lines_bag(root).compute(scheduler="sync")]
    assert lines == snapshots_bag(root).compute(scheduler="sync")
    assert [line["label"] for line in lines] == [line["sessionId"] for line in lines]
