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

from sessionref.codex.listed import opens_in_envelope
from sessionref.codex.meta import codex_meta
from sessionref.errors import SessionLogError


class _Stamped(msgspec.Struct, frozen=True, gc=False):
    """A line read only for its envelope's ``timestamp`` (the rest parsed, not kept)."""

    timestamp: object = None


_STAMPED: Final = msgspec.json.Decoder(_Stamped)
_SKIPPED: Final = b""


def _kept(line: bytes) -> bool:
    """Whether Codex's resume keeps a line: JSON ``serde_json`` parses (msgspec refuses what
    it refuses: malformed JSON, lone surrogate escapes) holding a ``timestamp`` string.

    >>> _kept(b'{"timestamp":"t","type":"x"}'), _kept(b'{"type":"x"}'), _kept(b"  ")
    (True, False, False)
    >>> def text(escaped): return b'{"timestamp":"t","x":"%s"}' % escaped
    >>> _kept(text(b"\\\\ud800")), _kept(text(b"\\\\uD83D\\\\uDE00"))
    (False, True)
    """
    try:
        return type(_STAMPED.decode(line).timestamp) is str
    except (msgspec.DecodeError, RecursionError):
        return False


def _refuse_non_utf8(path: Path, text: bytes) -> None:
    """Raise :class:`SessionLogError` naming ``path`` and the first line of ``text`` (lines
    joined by newlines) that is not UTF-8, as tokio's ``next_line`` requires.

    >>> _refuse_non_utf8(Path("r.jsonl"), "{}\\n{}\\n\\"é\\"".encode())
    >>> _refuse_non_utf8(Path("r.jsonl"), b'{}\\n{"x":"caf\\xe9"}')
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: r.jsonl: line 2 is not UTF-8, and Codex refuses to \
resume a rollout holding such a line
    """
    try:
        text.decode()
    except UnicodeDecodeError as exc:
        number = text.count(b"\n", 0, exc.start) + 1
        raise SessionLogError(
            f"{path}: line {number} is not UTF-8, and Codex refuses to resume a rollout "
            "holding such a line"
        ) from None


def _kept_lines(lines: list[bytes], text: bytes) -> list[bytes]:
    """``lines`` (joined by newlines in ``text``) with each one Codex's resume skips made
    blank: all at once when msgspec takes every line (one call in C), else line by line."""
    try:
        decoded = _STAMPED.decode_lines(text)
    except (msgspec.DecodeError, RecursionError):
        pass
    else:
        if len(decoded) == len(lines):  # no blank line was passed over
            if all(type(item.timestamp) is str for item in decoded):
                return lines
            return [
                line if type(item.timestamp) is str else _SKIPPED
                for line, item in zip(lines, decoded, strict=True)
            ]
    return [line if _kept(line) else _SKIPPED for line in lines]  # a blank line stays blank


def _refuse_without_meta(path: Path, lines: list[bytes]) -> None:
    """Raise :class:`SessionLogError` naming ``path`` and its first ``session_meta`` line when
    no ``session_meta`` among ``lines`` is one Codex reads (:func:`codex_meta`)."""
    first = None
    for number, line in enumerate(lines, 1):
        if b"session_meta" in line and codex_meta(line):
            return
        if first is None and b"session_meta" in line:
            first = number
    where = f"line {first}: its session_meta is not one" if first else "no session_meta"
    raise SessionLogError(
        f"{path}: {where} Codex reads, and Codex refuses to resume a rollout without one"
    )


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
    text = b"\n".join(lines)
    _refuse_non_utf8(path, text)
    _refuse_without_meta(path, lines)
    return _kept_lines(lines, text)
