"""Reading a zstd log ahead on a thread of its own (sessionref/log/prefetch.py): the same
records and the same errors as reading it in turn, whatever the damage, and no thread left
behind however the reading ends."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import msgspec
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionref import DirectoryStore
from sessionref.errors import SessionLogError
from sessionref.log import frames, reader
from sessionref.log.prefetch import prefetched
from sessionref.log.reader import read_zstd
from sessionref.testing import MutatedLog, mutated_logs, session_logs
from tests.conftest import examples, fuzz_settings

THREAD = "sessionref-decompress"


def readers() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == THREAD]


@contextlib.contextmanager
def reading(ahead: bool, chunk: int) -> Iterator[None]:
    """Every zstd log read ahead (or none), decompressed ``chunk`` bytes at a time."""
    threshold = 0 if ahead else 1 << 62
    with (
        mock.patch.object(reader, "PREFETCH_BYTES", threshold),
        mock.patch.object(frames, "CHUNK_SIZE", chunk),
    ):
        yield


def outcome(data: bytes, session_id: str, max_bytes: int) -> object:
    """The records read, or the error's message."""
    try:
        log = read_zstd(data, session_id, max_bytes=max_bytes)
    except SessionLogError as exc:
        return str(exc)
    return [(type(record).__name__, record) for record in log.records]


@settings(fuzz_settings(1), max_examples=examples(100))  # not a sharded fuzz property
@given(
    mutated_logs(session_logs(max_turns=2), compress=True, max_mutations=3),
    st.sampled_from([1, 7, 64, 1 << 18]),
    st.sampled_from([frames.DEFAULT_MAX_DECOMPRESSED_BYTES, 300, 3000]),
)
def test_a_log_read_ahead_reads_as_one_read_in_turn(
    mutated: MutatedLog, chunk: int, max_bytes: int
) -> None:
    # Small chunks put many through the hand-off, and the damage (torn and corrupt frames,
    # broken lines, logs over max_bytes) fails the read in the middle of them.
    seen = []
    for ahead in (False, True):
        with reading(ahead, chunk):
            seen.append(outcome(mutated.data, mutated.session_id, max_bytes))
    assert seen[0] == seen[1], mutated.mutations
    assert not readers()


def counted(taken: list[int], closed: list[bool]) -> Iterator[int]:
    try:
        for number in itertools.count():
            taken.append(number)
            yield number
    finally:
        closed.append(True)


def test_leaving_early_stops_the_reader_and_closes_the_source() -> None:
    taken: list[int] = []
    closed: list[bool] = []
    with prefetched(counted(taken, closed), depth=2) as items:
        for item in items:
            if item == 3:
                break
    assert not readers() and closed == [True]
    assert len(taken) <= 4 + 2 + 3  # what was used, the depth, and the hand-off's slack


def test_a_failure_of_the_caller_is_its_own_and_stops_the_reader() -> None:
    closed: list[bool] = []
    with pytest.raises(KeyError), prefetched(counted([], closed)) as items:
        next(items)
        raise KeyError("the caller's")
    assert not readers() and closed == [True]


def test_a_failure_of_the_source_comes_after_every_item_before_it() -> None:
    def failing() -> Iterator[int]:
        yield from range(50)
        raise SessionLogError("corrupt zstd log: a frame failed validation")

    got: list[int] = []
    with (
        pytest.raises(SessionLogError, match="failed validation"),
        prefetched(failing(), depth=1) as items,
    ):
        got.extend(items)
    assert got == list(range(50)) and not readers()


def test_a_mapped_log_failing_early_is_closed_after_the_reader_stopped(tmp_path: Path) -> None:
    # The scanner fails on line 3 (a turn/end after an unparsable line) while the reader
    # still has thousands of frames to go; the store then closes the file it mapped.
    frame = zstandard.ZstdCompressor().compress
    lines = [
        b'{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}',
        b"not json",
        b'{"type":"turn/end","seq":0,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}',
        *(b'{"type":"x","seq":%d,"time":1,"data":{},"ignorable":true}' % n for n in range(5000)),
    ]
    directory = tmp_path / "_no-cwd" / "s"
    directory.mkdir(parents=True)
    (directory / "session.jsonl.zstd").write_bytes(b"".join(frame(x + b"\n") for x in lines))
    for _ in range(20):
        with reading(True, 64), pytest.raises(SessionLogError, match="corrupt"):
            DirectoryStore(tmp_path).read("s")
        assert not readers()


def test_a_large_log_is_read_ahead_and_a_small_one_is_not(tmp_path: Path) -> None:
    frame = zstandard.ZstdCompressor(level=-5).compress
    header = b'{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}\n'
    body = b"".join(
        frame(b'{"type":"x","seq":%d,"time":1,"data":"%s","ignorable":true}\n' % (n, b"%x" % n * 9))
        for n in range(6000)
    )
    assert len(body) >= reader.PREFETCH_BYTES
    started: list[object] = []
    real = prefetched

    def spied(chunks: Iterator[bytes]) -> contextlib.AbstractContextManager[Iterator[bytes]]:
        started.append(chunks)
        return real(chunks)

    with mock.patch.object(reader, "prefetched", spied):
        large = read_zstd(frame(header) + body, "s")
        small = read_zstd(frame(header) + body[:2000], "s")
    assert len(started) == 1 and len(large.records) == 6000 and len(small.records) < 100
    assert isinstance(large.records[0].data, msgspec.Raw)
