"""JavaScript string semantics for Python ``str`` (docs/snapshot.md §Strings).

JavaScript strings are UTF-16 code unit sequences and may hold lone surrogates. In Python they
are ``str`` whose lone surrogates are code points U+D800–U+DFFF. A Python ``str`` may also hold a
high and a low surrogate side by side as two code points; JavaScript sees that as one astral
character, so every function here treats such a pair as the character it denotes.
"""

from __future__ import annotations

import re
from typing import Final

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_REPLACEMENT: Final = "\ufffd"


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds any surrogate code point.

    >>> has_surrogates("a\\ud800"), has_surrogates("🙂")
    (True, False)
    """
    return _SURROGATE.search(text) is not None


def combine_surrogate_pairs(text: str) -> str:
    """Join adjacent high + low surrogate code points into the astral character they denote.

    >>> combine_surrogate_pairs("\\ud83d\\ude42") == "🙂"
    True
    >>> combine_surrogate_pairs("\\ud800x") == "\\ud800x"
    True
    """
    if not has_surrogates(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def utf8_length(text: str) -> int:
    """Byte length of the UTF-8 form of a JavaScript string: 3 bytes per lone surrogate.

    >>> utf8_length("aé中🙂"), utf8_length("\\ud800")
    (10, 3)
    """
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return len(combine_surrogate_pairs(text).encode("utf-8", "surrogatepass"))


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (what a UTF-8 encoder writes).

    >>> well_formed("a\\ud800b") == "a\\ufffdb"
    True
    """
    if not has_surrogates(text):
        return text
    return _SURROGATE.sub(_REPLACEMENT, combine_surrogate_pairs(text))


def utf8_encode(text: str) -> bytes:
    """UTF-8 bytes of a JavaScript string, lone surrogates as U+FFFD (``TextEncoder``).

    >>> utf8_encode("a\\ud800")
    b'a\\xef\\xbf\\xbd'
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return well_formed(text).encode("utf-8")
