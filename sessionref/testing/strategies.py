"""Hypothesis strategies for JavaScript strings, session ids and mention texts.

Everything here produces Python ``str`` with JavaScript semantics
(docs/snapshot.md §Strings): astral characters are
single code points, lone surrogates may occur, and a high surrogate is never directly followed by a
low one (that would be a pair, i.e. one astral character, in JavaScript).
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from hypothesis import strategies as st

from sessionref.log.layout import encode_session_directory as encode_session_id
from sessionref.testing._js import b64url_nopad, js_normalize, mention, session_uri

__all__ = [
    "INTERESTING_FRAGMENTS",
    "MentionSample",
    "js_strings",
    "mention_texts",
    "session_ids",
    "well_formed_mention_texts",
]

INTERESTING_FRAGMENTS: tuple[str, ...] = (
    "<",
    ">",
    "</referenced-sessions>",
    "<referenced-sessions>",
    '"',
    "\\",
    "\x7f",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\xa0",
    "é",
    "β",
    "中文",
    "🙂",
    "\U0001d54f",
    "@[",
    "](",
    "]",
    "[",
    "(",
    ")",
    "dsh-session:",
    "\r\n",
    "\n",
    "\t",
    " ",
    "\u3000",
    "## Referenced sessions",
)
"""Fragments that tend to break escaping, tag safety, mention parsing or byte accounting."""

_WORDS = ("hello", "world", "a", "the quick brown fox", "abc", "x", "0", "-", "_")
_MAX_DIR_NAME = 255 - len(".jsonl.zstd")
"""The longest encoded id the harness can read: besides ``<id>/session.jsonl[.zstd]`` it probes
for a legacy flat ``<project>/<id>.jsonl.zstd``, a name that must fit in 255 bytes too."""


@functools.cache
def _pieces() -> st.SearchStrategy[str]:
    """One fragment of a JS string; plain words first so shrinking heads towards readable text."""
    return st.one_of(
        st.sampled_from(_WORDS),
        st.sampled_from(INTERESTING_FRAGMENTS),
        st.sampled_from(INTERESTING_FRAGMENTS),
        st.integers(0x00, 0x1F).map(chr),
        st.integers(0xD800, 0xDFFF).map(chr),
        st.characters(min_codepoint=0x80, max_codepoint=0xFFFF),
        st.characters(min_codepoint=0x10000),
    )


def _fit(text: str, min_size: int, max_size: int) -> str:
    text = js_normalize(text)[:max_size]
    return text + "x" * (min_size - len(text))


@functools.lru_cache(maxsize=256)
def js_strings(min_size: int = 0, max_size: int = 24) -> st.SearchStrategy[str]:
    """JavaScript strings as ``str``, biased towards characters that tend to break things.

    Sizes count Python code points (an astral character is 1, a lone surrogate is 1). Lone
    surrogates occur in a good share of examples; adjacent high+low surrogates never do.
    One strategy object per size (cached): generators that call this for every value they
    draw would otherwise have Hypothesis build and validate a new one each time.

    >>> import json
    >>> from hypothesis import given, settings
    >>> from sessionref.testing import js_stringify
    >>> @settings(max_examples=20)
    ... @given(js_strings(max_size=10))
    ... def test_stringify_round_trips(s):
    ...     assert json.loads(js_stringify(s)) == s  # json.loads reads "\\udxxx" back
    >>> test_stringify_round_trips()
    """
    if not 0 <= min_size <= max_size:
        raise ValueError(f"js_strings needs 0 <= min_size <= max_size ({min_size=}, {max_size=})")
    return st.lists(_pieces(), min_size=min_size, max_size=max_size).map(
        lambda parts: _fit("".join(parts), min_size, max_size)
    )


_HOSTILE_IDS = (
    "..",
    ".",
    ".x",
    "a/b",
    "a]b\\c",
    "id with spaces",
    " lead",
    "trail ",
    "\ud800",
    "\udfffx",
    "x\ud83d",
    "~",
    "~002E",
    "-",
    "_",
    "a:b",
    "C:\\x",
    "🙂",
    "中文",
    "@[x](y)",
    "dsh-session:ImEi",
    "</referenced-sessions>",
    '"',
    "'",
    "\n",
    "\u2028",
    "\ufeff",
    "../etc/passwd",
    "x" * 200,
    "é" * 51,
)


def _fits_on_disk(session_id: str) -> str:
    while len(encode_session_id(session_id)) > _MAX_DIR_NAME:
        session_id = session_id[:-1]
    return session_id


def session_ids() -> st.SearchStrategy[str]:
    """Non-empty session ids, realistic and hostile, each storable on disk.

    Their encoded directory name (docs/format.md §Layout) is at most 244 characters (the
    harness cannot read a longer one: its probe for a legacy flat ``<id>.jsonl.zstd`` beside it
    fails with ENAMETOOLONG), so
    :func:`~sessionref.testing.write_session_store` can always write them.

    >>> from hypothesis import given, settings
    >>> from sessionref.log.layout import encode_session_directory as encode_session_id
    >>> @settings(max_examples=20)
    ... @given(session_ids())
    ... def test_ids_fit_in_a_directory_name(session_id):
    ...     assert session_id and len(encode_session_id(session_id)) <= 244
    >>> test_ids_fit_in_a_directory_name()
    """
    realistic = st.one_of(
        st.uuids().map(str),
        st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=12).map(
            lambda s: f"ses_{s}"
        ),
    )
    return st.one_of(
        realistic, st.sampled_from(_HOSTILE_IDS), js_strings(min_size=1, max_size=24)
    ).map(_fits_on_disk)


def _payload(raw: bytes) -> str:
    return "dsh-session:" + b64url_nopad(raw)


def _with_trailing_bits(uri: str) -> str:
    """Same bytes, but the unused low bits of the last base64 character set: must be rejected."""
    payload = uri.removeprefix("dsh-session:")
    if len(payload) % 4 == 0:
        return uri + "A"
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(payload[-1])
    return uri[:-1] + alphabet[last | 1]


_NEAR_MISSES = (
    "@[x](y)",
    "@[x](dsh-session:)",
    "@[x](dsh-session: ImEi)",
    "@[x](dsh-session:Im\u00a0Ei)",
    "@[x] (dsh-session:ImEi)",
    "@[unbalanced",
    "@[a\\\n](dsh-session:ImEi)",
    "@[x](dsh-session:ImEi",
    "[x](dsh-session:ImEi)",
    "dsh-session:",
    "dsh-session:!!",
    "DSH-SESSION:ImEi",
    "dsh-session:ImEi=",
    "dsh-session:ImEi\ufeff",
    "@[x](dsh-session:\ufeff)",
    "@[x]](dsh-session:ImEi)",
    _payload(b"123"),
    _payload(b"null"),
    _payload(b'{"a":1}'),
    _payload(b'"unterminated'),
    _payload(b'"\xff"'),
    _payload(b'"\\ud83d\\ude42"'),
    _payload(b' "a"'),
)


def _near_misses() -> st.SearchStrategy[str]:
    """Almost-mentions: some are plain text to a parser, some make the whole parse fail."""
    return st.one_of(
        st.sampled_from(_NEAR_MISSES),
        session_ids().map(lambda i: _with_trailing_bits(session_uri(i))),
        session_ids().map(lambda i: mention(i)[:-1]),
        session_ids().map(lambda i: session_uri(i) + "="),
    )


def mention_texts(max_parts: int = 6, near_misses: bool = True) -> st.SearchStrategy[str]:
    """Texts mixing plain text, well-formed mentions, bare URIs and (optionally) near-misses.

    Nothing is promised about what a parser returns: a near-miss may be plain text or may make
    the whole parse fail, and a bare URI may run into the next fragment. Use it to compare an
    implementation against a reference; use :func:`well_formed_mention_texts` to know the answer.

    Here sessionref's parser is only held to answering or refusing in one typed error; a test
    of yours compares its outcome with the reference's:

    >>> from hypothesis import given, settings
    >>> from sessionref import SessionReferenceError, parse_session_reference_text
    >>> @settings(max_examples=50)
    ... @given(mention_texts())
    ... def test_parse_answers_or_refuses(text):
    ...     try:
    ...         parse_session_reference_text(text)
    ...     except SessionReferenceError as exc:
    ...         assert exc.code == "SESSION_REFERENCE_INVALID_REFERENCE"
    >>> test_parse_answers_or_refuses()
    """
    labels = st.none() | js_strings(max_size=10)
    parts = [
        js_strings(max_size=12),
        st.builds(mention, session_ids(), labels),
        session_ids().map(session_uri),
    ]
    if near_misses:
        parts.append(_near_misses())
    return st.lists(st.one_of(parts), max_size=max_parts).map(lambda xs: js_normalize("".join(xs)))


class MentionSample(NamedTuple):
    """A text with well-formed mentions and what parsing it must give (docs/snapshot.md §Codecs)."""

    text: str
    """The text to parse."""
    references: list[dict[str, str]]
    """``[{"sessionId", "label"}]`` in order of appearance, duplicates kept."""
    readable: str
    """The parsed text: each mention or bare URI replaced by ``@`` + label."""


_MENTION_START = re.compile(r"@\[")
_SCHEME = re.compile("dsh-session:", re.IGNORECASE)
_B64_CHAR = re.compile("[A-Za-z0-9_-]")


def _defuse(text: str) -> str:
    """Plain text that cannot start a mention or bare URI, even next to one."""
    text = _MENTION_START.sub("@ [", text)
    return _SCHEME.sub(lambda m: m.group()[:-1] + " :", text)


@st.composite
def _mention_sample(
    draw: st.DrawFn, ids: st.SearchStrategy[str], labels: st.SearchStrategy[str], max_mentions: int
) -> MentionSample:
    fillers = js_strings(max_size=10).map(_defuse)
    first = draw(fillers)
    text, readable = [first], [first]
    references: list[dict[str, str]] = []
    for _ in range(draw(st.integers(0, max_mentions))):
        session_id = draw(ids)
        label = draw(st.none() | labels)
        bare = label is None and draw(st.booleans())
        filler = draw(fillers)
        if bare and _B64_CHAR.match(filler[:1] or "a"):
            filler = " " + filler  # else the bare URI would run into the next text
        text += [session_uri(session_id) if bare else mention(session_id, label), filler]
        shown = session_id if label is None else label
        readable += ["@" + shown, filler]
        references.append({"sessionId": session_id, "label": shown})
    return MentionSample(js_normalize("".join(text)), references, js_normalize("".join(readable)))


def well_formed_mention_texts(
    ids: st.SearchStrategy[str] | None = None,
    labels: st.SearchStrategy[str] | None = None,
    max_mentions: int = 4,
) -> st.SearchStrategy[MentionSample]:
    """Texts whose parse result is known by construction, as :class:`MentionSample`.

    Mentions (some with the id as implicit label) and bare URIs are separated by plain text that
    cannot itself be read as a mention or URI.

    ``readable`` is normalized like every string here: a label ending in a high surrogate
    followed by text starting with a low one reads as one astral character, as in JavaScript.

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=20)
    ... @given(well_formed_mention_texts())
    ... def test_one_at_sign_per_reference(sample):
    ...     assert sample.readable.count("@") >= len(sample.references)
    >>> test_one_at_sign_per_reference()

    A real test compares a parser, here sessionref's own (``to_builtins`` gives its references
    as the ``{"sessionId", "label"}`` dicts of :attr:`MentionSample.references`; its text is
    compared as JavaScript compares strings, :func:`js_normalize` joining a label's high
    surrogate and the low one after it, as :attr:`MentionSample.readable` is):

    >>> from sessionref import parse_session_reference_text, to_builtins
    >>> from sessionref.testing import js_normalize
    >>> @settings(max_examples=20)
    ... @given(well_formed_mention_texts())
    ... def test_parse(sample):
    ...     result = parse_session_reference_text(sample.text)
    ...     assert to_builtins(result.references) == sample.references
    ...     assert js_normalize(result.text) == sample.readable
    >>> test_parse()
    """
    return _mention_sample(
        session_ids() if ids is None else ids,
        js_strings(max_size=12) if labels is None else labels,
        max_mentions,
    )
