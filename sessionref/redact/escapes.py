r"""JSON string escapes read as what they stand for, with a way back to the text they were
read from (docs/redaction.md §How a text is scanned).

A key written inside JSON held as text may have any character escaped (``sk\u002dproj…``,
``https:\/\/…``), and JSON text may itself be held in a JSON string (``\\u002d``). The
scan reads each level of such escapes decoded (:func:`decodings`, at most :data:`MAX_LEVELS`
of them), finds secrets there, and maps what it finds to the last level read
(:meth:`Escapes.ahead`) and back to the text (:meth:`Escapes.back`), whole escapes only,
so that a replacement never splits one of any level read.
"""

from __future__ import annotations

import bisect
import re
from itertools import accumulate
from typing import Final

import msgspec

_ESCAPE: Final = re.compile(
    r'(\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|["\\/bfnrt]))'
)
r"""One JSON string escape: a surrogate pair ``\uD8xx\uDCxx`` (one character, as JSON reads
it), ``\uXXXX``, or a backslash and one of ``" \ / b f n r t``; a group, so that
``split`` keeps it."""

MAX_LEVELS: Final = 4
r"""The most levels of escapes read (docs/redaction.md §How a text is scanned). JSON held in
JSON held in a text is two; source code with escapes of its own in it, one or two more.
Each level is a scan of about the text's length, and ``\u005c`` stands for a backslash, so
``\u005cu005cu005c…`` would make a level of every five characters without it."""


class _StandsFor(dict[str, str]):
    """What each escape stands for: the short ones written out, each ``\\uXXXX`` worked out
    when first met (at most 65,536 of them), a surrogate pair each time (there are a
    million)."""

    def __missing__(self, escape: str) -> str:
        if len(escape) == 12:
            high, low = int(escape[2:6], 16), int(escape[8:], 16)
            return chr(0x10000 + ((high - 0xD800) << 10) + low - 0xDC00)
        self[escape] = char = chr(int(escape[2:], 16))
        return char


_STANDS_FOR: Final = _StandsFor(
    {f"\\{c}": stands for c, stands in zip('"\\/bfnrt', '"\\/\b\f\n\r\t', strict=True)}
)


class Escapes(msgspec.Struct, frozen=True):
    r"""A text's escapes decoded: ``text`` is the decoded text; escape ``i`` was
    ``source[starts[i]:ends[i]]`` and is the one character ``text[at[i]]``.

    >>> escapes = decoded(r"a\u0062c\/d\ud83d\ude00")
    >>> escapes.text, escapes.starts, escapes.ends, escapes.at
    ('abc/d😀', (1, 8, 11), (7, 10, 23), (1, 3, 5))
    """

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    at: tuple[int, ...]

    def _source(self, position: int) -> int:
        r"""Where the decoded text's ``position`` (a boundary between characters) is in the
        source: past every escape decoded before it.

        >>> escapes = decoded(r"a\u0062c")
        >>> [escapes._source(position) for position in range(4)]
        [0, 1, 7, 8]
        """
        before = bisect.bisect_left(self.at, position)
        if not before:
            return position
        return position + self.ends[before - 1] - self.at[before - 1] - 1

    def _decoded(self, position: int, *, up: bool) -> int:
        r"""Where the source's ``position`` (a boundary) is in the decoded text: inside an
        escape, before its character, or after it when rounding ``up``.

        >>> escapes = decoded(r"a\u0062c")
        >>> [escapes._decoded(position, up=False) for position in range(9)]
        [0, 1, 1, 1, 1, 1, 1, 2, 3]
        >>> [escapes._decoded(position, up=True) for position in range(9)]
        [0, 1, 2, 2, 2, 2, 2, 2, 3]
        """
        last = bisect.bisect_right(self.starts, position) - 1
        if last < 0:
            return position
        if position >= self.ends[last]:
            return position - self.ends[last] + self.at[last] + 1
        return self.at[last] + (up and position > self.starts[last])

    def in_letters(self, position: int) -> bool:
        r"""Whether the source's ``position`` (a boundary) falls among an escape's letters:
        past its backslash and before its end, where no token of the decoded text starts.

        >>> escapes = decoded(r"a\u0062c")
        >>> [escapes.in_letters(position) for position in range(9)]
        [False, False, True, True, True, True, True, False, False]
        """
        last = bisect.bisect_right(self.starts, position) - 1
        return last >= 0 and self.starts[last] < position < self.ends[last]

    def back(self, start: int, end: int) -> tuple[int, int]:
        r"""The span of the source that the decoded text's ``[start, end)`` was read from:
        each escape inside it whole.

        >>> source = r"key sk\u002dproj ok"
        >>> escapes = decoded(source)
        >>> start, end = escapes.back(4, 11)
        >>> escapes.text[4:11], source[start:end]
        ('sk-proj', 'sk\\u002dproj')
        """
        return self._source(start), self._source(end)

    def ahead(self, start: int, end: int) -> tuple[int, int]:
        r"""The span of the decoded text read from the source's ``[start, end)``, with the
        character of every escape it cuts into: :meth:`back` of it holds ``[start, end)``
        and every escape it cuts into, whole.

        >>> source = r"a\ud83d\ude00b"
        >>> escapes = decoded(source)
        >>> start, end = escapes.ahead(0, 4)
        >>> escapes.text[start:end], source.__getitem__(slice(*escapes.back(start, end)))
        ('a😀', 'a\\ud83d\\ude00')
        """
        return self._decoded(start, up=False), self._decoded(end, up=True)


