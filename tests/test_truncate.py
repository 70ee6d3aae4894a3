"""The head/tail cut (docs/snapshot.md §Cut) against a character-level reference written from it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionref.codecs.jsstring import utf8_length, well_formed
from sessionref.pipeline.truncate import cut_text
from sessionref.testing import js_strings


def _prefix(chars: str, budget: int) -> str:
    """The longest prefix of whole characters within ``budget`` UTF-8 bytes."""
    taken, size = 0, 0
    while taken < len(chars) and size + utf8_length(chars[taken]) <= budget:
        size += utf8_length(chars[taken])
        taken += 1
    return chars[:taken]


def reference_cut(text: str, n: int) -> tuple[str, int]:
    chars = well_formed(text)
    total = utf8_length(chars)

    def candidate(r: int) -> tuple[str, int]:
        head = _prefix(chars, (r + 1) // 2)
        tail = _prefix(chars[::-1], r // 2)[::-1]
        omitted = total - utf8_length(head) - utf8_length(tail)
        shown = head.removeprefix("\ufeff") + tail.removeprefix("\ufeff")
        return shown + f"\n[… omitted {omitted} UTF-8 bytes …]", omitted

    best = None
    lo, hi = 0, n
    while lo <= hi:
        r = (lo + hi) // 2
        if utf8_length(candidate(r)[0]) <= n:
            best, lo = r, r + 1
        else:
            hi = r - 1
    return ("", total) if best is None else candidate(best)


texts = js_strings(max_size=80) | st.text(st.sampled_from("a\ufeffé中🙂"), max_size=60)


@given(texts.filter(bool), st.integers(0, 200))
def test_cut_matches_the_character_level_reference(text: str, n: int) -> None:
    n = min(n, utf8_length(text) - 1)
    assert cut_text(text, n) == reference_cut(text, n)


@given(texts.filter(bool), st.integers(0, 200))
def test_cut_fits_its_limit(text: str, n: int) -> None:
    n = min(n, utf8_length(text) - 1)
    shown, omitted = cut_text(text, n)
    assert utf8_length(shown) <= n
    assert 0 <= omitted <= utf8_length(text)


def test_a_leading_bom_is_dropped_but_counted_as_kept() -> None:
    text = "\ufeff" + "a" * 100
    shown, omitted = cut_text(text, 45)
    assert not shown.startswith("\ufeff")
    head = shown.split("\n[")[0]
    assert omitted == 103 - (len(head) + 3)


def test_lone_surrogates_become_replacement_characters() -> None:
    shown, _ = cut_text("\ud800" * 40, 45)
    assert set(shown.split("\n[")[0]) == {"\ufffd"}


def test_a_text_that_fits_needs_no_cut() -> None:
    with pytest.raises(ValueError, match="limit"):
        cut_text("abc", 3)
