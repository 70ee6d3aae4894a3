"""JavaScript string and JSON semantics for Python ``str`` (private to ``sessionref.testing``).

A JavaScript string is a sequence of UTF-16 code units. In Python we model it as a ``str`` whose
astral characters are single code points and whose *lone* surrogates (U+D800 to U+DFFF not part of a
pair) are surrogate code points. Strings are escaped by the library's codecs; what this adds is
JavaScript's number formatting, so fixtures are written exactly as DSH writes them.
"""

from __future__ import annotations

import base64
import math
from decimal import Decimal

from sessionref.codecs.jsjson import js_json
from sessionref.codecs.jsstring import combine_surrogate_pairs as js_normalize
from sessionref.codecs.uri import encode_session_reference_uri, format_session_reference_mention

__all__ = [
    "b64url_nopad",
    "js_normalize",
    "js_stringify",
    "mention",
    "session_uri",
]


def _js_string(text: str) -> str:
    return js_json(text).decode("utf-8")


def _js_number(value: float) -> str:
    """``JSON.stringify`` of a double: ``Number.prototype.toString``, ``null`` if not finite."""
    if not math.isfinite(value):
        return "null"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    shortest = repr(value)
    if "e" not in shortest:
        return shortest
    mantissa, exponent = shortest.split("e")
    power = int(exponent)
    if power >= 21:
        return f"{mantissa}e+{power}"
    if power >= -6:
        return format(Decimal(shortest), "f")
    return f"{mantissa}e-{-power}"


def js_stringify(value: object) -> str:
    """``JSON.stringify(value)`` as JavaScript computes it (dict key order is kept).

    Lone surrogates become ``\\udxxx``; U+007F, U+2028, U+2029 and non-ASCII stay literal.

    >>> js_stringify({"a": ["\\ud800", "\\x1f\\u2028", 1.0, None, True]})
    '{"a":["\\\\ud800","\\\\u001f\\u2028",1,null,true]}'
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _js_number(value)
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(js_stringify(item) for item in value) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ",".join(f"{_js_string(str(k))}:{js_stringify(v)}" for k, v in value.items())
            + "}"
        )
    raise TypeError(f"not JSON-serializable: {type(value).__name__}")


def b64url_nopad(data: bytes) -> str:
    """base64url without padding.

    >>> b64url_nopad(b'"a"')
    'ImEi'
    """
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


session_uri = encode_session_reference_uri
mention = format_session_reference_mention
