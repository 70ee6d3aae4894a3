"""A store's own errors are coded too: reading a session straight from any store (not through
the resolver) fails with a ``SessionReferenceError`` of code READ_FAILED whose message is the
store's, naming the log file; it pickles back as it was, and the resolver still words it as
``failed to read referenced session: <cause>`` (docs/api.md §Errors).

Expected messages come from the format's rules (a line longer than the store's limit, numbered
in the file; an id in two roots), not from the reader.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path

import pytest

from sessionref import MemoryStore, SessionReferenceError, SessionReferenceResolver, Target
from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.codex.store import CodexStore
from sessionref.errors import BUDGET_EXCEEDED, READ_FAILED, SessionLogError
from sessionref.index.store import SessionIndex
from sessionref.log.multi import AmbiguousSession, MultiStore
from sessionref.log.records import SessionHeader, SessionLog, decode_records
from sessionref.log.store import DirectoryStore, SessionNotFound
from sessionref.snapshot import snapshot_source
from tests.log_damage import place, plain_log
from tests.logs import header, other, turn_end, user

LIMIT = 200
THREAD = "0197a000-0000-7000-8000-000000000001"
LONG_FIRST_LINE = b'{"type":"user","uuid":"u","message":{"content":"' + b"x" * LIMIT + b'"}}\n'


def raised(read: Callable[[], object]) -> SessionReferenceError:
    """What ``read`` raises, caught as every other public call's error is caught."""
    with pytest.raises(SessionReferenceError) as caught:
        read()
    return caught.value


def assert_coded(error: SessionReferenceError, message: str) -> None:
    """``error`` is a store error with code READ_FAILED and ``message``, and so is its copy
    that crossed a process boundary."""
    assert isinstance(error, SessionLogError)
    assert (error.code, str(error)) == (READ_FAILED, message)
    assert error.to_dict() == {"code": READ_FAILED, "message": message}
    travelled = pickle.loads(pickle.dumps(error))
    assert type(travelled) is type(error) and vars(travelled) == vars(error)


def dsh_root(root: Path) -> Path:
    """A DSH store holding session "s", whose line 3 is longer than ``LIMIT`` (line 1 is the
    header, line 2 a turn/start)."""
    events = [other(0), user(1, "x" * 2 * LIMIT), turn_end(2)]
    place(root, plain_log(events), compress=False)
    return root


def test_a_dsh_log_over_a_limit_and_a_missing_session(tmp_path: Path) -> None:
    store = DirectoryStore(dsh_root(tmp_path), max_line_bytes=LIMIT)
    path = store.path_of("s")
    assert_coded(raised(lambda: store.read("s")), f"{path}: line 3 is longer than {LIMIT} bytes")
    assert_coded(
        raised(lambda: store.transcript("s")), f"{path}: line 3 is longer than {LIMIT} bytes"
    )
    missing = raised(lambda: store.read("nope"))
    assert isinstance(missing, SessionNotFound)
    assert_coded(missing, 'session "nope" not found')
    assert_coded(raised(lambda: MemoryStore([]).read("nope")), 'session "nope" not found')


def test_the_index_raises_the_store_s_error(tmp_path: Path) -> None:
    store = DirectoryStore(dsh_root(tmp_path / "root"), max_line_bytes=LIMIT)
    with SessionIndex(store, tmp_path / "index.sqlite") as index:
        index.refresh()
        path = store.path_of("s")
        assert_coded(
            raised(lambda: index.read("s")), f"{path}: line 3 is longer than {LIMIT} bytes"
        )
        assert_coded(raised(lambda: index.read("nope")), 'session "nope" not found')


def test_a_claude_code_and_a_codex_session_passed_over(tmp_path: Path) -> None:
    claude = tmp_path / "claude" / "projects" / "-w" / "long.jsonl"
    codex = tmp_path / "codex" / f"sessions/2025/06/01/rollout-2025-06-01T10-00-00-{THREAD}.jsonl"
    for path in (claude, codex):
        path.parent.mkdir(parents=True)
        path.write_bytes(LONG_FIRST_LINE)
    stores = [
        (ClaudeCodeStore(tmp_path / "claude", max_line_bytes=LIMIT), "long", claude),
        (CodexStore(tmp_path / "codex", max_line_bytes=LIMIT), THREAD, codex),
    ]
    for store, session_id, path in stores:
        assert store.headers() == []
        said = f"{path}: line 1 is longer than {LIMIT} bytes"
        assert_coded(raised(lambda: store.read(session_id)), said)  # noqa: B023 - called here
        assert_coded(raised(lambda: store.read("nope")), 'session "nope" not found')  # noqa: B023


