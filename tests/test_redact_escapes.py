"""Secrets written inside JSON held as text, with any of their characters escapes
(docs/redaction.md §How a text is scanned): none passes, whichever character is escaped and
however deep the JSON is nested; the output is still the JSON it was, with only the secret
replaced. Expected values come from the standard library's JSON and the corpus' secrets."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionref.redact import Redaction
from sessionref.redact.escapes import decoded, decodings
from sessionref.redact.scan import MARKER
from tests.conftest import examples
from tests.redact_corpus import FRAGMENT, MAKERS, Secret, leaked, ordinary_lines, secrets

SECRETS = secrets(seed=41, per_kind=1)
BEFORE = '{"step": 3, "config": {"credential": "'
AFTER = '"}, "ok": true}'


def escaped(text: str, escape: set[int]) -> str:
    """``text`` as the body of a JSON string, the characters at ``escape`` written as
    ``\\uXXXX`` (what JSON needs escaped is escaped as ``json.dumps`` does it)."""
    return "".join(
        f"\\u{ord(c):04x}" if i in escape else json.dumps(c)[1:-1] for i, c in enumerate(text)
    )


def spots(secret: Secret) -> list[set[int]]:
    """Which characters to escape: the first, one inside the random part (whose first
    :data:`FRAGMENT` characters are written together in every kind), the last, every fifth,
    and all of them."""
    snippet = secret.snippet
    inside = snippet.index(secret.core[:FRAGMENT]) + FRAGMENT // 2
    every = set(range(len(snippet)))
    return [{0}, {inside}, {len(snippet) - 1}, set(range(0, len(snippet), 5)), every]


def assert_only_the_secret_replaced(out: str, body: str, secret: Secret) -> None:
    """``out`` is ``BEFORE + body + AFTER`` with one piece of ``body`` replaced by markers:
    valid JSON, everything around the secret byte for byte, and no run of the secret's random
    part left in it, raw or decoded."""
    assert out.startswith(BEFORE) and out.endswith(AFTER), out
    middle = out[len(BEFORE) : len(out) - len(AFTER)]
    pieces = MARKER.split(middle)
    assert len(pieces) > 1, middle
    assert body.startswith(pieces[0]) and body.endswith(pieces[-1]), middle
    assert all(piece in body for piece in pieces)
    value = json.loads(out)
    assert value["step"] == 3 and value["ok"] is True
    credential = value["config"]["credential"]
    assert not leaked(secret, out) and not leaked(secret, credential), credential


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_a_secret_with_any_character_escaped_is_redacted(kind: str) -> None:
    (secret,) = (s for s in SECRETS if s.kind == kind)
    for escape in spots(secret):
        body = escaped(secret.snippet, escape)
        out, counts = Redaction().redact(BEFORE + body + AFTER)
        assert_only_the_secret_replaced(out, body, secret)
        assert sum(counts.values()) >= 1


@pytest.mark.parametrize("secret", [s for s in SECRETS if "/" in s.snippet], ids=lambda s: s.kind)
def test_a_secret_with_its_slashes_escaped_is_redacted(secret: Secret) -> None:
    """JSON may write ``/`` as ``\\/`` (PHP's encoder does, and some JavaScript escapers)."""
    body = json.dumps(secret.snippet)[1:-1].replace("/", "\\/")
    out, _ = Redaction().redact(BEFORE + body + AFTER)
    assert_only_the_secret_replaced(out, body, secret)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_a_secret_in_json_held_in_a_json_string_is_redacted(kind: str) -> None:
    """A tool call's arguments as text, holding JSON that holds the key, one letter escaped:
    two levels of escapes. Both levels stay valid JSON, and only the key changes."""
    (secret,) = (s for s in SECRETS if s.kind == kind)
    inner = BEFORE + escaped(secret.snippet, spots(secret)[1]) + AFTER
    text = json.dumps({"name": "write_config", "arguments": inner})
    out, _ = Redaction().redact(text)
    outer = json.loads(out)
    assert outer["name"] == "write_config" and not leaked(secret, out)
    arguments = outer["arguments"]
    assert not leaked(secret, arguments)
    assert arguments.startswith(BEFORE) and arguments.endswith(AFTER)
    value = json.loads(arguments)
    assert not leaked(secret, value["config"]["credential"])
    assert MARKER.search(value["config"]["credential"])


def test_ordinary_json_with_escapes_survives() -> None:
    """Ordinary lines written as JSON strings with every character escaped, or with their
    slashes escaped, come through as they are (the same ceiling as plain lines)."""
    lines = ordinary_lines(seed=17, count=1000)
    rng = random.Random(3)
    texts = [json.dumps(line).replace("/", "\\/") for line in lines]
    texts += [
        '"' + escaped(line, set(rng.sample(range(len(line)), len(line) // 3))) + '"'
        for line in lines
        if line
    ]
    redaction = Redaction()
    changed = [text for text in texts if redaction.redact(text)[0] != text]
    assert len(changed) <= 0.002 * len(texts), changed[:5]


# The map from a decoded text back to its escaped source, against a source written from
# known pieces: each character is written plainly or as an escape, so where each one's
# writing starts and ends is known without decoding anything.

CHARACTERS = st.characters(codec="utf-8", exclude_categories=("Cs",))


def _writings(draw: Any, text: str) -> list[str]:
    """Each character of ``text`` as a JSON string body writes it, plainly or escaped."""
    out = []
    for c in text:
        short = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\n": "\\n", "\t": "\\t"}.get(c)
        plain = json.dumps(c, ensure_ascii=False)[1:-1]
        options = [plain, json.dumps(c)[1:-1] if ord(c) > 0xFFFF else f"\\u{ord(c):04x}"]
        out.append(draw(st.sampled_from(options + ([short] if short else []))))
    return out


@st.composite
def written(draw: Any) -> tuple[str, list[str]]:
    text = draw(st.text(CHARACTERS, max_size=20))
    return text, _writings(draw, text)


@settings(max_examples=examples(300), deadline=None)
@given(written(), st.data())
def test_a_span_of_the_decoded_text_maps_back_to_its_writing(
    case: tuple[str, list[str]], data: st.DataObject
) -> None:
    text, writings = case
    source = "".join(writings)
    escapes = decoded(source)
    assert (source if escapes is None else escapes.text) == json.loads('"' + source + '"')
    if escapes is None:
        return
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    at = [sum(map(len, writings[:i])) for i in range(len(writings) + 1)]
    assert escapes.back(start, end) == (at[start], at[end])


PATTERNS = st.lists(
    st.sampled_from(["u00", "n", r"\\", "[0-9a-f]{2}", "x", r"\w{3}", "/"]), min_size=1, max_size=3
)


@settings(max_examples=examples(300), deadline=None)
@given(st.text(CHARACTERS, max_size=40), PATTERNS, st.booleans())
def test_a_replacement_never_splits_an_escape(
    text: str, patterns: list[str], ascii_only: bool
) -> None:
    """Patterns that match inside escapes (``u00`` of ``\\u00e9``, ``n`` of ``\\n``, the
    backslash itself): the output is still a JSON string, and what it holds outside the
    markers is what the input held there."""
    source = json.dumps(text, ensure_ascii=ascii_only)
    out, _ = Redaction(patterns).redact(source)
    value = json.loads(out)
    assert isinstance(value, str)
    for piece in MARKER.split(value):
        assert piece in text


def test_what_the_pattern_matched_decoded_is_gone() -> None:
    """A pattern of the user's finds its text however it is escaped."""
    text = json.dumps({"note": "ticket TK-123456 filed"}).replace("-", "\\u002d")
    out, counts = Redaction([r"TK-\d+"]).redact(text)
    assert json.loads(out) == {"note": "ticket [REDACTED:custom] filed"}
    assert counts == {"custom": 1}
    assert re.search(r"TK|123456", json.loads(out)["note"]) is None


def test_an_escaped_surrogate_pair_is_one_character() -> None:
    """JSON writes a character beyond U+FFFF as a pair of escapes; it is read as one, and a
    pattern that matches up to its first escape redacts it whole."""
    source = json.dumps("token-\U0001f600 ok")
    escapes = decoded(source)
    assert escapes is not None and escapes.text == f'"{json.loads(source)}"'
    assert escapes.back(7, 8) == (7, 19)  # the one character is both escapes
    out, _ = Redaction(["token-."]).redact(source)
    assert json.loads(out) == "[REDACTED:custom] ok"


# A key beside escapes and characters beyond U+FFFF, in JSON held in JSON up to 3 deep: a
# replacement takes no escape's letters for the key's (the n of \n, the ude00 of \ude00),
# splits no pair, and leaves everything around the key as it was.

TOKENS = [s for s in SECRETS if re.fullmatch(r"[A-Za-z0-9_-]+", s.snippet)]
NEIGHBOURS = st.text(st.sampled_from(' \n\t\r"\\:,{}\x00\xb7\u2028\u20ac\U0001f600'), max_size=4)
"""No letter, digit or ``_``: formats end where ``(?!\\w)`` says, and ``é`` is a letter."""


@st.composite
def nested(draw: Any) -> tuple[Secret, str, str, int, list[str]]:
    """A key with text on both sides, written as JSON strings held in each other ``depth``
    deep: the pieces of the outermost text that write the left side, the key and the right
    side, each character written plainly or escaped at random at each level (the key's all
    plainly, or each at random)."""
    secret = draw(st.sampled_from(TOKENS))
    left = draw(NEIGHBOURS.filter(lambda text: not text.endswith("\\")))
    right = draw(NEIGHBOURS)
    depth = draw(st.integers(1, 3))
    pieces = [left, secret.snippet, right]
    for _ in range(depth):
        plain = json.dumps(pieces[1], ensure_ascii=False)[1:-1]  # where a format finds it
        pieces = ["".join(_writings(draw, piece)) for piece in pieces]
        pieces[1] = draw(st.sampled_from([plain, pieces[1]]))
        pieces = ['"' + pieces[0], pieces[1], pieces[2] + '"']
    return secret, left, right, depth, pieces


def _no_lone_surrogate(text: str) -> bool:
    return not re.search("[\ud800-\udfff]", text)


@settings(max_examples=examples(300), deadline=None)
@given(nested())
def test_a_key_beside_escapes_is_replaced_and_nothing_else(
    case: tuple[Secret, str, str, int, list[str]],
) -> None:
    secret, left, right, depth, (before, _, after) = case
    out, _ = Redaction().redact(before + case[4][1] + after)
    assert out.startswith(before) and out.endswith(after), out
    assert MARKER.fullmatch(out[len(before) : len(out) - len(after)]), out
    value = out
    for _ in range(depth):
        value = json.loads(value)
        assert isinstance(value, str) and _no_lone_surrogate(value), value
    assert MARKER.fullmatch(value[len(left) : len(value) - len(right)]), value
    assert value.startswith(left) and value.endswith(right) and not leaked(secret, out)


@pytest.mark.parametrize(
    ("letters", "token"),
    [("\\u0075", False), ("\\u0075\\u0030", False), ("\\u0031", True)],
)
def test_an_escape_s_letters_are_no_token_s_digits(letters: str, token: bool) -> None:
    """A bot token is 8 to 10 digits, a colon and 35 characters: ``\\u0075`` is ``u``, so
    its letters ``0075`` with ``0000:`` after them are no token's digits, while ``\\u0031``
    is ``1``, the first of eight. detect-secrets on the text the escapes stand for says
    which (a JSON string read by the standard library); the redaction agrees, and a text
    that holds no token is left as it is (the hypothesis run that found it: an escape's
    letters and the digits after them were redacted with the key beside them)."""
    text = f"x {letters}1234567:{'B' * 35}" if token else f"x {letters}0000:{'A' * 35}"
    meant = json.loads(f'"{text}"')
    found = TelegramBotTokenDetector().analyze_line(filename="f", line=meant, line_number=1)
    assert bool(found) is token
    out, counts = Redaction().redact(text)
    assert (out, dict(counts)) == (
        ("x [REDACTED:telegram-bot-token]", {"telegram-bot-token": 1}) if token else (text, {})
    )


def test_a_hostile_text_is_read_a_few_levels_deep_only() -> None:
    """``\\u005c`` stands for a backslash, so each ``u005c`` after it makes one more level:
    the levels read stay a few, what they hold a small multiple of the text."""
    hostile = "\\u005c" + "u005c" * 2000
    assert sum(len(level.text) for level in decodings(hostile)) <= 4 * len(hostile)


def test_a_key_in_json_held_in_json_four_deep_is_redacted() -> None:
    """A key with a letter escaped, in a tool call's arguments three deep: four levels."""
    secret = SECRETS[0]
    snippet = secret.snippet
    text = snippet[:5] + f"\\u{ord(snippet[5]):04x}" + snippet[6:]
    for _ in range(3):
        text = json.dumps({"arguments": text})
    out, counts = Redaction().redact(text)
    assert not leaked(secret, out) and counts
