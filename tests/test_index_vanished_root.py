"""A store root removed after its store was opened lists as empty, with the index or without,
for every harness: the real DSH backend lists a root that does not exist as no sessions
(`listProjectDirs`: ENOENT gives `[]`), and `real.mjs prepare --root MISSING x` answers
`SESSION_REFERENCE_READ_FAILED: failed to read referenced session: session "x" not found`."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.codex.store import CodexStore
from sessionref.errors import READ_FAILED, SessionReferenceError
from sessionref.index import SessionIndex
from sessionref.log.multi import MultiStore
from sessionref.log.store import DirectoryStore
from sessionref.resolver import SessionReferenceResolver
from tests.test_index_harnesses import Settled, claude_store, codex_store

SAMPLE = Path(__file__).parent.parent / "sessionref" / "sample"
REAL_NOT_FOUND = 'failed to read referenced session: session "x" not found'


def dsh_store(root: Path, clock: Settled) -> Path:
    shutil.copytree(SAMPLE, root)
    return root


KINDS: list[tuple[Any, Callable[[Path, Settled], Path]]] = [
    (DirectoryStore, dsh_store),
    (ClaudeCodeStore, claude_store),
    (CodexStore, codex_store),
]


@pytest.mark.parametrize(("kind", "build"), KINDS, ids=["dsh", "claude-code", "codex"])
@pytest.mark.parametrize("served", ["store", "index", "multi"])
def test_a_root_removed_after_opening_lists_as_the_harness_lists_a_missing_root(
    kind: Any, build: Callable[[Path, Settled], Path], served: str, tmp_path: Path
) -> None:
    root = build(tmp_path / "root", Settled())
    store: Any = {
        "store": lambda: kind(root),
        "index": lambda: SessionIndex(kind(root), tmp_path / "i.sqlite"),
        "multi": lambda: MultiStore({"a": kind(root)}),
    }[served]()
    assert store.headers()  # listed once while the root was there
    shutil.rmtree(root)
    resolver = SessionReferenceResolver(store)
    assert (store.headers(), store.problems(), resolver.list_candidates("t")) == ([], [], [])
    with pytest.raises(SessionReferenceError) as raised:
        resolver.prepare("t", [], [{"sessionId": "x"}])
    assert (raised.value.code, str(raised.value)) == (READ_FAILED, REAL_NOT_FOUND)
