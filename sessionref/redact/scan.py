"""Finding the secrets of one text and replacing each by ``[REDACTED:<kind>]``
(docs/redaction.md §How a text is scanned)."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Final

import msgspec

from sessionref.errors import INVALID_CONFIG, SessionReferenceError
from sessionref.redact.detectors import Detectors
from sessionref.redact.escapes import Escapes, decodings

CUSTOM: Final = "custom"
"""The kind of a secret found by a pattern of the user's."""
_TAIL: Final = re.compile(r"[A-Za-z0-9_\-+/=]*")
"""What may follow a format's match and still be its token (a longer key than the pattern)."""
_HEAD: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/")
_KEY_END: Final = re.compile(r"-*END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-*|Private-MAC: *[0-9a-fA-F]+")
_KEY_BODY: Final = re.compile(r"(?:(?:\s|\\[nr])*[A-Za-z0-9+/=]{16,})*")
"""A key's base64 lines, raw or with JSON's ``\\n`` escapes: a block's end when it has no END."""


_SAME_LENGTH: Final = (('\\"', '""'), ("\\n", " \n"), ("\\r", " \r"), ("\\t", " \t"))
"""What :func:`scanned_view` reads each escape as: two characters for two."""

MARKER: Final = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
"""What a secret becomes (:attr:`Finding.replacement`), whatever its kind: a kind is a
:func:`~sessionref.redact.detectors.slug` or ``custom`` (a test holds every kind to it)."""


class Finding(msgspec.Struct, frozen=True, order=True):
    """One secret: the characters ``text[start:end]`` and its kind.

    >>> Finding(3, 9, "jwt").replacement
    '[REDACTED:jwt]'
    """

    start: int
    end: int
    kind: str

    @property
    def replacement(self) -> str:
        """What the secret becomes."""
        return f"[REDACTED:{self.kind}]"


