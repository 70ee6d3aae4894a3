"""Damage for the files of other harnesses: what crashes, hand edits and disks do to a JSONL
file (docs/harnesses.md §Bad input).

:func:`damaged_files` takes a strategy of generated files (:class:`HarnessLog`) and gives the
bytes of one with zero or more damages: a torn last line, lines that are not JSON or not
objects, invalid UTF-8, a line lost (its children's parent dangles), a line twice, a
``parentUuid`` pointing at a descendant (a cycle), an unknown record type, an empty file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from sessionref.testing.claude_logs import HarnessLog

Damage = Callable[[Any, list[bytes]], list[bytes]]
_UUID = re.compile(rb'"(?:uuid|parentUuid)":"([^"]+)"')
_TYPE = re.compile(rb'"type":"[a-z_/-]+"')


def _place(draw: Any, lines: list[bytes]) -> int:
    return int(draw(st.integers(0, len(lines))))


def _not_json(draw: Any, lines: list[bytes]) -> list[bytes]:
    junk = draw(st.sampled_from([b"{", b"not json", b'{"type":"user",', b"}{", b"\x00", b""]))
    at = _place(draw, lines)
    return [*lines[:at], junk, *lines[at:]]


def _not_object(draw: Any, lines: list[bytes]) -> list[bytes]:
    value = draw(st.sampled_from([b"[1,2]", b"7", b"null", b'"user"', b"true", b"[[[[]]]]"]))
    at = _place(draw, lines)
    return [*lines[:at], value, *lines[at:]]


def _bad_utf8(draw: Any, lines: list[bytes]) -> list[bytes]:
    if not lines:
        return lines
    at = draw(st.integers(0, len(lines) - 1))
    line = lines[at]
    cut = draw(st.integers(0, len(line)))
    junk = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf0\x9f", b"\x80\x80"]))
    return [*lines[:at], line[:cut] + junk + line[cut:], *lines[at + 1 :]]


def _lose(draw: Any, lines: list[bytes]) -> list[bytes]:
    if not lines:
        return lines
    at = draw(st.integers(0, len(lines) - 1))
    return lines[:at] + lines[at + 1 :]


def _twice(draw: Any, lines: list[bytes]) -> list[bytes]:
    if not lines:
        return lines
    at = draw(st.integers(0, len(lines) - 1))
    return [*lines[: at + 1], lines[at], *lines[at + 1 :]]


def _cycle(draw: Any, lines: list[bytes]) -> list[bytes]:
    """Point an early line's ``parentUuid`` at a later line's uuid."""
    uuids = [found.group(1) for line in lines for found in _UUID.finditer(line)]
    if len(lines) < 2 or not uuids:
        return lines
    at = draw(st.integers(0, len(lines) - 2))
    target = draw(st.sampled_from(uuids))
    line = re.sub(rb'"parentUuid":(null|"[^"]*")', b'"parentUuid":"' + target + b'"', lines[at])
    return [*lines[:at], line, *lines[at + 1 :]]


def _unknown_type(draw: Any, lines: list[bytes]) -> list[bytes]:
    if not lines:
        return lines
    at = draw(st.integers(0, len(lines) - 1))
    kind = draw(st.sampled_from([b'"type":"weird"', b'"type":7', b'"type":null', b'"type":{}']))
    return [*lines[:at], _TYPE.sub(kind, lines[at], count=1), *lines[at + 1 :]]


def _flip(draw: Any, lines: list[bytes]) -> list[bytes]:
    if not lines:
        return lines
    at = draw(st.integers(0, len(lines) - 1))
    line = bytearray(lines[at])
    if line:
        spot = draw(st.integers(0, len(line) - 1))
        line[spot] = draw(st.integers(0, 255))
    return [*lines[:at], bytes(line), *lines[at + 1 :]]


DAMAGES: tuple[Damage, ...] = (
    _not_json,
    _not_object,
    _bad_utf8,
    _lose,
    _twice,
    _cycle,
    _unknown_type,
    _flip,
)


@st.composite
def damaged_files(draw: Any, logs: st.SearchStrategy[HarnessLog]) -> bytes:
    """The bytes of a generated file after zero or more damages (lines lost, doubled, made
    no JSON or no object, invalid UTF-8, a cycle of parents, an unknown type, a flipped
    byte; a torn, cut or emptied end).

    Here sessionref's own Claude Code store (yours in its place) lists and reads what it
    can, and refuses the rest in its one error, never a crash:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from hypothesis import given, settings
    >>> from sessionref import SessionLogError
    >>> from sessionref.claude_code.store import ClaudeCodeStore
    >>> from sessionref.testing.claude_logs import SESSION_ID, claude_code_logs
    >>> @settings(max_examples=20, deadline=None)
    ... @given(damaged_files(claude_code_logs(max_steps=3)))
    ... def test_damage_is_read_or_refused(content):
    ...     with tempfile.TemporaryDirectory() as home:
    ...         project = Path(home, "projects", "-work")
    ...         project.mkdir(parents=True)
    ...         (project / f"{SESSION_ID}.jsonl").write_bytes(content)
    ...         store = ClaudeCodeStore(home)
    ...         for header in store.headers():
    ...             try:
    ...                 store.read(header.id)
    ...             except SessionLogError:
    ...                 pass
    >>> test_damage_is_read_or_refused()
    """
    lines = list(draw(logs).lines)
    for damage in draw(st.lists(st.sampled_from(DAMAGES), max_size=4)):
        lines = damage(draw, lines)
    content = b"".join(line + b"\n" for line in lines)
    ending = draw(st.sampled_from(["whole", "whole", "torn", "cut", "empty"]))
    if ending == "torn":
        content += b'{"type":"assistant","uuid":"late","message":{"content":[{"type":"te'
    elif ending == "cut" and content:
        content = content[: draw(st.integers(0, len(content) - 1))]
    elif ending == "empty":
        content = b""
    return content
