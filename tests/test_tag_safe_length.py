"""The measured length of a string's tag-safe JSON against the JSON itself and a reference."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sessionref.codecs.jsjson import tag_safe_json, tag_safe_json_length
from sessionref.testing import js_stringify, js_strings

# Lone surrogates from js_strings; here also both halves of a pair side by side (one astral
# character to JavaScript), and every character class the escaping treats apart.
awkward = st.text(
    st.sampled_from(["<", ">", '"', "\\", "\n", "\t", "\b", "\x01", "\x1f", "\x7f", "\u2028"])
    | st.sampled_from(["é", "中", "🙂", "\ufeff", "\ud83d", "\ude42", "\ud800", "\udfff", "a"]),
    max_size=40,
)


def reference_length(text: str) -> int:
    """UTF-8 length of ``JSON.stringify(text)`` with ``<`` written ``\\u003c``, from the
    independent model; the pair halves it leaves literal are one 4-byte character."""
    literal = js_stringify(text).replace("<", "\\u003c")
    return len(literal.encode("utf-16-le", "surrogatepass").decode("utf-16-le").encode())


@given(js_strings(max_size=60) | awkward)
def test_length_is_the_length_of_the_tag_safe_json(text: str) -> None:
    assert tag_safe_json_length(text) == len(tag_safe_json(text)) == reference_length(text)


def test_each_lt_grows_by_five_bytes() -> None:
    assert tag_safe_json_length("<<") == len('"\\u003c\\u003c"')
