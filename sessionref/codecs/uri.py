"""Session reference URIs and ``@[label](dsh-session:…)`` mentions (docs/snapshot.md §Codecs)."""

from __future__ import annotations

import binascii
import functools
import json
import re
from typing import Final

import msgspec

from sessionref.codecs.jsjson import exact_json, js_json
from sessionref.errors import INVALID_REFERENCE, SessionReferenceError, string

SCHEME: Final = "dsh-session:"

# JavaScript's `\s` and line terminators; Python's `\s` and `.` are different sets.
JS_WHITESPACE: Final = (
    "\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
JS_LINE_TERMINATORS: Final = "\n\r\u2028\u2029"

_PAYLOAD: Final = re.compile("[A-Za-z0-9_-]+")
_TO_URLSAFE: Final = bytes.maketrans(b"+/", b"-_")
_FROM_URLSAFE: Final = str.maketrans("-_", "+/")
"""base64url's two letters: binascii's base64 with them swapped is what the ``base64``
module's ``urlsafe_*`` functions compute, without importing it (with ``struct``: 1 ms of a
command line's start)."""
_LABEL_ESCAPE: Final = re.compile(r"[\\\]]")
_LABEL_UNESCAPE: Final = re.compile(r"\\(.)", re.DOTALL)


class Reference(msgspec.Struct, frozen=True, rename="camel"):
    """A reference to another session: its id and the label a user sees."""

    session_id: str
    label: str


class ParsedText(msgspec.Struct, frozen=True):
    """A text with every mention replaced by ``@label``, and the references in order."""

    text: str
    references: list[Reference]


def _invalid_uri(uri: str) -> SessionReferenceError:
    return SessionReferenceError(
        f"invalid session reference URI {js_json(uri).decode('utf-8')}", INVALID_REFERENCE
    )


def encode_session_reference_uri(session_id: str) -> str:
    """The URI of a session id: base64url (no padding) of the UTF-8 of its JSON string.

    >>> encode_session_reference_uri("s-beta")
    'dsh-session:InMtYmV0YSI'

    A session id that is not a string is INVALID_REFERENCE (``JSON.stringify`` would give
    ``null`` a URI, but no session has that id: docs/differences.md §API).
    """
    string(session_id, "encode_session_reference_uri session_id", INVALID_REFERENCE)
    payload = binascii.b2a_base64(js_json(session_id), newline=False).translate(_TO_URLSAFE)
    payload = payload.rstrip(b"=")
    return SCHEME + payload.decode("ascii")


def decode_session_reference_uri(uri: str) -> str:
    """The session id of a canonical URI; anything else (a value that is not a string too)
    raises INVALID_REFERENCE.

    >>> decode_session_reference_uri("dsh-session:InMtYmV0YSI")
    's-beta'
    >>> decode_session_reference_uri("dsh-session:e30")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: invalid session reference URI "dsh-session:e30"
    >>> deep = encode_session_reference_uri("x").replace("Ingi", "W1tbW1tb" * 2000)
    >>> decode_session_reference_uri(deep)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: invalid session reference URI "dsh-session:W1tb...
    """
    string(uri, "decode_session_reference_uri uri", INVALID_REFERENCE)
    payload = uri[len(SCHEME) :]
    if not uri.startswith(SCHEME) or _PAYLOAD.fullmatch(payload) is None:
        raise _invalid_uri(uri)
    try:
        raw = binascii.a2b_base64((payload + "=" * (-len(payload) % 4)).translate(_FROM_URLSAFE))
        if not raw.startswith(b'"'):  # a canonical URI's JSON is a string: nothing to nest
            raise ValueError("not a JSON string")
        session_id = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError):
        raise _invalid_uri(uri) from None
    if not isinstance(session_id, str) or encode_session_reference_uri(session_id) != uri:
        raise _invalid_uri(uri)
    return session_id


def format_session_reference_mention(session_id: str, label: str | None = None) -> str:
    """The mention a user writes: ``@[label](uri)`` with ``\\`` and ``]`` in the label escaped.

    >>> format_session_reference_mention("s-beta", "a]b")
    '@[a\\\\]b](dsh-session:InMtYmV0YSI)'

    A label that is not a string (a log may hold any JSON value as a title) has no text to
    escape: a ``TypeError``, as in the package (:func:`label_text` makes one a text). A
    session id that is not a string is INVALID_REFERENCE, as for
    :func:`encode_session_reference_uri`, named by this function.

    >>> format_session_reference_mention(3)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: format_session_reference_mention session_id must be \
a string, not int
    """
    string(session_id, "format_session_reference_mention session_id", INVALID_REFERENCE)
    shown = session_id if label is None else label
    if not isinstance(shown, str):
        raise TypeError(f"a mention label must be a string, not {type(shown).__name__}")
    escaped = _LABEL_ESCAPE.sub(lambda m: "\\" + m.group(), shown)
    return f"@[{escaped}]({encode_session_reference_uri(session_id)})"


