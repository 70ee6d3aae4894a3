"""The byte count over a raw JSON string literal (what a unit's text is measured with before
it is built) against the text's full encode and an independent model: exact, or ``None``
(the text is then built and measured whole), never wrong."""

from __future__ import annotations

import json

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from sessionref.codecs.jsjson import literal_lengths
from sessionref.pipeline.messages import TextPart
from sessionref.pipeline.unitize import unit_text
from sessionref.testing import js_stringify, js_strings

characters = (
    st.sampled_from(["<", ">", '"', "\\", "/", "u", "\n", "\t", "\b", "\f", "\r", "\x01", "\x1f"])
    | st.sampled_from(["\x7f", "\u2028", "é", "中", "🙂", "\ufeff", "\ud83d", "\ude42", "\ud800"])
    | st.just("a")
)
awkward = st.lists(characters | st.sampled_from(["\\u", "\\/", "\\\\", "<<"]), max_size=40).map(
    "".join
)
texts = js_strings(max_size=60) | awkward


def utf8_bytes(text: str) -> int:
    """UTF-8 length with each lone surrogate as U+FFFD and a pair as one character."""
    return len(text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode())


def reference(text: str) -> tuple[int, int]:
    """(text bytes, tag-safe JSON bytes) from the independent JSON.stringify model."""
    return utf8_bytes(text), utf8_bytes(js_stringify(text).replace("<", "\\u003c"))


def paired(text: str) -> str:
    """``text`` with each high + low surrogate pair as the one character it is."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def literal_of(text: str) -> bytes:
    """The literal JSON.stringify writes, as the log holds it (lone surrogates escaped)."""
    return paired(js_stringify(text)).encode("utf-8")


def has_lone_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in paired(text))


def countable(text: str) -> bool:
    """Texts the count must take without building: no lone surrogate, no control character
    but the short-escaped ones, no backslash before u or /."""
    controls = any(ord(c) < 0x20 and c not in "\b\f\n\r\t" for c in text)
    return not (has_lone_surrogate(text) or controls or "\\u" in text or "\\/" in text)


@given(texts)
def test_a_canonical_literal_is_counted_exactly(text: str) -> None:
    measured = literal_lengths(literal_of(text))
    if countable(text):
        assert measured == reference(text)
    else:
        assert measured in (None, reference(text))


@given(texts)
def test_other_spellings_are_counted_exactly_or_left_to_the_build(text: str) -> None:
    """``\\uXXXX`` for every non-ASCII character (pairs included), ``\\/``, invalid UTF-8."""
    ascii_only = json.dumps(text, ensure_ascii=True).encode()
    assert literal_lengths(ascii_only) in (None, reference(text))
    slashed = literal_of(text).replace(b"/", b"\\/")
    assert literal_lengths(slashed) in (None, reference(text))
    if "/" in text:
        assert literal_lengths(slashed) is None
    assert literal_lengths(b'"' + literal_of(text)[1:-1] + b'\xff"') is None


@given(st.lists(texts.filter(lambda text: not has_lone_surrogate(text)), min_size=1, max_size=4))
def test_a_units_raw_text_measures_what_it_builds(parts: list[str]) -> None:
    """Several text blocks joined with a newline: the count over their literals is the
    length of the joined text and of its tag-safe JSON. (A line whose data holds a lone
    surrogate is decoded whole by the reader, so no raw literal holds one.)"""
    raw = unit_text([TextPart(msgspec.Raw(literal_of(part))) for part in parts])
    joined = "\n".join(parts)
    if type(raw) is str:  # some literal had to be built
        assert raw == paired(joined)
    else:
        assert raw.build() == paired(joined)
        assert (raw.text_bytes, raw.json_bytes) == reference(joined)
