"""JavaScript string semantics for Python ``str`` (docs/snapshot.md §Strings).

JavaScript strings are UTF-16 code unit sequences and may hold lone surrogates. In Python they
are ``str`` whose lone surrogates are code points U+D800–U+DFFF. A Python ``str`` may also hold a
high and a low surrogate side by side as two code points; JavaScript sees that as one astral
character, so every function here treats such a pair as the character it denotes. Bytes
become JavaScript text as ``TextDecoder`` makes them: invalid UTF-8 as U+FFFD
(:func:`repair_utf8`).
"""

from __future__ import annotations

import functools
import re
from typing import Final

from sessionref.errors import string

_REPLACEMENT: Final = "\ufffd"


@functools.cache
def surrogate_pattern() -> re.Pattern[str]:
    """One surrogate code point, as group 1; compiled on first use (a class of surrogates takes
    0.5 ms to compile, which every start of the command line paid, though few commands look).

    >>> surrogate_pattern().split("a\\ud800b")
    ['a', '\\ud800', 'b']
    """
    return re.compile("([\ud800-\udfff])")


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds any surrogate code point.

    >>> has_surrogates("a\\ud800"), has_surrogates("🙂")
    (True, False)
    """
    return surrogate_pattern().search(text) is not None


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
    """Byte length of the UTF-8 form of a JavaScript string: 3 bytes per lone surrogate; what
    is not a string is INVALID_CONFIG.

    >>> utf8_length("aé中🙂"), utf8_length("\\ud800")
    (10, 3)
    >>> utf8_length(None)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: utf8_length text must be a string, not NoneType
    """
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return len(combine_surrogate_pairs(text).encode("utf-8", "surrogatepass"))
    except AttributeError:  # checked only when it failed: the budget measures every unit
        string(text, "utf8_length text")
        raise


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (what a UTF-8 encoder writes).

    >>> well_formed("a\\ud800b") == "a\\ufffdb"
    True
    """
    if not has_surrogates(text):
        return text
    return surrogate_pattern().sub(_REPLACEMENT, combine_surrogate_pairs(text))


def utf8_encode(text: str) -> bytes:
    """UTF-8 bytes of a JavaScript string, lone surrogates as U+FFFD (``TextEncoder``).

    >>> utf8_encode("a\\ud800")
    b'a\\xef\\xbf\\xbd'
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return well_formed(text).encode("utf-8")


# Letters JavaScript's `toLowerCase` lower-cases (Node 22: ICU 78, Unicode 17) that `str.lower`
# may leave alone, as Python 3.10-3.13 know Unicode 13-15.1 only: the letters of Unicode 14
# (Python 3.10 misses them) and of Unicode 16-17. (first, last, offset to the lower case).
# Every other code point lowers alike (tests/test_api_lowercase.py checks every one of them).
_JS_ONLY_LOWER_RANGES: Final = (
    (0x1C89, 0x1C89, 1),
    (0x2C2F, 0x2C2F, 0x30),
    (0xA7C0, 0xA7C0, 1),
    (0xA7CB, 0xA7CB, 0x0264 - 0xA7CB),
    (0xA7CC, 0xA7CC, 1),
    (0xA7CE, 0xA7CE, 1),
    (0xA7D0, 0xA7D0, 1),
    (0xA7D2, 0xA7D2, 1),
    (0xA7D4, 0xA7D4, 1),
    (0xA7D6, 0xA7D6, 1),
    (0xA7D8, 0xA7D8, 1),
    (0xA7DA, 0xA7DA, 1),
    (0xA7DC, 0xA7DC, 0x019B - 0xA7DC),
    (0x10570, 0x1057A, 0x27),
    (0x1057C, 0x1058A, 0x27),
    (0x1058C, 0x10592, 0x27),
    (0x10594, 0x10595, 0x27),
    (0x10D50, 0x10D65, 0x20),
    (0x16EA0, 0x16EB8, 0x1B),
)
_JS_ONLY_LOWER: Final = {
    code: code + offset
    for first, last, offset in _JS_ONLY_LOWER_RANGES
    for code in range(first, last + 1)
}


def js_lower(text: str) -> str:
    """JavaScript's ``text.toLowerCase()`` (not ``str.lower``: they differ on newer letters).

    >>> js_lower("ÉCOLE ΟΔΟΣ"), js_lower("\\ua7dc") == "\\u019b", js_lower("\\ud801\\udc00")
    ('école οδος', True, '𐐨')
    """
    if text.isascii():
        return text.lower()
    return combine_surrogate_pairs(text).lower().translate(_JS_ONLY_LOWER)


def js_includes(text: str, part: str) -> bool:
    """JavaScript's ``text.includes(part)``: a match over UTF-16 code units.

    A lone surrogate in ``part`` can match half of a character of ``text``.

    >>> js_includes("a🙂b", "🙂"), js_includes("a🙂b", "\\ud83d"), js_includes("\\ude42", "\\ud83d")
    (True, True, False)
    """
    if not has_surrogates(part):
        return part in combine_surrogate_pairs(text)
    units = text.encode("utf-16-be", "surrogatepass")
    wanted = part.encode("utf-16-be", "surrogatepass")
    found = units.find(wanted)
    while found > 0 and found % 2:  # a match starts on a code unit, not inside one
        found = units.find(wanted, found + 1)
    return found >= 0


def repair_utf8(piece: bytes | bytearray) -> bytes | bytearray:
    """``piece`` (a log's raw value or line) with every invalid UTF-8 sequence replaced by
    U+FFFD, as ``TextDecoder`` decodes it; ``piece`` itself when it is valid.

    >>> repair_utf8(b'{"a":"\\xff"}\\n')
    b'{"a":"\\xef\\xbf\\xbd"}\\n'
    >>> valid = "é".encode() * 40000
    >>> repair_utf8(valid) is valid, repair_utf8(b"a\\xc3")
    (True, b'a\\xef\\xbf\\xbd')
    """
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return piece.decode("utf-8", "replace").encode("utf-8")
    return piece
