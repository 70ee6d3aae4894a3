"""The cyclic collector is off while a log is read and projected, and comes back as it was
(sessionref/collector.py): nested and overlapping pauses, in one thread or several."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterable, Iterator

from sessionref.collector import collection_paused
from sessionref.log.records import SessionHeader, SessionLog, decode_records
from sessionref.pipeline.messages import SourceData, Unit
from sessionref.snapshot import snapshot_source

ONE_MESSAGE = (
    b'{"type":"assistant/message","seq":0,"surfaceOp":"append","data":{"message":'
    b'{"content":[{"type":"text","text":"hi"}],"source":{"kind":"model"}}}}\n'
)


def test_a_snapshot_runs_its_stages_with_the_collector_off() -> None:
    seen: list[bool] = []

    def watching(units: Iterable[Unit], source: SourceData, max_bytes: int) -> Iterator[Unit]:
        for unit in units:
            seen.append(gc.isenabled())
            yield unit

    log = SessionLog(SessionHeader("s", 0), decode_records(ONE_MESSAGE))
    snapshot_source(log, "s", 10_000, watching)
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off() -> None:
    gc.disable()
    try:
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_pauses_in_threads_turn_it_back_on_when_the_last_ends() -> None:
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with collection_paused():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    with collection_paused():
        thread.start()
        assert inside.wait(10)
    assert not gc.isenabled()  # the other thread's pause is still under way
    release.set()
    thread.join(10)
    assert gc.isenabled()
