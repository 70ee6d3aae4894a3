"""JavaScript string and JSON semantics for Python ``str`` (private to ``sessionref.testing``).

A JavaScript string is a sequence of UTF-16 code units. In Python we model it as a ``str`` whose
astral characters are single code points and whose *lone* surrogates (U+D800 to U+DFFF not part of a
pair) are surrogate code points. Written independently of the library core on purpose: these
helpers are the oracle the core is tested against.
"""

from __future__ import annotations

import base64
import math
import re
import struct
from decimal import Decimal

__all__ = [
    "b64url_nopad",
    "js_normalize",
    "js_stringify",
    "mention",
    "session_uri",
    "utf16_units",
]

_SURROGATE = re.compile("[\ud800-\udfff]")
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                  "\t": "\\t"}


def js_normalize(text: str) -> str:
    """Combine every adjacent high+low surrogate code point pair into its astral character.

    JavaScript cannot tell the two apart, so after this a ``str`` has one spelling per JS string.

    >>> js_normalize("\\ud83d\\ude42") == "\\U0001f642"
    True
    >>> js_normalize("\\ude42\\ud83d") == "\\ude42\\ud83d"  # wrong order: two lone surrogates
    True
    """
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def utf16_units(text: str) -> list[int]:
    """The UTF-16 code units of a JavaScript string.

    >>> utf16_units("a\\U0001f642\\ud800")
    [97, 55357, 56898, 55296]
    """
    data = text.encode("utf-16-le", "surrogatepass")
    return list(struct.unpack(f"<{len(data) // 2}H", data))


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _js_string(text: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, js_normalize(text)) + '"'


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
        return "{" + ",".join(f"{_js_string(str(k))}:{js_stringify(v)}"
                              for k, v in value.items()) + "}"
    raise TypeError(f"not JSON-serializable: {type(value).__name__}")


def b64url_nopad(data: bytes) -> str:
    """base64url without padding.

    >>> b64url_nopad(b'"a"')
    'ImEi'
    """
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def session_uri(session_id: str) -> str:
    """``"dsh-session:" + base64url_nopad(utf8(JSON.stringify(id)))`` (SPEC §7).

    >>> session_uri("s-alpha")
    'dsh-session:InMtYWxwaGEi'
    >>> session_uri("\\ud800x")
    'dsh-session:Ilx1ZDgwMHgi'
    """
    return "dsh-session:" + b64url_nopad(js_stringify(session_id).encode("utf-8"))


def mention(session_id: str, label: str | None = None) -> str:
    """The mention ``@[label](uri)``, label defaulting to the id, ``\\`` and ``]`` escaped.

    >>> mention("a", "x]y\\\\")
    '@[x\\\\]y\\\\\\\\](dsh-session:ImEi)'
    """
    shown = session_id if label is None else label
    escaped = shown.replace("\\", "\\\\").replace("]", "\\]")
    return f"@[{escaped}]({session_uri(session_id)})"
