"""Candidates found by the index's SQL equal the listing's own (the store read directly), for
queries whose JavaScript lower case differs from Python's, labels that are not strings, lone
surrogates, and ``createdAt`` ties cut by the limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sessionref.codecs.jsstring import js_lower
from sessionref.errors import INVALID_REFERENCE, READ_FAILED, SessionReferenceError
from sessionref.index import SessionIndex
from sessionref.log.store import DirectoryStore
from sessionref.resolver import SessionReferenceResolver
from sessionref.testing import LogRecords as SessionLog
from sessionref.types import Target
from tests.test_index import write_store

SESSIONS: list[tuple[str, int, str | None, Any]] = [
    ("b", 5, "/w", "Kelvin \u212a sign"),
    ("B", 5, None, None),
    ("a", 5, "/x", "İstanbul"),
    ("é", 5, "/w", 7),
    ("e", 5, "/W", {"title": "object"}),
    ("t", 9, "/w", "the target"),
    ("ΣΊΣΥΦΟΣ", 3, "/Σ", "ΟΔΟΣ"),
    ("s-\ua7dc", 2, "/w", "JS-only lower \ua7dc"),
    ("lone", 1, None, "half \ud83d of a pair"),
    ("pair", 1, "/w", "a 🙂 face"),
    ("ẞ", 0, "/x", "Straße"),
    ("c-1", 8, "/w", ""),
]
"""id, createdAt, cwd, title (``None``: none)."""
QUERIES = [
    "", "k", "\u212a", "K", "i̇", "İ", "σ", "ς", "ΟΣ", "ß", "ẞ", "\u019b", "\ua7dc", "\ud83d",
    "🙂", "/w", "/W", "7", "object", "b", "E", "é", "-", "lone", "the",
]  # fmt: skip


def session_log(session_id: str, created_at: float, cwd: str | None, title: Any) -> SessionLog:
    header: dict[str, Any] = {"version": 0, "id": session_id, "createdAt": created_at}
    if cwd is not None:
        header["cwd"] = cwd
    header["delegationDepth"] = 0
    events = []
    if title is not None:
        data = {"title": title, "messageSeqs": [], "source": {"kind": "user"}}
        events.append({"type": "session/title", "seq": 0, "time": 1, "data": data})
    return {"header": header, "events": events}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[SessionIndex, DirectoryStore]:
    folder = tmp_path_factory.mktemp("candidates")
    write_store(folder / "store", [session_log(*session) for session in SESSIONS])
    index = SessionIndex(DirectoryStore(folder / "store"), folder / "index.sqlite")
    return index, DirectoryStore(folder / "store")


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("limit", [1, 2, 3, 4, 50])
@pytest.mark.parametrize("cwd", ["/w", None])
def test_index_candidates_equal_the_listings(
    stores: tuple[SessionIndex, DirectoryStore], query: str, limit: int, cwd: str | None
) -> None:
    index, plain = stores
    target = Target("t", cwd)
    found = index.candidates(target, js_lower(query), limit)
    assert (found is None) == ("\ud83d" in query)  # only a lone surrogate is left to Python
    with_index = SessionReferenceResolver(index).list_candidates(target, query, limit)
    without = SessionReferenceResolver(plain).list_candidates(target, query, limit)
    assert with_index == without


def test_the_store_holds_what_the_queries_look_for(
    stores: tuple[SessionIndex, DirectoryStore],
) -> None:
    """The queries above find something, or the comparison would say little; but a label that
    is not a string and the target itself are never found."""
    _, plain = stores
    resolver = SessionReferenceResolver(plain)
    empty = [q for q in QUERIES if not resolver.list_candidates(Target("t", "/w"), q, 50)]
    assert empty == ["7", "object", "the"]


def test_a_store_failure_while_the_index_finds_candidates_is_read_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As when the listing itself fails (docs/api.md §Errors)."""
    write_store(tmp_path / "store", [session_log("a", 1, "/w", None)])
    index = SessionIndex(DirectoryStore(tmp_path / "store"), tmp_path / "index.sqlite")

    def fail(*_: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(index, "refresh", fail)
    with pytest.raises(SessionReferenceError) as raised:
        SessionReferenceResolver(index).list_candidates(Target("t", "/w"), "a")
    assert raised.value.code == READ_FAILED


@pytest.mark.parametrize("kind", ["Target", "dict"])
def test_a_cwd_given_as_a_path_ranks_as_its_text_with_and_without_the_index(
    stores: tuple[SessionIndex, DirectoryStore], kind: str
) -> None:
    """A trial's ``Target("x", cwd=Path(...))`` lost the project ranking on a plain store and
    was READ_FAILED (``'PosixPath' object has no attribute 'encode'``) through an index."""
    index, plain = stores
    target: Any = Target("t", Path("/w")) if kind == "Target" else {"id": "t", "cwd": Path("/w")}
    with_index = SessionReferenceResolver(index).list_candidates(target, "", 6)
    without = SessionReferenceResolver(plain).list_candidates(target, "", 6)
    # /w first, newest first (b before é at 5, by collation), then no cwd (B, newest)
    expected = [("c-1", "/w"), ("b", "/w"), ("é", "/w"), ("s-\ua7dc", "/w"), ("pair", "/w")]
    expected.append(("B", None))
    assert [(c.session_id, c.cwd) for c in with_index] == expected
    assert without == with_index
    assert index.candidates(Target("t", Path("/w")), "", 4) == index.candidates(
        Target("t", "/w"), "", 4
    )


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (Target(None), "target id must be a string, not NoneType"),  # type: ignore[arg-type]
        (Target(5), "target id must be a string, not int"),  # type: ignore[arg-type]
        (Target("t", 5), "target cwd must be a string, an os.PathLike or None, not int"),  # type: ignore[arg-type]
        (
            Target("t", b"/w"),  # type: ignore[arg-type]
            "target cwd must be a string, an os.PathLike or None, not bytes",
        ),
    ],
)
def test_a_target_of_the_wrong_kind_is_refused_alike_with_and_without_the_index(
    stores: tuple[SessionIndex, DirectoryStore], target: Target, message: str
) -> None:
    index, plain = stores
    for store in (index, plain):
        with pytest.raises(SessionReferenceError) as raised:
            SessionReferenceResolver(store).list_candidates(target)
        assert (raised.value.code, raised.value.message) == (INVALID_REFERENCE, message)
    with pytest.raises(SessionReferenceError) as raised:
        index.candidates(target, "", 3)
    assert (raised.value.code, raised.value.message) == (INVALID_REFERENCE, message)
