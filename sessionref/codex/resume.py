"""A rollout's lines as Codex's resume reads them (docs/harnesses.md §Codex §Resume).

Codex resumes a thread by reading its rollout line by line (openai/codex
``codex-rs/rollout/src/recorder.rs``: ``load_rollout_items``, which calls
``for_each_rollout_item_with_record_number``, and ``get_rollout_history``): a blank line is
passed over; a line ``serde_json`` cannot parse (not JSON, or a string holding a lone
surrogate escape, which ``serde_json`` refuses) or cannot read as a ``RolloutLine`` (no
``timestamp`` string, among others) is counted as a parse error and skipped, the rest of the
thread resumed; but a line that is not UTF-8 makes its line reader (tokio's ``next_line``)
fail, and with it the whole resume, as does a rollout in which no ``session_meta`` reads. So
sessionref passes over the lines Codex skips (each replaced by a blank line, so the lines keep
their numbers and ``capturedThroughSeq`` its meaning) and refuses, naming the file and the
line, a rollout Codex refuses. Of a ``RolloutLine`` only its ``timestamp`` is checked: the
shape of every event Codex knows is Codex's to change, and a line sessionref reads for what
the person saw it already reads only when the fields it takes have their types. The oldest
rollouts, without envelope, are read as they always were (no Codex of today resumes them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import msgspec

from sessionref.codex.listed import is_utf8, opens_in_envelope
from sessionref.codex.meta import refuse_without_meta
from sessionref.errors import SessionLogError


class _Stamped(msgspec.Struct, frozen=True, gc=False):
    """A line read only for its envelope's ``timestamp`` (the rest parsed, not kept)."""

    timestamp: object = None


_STAMPED: Final = msgspec.json.Decoder(_Stamped)
_SKIPPED: Final = b""
_STAMP_FIRST: Final = b'{"timestamp":"'
"""How each line Codex writes opens (``RolloutLine``'s first field)."""
_PAST_STAMP_FIRST: Final = b'{"timestamp":#'
"""The least bytes above all that open with :data:`_STAMP_FIRST` (its last byte, ``"``,
plus one): a line opens so exactly when it sorts from :data:`_STAMP_FIRST` to below this."""


def _kept(line: bytes) -> bool:
    """Whether Codex's resume keeps a line: JSON holding a ``timestamp`` string.

    A line as Codex writes it, ``{"timestamp":"`` first, is taken as kept without being
    parsed: were it no JSON, every reader after this one drops it too, as Codex skips it. One
    that holds a lone surrogate escape, which ``serde_json`` refuses (and so never writes: a
    Rust string is UTF-8), is read as JavaScript reads it; finding one would cost a parse of
    every line (docs/harnesses.md §Codex §Resume). Another line is parsed (msgspec, which
    refuses what ``serde_json`` refuses).

    >>> _kept(b'{"timestamp":"t","type":"x"}'), _kept(b'{"type":"x"}'), _kept(b"  ")
    (True, False, False)
    >>> _kept(b'{"type":"x","timestamp":"t"}'), _kept(b'{"type":"x","timestamp":5}')
    (True, False)
    """
    if line.startswith(_STAMP_FIRST):
        return True
    try:
        return type(_STAMPED.decode(line).timestamp) is str
    except (msgspec.DecodeError, RecursionError):
        return False


def _refuse_non_utf8(path: Path, lines: list[bytes]) -> None:
    """Raise :class:`SessionLogError` naming ``path`` and the first of ``lines`` that is not
    UTF-8, as tokio's ``next_line`` requires. An ASCII line is UTF-8 (checked in C, building
    nothing); only the others are decoded.

    >>> _refuse_non_utf8(Path("r.jsonl"), [b"{}", b"{}", '"é"'.encode()])
    >>> _refuse_non_utf8(Path("r.jsonl"), [b"{}", b'{"x":"caf\\xe9"}'])
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: r.jsonl: line 2 is not UTF-8, and Codex refuses to \
resume a rollout holding such a line
    """
    if all(map(bytes.isascii, lines)):
        return
    for number, line in enumerate(lines, 1):
        if not (line.isascii() or is_utf8(line)):
            raise SessionLogError(
                f"{path}: line {number} is not UTF-8, and Codex refuses to resume a rollout "
                "holding such a line"
            )


def _all_stamped(lines: list[bytes]) -> bool:
    """Whether every line opens ``{"timestamp":"``, as Codex writes every line: told by the
    least and the greatest line, which sort between :data:`_STAMP_FIRST` and
    :data:`_PAST_STAMP_FIRST` exactly when all do (two comparisons a line, in C: a
    ``startswith`` on each cost three times as much).

    >>> _all_stamped([b'{"timestamp":"t"}', b'{"timestamp":"u","type":"x"}']), _all_stamped([])
    (True, True)
    >>> _all_stamped([b'{"timestamp":"t"}', b'{"timestamp":5}']), _all_stamped([b'{"timestamp"'])
    (False, False)
    >>> _all_stamped([b'{"timestamp":"t"}', b'{"timestamp":#']), _all_stamped([b'{"timestamp":!'])
    (False, False)
    """
    return not lines or (min(lines) >= _STAMP_FIRST and max(lines) < _PAST_STAMP_FIRST)


def _kept_lines(lines: list[bytes]) -> list[bytes]:
    """``lines`` with each one Codex's resume skips (:func:`_kept`) made blank.

    >>> _kept_lines([b'{"timestamp":"t"}', b'{"type":"x"}', b""])
    [b'{"timestamp":"t"}', b'', b'']
    """
    if _all_stamped(lines):
        return lines
    return [line if _kept(line) else _SKIPPED for line in lines]


def resumed(path: Path, lines: list[bytes]) -> list[bytes]:
    """The committed ``lines`` of the rollout at ``path`` as Codex's resume reads them: each
    line it skips blank, the others as they are; :class:`SessionLogError` naming the file and
    the line when Codex refuses the rollout (a line not UTF-8, no ``session_meta`` it reads).
    A rollout without envelope is given as it is.

    >>> at = b'"timestamp":"2025-06-01T10:00:00Z"'
    >>> meta = b'{%s,"type":"session_meta","payload":{"id":"0197a000-0000-7000-8000-' \\
    ...     b'0000000000aa",%s,"cwd":"/w","originator":"codex_cli_rs","cli_version":"0.40.0"}}' \\
    ...     % (at, at)
    >>> said = b'"type":"event_msg","payload":{"type":"user_message","message":"hi"}'
    >>> resumed(Path("r"), [meta, b"{%s,%s}" % (at, said), b"{%s}" % said, b"oops"])[2:]
    [b'', b'']
    >>> resumed(Path("r"), [meta, b"{%s,%s}" % (at, said.replace(b"hi", b"h\\xef"))])
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: r: line 2 is not UTF-8, and Codex refuses to resume a \
rollout holding such a line
    >>> resumed(Path("r"), [b'{"id":"t","timestamp":"2025-04-01T00:00:00Z"}', b"oops"])[1]
    b'oops'
    """
    if not opens_in_envelope(lines):
        return lines
    _refuse_non_utf8(path, lines)
    refuse_without_meta(path, lines)
    return _kept_lines(lines)
