"""Pure codecs: URIs and mentions, JavaScript-exact JSON, byte accounting, DSH log records."""

from sessionref.codecs.jsjson import exact_json, js_json, tag_safe_json
from sessionref.codecs.jsstring import utf8_encode, utf8_length
from sessionref.codecs.uri import (
    ParsedText,
    Reference,
    decode_session_reference_uri,
    encode_session_reference_uri,
    format_session_reference_mention,
    parse_session_reference_text,
)

__all__ = [
    "ParsedText",
    "Reference",
    "decode_session_reference_uri",
    "encode_session_reference_uri",
    "exact_json",
    "format_session_reference_mention",
    "js_json",
    "parse_session_reference_text",
    "tag_safe_json",
    "utf8_encode",
    "utf8_length",
]
