"""JSON values as JavaScript sees them, for the checks the harness makes on parsed lines.

``JSON.parse`` gives numbers that are doubles (``1.0`` is the integer 1), objects whose
missing keys read as ``undefined`` and primitives whose properties read as ``undefined``
too, while reading a property of ``null`` throws. These helpers say the same in Python.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

from sessionref.errors import MAX_SAFE_INTEGER as MAX_SAFE_INTEGER


class _Undefined:
    """JavaScript's ``undefined``: what a missing key or a primitive's property reads as."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED: Final = _Undefined()


class JsTypeError(Exception):
    """What JavaScript raises on reading a property of ``null`` or ``undefined``."""


def js_int(value: object) -> int | None:
    """``value`` as an integer when JavaScript sees an integer there (``1.0`` is 1).

    >>> js_int(3), js_int(3.0), js_int(3.5), js_int(True), js_int("3")
    (3, 3, None, None, None)
    """
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    return None


def is_safe_int(value: object, minimum: int = -MAX_SAFE_INTEGER) -> bool:
    """``Number.isSafeInteger(value) && value >= minimum``.

    >>> is_safe_int(2**53 - 1), is_safe_int(2**53), is_safe_int(-1, 0), is_safe_int(2.0)
    (True, False, False, True)
    """
    number = js_int(value)
    return number is not None and minimum <= number <= MAX_SAFE_INTEGER


def is_number(value: object) -> bool:
    """``typeof value === "number"``.

    >>> is_number(1.5), is_number(True), is_number("1")
    (True, False, False)
    """
    return type(value) in (int, float)


def is_record(value: object) -> bool:
    """An object that is not an array (what the harness's ``asRecord`` accepts).

    >>> is_record({}), is_record([]), is_record(None)
    (True, False, False)
    """
    return type(value) is dict


def js_get(value: Any, key: str) -> Any:
    """``value[key]`` as JavaScript reads it: ``undefined`` when absent, an error on null.

    >>> js_get({"a": 1}, "a"), js_get({"a": 1}, "b"), js_get("text", "type")
    (1, undefined, undefined)
    >>> try:
    ...     js_get(None, "a")
    ... except JsTypeError as exc:
    ...     print(exc)
    cannot read property "a" of null
    """
    if type(value) is dict:
        return value.get(key, UNDEFINED)
    if value is None or value is UNDEFINED:
        raise JsTypeError(f'cannot read property "{key}" of {value!r}'.replace("None", "null"))
    return UNDEFINED


def has_exact_keys(
    value: dict[str, Any], required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> bool:
    """Every ``required`` key present and no key outside ``required`` and ``optional``.

    >>> has_exact_keys({"a": 1}, ("a",)), has_exact_keys({"a": 1, "b": 2}, ("a",), ("b",))
    (True, True)
    >>> has_exact_keys({"a": 1, "c": 2}, ("a",), ("b",))
    False
    """
    return all(key in value for key in required) and all(
        key in required or key in optional for key in value
    )


_JS_TRIMMED: Final = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000\ufeff")
)
"""What ``Number(string)`` trims: JavaScript's white space and line terminators."""
_JS_DECIMAL: Final = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)", re.ASCII)
"""A decimal ``Number`` reads: its digits ASCII ones (``"\\u0663"``, an Arabic-Indic 3, is no
number to JavaScript, where Python's ``float`` reads it as 3)."""
_JS_RADIX: Final = {"0x": 16, "0X": 16, "0o": 8, "0O": 8, "0b": 2, "0B": 2}


def js_to_number(value: object) -> float:
    """``Number(value)`` of a JSON value (a relational comparison coerces so): an array is
    joined with ``,`` first, an object is ``NaN``.

    >>> [js_to_number(v) for v in (None, True, " 3 ", "", "0x1f", "1e3", "-Infinity")]
    [0.0, 1.0, 3.0, 0.0, 31.0, 1000.0, -inf]
    >>> [js_to_number(v) for v in ([], [[2]], [None], [1, 2], {}, "3px", "-0x1")]
    [0.0, 2.0, 0.0, nan, nan, nan, nan]
    >>> [js_to_number(v) for v in (10**400, "0x" + "f" * 300, "\u0663", "\uff11")]
    [inf, inf, nan, nan]
    """
    if value is None:
        return 0.0
    if type(value) in (bool, int, float):
        return _as_float(value)  # type: ignore[arg-type]
    if type(value) is list:
        if len(value) > 1:
            return math.nan  # the joined text holds a ","
        return js_to_number("" if not value or value[0] is None else _single(value[0]))
    if type(value) is not str:
        return math.nan
    text = value.strip(_JS_TRIMMED)
    if not text:
        return 0.0
    if _JS_DECIMAL.fullmatch(text):
        return float(text.replace("Infinity", "inf"))
    radix = _JS_RADIX.get(text[:2])
    try:
        return _as_float(int(text[2:], radix)) if radix and _digits(text[2:]) else math.nan
    except ValueError:
        return math.nan


def _as_float(number: float) -> float:
    """``number`` as a float, one too large for a float being infinite, as in JavaScript
    (where Python's ``float`` raises :class:`OverflowError`).

    >>> _as_float(True), _as_float(-(10**400)), _as_float(2.5)
    (1.0, -inf, 2.5)
    """
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def _digits(text: str) -> bool:
    """Whether ``text`` is only ASCII letters and digits (``int`` would also take ``_``, ``+``).

    >>> _digits("1f"), _digits("1_0"), _digits("")
    (True, False, False)
    """
    return text.isascii() and text.isalnum()


def _single(item: object) -> object:
    """What the one item of an array stands for when the array is made a number (its text
    is the item's: a number's text is that number, ``true`` and an object are no number)."""
    if type(item) is bool or type(item) is dict:
        return "x"
    return item


_NUMBERS: Final = (int, float)
"""The types of a JSON number (``type(True)`` is ``bool``, no number)."""


def js_equal(a: object, b: object) -> bool:
    """The harness's deep equality of two JSON values: ``==`` in Python but for booleans,
    which equal no number (``true`` is not ``1``), and for numbers, compared as the doubles
    ``JSON.parse`` reads (2**53 + 1 is 2**53); without recursion, for deep values.

    >>> js_equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]}), js_equal([True], [1])
    (True, False)
    >>> js_equal({"a": 1}, {"b": 1}), js_equal(0, -0.0), js_equal(False, 0), js_equal([], {})
    (False, True, False, False)
    >>> js_equal(2**53 + 1, 2**53), js_equal(10**400, 10**401), js_equal(2**53 + 2, 2**53)
    (True, True, False)
    """
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if type(x) is dict and type(y) is dict:
            if len(x) != len(y) or any(key not in y for key in x):
                return False
            pending.extend((value, y[key]) for key, value in x.items())
        elif type(x) is list and type(y) is list:
            if len(x) != len(y):
                return False
            pending.extend(zip(x, y, strict=True))
        elif type(x) in _NUMBERS and type(y) in _NUMBERS:
            if _as_float(x) != _as_float(y):  # type: ignore[arg-type]
                return False
        elif (type(x) is bool) != (type(y) is bool) or type(x) in (dict, list) or x != y:
            return False
    return True
