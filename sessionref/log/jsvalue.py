"""JSON values as JavaScript sees them, for the checks the harness makes on parsed lines.

``JSON.parse`` gives numbers that are doubles (``1.0`` is the integer 1), objects whose
missing keys read as ``undefined`` and primitives whose properties read as ``undefined``
too, while reading a property of ``null`` throws. These helpers say the same in Python.
"""

from __future__ import annotations

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
