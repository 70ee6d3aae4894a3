"""The index answers the oracle's reproduction stores (tests/data/oracle-cases) as the store does:
listing, problems, titles and candidates, built cold and then warm."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionref.index import SessionIndex
from sessionref.log.store import DirectoryStore
from sessionref.resolver import SessionReferenceResolver
from sessionref.types import Target

CASES = Path(__file__).parent / "data" / "oracle-cases"
ROOTS = sorted(p for p in CASES.glob("*/*root") if p.is_dir())


def test_every_reproduction_store_is_here() -> None:
    assert len(ROOTS) >= 100


@pytest.mark.parametrize("root", ROOTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_reproduction_store_answers_as_without_index(root: Path, tmp_path: Path) -> None:
    plain = DirectoryStore(root)
    listed = plain.headers()
    for _ in ("cold", "warm"):
        index = SessionIndex(DirectoryStore(root), tmp_path / "index.sqlite")
        assert index.headers() == listed
        assert index.problems() == plain.problems()
        assert [index.title(h.id) for h in listed] == [plain.title(h.id) for h in listed]
        for query in ("", "a", "s", "5"):  # "5": a cwd that is the number 5 never matches
            with_index = SessionReferenceResolver(index).mention_candidates(
                Target("t", "/w"), query
            )
            without = SessionReferenceResolver(plain).mention_candidates(Target("t", "/w"), query)
            assert with_index == without
        index.close()
