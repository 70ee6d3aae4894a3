"""The listing order of sessions with the same ``createdAt``, as the real DSH stack lists them.

The package sorts with ``b.createdAt - a.createdAt || a.id.localeCompare(b.id)`` (ICU root
collation, three levels, in Node 22) over the backend's listing, and the sort is stable: ids
``localeCompare`` finds equal (they differ only by ignorable characters) keep the listing's
order. Each group below is a store of sessions created at 5 plus one created at 6; ``ORDER``
is the candidates order the real stack answered (``real.mjs candidates``) for it. ``dots``
holds the pair ``scripts/oracle_stores.py --seed 5`` drew (".." and U+FEFF, an ignorable id).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionref import DirectoryStore
from sessionref.listing import listing_order
from tests.log_damage import place, plain_log
from tests.logs import header, two_turns

ORDER: dict[str, list[str]] = {
    "case": [
        "newer",
        "0",
        "9a",
        "a",
        "A",
        "a_b",
        "a-b",
        "aa",
        "ab",
        "aB",
        "Ab",
        "AB",
        "b",
        "B",
        "Z",
    ],
    "accents": [
        "newer",
        "a\u0301",
        "A\u0300",
        "\u00e4",
        "ae",
        "af",
        "c",
        "\u00e7",
        "e",
        "E",
        "\u00e9",
        "\u00c9",
        "\u00e8",
        "\u00ea",
        "\u00eb",
        "n",
        "\u00f1",
        "o",
        "\u00d6",
    ],
    "dots": [
        "newer",
        "\u200b",
        "\ufeff",
        "\ta",
        "\u0085a",
        " a",
        "_a",
        "-a",
        "!a",
        "..",
        "...",
        ".a",
        "(a",
        "@a",
        "&a",
        "#a",
        "%a",
        "`a",
        "^a",
        "+a",
        "=a",
        "|a",
        "~a",
        "$a",
        "1",
        "10",
        "9",
        "a",
        "a.",
        "x",
    ],
    "ties": ["newer", "x", "x\u00ad", "x\u200b", "x\ufeff", "\ufeffx"],
}


@pytest.mark.parametrize("group", sorted(ORDER))
def test_equal_times_are_listed_as_the_harness_lists_them(tmp_path: Path, group: str) -> None:
    for session_id in reversed(ORDER[group]):  # written in another order than listed
        created_at = 6 if session_id == "newer" else 5
        log = plain_log(two_turns(), header(session_id, created_at=created_at, cwd="/w"))
        place(tmp_path, log, session_id=session_id, cwd="/w", compress=False)
    assert listing_order(DirectoryStore(tmp_path)) == ORDER[group]
