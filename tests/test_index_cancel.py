"""A search stops when its caller cancels: a set token raises CANCELLED where the search is,
in its SQL statement or between two sessions of a redacted search, and leaves the index as it
was (docs/api.md §Cancellation; the MCP server cancels ``search_sessions`` so)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from sessionref.errors import CANCELLED, INVALID_CONFIG, SessionReferenceError
from sessionref.index import SessionIndex
from sessionref.log.store import DirectoryStore
from sessionref.mcp.tools import Toolbox
from sessionref.redact import Redaction
from sessionref.testing import write_session_store
from tests.logs import turn
from tests.test_mcp_catalog import open_catalog

SESSIONS = 300


class SetAfter:
    """A token that turns set on its ``calls``-th look, and counts every look."""

    def __init__(self, calls: int) -> None:
        self.calls, self.looks = calls, 0

    def is_set(self) -> bool:
        self.looks += 1
        return self.looks >= self.calls


def log(n: int) -> dict[str, Any]:
    """Session ``s<n>``, whose question names the key ``TK-<n>`` and a word ``wide``."""
    header = {"version": 0, "id": f"s{n:03}", "createdAt": n, "delegationDepth": 0, "cwd": "/w"}
    events = turn(0, 1, f"the wide key TK-{n} " + "padding words " * 40, "ok")
    return {"header": header, "events": events}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> SessionIndex:
    root = tmp_path_factory.mktemp("cancel")
    write_session_store(root / "store", [log(n) for n in range(SESSIONS)])
    return SessionIndex(DirectoryStore(root / "store"), root / "index.sqlite")


def cancelled_by(index: SessionIndex, token: Any, **options: Any) -> SessionReferenceError:
    with pytest.raises(SessionReferenceError) as raised:
        index.search("wide", SESSIONS, cancel=token, **options)
    return raised.value


@pytest.mark.parametrize("redaction", [None, Redaction(("TK-[0-9]+",))])
def test_a_token_set_before_the_search_stops_it_at_once(
    index: SessionIndex, redaction: Redaction | None
) -> None:
    token = threading.Event()
    token.set()
    assert cancelled_by(index, token, redaction=redaction).code == CANCELLED


@pytest.mark.parametrize("redaction", [None, Redaction(("TK-[0-9]+",))])
def test_a_token_set_during_the_search_stops_it_and_the_index_goes_on(
    index: SessionIndex, redaction: Redaction | None
) -> None:
    """The first look (before the search) finds the token clear; a later one, made while the
    statement runs or between two sessions, finds it set."""
    token = SetAfter(calls=2)
    assert cancelled_by(index, token, redaction=redaction).code == CANCELLED
    hits = index.search("wide", SESSIONS, redaction=redaction, cancel=threading.Event())
    assert sorted(hit.session_id for hit in hits) == [f"s{n:03}" for n in range(SESSIONS)]


def test_a_clear_token_leaves_no_handler_behind(index: SessionIndex) -> None:
    """A token asked while a statement runs is not asked once the search has returned."""
    token = SetAfter(calls=10**9)
    first = index.search("wide", SESSIONS, cancel=token)
    looks = token.looks
    assert looks > 1  # asked during the statement too, not only before it
    assert index.search("wide", SESSIONS) == first
    assert token.looks == looks


def test_a_cancel_that_is_no_token_is_invalid_config(index: SessionIndex) -> None:
    error = cancelled_by(index, "stop")
    assert (error.code, error.message) == (
        INVALID_CONFIG,
        "cancel must be a token with is_set(), such as a threading.Event, not 'stop'",
    )


def test_the_mcp_search_tool_is_cancelled_by_the_requests_token(tmp_path: Path) -> None:
    token = threading.Event()
    token.set()
    answer = Toolbox(open_catalog(tmp_path)).call("search_sessions", {"query": "the"}, token)
    assert answer.is_error
    assert answer.text == "SESSION_REFERENCE_CANCELLED: session reference preparation was cancelled"