def label_mention(session_id: str, label: object) -> str:
    """The mention of a session labelled ``label``, one that is not a string written as its
    JSON text (:func:`label_text`).

    >>> label_mention("s-beta", 7), label_mention("s-beta", "[REDACTED:jwt]")
    ('@[7](dsh-session:InMtYmV0YSI)', '@[[REDACTED:jwt\\\\]](dsh-session:InMtYmV0YSI)')
    """
    return format_session_reference_mention(session_id, label_text(label))


def label_text(label: object) -> str:
    """A label as a user reads it: a string as it is, any other JSON value (a log may hold
    one as a title) as its JSON text.

    >>> label_text("Fix CI"), label_text(7), label_text({"a": [1.5, None]})
    ('Fix CI', '7', '{"a":[1.5,null]}')
    """
    return label if isinstance(label, str) else exact_json(label).decode("utf-8")


def one_line_label(label: object) -> str:
    """A label on one line of a terminal's (a note's head): as a user reads it
    (:func:`label_text`), or as a JSON string when it would show nothing or break the line.

    >>> one_line_label("auth"), one_line_label(""), one_line_label("a\\nb"), one_line_label(7)
    ('auth', '""', '"a\\\\nb"', '7')
    """
    text = label_text(label)
    return text if text.isprintable() and text.strip() else js_json(text).decode("utf-8")


def holds_mention(text: str) -> bool:
    """Whether ``text`` holds a mention (``@[label](dsh-session:…)``) anywhere, its URI valid
    or not; a bare URI is no mention.

    >>> holds_mention("see @[auth](dsh-session:InMtYmV0YSI)"), holds_mention("@[a](dsh-session:)")
    (True, True)
    >>> holds_mention("dsh-session:InMtYmV0YSI"), holds_mention("@[auth] and more")
    (False, False)
    """
    return any(match.group(2) is not None for match in _reference_pattern().finditer(text))


def one_mention(text: str) -> Reference | None:
    """The reference of ``text`` when it is exactly one mention, nothing before or after it
    (``None`` otherwise); a mention whose URI is malformed raises INVALID_REFERENCE.

    >>> one_mention("@[auth](dsh-session:InMtYmV0YSI)")
    Reference(session_id='s-beta', label='auth')
    >>> one_mention("@[auth](dsh-session:InMtYmV0YSI) "), one_mention("s-beta")
    (None, None)
    """
    match = _reference_pattern().fullmatch(text)
    return None if match is None or match.group(2) is None else _reference_of(match)


def _reference_of(match: re.Match[str]) -> Reference:
    escaped_label, mention_uri, bare_uri = match.groups()
    if mention_uri is not None:
        label = _LABEL_UNESCAPE.sub(r"\1", escaped_label)
        return Reference(decode_session_reference_uri(mention_uri), label)
    session_id = decode_session_reference_uri(bare_uri)
    return Reference(session_id, session_id)


@functools.cache
def _reference_pattern() -> re.Pattern[str]:
    """A mention (groups 1, 2: escaped label, URI) or a bare URI (group 3); compiled on first
    use, since its classes of JavaScript whitespace took 1 ms of every command line's start."""
    return re.compile(
        rf"@\[((?:\\[^{JS_LINE_TERMINATORS}]|[^\\\]])*)\]\(({SCHEME}[^){JS_WHITESPACE}]*)\)"
        rf"|({SCHEME}[A-Za-z0-9_-]+)"
    )


def parse_session_reference_text(text: str) -> ParsedText:
    """Find every mention and bare URI, left to right; replace each with ``@label``. A ``text``
    that is not a string is INVALID_CONFIG.

    >>> parsed = parse_session_reference_text("see @[auth](dsh-session:InMtYmV0YSI) now")
    >>> parsed.text, parsed.references
    ('see @auth now', [Reference(session_id='s-beta', label='auth')])
    """
    string(text, "parse_session_reference_text text")
    references: list[Reference] = []

    def replace(match: re.Match[str]) -> str:
        reference = _reference_of(match)
        references.append(reference)
        return "@" + reference.label

    return ParsedText(_reference_pattern().sub(replace, text), references)
