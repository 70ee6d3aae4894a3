"""Case folding as SQLite's trigram tokenizer folds, for words too short for its index.

The trigram index folds each character on its own (Unicode simple case folding, from SQLite's
own tables): ``Ä`` is ``ä``, ``Σ`` and ``ς`` are ``σ``, the micro sign is ``μ``, the Kelvin sign
``k``. SQLite's ``LIKE`` folds ASCII letters only, so a short word becomes one ``LIKE`` pattern
per way of spelling it (``är``: ``%är%`` or ``%Är%``): as fast as ``LIKE`` itself, and exact.
"""

from __future__ import annotations

import itertools
import re
from typing import Final

#: What the trigram tokenizer folds further than ``str.lower`` does.
_FOLDS: Final = {
    "µ": "μ", "ſ": "s", "\u0345": "ι", "ς": "σ", "ϐ": "β", "ϑ": "θ", "ϕ": "φ",
    "ϖ": "π", "ϰ": "κ", "ϱ": "ρ", "ϵ": "ε", "ẛ": "ṡ", "\u1fbe": "ι",
}  # fmt: skip
_FOLDED_BY: Final = {
    target: tuple(c for c, t in _FOLDS.items() if t == target) for target in _FOLDS.values()
}
#: The characters whose lower case is the key though they are neither its upper nor its title
#: case (tests/test_index_search.py checks this against every code point).
_LOWERED_FROM: Final = {"θ": "ϴ", "ß": "ẞ", "ω": "\u2126", "k": "\u212a", "å": "\u212b"}


def fold_char(char: str) -> str:
    """A character as the trigram index folds it (one whose lower case is longer stays).

    >>> fold_char("Ä"), fold_char("ς"), fold_char("\\u212a"), fold_char("İ")
    ('ä', 'σ', 'k', 'İ')
    """
    lower = char.lower()
    return _FOLDS.get(lower, lower) if len(lower) == 1 else char


def spellings(char: str) -> list[str]:
    """Every character that folds as ``char`` does, ASCII letters in lower case only (``LIKE``
    folds those), in code point order.

    >>> spellings("Σ"), spellings("K") == ["k", "\u212a"], spellings("令")
    (['Σ', 'ς', 'σ'], True, ['令'])
    """
    folded = fold_char(char)
    lowers = (folded, *_FOLDED_BY.get(folded, ()))
    found = {char, *lowers}
    for lower in lowers:
        found.update((lower.upper(), lower.title(), *_LOWERED_FROM.get(lower, "")))
    return sorted(
        {c.lower() if c.isascii() else c for c in found if len(c) == 1 and fold_char(c) == folded}
    )


def word_spellings(word: str) -> list[str]:
    """Every way of spelling ``word`` that folds as it does, up to ASCII case.

    >>> word_spellings("är"), word_spellings("ON"), word_spellings("令牌")
    (['Är', 'är'], ['on'], ['令牌'])
    """
    return ["".join(chars) for chars in itertools.product(*map(spellings, word))]


def fold_text(text: str) -> str:
    """``text`` folded character by character as the trigram index folds it: a word is found
    in a text by the index exactly when ``fold_text(word) in fold_text(text)``.

    >>> fold_text("ÄRGER ς İ"), fold_text("Plain ASCII")
    ('ärger σ İ', 'plain ascii')
    """
    if "\u0130" in text:  # the one character whose lower case is two: kept, as fold_char does
        return "".join(map(fold_char, text))
    folded = text.lower()  # fold_char of every other character: its lower case, then _FOLDS
    if _FOLDED.search(folded):
        for char, target in _FOLDS.items():
            folded = folded.replace(char, target)  # in C, where translate looks up each char
    return folded


_FOLDED: Final = re.compile("[" + "".join(_FOLDS) + "]")
"""A character ``_FOLDS`` folds further: most texts have none."""