def decoded(text: str, above: Escapes | None = None) -> Escapes | None:
    r"""``text``'s JSON string escapes read as what they stand for (a surrogate pair as its
    one character, any other ``\uXXXX`` as that one UTF-16 code unit, as ``json`` reads
    them), or ``None`` when it holds none. A backslash before anything else is kept as it is.

    >>> decoded(r'say \"hi\"\n\x').text
    'say "hi"\n\\x'
    >>> decoded("no escapes") is None, decoded(r"C:\x") is None
    (True, True)

    When ``text`` is the text that ``above`` decoded, a backslash before a quote that was a
    quote there too (a JSON string's end: ``"C:\\"``) is no escape:

    >>> above = decoded(r'["C:\\", "a \\\"b\\\""]')
    >>> above.text, decoded(above.text, above).text
    ('["C:\\", "a \\"b\\""]', '["C:\\", "a "b""]')
    """
    if "\\" not in text:
        return None
    parts = _ESCAPE.split(text)  # text, escape, text, escape, ..., text
    if above is not None and '\\"' in parts[1::2]:
        parts = _quotes_kept(parts, above.at)
    if len(parts) == 1:
        return None
    ends = list(accumulate(map(len, parts)))
    parts[1::2] = map(_STANDS_FOR.__getitem__, parts[1::2])
    at = list(accumulate(map(len, parts)))[:-1:2]
    return Escapes("".join(parts), tuple(ends[:-1:2]), tuple(ends[1::2]), tuple(at))


def _quotes_kept(parts: list[str], decoded_at: tuple[int, ...]) -> list[str]:
    r"""``parts`` (text, escape, text, …) with each ``\"`` whose quote is not among the
    characters ``decoded_at`` (it was a quote in the text the escapes above were read
    from) taken as text.

    >>> _quotes_kept(["a", '\\"', "b", '\\"', "c"], (2,))
    ['a', '\\"', 'b\\"c']
    """
    kept = [parts[0]]
    position = len(parts[0])
    for escape, after in zip(parts[1::2], parts[2::2], strict=True):
        quote = position + 1
        position += len(escape) + len(after)
        index = bisect.bisect_left(decoded_at, quote)
        if escape == '\\"' and (index == len(decoded_at) or decoded_at[index] != quote):
            kept[-1] += escape + after
        else:
            kept += (escape, after)
    return kept


def decodings(text: str) -> list[Escapes]:
    r"""The levels of escapes of ``text``: the first decodes ``text``, each next one
    decodes what the one before gave (JSON text held in a JSON string), until a level holds
    no escape or :data:`MAX_LEVELS` are read. A quote that ends a string on one level is
    not read as escaped on the next (:func:`decoded`).

    >>> [level.text for level in decodings(r'{"a": "{\"b\": \"x\\u002dy\"}"}')]
    ['{"a": "{"b": "x\\u002dy"}"}', '{"a": "{"b": "x-y"}"}']
    >>> len(decodings("\\u005c" + "u005c" * 100))
    4
    """
    levels: list[Escapes] = []
    level = decoded(text)
    while level is not None:
        levels.append(level)
        level = decoded(level.text, level) if len(levels) < MAX_LEVELS else None
    return levels
