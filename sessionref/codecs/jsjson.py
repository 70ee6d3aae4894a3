"""``JSON.stringify`` of JSON values with JavaScript string semantics, and its tag-safe form.

The fast path is msgspec, which escapes a string as JavaScript does (docs/snapshot.md §Codecs):
``"`` ``\\`` ``\\b \\f \\n \\r \\t`` short, other U+0000–U+001F as ``\\u00xx``, everything
else literal (U+2028/U+2029 included). It refuses strings that hold lone surrogates, which
JavaScript writes as ``\\udxxx``; for those the value is walked, and in each string msgspec
refuses, the text between lone surrogates still goes through msgspec.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec
import msgspec.inspect

from sessionref.codecs.jsstring import combine_surrogate_pairs, surrogate_pattern

_ENCODE: Final = msgspec.json.Encoder().encode
NOT_SERIALIZABLE: Final = "session-reference data is not JSON-serializable"
_NOT_SHORT_ESCAPE: Final = re.compile(rb"\\[u/]")
_ESCAPE_PAST_SHORT: Final = re.compile(rb"\\[\\u/]")
"""A backslash before one of the escapes a count cannot take at once: ``\\\\`` (two
backslashes, one character) and ``\\u`` ``\\/`` (built instead). A regular expression finds
the first in one pass, where counting the two-byte ``\\\\`` took a slow search of its own."""
_FLOAT_WRITTEN: Final = re.compile(rb"(?:^|[:,\[])-?[0-9]+[.e]")
"""Where msgspec may have written a float (``1.0``, ``1e21``: a number with a point or an
exponent), which ``JSON.stringify`` may write otherwise; inside a string it is a false alarm,
which costs a parse and a walk but writes the same bytes."""
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


def _key_text(key: object) -> str:
    """The string msgspec writes for a member name that is not one (a number, a UUID, a
    date…); a key it has none for (``None``, a bool, a tuple) raises ``TypeError``, as the
    fast path does.

    >>> _key_text(1.5), _key_text(2)
    ('1.5', '2')
    """
    written: dict[str, None] = msgspec.to_builtins({key: None}, str_keys=True)
    return next(iter(written))


def _walk(value: object) -> bytes:
    """Serialize ``value`` piece by piece; only reached when the fast path refused it. What
    msgspec writes but this does not walk (a set, a struct, a dataclass, an enum…) is written
    by msgspec, or, when a lone surrogate stops it there too, walked as the plain values
    msgspec makes of it."""
    if isinstance(value, str):
        return _string_literal(value)
    if isinstance(value, Mapping):
        members = (
            _string_literal(key if isinstance(key, str) else _key_text(key)) + b":" + _walk(item)
            for key, item in value.items()
        )
        return b"{" + b",".join(members) + b"}"
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        return b"[" + b",".join(_walk(item) for item in value) + b"]"
    if not isinstance(value, msgspec.Struct):  # a struct is walked at once, as before
        try:
            return _ENCODE(value)
        except UnicodeEncodeError:
            pass
    return _walk(msgspec.to_builtins(value, str_keys=True))


def js_json(value: object) -> bytes:
    """UTF-8 bytes of ``JSON.stringify(value)`` (no spaces), but for a float, which is
    written as msgspec writes it (``1.0``, ``1e21``); :func:`exact_json` writes it as
    ``JSON.stringify`` does, at the cost of a look for floats.

    >>> js_json({"a": ["é", "\\ud800", 1, None]})
    b'{"a":["\\xc3\\xa9","\\\\ud800",1,null]}'
    """
    try:
        return _ENCODE(value)
    except UnicodeEncodeError:
        return _walk(value)


def js_number(value: float) -> bytes:
    """ECMAScript's ``Number::toString(10)`` of ``value``, as ``JSON.stringify`` writes it
    (``null`` for NaN and ±Infinity): the shortest digits that read back as ``value`` (those
    ``repr`` gives), in positional form unless the decimal exponent is at least 21 or at
    most -7, where it is ``d.ddde±x``.

    >>> [js_number(x).decode() for x in (1.0, -0.0, 1e21, 1e-7, 1e-6, 1.2345678901234568e20)]
    ['1', '0', '1e+21', '1e-7', '0.000001', '123456789012345680000']
    """
    if value != value or value in (math.inf, -math.inf):
        return b"null"
    if value == 0:
        return b"0"
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) + int(exponent or 0) - (len(whole + fraction) - len(digits))
    digits = digits.rstrip("0")  # value = 0.digits × 10^point
    if len(digits) <= point <= 21:
        text = digits + "0" * (point - len(digits))
    elif 0 < point <= 21:
        text = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        text = f"{digits[0]}{'.' if digits[1:] else ''}{digits[1:]}e{point - 1:+d}"
    return ("-" + text if value < 0 else text).encode("ascii")


def js_numbers(value: object) -> object:
    """``value`` (parsed JSON) with each float made the number ``JSON.stringify`` writes for
    it (a :class:`msgspec.Raw` of :func:`js_number`), so that :func:`js_json` writes it as
    ``JSON.stringify`` does: ``1``, not ``1.0``; ``0``, not ``-0.0``; ``1e+21``, not ``1e21``.
    A walk of the whole value, for data written as the harness would write it.

    >>> js_json(js_numbers({"a": [-0.0, 2.0, 2.5, 1e21], "b": True}))
    b'{"a":[0,2,2.5,1e+21],"b":true}'
    """
    if type(value) is float:
        return msgspec.Raw(js_number(value))
    if type(value) is dict:
        return {key: js_numbers(item) for key, item in value.items()}
    if type(value) is list:
        return [js_numbers(item) for item in value]
    return value


def _holds_float(info: object, seen: set[int]) -> bool:
    """Whether a value of the type ``info`` (from :mod:`msgspec.inspect`) may hold a float:
    it is, or reaches, a float, ``Any`` or a class msgspec does not know."""
    if isinstance(info, (msgspec.inspect.FloatType, msgspec.inspect.AnyType)):
        return True
    if isinstance(info, msgspec.inspect.CustomType):
        return True
    if isinstance(info, msgspec.inspect.Field):
        return _holds_float(info.type, seen)
    if isinstance(info, tuple):
        return any(_holds_float(item, seen) for item in info)
    if not isinstance(info, msgspec.inspect.Type) or id(info) in seen:
        return False
    seen.add(id(info))  # a recursive struct reaches itself
    return any(_holds_float(getattr(info, name), seen) for name in info.__struct_fields__)


@functools.cache
def _float_fields(kind: type[msgspec.Struct]) -> tuple[str, ...]:
    """The fields of a struct of the class ``kind`` whose types may hold a float, worked out
    once per class.

    >>> class Turn(msgspec.Struct):
    ...     text: str
    ...     seq: int | None
    ...     label: Any
    >>> _float_fields(Turn)
    ('label',)
    """
    info = msgspec.inspect.type_info(kind)
    assert isinstance(info, msgspec.inspect.StructType)
    return tuple(field.name for field in info.fields if _holds_float(field.type, set()))


def _may_hold_float(value: object) -> bool:
    """Whether ``value`` may hold a float: it is one, a list, tuple or dict holds one, or a
    struct does in a field whose type may hold one (a label typed ``Any`` holding a string
    costs one look); what else msgspec writes (a set, a dataclass…) may.

    >>> _may_hold_float("1.5"), _may_hold_float([1, {"a": None}]), _may_hold_float([{"a": 1.0}])
    (False, False, True)
    >>> _may_hold_float(msgspec.inspect.IntType()), _may_hold_float({1.5})
    (False, True)
    """
    if isinstance(value, msgspec.Struct):
        fields = _float_fields(type(value))
        return any(_may_hold_float(getattr(value, name)) for name in fields)
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return False
    if isinstance(value, (list, tuple)) and kind in (list, tuple):
        return any(map(_may_hold_float, value))
    if isinstance(value, dict) and kind is dict:
        return any(map(_may_hold_float, value.values()))
    return True  # a float, or what msgspec writes its own way


def exact_json(value: object) -> bytes:
    """``JSON.stringify(value)`` to the byte: :func:`js_json`, with every float written as
    ``JSON.stringify`` writes it (:func:`js_number`): what a title read from a log (any JSON
    value) must be written as wherever it goes out.

    >>> exact_json({"label": 1.0, "n": [-0.0, 1e21, 0.000001, 2.5]})
    b'{"label":1,"n":[0,1e+21,0.000001,2.5]}'
    """
    serialized = js_json(value)
    return js_numbers_written(serialized) if _may_hold_float(value) else serialized


def js_numbers_written(text: bytes) -> bytes:
    """A JSON text whose strings are written as :func:`js_json` writes them (pydantic's
    are too), with every float written as ``JSON.stringify`` writes it: ``0.000001``, not
    ``1e-6``; ``1``, not ``1.0``. A text where no number has a point or an exponent is given
    back as it is (floats are rare); else it is parsed and written again.

    >>> js_numbers_written(b'{"a":[1e-6,1.0,"2.0"],"b":-0.0}')
    b'{"a":[0.000001,1,"2.0"],"b":0}'
    """
    if _FLOAT_WRITTEN.search(text) is None:
        return text
    return js_json(js_numbers(parse_json(text)))


def tag_safe_json(value: object) -> bytes:
    """:func:`exact_json` with every ``<`` written as ``\\u003c``, so no tag can appear in it.

    It writes JSON values (mappings with string keys, lists, tuples, strings, numbers,
    booleans, ``None``) as ``JSON.stringify`` does (a float as :func:`js_number` writes it),
    and msgspec structs as their wire form. What else msgspec encodes it writes as msgspec does,
    where ``JSON.stringify`` would throw or write ``{}``: sets and frozensets as arrays,
    named tuples as arrays, dataclasses (and attrs classes) as objects, enums as their
    value, ``bytes``, ``bytearray`` and ``memoryview`` as base64 strings, ``datetime``,
    ``date``, ``time`` and ``timedelta`` as ISO 8601 strings, ``Decimal`` and ``UUID`` as
    strings, an integer beyond 2^53 in full, and a mapping key that is a number or one of
    these as its string. Refusing them would cost every snapshot a walk of its data. Any
    other value (an object of another class, a complex number, a key that is ``None``, a bool
    or a tuple) has no JSON form and raises ``TypeError``, worded as the package words it.

    >>> tag_safe_json("</x>"), tag_safe_json({"s": {3}, "b": b"<", 2: "\\ud800"})
    (b'"\\\\u003c/x>"', b'{"s":[3],"b":"PA==","2":"\\\\ud800"}')
    >>> tag_safe_json({"f": print})
    Traceback (most recent call last):
    TypeError: session-reference data is not JSON-serializable
    """
    try:
        serialized = exact_json(value)
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


def reject_constant(name: str) -> object:
    """Refuse ``NaN``, ``Infinity`` and ``-Infinity``, which Python's ``json`` takes and
    ``JSON.parse`` does not (a ``parse_constant`` hook).

    >>> reject_constant("NaN")
    Traceback (most recent call last):
    ValueError: NaN is not JSON
    """
    raise ValueError(f"{name} is not JSON")


_ANY: Final = msgspec.json.Decoder()
_JSON: Final = json.JSONDecoder(parse_constant=reject_constant)
"""What ``json.loads(text, parse_constant=reject_constant)`` builds on every call."""


def parse_json(line: bytes | bytearray) -> Any:
    """``JSON.parse`` of one line decoded as the harness decodes it (invalid UTF-8 as U+FFFD):
    msgspec where it can, the standard library for the lone surrogates and the invalid UTF-8
    msgspec refuses. Raises ``ValueError`` for what is not JSON.

    >>> parse_json(b'{"a":"\\\\ud800"}'), parse_json(b'"\\xff"')
    ({'a': '\\ud800'}, '\\ufffd')
    """
    try:
        return _ANY.decode(line)
    except msgspec.DecodeError:
        return _JSON.decode(line.decode("utf-8", "replace"))