@functools.cache
def compile_patterns(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """The user's patterns compiled once per process; one that does not compile, or the
    empty one (it matches only empty text, which is never redacted), is INVALID_CONFIG
    naming it.

    >>> compile_patterns(("a(",))
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: redact pattern 'a(' is not a regular expression: \
missing ), unterminated subpattern at position 1
    >>> compile_patterns(("a{99999999999}",))
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: redact pattern 'a{99999999999}' is not a regular \
expression: the repetition number is too large
    >>> compile_patterns(("",))
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: redact pattern '' is empty: it would redact nothing
    """
    compiled = []
    for pattern in patterns:
        if pattern == "":
            message = f"redact pattern {pattern!r} is empty: it would redact nothing"
            raise SessionReferenceError(message, INVALID_CONFIG)
        try:
            compiled.append(re.compile(pattern))
        except (re.error, TypeError, OverflowError, RecursionError) as exc:
            why = "nested too deeply" if isinstance(exc, RecursionError) else exc
            message = f"redact pattern {pattern!r} is not a regular expression: {why}"
            raise SessionReferenceError(message, INVALID_CONFIG) from None
    return tuple(compiled)


def scanned_view(text: str) -> str:
    r"""``text`` as the plugins read it: JSON's escaped quotes, line ends and tabs inside it
    (a config pasted as a JSON string) are read as quotes and white space, so that a value
    ends where its string or its line does. Each replacement has the length of what it
    replaces, so a position in the view is the same in ``text``.

    >>> scanned_view(r'{"cmd": "KEY=\"v\"\nNEXT=1\tx"}')
    '{"cmd": "KEY=""v"" \nNEXT=1 \tx"}'
    """
    if "\\" not in text:
        return text
    for escape, same_length in _SAME_LENGTH:
        text = text.replace(escape, same_length)
    return text


def hit_lines(view: str, detectors: Detectors) -> dict[int, set[int]]:
    """The lines of ``view`` some anchor hits (by where they start), each with the plugins
    its anchors anchor. A folded anchor is searched in the lower-cased view, or with case
    ignored where lower-casing changes the length (``İ``), so that positions carry over.

    >>> from sessionref.redact.detectors import builtin_detectors
    >>> detectors = builtin_detectors()
    >>> hits = hit_lines("plain\\nsee ghp_x\\nAWS", detectors)
    >>> sorted((start, [detectors.plugins[i].name for i in found]) for start, found in hits.items())
    [(6, ['GitHubTokenDetector']), (16, ['AWSKeyDetector'])]
    """
    lowered = view.lower()
    exact = len(lowered) == len(view)
    lines: dict[int, set[int]] = {}
    for anchor in detectors.anchors:
        if not anchor.folded:
            matches = anchor.pattern.finditer(view)
        elif exact:
            matches = anchor.pattern.finditer(lowered)
        else:
            matches = re.finditer(anchor.pattern.pattern, view, re.IGNORECASE)
        for match in matches:
            start = view.rfind("\n", 0, match.start()) + 1
            lines.setdefault(start, set()).update(anchor.plugins)
    return lines


def level_findings(text: str, detectors: Detectors) -> Iterator[Finding]:
    """What the plugins find in :func:`scanned_view` of one level of ``text``: each line
    some anchor hits, scanned once by the plugins its anchors anchor; each as the plugin's
    pattern matched it (:func:`widen` grows it to the token it sits in).

    >>> from sessionref.redact.detectors import builtin_detectors
    >>> list(level_findings("ok ghp_" + "x1" * 18, builtin_detectors()))
    [Finding(start=3, end=6, kind='github-token')]
    """
    view = scanned_view(text)
    for start, plugins in sorted(hit_lines(view, detectors).items()):
        end = view.find("\n", start)
        line = view[start : len(view) if end < 0 else end]
        for index in sorted(plugins):
            plugin = detectors.plugins[index]
            for a, b in plugin.spans(line):
                yield Finding(start + a, start + b, plugin.kind)


def _pattern_findings(text: str, patterns: Sequence[re.Pattern[str]]) -> Iterator[Finding]:
    """Every non-empty match of the user's patterns (their group ``secret`` when they name
    one) over the whole text."""
    for pattern in patterns:
        group = "secret" if "secret" in pattern.groupindex else 0
        for match in pattern.finditer(text):
            start, end = match.span(group)
            if end > start:
                yield Finding(start, end, CUSTOM)


def widen(text: str, finding: Finding) -> Finding:
    """A format's finding grown to the whole token it sits in (a key longer than the
    format's pattern is redacted to its end); a private key's to its whole block.
    :func:`find_secrets` widens in the last level of escapes it reads, so that no escape's
    letters (``n`` of ``\\n``, ``ude00`` of ``\\ude00``) are taken for a token's.

    >>> text = "key sk_live_" + "a" * 30 + " end"
    >>> finding = widen(text, Finding(4, 36, "stripe-access-key"))
    >>> text[finding.start:finding.end] == "sk_live_" + "a" * 30
    True
    """
    start, end = finding.start, finding.end
    if finding.kind == CUSTOM:
        return finding
    if finding.kind == "private-key":
        while start > 0 and text[start - 1] == "-":
            start -= 1
        closing = _KEY_END.search(text, end)
        end = closing.end() if closing else _KEY_BODY.match(text, end).end()  # type: ignore[union-attr]
        return Finding(start, end, finding.kind)
    while start > 0 and text[start - 1] in _HEAD:
        start -= 1
    end = _TAIL.match(text, end).end()  # type: ignore[union-attr]
    return Finding(start, end, finding.kind)


def merged(findings: Sequence[Finding]) -> list[Finding]:
    """Overlapping findings as one, of the kind of the one that starts first (the longer
    on a tie).

    >>> merged([Finding(5, 9, "b"), Finding(0, 6, "a"), Finding(10, 12, "c")])
    [Finding(start=0, end=9, kind='a'), Finding(start=10, end=12, kind='c')]
    """
    out: list[Finding] = []
    for finding in sorted(findings, key=lambda f: (f.start, -f.end)):
        if out and finding.start < out[-1].end:
            last = out[-1]
            out[-1] = Finding(last.start, max(last.end, finding.end), last.kind)
        else:
            out.append(finding)
    return out


def _read_in_letters(finding: Finding, decoding: Sequence[Escapes]) -> bool:
    r"""Whether a format's ``finding`` starts among the letters of an escape that the next
    level reads (``decoding``, none on the last level): it took them for a token's (the
    ``0075`` of ``\u0075`` for a bot token's digits), and the next level reads the text
    they stand for. A user's pattern is taken as it matches.

    >>> from sessionref.redact.escapes import decoded
    >>> escapes = decoded(r"a\u00750000:b")
    >>> _read_in_letters(Finding(3, 14, "telegram-bot-token"), [escapes])
    True
    >>> _read_in_letters(Finding(3, 14, CUSTOM), [escapes])
    False
    """
    return finding.kind != CUSTOM and any(escapes.in_letters(finding.start) for escapes in decoding)


def find_secrets(
    text: str, detectors: Detectors, patterns: Sequence[re.Pattern[str]] = ()
) -> list[Finding]:
    r"""Every secret of ``text``, in order, none overlapping: found in ``text`` and in
    every level of its JSON escapes decoded (:func:`~sessionref.redact.escapes.decodings`),
    each taken to the last level read and widened there (:func:`widen`), then mapped back
    to the place of ``text`` it was read from, splitting no escape of any level read.

    >>> from sessionref.redact.detectors import builtin_detectors
    >>> text = r'{"key": "gh\u0070_' + "x1" * 18 + '"}'
    >>> [text[f.start:f.end] for f in find_secrets(text, builtin_detectors())]
    ['gh\\u0070_x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1']
    >>> text = r'["line\nghp_' + "x1" * 18 + '"]'
    >>> [text[f.start:f.end] for f in find_secrets(text, builtin_detectors())]
    ['ghp_x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1']
    """
    levels = decodings(text)
    texts = [text] + [escapes.text for escapes in levels]
    found: list[Finding] = []
    for depth, level in enumerate(texts):
        for finding in chain(level_findings(level, detectors), _pattern_findings(level, patterns)):
            start, end = finding.start, finding.end
            if _read_in_letters(finding, levels[depth : depth + 1]):
                continue
            for escapes in levels[depth:]:
                start, end = escapes.ahead(start, end)
            finding = widen(texts[-1], Finding(start, end, finding.kind))
            start, end = finding.start, finding.end
            for escapes in reversed(levels):
                start, end = escapes.back(start, end)
            found.append(Finding(start, end, finding.kind))
    return merged(found)


def redact_text(
    text: str, detectors: Detectors, patterns: Sequence[re.Pattern[str]] = ()
) -> tuple[str, Counter[str]]:
    """``text`` with each secret replaced by ``[REDACTED:<kind>]``, and the count of each kind.

    >>> from sessionref.redact.detectors import builtin_detectors
    >>> redact_text("token ghp_" + "x1" * 18 + " ok", builtin_detectors())
    ('token [REDACTED:github-token] ok', Counter({'github-token': 1}))
    """
    findings = find_secrets(text, detectors, patterns)
    if not findings:
        return text, Counter()
    pieces: list[str] = []
    at = 0
    for finding in findings:
        pieces += (text[at : finding.start], finding.replacement)
        at = finding.end
    pieces.append(text[at:])
    return "".join(pieces), Counter(finding.kind for finding in findings)
