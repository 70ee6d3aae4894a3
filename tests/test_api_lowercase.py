"""Candidate queries lower-case as JavaScript's ``toLowerCase`` and match as ``includes``.

``tests/data/api/js_lowercase.json`` was written by the oracle's Node (``js_lowercase.mjs``):
every code point that ``toLowerCase`` changes, with its result, and context-dependent strings.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sessionref.codecs.jsstring import js_includes, js_lower
from sessionref.testing import js_strings

TABLE = json.loads(
    (Path(__file__).parent / "data" / "api" / "js_lowercase.json").read_text("utf-8")
)
CHANGED = {int(code, 16): lower for code, lower in TABLE["changed"].items()}


def test_every_code_point_lowers_as_in_javascript() -> None:
    wrong = [
        hex(code)
        for code in range(0x110000)
        if not 0xD800 <= code <= 0xDFFF and js_lower(chr(code)) != CHANGED.get(code, chr(code))
    ]
    assert wrong == []


def test_python_alone_would_differ() -> None:
    """The reason for js_lower: str.lower misses letters Node lowers (55 on Python 3.11)."""
    assert any(chr(code).lower() != lower for code, lower in CHANGED.items())


def test_context_dependent_strings() -> None:
    for text, lower in TABLE["strings"]:
        assert js_lower(text) == lower, text


def code_units(text: str) -> list[int]:
    """The UTF-16 code units of a JavaScript string."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def includes_by_units(text: str, part: str) -> bool:
    """``String.prototype.includes``, by its definition over code units."""
    units, wanted = code_units(text), code_units(part)
    return any(units[i : i + len(wanted)] == wanted for i in range(len(units) - len(wanted) + 1))


@given(js_strings(max_size=12), js_strings(max_size=4))
def test_includes_matches_code_units(text: str, part: str) -> None:
    assert js_includes(text, part) == includes_by_units(text, part)


@given(
    st.text(alphabet="a\ud83d\ude42\ud800🙂b", max_size=8),
    st.text(alphabet="\ud83d\ude42🙂a", max_size=3),
)
def test_includes_with_halves_of_pairs(text: str, part: str) -> None:
    assert js_includes(text, part) == includes_by_units(text, part)
