"""``JSON.stringify`` of JSON values with JavaScript string semantics, and its tag-safe form.

The fast path is msgspec, which escapes a string as JavaScript does (docs/snapshot.md §Codecs):
``"`` ``\\`` ``\\b \\f \\n \\r \\t`` short, other U+0000–U+001F as ``\\u00xx``, everything
else literal (U+2028/U+2029 included). It refuses strings that hold lone surrogates, which
JavaScript writes as ``\\udxxx``; for those the value is walked, and in each string msgspec
refuses, the text between lone surrogates still goes through msgspec.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

import msgspec

from sessionref.codecs.jsstring import combine_surrogate_pairs, surrogate_pattern

_ENCODE: Final = msgspec.json.Encoder().encode
NOT_SERIALIZABLE: Final = "session-reference data is not JSON-serializable"
_NOT_SHORT_ESCAPE: Final = re.compile(rb"\\[u/]")
_ESCAPE_PAST_SHORT: Final = re.compile(rb"\\[\\u/]")
"""A backslash before one of the escapes a count cannot take at once: ``\\\\`` (two
backslashes, one character) and ``\\u`` ``\\/`` (built instead). A regular expression finds
the first in one pass, where counting the two-byte ``\\\\`` took a slow search of its own."""
_ESCAPED_BACKSLASH: Final = re.compile(rb"\\\\")
"""``\\\\``, found left to right as ``bytes.count`` finds it, and faster: 3.7 against 6.6 ms
over the 7.4 MB of text literals that hold one in a 1600-turn log."""


def _string_literal(text: str) -> bytes:
    """A JSON string literal for any JavaScript string: msgspec's for the text between lone
    surrogates (what it writes for a string is what ``JSON.stringify`` does), ``\\udxxx``
    for each of them.

    >>> _string_literal('a\\ud800\\n"\\udfff')
    b'"a\\\\ud800\\\\n\\\\"\\\\udfff"'
    """
    try:
        return _ENCODE(text)
    except UnicodeEncodeError:
        pieces = surrogate_pattern().split(combine_surrogate_pairs(text))  # odd: surrogates
        escaped = (
            b"\\u%04x" % ord(piece) if index % 2 else _ENCODE(piece)[1:-1]
            for index, piece in enumerate(pieces)
        )
        return b'"' + b"".join(escaped) + b'"'


def _walk(value: object) -> bytes:
    """Serialize ``value`` piece by piece; only reached when the fast path refused it."""
    if isinstance(value, str):
        return _string_literal(value)
    if isinstance(value, Mapping):
        members = (_string_literal(str(key)) + b":" + _walk(item) for key, item in value.items())
        return b"{" + b",".join(members) + b"}"
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        return b"[" + b",".join(_walk(item) for item in value) + b"]"
    if isinstance(value, msgspec.Struct):
        return _walk(msgspec.to_builtins(value))
    return _ENCODE(value)


def js_json(value: object) -> bytes:
    """UTF-8 bytes of ``JSON.stringify(value)`` (no spaces).

    >>> js_json({"a": ["é", "\\ud800", 1, None]})
    b'{"a":["\\xc3\\xa9","\\\\ud800",1,null]}'
    """
    try:
        return _ENCODE(value)
    except UnicodeEncodeError:
        return _walk(value)


def tag_safe_json(value: object) -> bytes:
    """``js_json`` with every ``<`` written as ``\\u003c``, so no tag can appear in it.

    A value with no JSON form raises ``TypeError``, worded as the package words it.

    >>> tag_safe_json("</x>")
    b'"\\\\u003c/x>"'
    >>> tag_safe_json({"f": print})
    Traceback (most recent call last):
    TypeError: session-reference data is not JSON-serializable
    """
    try:
        serialized = js_json(value)
    except TypeError as exc:
        raise TypeError(NOT_SERIALIZABLE) from exc
    return serialized.replace(b"<", b"\\u003c")


def tag_safe_json_length(text: str) -> int:
    """``len(tag_safe_json(text))``: the byte length of a string's tag-safe JSON.

    Measured on a literal that is dropped at once, which is what lets a caller size a text
    without keeping its JSON. Counting the escapes instead is slower in CPython: the ``<``
    alone cost more to count (``str.count`` walks the string one code point at a time) than
    to replace in the literal (``bytes.replace`` finds each one with ``memchr``).

    >>> tag_safe_json_length("<é\\ud800"), len(tag_safe_json("<é\\ud800"))
    (16, 16)
    """
    return len(tag_safe_json(text))


def literal_lengths(literal: bytes) -> tuple[int, int] | None:
    """``(utf8_length(text), tag_safe_json_length(text))`` of the string a JSON string literal
    denotes, counted on the literal's bytes in C, without building the string; ``None`` when
    the literal is not in the form ``JSON.stringify`` writes (a ``\\u`` or ``\\/`` escape
    may be in it) or is not UTF-8, and the string must be built to be measured.

    ``literal`` is a whole literal, quotes included, that a JSON parser took (msgspec's
    skip checks escapes and control characters). In ``JSON.stringify``'s form the text
    serializes back to these very bytes, so the tag-safe JSON is the literal with each ``<``
    five bytes longer, and each escape (``\\"`` ``\\\\`` ``\\b \\f \\n \\r \\t``) is one
    byte of text.

    >>> from sessionref.codecs.jsstring import utf8_length
    >>> text = '<é\\n"\\\\'
    >>> literal_lengths(js_json(text)), (utf8_length(text), tag_safe_json_length(text))
    ((6, 16), (6, 16))
    >>> literal_lengths(b'"\\\\u00e9"'), literal_lengths(b'"\\xff"')
    (None, None)
    """
    if not literal.isascii():
        try:
            literal.decode("utf-8")  # the one pass that builds: CPython has no UTF-8 check
        except UnicodeDecodeError:
            return None
    json_bytes = 6 * len(literal) - 5 * len(literal.replace(b"<", b""))  # replace: memchr
    backslashes = literal.count(b"\\")
    if not backslashes:
        return len(literal) - 2, json_bytes
    found = _ESCAPE_PAST_SHORT.search(literal)  # none: every backslash starts a short escape
    if found is None:
        return len(literal) - 2 - backslashes, json_bytes
    if _NOT_SHORT_ESCAPE.search(literal, found.start()):  # also an escaped "\" before u or /
        return None
    escapes = backslashes - len(_ESCAPED_BACKSLASH.findall(literal))  # "\\" is one of two
    return len(literal) - 2 - escapes, json_bytes
