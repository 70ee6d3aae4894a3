"""Cancellation settles at once, as the published package's does (docs/api.md §Cancellation).

``tests/data/api/package_signals.json`` holds what the package answers in each scenario
(``package_signals.mjs`` ran it with an AbortSignal against reads that hang or fail late);
each is replayed here with a Python token. A call runs in a helper thread joined with a
generous timeout: the timeout only guards the suite against a hang, it measures nothing.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sessionref import MemoryStore, SessionReferenceError, SessionReferenceResolver
from sessionref.cancellation import CancelToken
from sessionref.codecs import format_session_reference_mention
from sessionref.log.records import SessionHeader, SessionLog
from tests.logs import header

ANSWERS: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "api" / "package_signals.json").read_text("utf-8")
)
HANG_GUARD_SECONDS = 60.0


class Flag:
    """A token with ``is_set()`` only (no ``wait``): it is polled."""

    def __init__(self) -> None:
        self.value = False

    def set(self) -> None:
        self.value = True

    def is_set(self) -> bool:
        return self.value


class ScriptedStore:
    """Session "a" in memory; "hang" blocks until released; "late-fail" fails once cancelled.

    Entering a blocking read (or listing, with ``hang_listing``) sets ``cancel_on_block``
    when given: the caller cancels while the read hangs. "late-fail" sets it, then fails.
    """

    def __init__(self) -> None:
        self.inner = MemoryStore([{"header": header("a", 1, cwd=None), "events": []}])
        self.release = threading.Event()
        self.cancel_on_block: Any = None
        self.hang_listing = False

    def _block(self) -> None:
        if self.cancel_on_block is not None:
            self.cancel_on_block.set()
        self.release.wait()

    def headers(self) -> list[SessionHeader]:
        if self.hang_listing:
            self._block()
        return self.inner.headers()

    def read(self, session_id: str) -> SessionLog:
        if session_id == "hang":
            self._block()
        if session_id == "late-fail":  # fails right after the caller cancelled
            self.cancel_on_block.set()
            raise OSError("disk gone")
        return self.inner.read(session_id)

    def title(self, session_id: str) -> str | None:
        return self.inner.title(session_id)


@pytest.fixture
def store() -> Iterator[ScriptedStore]:
    scripted = ScriptedStore()
    yield scripted
    scripted.release.set()  # let the reads left behind finish


def settled(call: Callable[[], Any]) -> dict[str, Any]:
    """What ``call`` gave, in the shape of the recorded answers; it must return at all."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            value = call()
        except SessionReferenceError as exc:
            outcome["error"] = exc.to_dict()
        else:
            if isinstance(value, list):
                outcome["ok"] = len(value)
            else:
                keys = ["content"] + (["additionalContext"] if value.additional_context else [])
                outcome["ok"] = keys

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(HANG_GUARD_SECONDS)
    assert not worker.is_alive(), "the call did not settle"
    return outcome


def mention(session_id: str) -> str:
    return format_session_reference_mention(session_id)


def message(text: str, kind: str = "user") -> dict[str, Any]:
    return {
        "id": "m",
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": kind},
    }


def scenario(name: str, store: ScriptedStore, token: Any) -> Callable[[], Any]:
    """The Python call of a recorded scenario; "aborted" ones get a token set beforehand."""
    resolver = SessionReferenceResolver(store)
    op, what, when = [*name.split("/"), ""][:3]
    if when == "aborted" or what == "aborted":
        token.set()
    elif when == "abort-later":
        store.cancel_on_block = token
    refs = {
        "no-references": [],
        "self": [{"sessionId": "t"}],
        "invalid": [5],
        "too-many": [{"sessionId": s} for s in "abcd"],
        "valid": [{"sessionId": "a"}],
        "missing": [{"sessionId": "missing"}],
        "hang": [{"sessionId": "hang"}],
        "hang+missing": [{"sessionId": "hang"}, {"sessionId": "missing"}],
        "late-fail": [{"sessionId": "late-fail"}],
    }
    texts = {
        "valid+self": [mention("a"), mention("t")],
        "valid+malformed": [mention("a"), "@[x](dsh-session:e30)"],
        "self+valid": [mention("t"), mention("a")],
        "hang+missing": [mention("hang"), mention("missing")],
        "hang": [mention("hang")],
    }
    if op == "prepare":
        return lambda: resolver.prepare("t", [], refs[what], token)
    if op == "direct":
        if what == "no-references":
            messages = [message("hi"), message(mention("a"), kind="plugin")]
        else:
            messages = [message(text) for text in texts[what]]
        return lambda: resolver.prepare_direct_messages("t", messages, cancel=token)
    if what == "limit-0":
        return lambda: resolver.list_candidates("t", "", 0, token)
    if what == "hang-listing":
        store.hang_listing = True
    return lambda: resolver.list_candidates("t", "a" if what == "query" else "", 1, token)