def test_a_session_in_two_roots(tmp_path: Path) -> None:
    roots = [str(dsh_root(tmp_path / name)) for name in ("one", "two")]
    store = MultiStore({root: DirectoryStore(root) for root in roots})
    ambiguous = raised(lambda: store.read("s"))
    assert isinstance(ambiguous, AmbiguousSession)
    said = f'session "s" is in 2 roots: {roots[0]} and {roots[1]}; read it from one of them alone'
    assert_coded(ambiguous, said)


def test_the_resolver_still_words_a_store_error_as_a_read_failure(tmp_path: Path) -> None:
    store = DirectoryStore(dsh_root(tmp_path), max_line_bytes=LIMIT)
    resolver = SessionReferenceResolver(store)
    for session_id in ("s", "nope"):
        cause = raised(lambda: store.read(session_id))  # noqa: B023 - called here
        failed = raised(lambda: resolver.prepare(Target("t"), [], [{"sessionId": session_id}]))  # noqa: B023
        assert not isinstance(failed, SessionLogError)
        assert (failed.code, failed.message) == (
            READ_FAILED,
            f"failed to read referenced session: {cause}",
        )
        assert type(failed.__cause__) is type(cause) and str(failed.__cause__) == str(cause)


class BrokenSurfaceStore:
    """Session "fits" reads and fits; "broken" reads, but a stage cannot read its content."""

    def __init__(self) -> None:
        self.inner = MemoryStore(
            [{"header": header("fits"), "events": [other(0), user(1, "x" * 400), turn_end(2)]}]
        )

    def headers(self) -> list[SessionHeader]:
        return self.inner.headers()

    def read(self, session_id: str) -> SessionLog:
        if session_id != "broken":
            return self.inner.read(session_id)
        line = b'{"type":"user/message","seq":0,"surfaceOp":"append","data":{"content":[null],'
        return SessionLog(SessionHeader("broken", 1), decode_records(line + b'"source":{}}}\n'))

    def title(self, session_id: str) -> None:
        return None


def test_a_log_a_stage_cannot_read_fails_the_read_before_any_budget_failure() -> None:
    """A stage's :class:`SessionLogError` is a read failure, raised as the reads settle: not
    a source's own failure to fit, which waits until every read is done."""
    store = BrokenSurfaceStore()
    cause = raised(lambda: snapshot_source(store.read("broken"), "broken", 100))
    assert isinstance(cause, SessionLogError)
    resolver = SessionReferenceResolver(store, max_reference_bytes=100)
    assert raised(lambda: resolver.snapshot("t", [{"sessionId": "fits"}])).code == BUDGET_EXCEEDED
    references = [{"sessionId": "fits"}, {"sessionId": "broken"}]
    failed = raised(lambda: resolver.snapshot("t", references))
    assert (failed.code, failed.message) == (
        READ_FAILED,
        f"failed to read referenced session: {cause}",
    )


STORES: dict[str, Callable[[Path], object]] = {
    "DirectoryStore": lambda root: DirectoryStore(root),
    "MemoryStore": lambda root: MemoryStore([]),
    "ClaudeCodeStore": lambda root: ClaudeCodeStore(root),
    "CodexStore": lambda root: CodexStore(root),
    "MultiStore": lambda root: MultiStore({"a": DirectoryStore(root)}),
    "SessionIndex": lambda root: SessionIndex(DirectoryStore(root), root / "i.sqlite"),
}


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("method", ["read", "title", "transcript"])
@pytest.mark.parametrize("session_id", [None, 5, b"s"])
def test_a_session_id_that_is_no_string_is_invalid_config_naming_the_method(
    kind: str, method: str, session_id: object, tmp_path: Path
) -> None:
    """A newcomer's trial: ``read(None)`` was ``session "None" not found`` (READ_FAILED) and
    ``title(None)`` was ``None``, where ``SessionIndex.holds(None)`` is INVALID_CONFIG. Ids are
    strings (docs/api.md §Errors: an argument of the wrong kind is INVALID_CONFIG)."""
    store = STORES[kind](tmp_path)
    error = raised(lambda: getattr(store, method)(session_id))
    wanted = f"{kind}.{method} session_id must be a string, not {type(session_id).__name__}"
    assert (error.code, error.message) == ("SESSION_REFERENCE_INVALID_CONFIG", wanted)
