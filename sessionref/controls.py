"""Control characters written as escapes (``\\u001b``), wherever text reaches a reader that
would obey them or break on them: a terminal (an escape sequence sets its title or clears the
screen), an HTML page (which takes none of them), a message that must stay one line.

Kept free of the library (the standard library alone), so that the command line writes its
messages through it before anything else is loaded.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterable
from typing import Final


def escapes(codes: Iterable[int]) -> dict[int, str]:
    """A ``str.translate`` table writing each of the code points ``codes`` as its escape.

    >>> "a\\x1bb".translate(escapes([0x1B]))
    'a\\\\u001bb'
    """
    return {code: f"\\u{code:04x}" for code in codes}


CONTROLS: Final = escapes(
    (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, *range(0x80, 0xA0))
)
"""Each control character (C0, DEL, C1) but tab, line feed and carriage return, to its escape."""
BIDI_CONTROLS: Final = escapes((*range(0x202A, 0x202F), *range(0x2066, 0x206A)))
"""The bidi embedding, override and isolate controls, to their escapes: left as they are,
they reorder the rest of their line, so that what is read is not what is there."""
TERMINAL: Final = {**CONTROLS, **BIDI_CONTROLS, **escapes([0x0D])}
"""What a terminal must not be sent raw: the control characters (a carriage return too, which
would write over its line) and the bidi controls, to their escapes; tab and line feed stay."""
ONE_LINE: Final = {**CONTROLS, **BIDI_CONTROLS, **escapes((0x09, 0x0A, 0x0D, 0x2028, 0x2029))}
"""Each control character, bidi control and other character that ends a line, to its escape."""
JSON_SHOWN: Final = {**CONTROLS, **BIDI_CONTROLS, **escapes((0x3C, 0x2028, 0x2029))}
"""What a JSON text shown to a terminal or to a model writes as escapes: the control
characters (tab, line feed and carriage return can only be white space between its tokens,
and stay), the bidi controls, the line and paragraph separators, and ``<``, as the snapshot's
envelope writes it (``\\u003c``: no tag can open in the text); ``>`` and ``&`` open nothing."""


@functools.cache
def _in_json_shown() -> re.Pattern[str]:
    """Any character of :data:`JSON_SHOWN` (none of them is special in a character class),
    compiled once it is first asked for: not at every start of the command line."""
    return re.compile("[" + "".join(map(chr, sorted(JSON_SHOWN))) + "]")


ESCAPE_LIKE: Final = re.compile(r"\\(?=u[0-9A-Fa-f]{4})")
"""A backslash that starts what reads as an escape: ``\\u`` and four hex digits."""


def one_line(text: str) -> str:
    """``text`` as one line a terminal shows as it is: each control character (C0 and C1,
    DEL, tab, line feed and carriage return too), each bidi control (:data:`BIDI_CONTROLS`),
    each line or paragraph separator and each lone surrogate written as its escape, whatever a
    file name or a log put there.

    >>> print(one_line("passed over s4/\\x1b]0;hi\\x07/session.jsonl: a\\nb\\u2028c\\x85"))
    passed over s4/\\u001b]0;hi\\u0007/session.jsonl: a\\u000ab\\u2028c\\u0085
    >>> print(one_line('session "s-\\udcff" not found'))
    session "s-\\udcff" not found
    >>> print(one_line("/home/dev/\\u202egnp.exe"))
    /home/dev/\\u202egnp.exe
    >>> one_line("plain → text, ünïcode, \\u200f kept")
    'plain → text, ünïcode, \\u200f kept'

    So that the line says what the text held, a backslash that starts what reads as such an
    escape is written as its own, ``\\u005c``: every ``\\u`` and four hex digits in the line
    stands for one character, and any other backslash for itself. Text that held
    ``\\u000a`` is then not shown as text that held a line break, and a path's backslashes
    stay as they are. Apply it once: its line is not the text it was made of.

    >>> print(one_line("a\\\\u000ab"), one_line("a\\nb"), one_line("C:\\\\Users\\\\me"))
    a\\u005cu000ab a\\u000ab C:\\Users\\me
    >>> print(one_line("\\\\\\x1b"), one_line("\\\\u005c"), one_line("\\\\u12 \\\\x"))
    \\\\u001b \\u005cu005c \\u12 \\x
    """
    if "\\" in text:
        text = ESCAPE_LIKE.sub(r"\\u005c", text)
    # a lone surrogate (an id from a file name that is no UTF-8, a title cut inside an emoji)
    # is no character, and UTF-8 cannot write it: its escape, as backslashreplace writes it
    return text.translate(ONE_LINE).encode("utf-8", "backslashreplace").decode("utf-8")


def quoted(text: str) -> str:
    """A text a message names, between double quotes, each one in it doubled (``"a""b"`` is
    ``a"b``; ``"a"b"`` may end at ``a``): its line escapes the rest once (:func:`one_line`).

    >>> print(one_line("no " + quoted('a"\\udcff\\x1b\\\\x')))
    no "a""\\udcff\\u001b\\x"
    """
    return '"' + text.replace('"', '""') + '"'


def shown_json(text: str) -> str:
    """A JSON text with each character of :data:`JSON_SHOWN` written as its escape: the same
    JSON value, as a terminal may be sent it and a model read it, with no raw ``<``, control
    or bidi control. Those characters can only be in its strings, where ``\\u003c`` says the
    same character; an escape already there stays as it is (its backslash is no such
    character), so that the text, parsed, gives exactly what it gave before.

    >>> print(shown_json('{"t":"</x> \\u0007 \x9b2J \u202eab\u2028","n":[1]}'))
    {"t":"\\u003c/x> \\u0007 \\u009b2J \\u202eab\\u2028","n":[1]}
    >>> import json
    >>> text = json.dumps({"<\x85": ["\u2066&>", "\\u003c"]}, ensure_ascii=False, indent=1)
    >>> json.loads(shown_json(text)) == json.loads(text)
    True
    """
    return _in_json_shown().sub(lambda found: JSON_SHOWN[ord(found[0])], text)


def for_a_terminal(data: bytes) -> bytes:
    """UTF-8 ``data`` as a terminal may be sent it: each character of :data:`TERMINAL` as its
    escape, so that no escape sequence a session held sets the terminal's title or clears it
    (a C1 control such as U+009B is CSI to a terminal decoding UTF-8) and no bidi control
    reorders a line. A JSON text stays the same JSON: those characters can only be in its
    strings, where ``\\u009b`` says the same character.

    >>> print(for_a_terminal('{"t":"\\x1b]0;x\\u0007 \\u009b2J \\u202eab"}'.encode()).decode())
    {"t":"\\u001b]0;x\\u0007 \\u009b2J \\u202eab"}
    """
    return data.decode("utf-8", "replace").translate(TERMINAL).encode("utf-8")


def stderr_line(text: str) -> None:
    """``text`` written on stderr as one line (:func:`one_line`: a path may hold a terminal's
    escapes): where the library warns when no caller took its warnings.

    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     stderr_line("warning: /a\\nb")
    >>> print(err.getvalue(), end="")
    warning: /a\\u000ab
    """
    sys.stderr.write(one_line(text) + "\n")
