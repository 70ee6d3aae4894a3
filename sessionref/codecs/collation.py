"""JavaScript's ``localeCompare`` on session ids (ICU root collation), as a sort key.

The package sorts sessions that share a ``createdAt`` with ``a.id.localeCompare(b.id)``.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Callable, Hashable, Iterable
from typing import Final, TypeVar

T = TypeVar("T")

_ASCII_ORDER: Final = (
    "\t\n\x0b\x0c\r\x85 _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
)
"""The printable ASCII characters and the whitespace controls (U+0085 too) in ICU's root
collation order, a letter's capital equal to it but at the third level (``localeCompare`` in
Node 22)."""
_PRIMARY: Final = {
    **{c: n for n, c in enumerate(_ASCII_ORDER, 1)},
    **{c.upper(): n for n, c in enumerate(_ASCII_ORDER, 1) if c.isalpha()},
}
_OTHER: Final = len(_ASCII_ORDER) + 1
_MARK_ORDER: Final = (
    "\u0332 \u0313\u0343 \u0314 \u0301\u0341 \u0300\u0340 \u0306 \u0302 \u030c \u030a "
    "\u0342 \u0308 \u0344 \u030b \u0303 \u0307 \u0338 \u0327 \u0328 \u0304 \u030d\u030e"
    "\u0312\u0315\u031a\u033d\u033e\u033f\u0346\u034a\u034b\u034c\u0350\u0351\u0352\u0357"
    "\u035b\u035d\u035e \u0316\u0317\u0318\u0319\u031c\u031d\u031e\u031f\u0320\u0329"
    "\u032a\u032b\u032c\u032f\u0333\u033a\u033b\u033c\u0347\u0348\u0349\u034d\u034e\u0353"
    "\u0354\u0355\u0356\u0359\u035a\u035c\u035f\u0362 \u0336\u0337 \u0335 \u0305 \u0309 "
    "\u030f \u0310 \u0311 \u031b \u0321 \u0322 \u0323 \u0324 \u0325 \u0326 \u032d \u032e "
    "\u0330 \u0331 \u0334 \u0339 \u0345 \u0358 \u0360 \u0361"
)
"""The combining diacritics U+0300–U+0362 (U+034F aside, which is ignored) in ICU's root
order at the second level; those grouped together weigh the same."""
_SECONDARY: Final = {mark: n for n, group in enumerate(_MARK_ORDER.split(), 1) for mark in group}
_IGNORABLE_CONTROLS: Final = frozenset(
    chr(c) for c in range(0xA0) if unicodedata.category(chr(c)) == "Cc"
) - set(_ASCII_ORDER)


def _ignorable(char: str) -> bool:
    """Whether ICU's root collation ignores ``char`` altogether: controls other than
    whitespace, format characters (U+FEFF, U+200B, U+00AD, tags), the grapheme joiner,
    variation selectors."""
    return (
        char in _IGNORABLE_CONTROLS
        or unicodedata.category(char) == "Cf"
        or char == "\u034f"
        or "\ufe00" <= char <= "\ufe0f"
        or "\U000e0100" <= char <= "\U000e01ef"
    )


def collation_key(text: str) -> tuple[list[int], list[int], list[int]]:
    """A key that orders ids as JavaScript's ``a.localeCompare(b)`` (ICU root collation, three
    levels) orders them: exactly for ids of ASCII, ignorable characters and letters with
    combining accents (compared after their base letter); any other character sorts after
    the ASCII letters by code point, where ICU has its own order (docs/differences.md).

    >>> sorted(["b", "B", "\ufeff", "..", "A", "a_b", "a-b", "é", "e", "E"], key=collation_key)
    ['\ufeff', '..', 'A', 'a_b', 'a-b', 'b', 'B', 'e', 'E', 'é']
    """
    primaries: list[int] = []
    secondaries: list[int] = []
    tertiaries: list[int] = []
    for char in unicodedata.normalize("NFD", text):
        if _ignorable(char):
            continue
        if char in _SECONDARY or unicodedata.combining(char):
            secondaries.append(_SECONDARY.get(char, len(_SECONDARY) + ord(char)))
            tertiaries.append(0)
            continue
        primaries.append(_PRIMARY.get(char, _OTHER + ord(char)))
        secondaries.append(0)
        tertiaries.append(int("A" <= char <= "Z"))
    return primaries, secondaries, tertiaries


def ties_collated(
    items: Iterable[T], tie: Callable[[T], Hashable], name: Callable[[T], str]
) -> list[T]:
    """``items`` with each run of neighbours of one ``tie`` key ordered by the
    :func:`collation_key` of their ``name`` (the sort is stable: names it finds equal keep
    their order); the runs stay where they are.

    >>> ties_collated([(2, "b"), (1, "b"), (1, "B"), (1, "a")], lambda i: i[0], lambda i: i[1])
    [(2, 'b'), (1, 'a'), (1, 'b'), (1, 'B')]
    """
    ordered: list[T] = []
    for _, tied in itertools.groupby(items, key=tie):
        run = list(tied)
        ordered += sorted(run, key=lambda item: collation_key(name(item))) if len(run) > 1 else run
    return ordered