TOKENS: dict[str, Callable[[], Any]] = {"event": threading.Event, "polled": Flag}


@pytest.mark.parametrize("kind", sorted(TOKENS))
@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_the_package_answer(name: str, kind: str, store: ScriptedStore) -> None:
    assert settled(scenario(name, store, TOKENS[kind]())) == ANSWERS[name]


def test_an_asyncio_event_is_a_polled_token(store: ScriptedStore) -> None:
    """``asyncio.Event.wait`` is a coroutine: it is not waited on, the token is polled."""
    token = asyncio.Event()
    name = "prepare/hang/abort-later"
    assert settled(scenario(name, store, token)) == ANSWERS[name]


class Untouchable:
    """A token that fails the test if it is looked at."""

    def is_set(self) -> bool:
        raise AssertionError("the token was looked at")


def test_no_references_never_look_at_the_token(store: ScriptedStore) -> None:
    resolver = SessionReferenceResolver(store)
    token: CancelToken = Untouchable()
    assert resolver.prepare("t", [{"type": "text"}], [], token).additional_context is None
    messages = [message("no mention"), message(mention("a"), kind="plugin")]
    assert resolver.prepare_direct_messages("t", messages, cancel=token) == messages


def test_a_hung_read_is_left_behind_in_a_daemon_thread(store: ScriptedStore) -> None:
    token = threading.Event()
    assert settled(scenario("prepare/hang/abort-later", store, token))["error"]["code"] == (
        "SESSION_REFERENCE_CANCELLED"
    )
    left = [thread for thread in threading.enumerate() if thread.name == "sessionref-settle"]
    assert left and all(thread.daemon for thread in left)
    store.release.set()
    for thread in left:
        thread.join(HANG_GUARD_SECONDS)
    assert not any(thread.is_alive() for thread in left)


def test_the_watcher_of_a_token_never_set_ends_with_the_call(store: ScriptedStore) -> None:
    token = threading.Event()
    resolver = SessionReferenceResolver(store)
    before = set(threading.enumerate())
    assert resolver.snapshot("t", [{"sessionId": "a"}], token) is not None
    started = [
        t for t in threading.enumerate() if t not in before and t.name == "sessionref-settle"
    ]
    for thread in started:
        thread.join(HANG_GUARD_SECONDS)
    assert not any(thread.is_alive() for thread in started)


class BarrierStore:
    """Every read waits for the other two: reads done one after the other break the barrier."""

    def __init__(self) -> None:
        self.inner = MemoryStore([{"header": header(s, 1), "events": []} for s in "abc"])
        self.barrier = threading.Barrier(3, timeout=HANG_GUARD_SECONDS)

    def headers(self) -> list[SessionHeader]:
        return self.inner.headers()

    def read(self, session_id: str) -> SessionLog:
        self.barrier.wait()
        return self.inner.read(session_id)

    def title(self, session_id: str) -> str | None:
        return self.inner.title(session_id)


@pytest.mark.parametrize("token", [None, threading.Event()])
def test_sources_are_read_in_parallel(token: Any) -> None:
    resolver = SessionReferenceResolver(BarrierStore())
    context = resolver.snapshot("t", [{"sessionId": s} for s in "abc"], token)
    assert context is not None
    assert [source.session_id for source in context.source.references] == ["a", "b", "c"]
