"""Invariants of the codecs (docs/snapshot.md §Codecs, §Strings)
over strings with JavaScript semantics."""

from __future__ import annotations

import base64
import json
import string
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sessionref.codecs import (
    decode_session_reference_uri,
    encode_session_reference_uri,
    format_session_reference_mention,
    js_json,
    parse_session_reference_text,
    tag_safe_json,
    utf8_length,
)
from sessionref.codecs.uri import SCHEME
from sessionref.errors import INVALID_REFERENCE, SessionReferenceError
from sessionref.testing import js_strings, mention_texts, session_ids

URI_ALPHABET = string.ascii_letters + string.digits + "_-"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | js_strings(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(js_strings(), inner, max_size=4),
    max_leaves=12,
)


def utf16_utf8_length(text: str) -> int:
    """Byte count walked over UTF-16 code units: a pair is 4 bytes, a lone surrogate 3."""
    units = text.encode("utf-16-le", "surrogatepass")
    codes = [int.from_bytes(units[i : i + 2], "little") for i in range(0, len(units), 2)]
    total, i = 0, 0
    while i < len(codes):
        unit = codes[i]
        paired = 0xD800 <= unit < 0xDC00 and i + 1 < len(codes) and 0xDC00 <= codes[i + 1] < 0xE000
        if paired:
            total, i = total + 4, i + 2
            continue
        total += 1 if unit < 0x80 else 2 if unit < 0x800 else 3
        i += 1
    return total


@given(js_strings(max_size=40) | session_ids())
def test_uri_round_trip(session_id: str) -> None:
    uri = encode_session_reference_uri(session_id)
    assert uri.startswith(SCHEME)
    assert set(uri[len(SCHEME) :]) <= set(URI_ALPHABET)
    assert decode_session_reference_uri(uri) == session_id


@given(st.text(max_size=40))
def test_uri_payload_is_base64url_of_the_json_string(session_id: str) -> None:
    # the standard library's base64url of JSON.stringify's text (which json.dumps writes for
    # a string without lone surrogates), its padding dropped
    literal = json.dumps(session_id, ensure_ascii=False).encode("utf-8")
    payload = base64.urlsafe_b64encode(literal).rstrip(b"=").decode("ascii")
    assert encode_session_reference_uri(session_id) == SCHEME + payload
    assert decode_session_reference_uri(SCHEME + payload) == session_id


@given(st.text(URI_ALPHABET, max_size=40))
def test_any_payload_decodes_canonically_or_is_rejected(payload: str) -> None:
    uri = SCHEME + payload
    try:
        session_id = decode_session_reference_uri(uri)
    except SessionReferenceError as exc:
        assert exc.code == INVALID_REFERENCE
        assert exc.message == f"invalid session reference URI {json.dumps(uri)}"
    else:
        assert encode_session_reference_uri(session_id) == uri


@given(js_strings(max_size=30) | session_ids(), st.none() | js_strings(max_size=30))
def test_format_then_parse_gives_back_id_and_label(session_id: str, label: str | None) -> None:
    mention = format_session_reference_mention(session_id, label)
    parsed = parse_session_reference_text(mention)
    shown = session_id if label is None else label
    assert [(r.session_id, r.label) for r in parsed.references] == [(session_id, shown)]
    assert parsed.text == "@" + shown


@given(json_values)
def test_tag_safe_json_parses_back_and_has_no_tag(value: Any) -> None:
    encoded = tag_safe_json(value)
    assert b"<" not in encoded
    assert json.loads(encoded.decode("utf-8")) == value
    assert js_json(value).replace(b"<", b"\\u003c") == encoded


@given(js_strings(max_size=60))
def test_js_json_matches_javascript_escapes(text: str) -> None:
    encoded = js_json(text).decode("utf-8")
    assert json.loads(encoded) == text
    for char in encoded:
        assert not 0xD800 <= ord(char) < 0xE000, "lone surrogates are escaped"
        assert ord(char) >= 0x20, "controls are escaped"
    assert "\\u2028" not in encoded and "\\u007f" not in encoded


@given(js_strings(max_size=60))
def test_byte_length_agrees_with_an_independent_count(text: str) -> None:
    assert utf8_length(text) == utf16_utf8_length(text)


@given(mention_texts() | js_strings(max_size=80))
def test_parse_raises_nothing_but_session_reference_errors(text: str) -> None:
    try:
        parsed = parse_session_reference_text(text)
    except SessionReferenceError as exc:
        assert exc.code == INVALID_REFERENCE
    else:
        assert len(parsed.text) <= len(text) + sum(len(r.label) for r in parsed.references)
