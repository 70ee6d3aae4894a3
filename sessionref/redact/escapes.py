r"""JSON string escapes read as what they stand for, with a way back to the text they were
read from (docs/redaction.md §How a text is scanned).

A key written inside JSON held as text may have any character escaped (``sk\u002dproj…``,
``https:\/\/…``), and JSON text may itself be held in a JSON string (``\\u002d``). The
scan reads each level of such escapes decoded (:func:`decodings`), finds secrets there,
and maps what it finds back to the text (:meth:`Escapes.back`), whole escapes only, so the
replacement never splits one (:meth:`Escapes.snap`).
"""

from __future__ import annotations

import bisect
import re
from typing import Final

import msgspec

_ESCAPE: Final = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])')
r"""One JSON string escape: ``\uXXXX`` or a backslash and one of ``" \ / b f n r t``."""
_STANDS_FOR: Final = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}


class Escapes(msgspec.Struct, frozen=True):
    r"""A text's escapes decoded: ``text`` is the decoded text; escape ``i`` was
    ``source[starts[i]:ends[i]]`` and is the one character ``text[at[i]]``.

    >>> escapes = decoded(r"a\u0062c\/d")
    >>> escapes.text, escapes.starts, escapes.ends, escapes.at
    ('abc/d', (1, 8), (7, 10), (1, 3))
    """

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    at: tuple[int, ...]

    def _source(self, position: int) -> int:
        """Where the decoded text's ``position`` (a boundary between characters) is in the
        source: past every escape decoded before it."""
        before = bisect.bisect_left(self.at, position)
        if not before:
            return position
        return position + self.ends[before - 1] - self.at[before - 1] - 1

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

    def snap(self, start: int, end: int) -> tuple[int, int]:
        r"""``[start, end)`` of the source grown to hold whole every escape it cuts into.

        >>> source = r"a\u0062c"
        >>> start, end = decoded(source).snap(3, 5)
        >>> source[start:end]
        '\\u0062'
        """
        first = bisect.bisect_right(self.starts, start) - 1
        if first >= 0 and start < self.ends[first]:
            start = self.starts[first]
        last = bisect.bisect_left(self.starts, end) - 1
        if last >= 0 and end < self.ends[last]:
            end = self.ends[last]
        return start, end


def decoded(text: str) -> Escapes | None:
    r"""``text``'s JSON string escapes read as what they stand for (a ``\uXXXX`` as that
    one UTF-16 code unit), or ``None`` when it holds none. A backslash before anything else
    is kept as it is.

    >>> decoded(r'say \"hi\"\n\x').text
    'say "hi"\n\\x'
    >>> decoded("no escapes") is None, decoded(r"C:\x") is None
    (True, True)
    """
    if "\\" not in text:
        return None
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at: list[int] = []
    done = shrunk = 0
    for match in _ESCAPE.finditer(text):
        start, end = match.span()
        escape = match.group()
        pieces += (
            text[done:start],
            chr(int(escape[2:], 16)) if escape[1] == "u" else _STANDS_FOR[escape[1]],
        )
        starts.append(start)
        ends.append(end)
        at.append(start - shrunk)
        shrunk += end - start - 1
        done = end
    if not starts:
        return None
    pieces.append(text[done:])
    return Escapes("".join(pieces), tuple(starts), tuple(ends), tuple(at))


def decodings(text: str) -> list[Escapes]:
    r"""Every level of escapes of ``text``: the first decodes ``text``, each next one
    decodes what the one before gave (JSON text held in a JSON string), until a level holds
    no escape. Each level is shorter than the one before, so there are few.

    >>> [level.text for level in decodings(r'{"a": "{\"b\": \"x\\u002dy\"}"}')]
    ['{"a": "{"b": "x\\u002dy"}"}', '{"a": "{"b": "x-y"}"}']
    """
    levels: list[Escapes] = []
    level = decoded(text)
    while level is not None:
        levels.append(level)
        level = decoded(level.text)
    return levels
