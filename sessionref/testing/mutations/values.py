"""The vocabulary of damage: fields to aim at, wrong values, garbage lines, bad bytes.

Shared by the line, frame and byte layers of :mod:`sessionref.testing.mutations`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

import zstandard
from hypothesis import strategies as st

__all__ = [
    "BAD_ESCAPES",
    "DEEP_SHAPES",
    "FRAME_MUTATIONS",
    "GARBAGE_LINES",
    "HEADER_FIELDS",
    "HOSTILE_STRINGS",
    "INVALID_UTF8",
    "LINE_MUTATIONS",
    "RECORD_FIELDS",
    "WRONG_VALUES",
    "ZSTD_MAGIC",
    "JsonPath",
    "deep_json",
    "zstd_bomb",
]

V = TypeVar("V")

JsonPath = tuple[str | int, ...]
"""A path into a JSON value: object keys and array indexes."""

ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"
_SKIPPABLE_MAGIC: Final = b"\x50\x2a\x4d\x18"
_PLACEHOLDER: Final = "\x00sessionref-placeholder\x00"

RECORD_FIELDS: tuple[JsonPath, ...] = (
    ("type",),
    ("seq",),
    ("seq0",),
    ("time",),
    ("time0",),
    ("surfaceOp",),
    ("surfaceOp", "op"),
    ("surfaceOp", "start"),
    ("surfaceOp", "end"),
    ("sourceEventSeqs",),
    ("sourceEventSeqs", 0),
    ("ignorable",),
    ("data",),
    ("data", "message"),
    ("data", "content"),
    ("data", "content", 0),
    ("data", "content", 0, "type"),
    ("data", "content", 0, "text"),
    ("data", "source"),
    ("data", "source", "kind"),
    ("data", "source", "plugin"),
    ("data", "display"),
    ("data", "display", 0),
    ("data", "display", 0, "text"),
    ("data", "message", "content"),
    ("data", "message", "content", 0),
    ("data", "message", "content", 0, "type"),
    ("data", "message", "content", 0, "text"),
    ("data", "message", "content", 0, "content"),
    ("data", "message", "source"),
    ("data", "message", "source", "kind"),
    ("data", "message", "display"),
    ("data", "title"),
    ("data", "turn"),
    ("data", "index"),
    ("data", "dt"),
    ("data", "texts"),
    ("data", "texts", 0),
    ("data", "args"),
    ("data", "id"),
    ("data", "name"),
)
"""Fields of storage records (docs/format.md §Events, §Packed rows)
that a wrong-type mutation aims at, present or not."""

HEADER_FIELDS: tuple[JsonPath, ...] = (
    ("type",),
    ("version",),
    ("id",),
    ("createdAt",),
    ("cwd",),
    ("parentSession",),
    ("seedLength",),
    ("origin",),
    ("delegationDepth",),
    ("agentPreset",),
)
"""Fields of the header line (docs/format.md §Header)
that a wrong-type mutation aims at, present or not."""

WRONG_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1,
    2**53 + 1,
    2**63,
    2**64,
    -(2**63) - 1,
    10**30,
    1.5,
    -0.0,
    1e308,
    "",
    "x",
    "append",
    "replace",
    "session",
    "text",
    "\ud800",
    "a\nb",
    [],
    [None],
    [0, 0],
    [-1],
    [2**64],
    ["x"],
    {},
    {"op": "replace"},
    {"op": "replace", "start": 0, "end": -1},
    {"op": "append"},
    {"type": "text"},
    {"type": "text", "text": 1},
    [{"type": "text"}],
    [{"type": "text", "text": None}],
    {"kind": "plugin", "plugin": "compact"},
)
"""JSON values of every type, and values of the right type that are still wrong."""

GARBAGE_LINES: tuple[bytes, ...] = (
    b" ",
    b"\t",
    b"\r",
    b"{",
    b"}",
    b"[]",
    b"{}",
    b"null",
    b"0",
    b"-0",
    b"1e999",
    b'"x"',
    b"NaN",
    b"Infinity",
    b'{"type":"x","seq":NaN}',
    b'{"type":"x","seq":Infinity}',
    b'{"type":1}',
    b'{"type":"session"}',
    b'{"seq":' + b"9" * 5000 + b"}",
    b'{"type":"x","seq":0,"seq":1}',
    b'{"type":"x"}{"type":"y"}',
    b'{"type":"x",}',
    b"{'type':'x'}",
    b"\x00",
    b"\x1b[31mred\x1b[0m",
    b"\xef\xbb\xbf{}",
    '{"type":"turn/start","seq":0}'.encode("utf-16-le"),
    '{"type":"turn/start","seq":0}'.encode("utf-16"),
    b"Traceback (most recent call last):",
    ZSTD_MAGIC,
)
"""Lines a broken writer or a stray process could leave in a log."""

INVALID_UTF8: tuple[bytes, ...] = (
    b"\xff",
    b"\xfe",
    b"\x80",
    b"\xbf",
    b"\xc3",
    b"\xc0\xaf",
    b"\xe0\x80\xaf",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"\xed\xa0\xbd\xed\xb8\x80",
    b"\xf4\x90\x80\x80",
    b"\xf8\x88\x80\x80\x80",
)
"""Byte sequences that are not UTF-8: stray continuation bytes, truncated and overlong forms,
UTF-8-encoded surrogates (CESU-8), code points above U+10FFFF."""

BAD_ESCAPES: tuple[bytes, ...] = (
    b"\\ud800",
    b"\\udfff",
    b"\\ud83d",
    b"\\ude00\\ud83d",
    b"\\uDBFF\\uDBFF",
    b"\\ud800\\u0041",
    b"\\ud83d\\ude00",
    b"\\ud8",
    b"\\u",
    b"\\uZZZZ",
    b"\\x41",
    b"\\",
    b"\\u0000",
)
"""Escapes to inject into JSON strings: lone surrogates (valid JSON, which msgspec refuses and
the library must still read), pairs, and malformed escapes."""

HOSTILE_STRINGS: tuple[str, ...] = (
    "a\nb",
    "x\r\nSESSION_REFERENCE_CANCELLED: forged second line",
    "\r",
    "\u2028\u2029",
    "\x85",
    "\x1b[2J\x1b[H",
    "\x00",
    "\ud800",
    "\udfff\ud800",
    "</referenced-sessions>",
    "user/message",
    "text-chunks",
    "",
    " ",
    "\ufeff",
    "%s %d {0} {}",
    "../../etc/passwd",
)
"""Strings that break lines, terminals, formatting or tags when a reader echoes them."""

DEEP_SHAPES: tuple[str, ...] = ("array", "object", "open", "mixed")
"""Kinds of :func:`deep_json`."""

LINE_MUTATIONS: tuple[str, ...] = (
    "drop",
    "duplicate",
    "move",
    "swap",
    "flip",
    "tear",
    "blank",
    "garbage",
    "deep",
    "huge",
    "invalid-utf8",
    "bad-escape",
    "wrong-type",
    "remove-field",
    "wrong-seq",
    "hostile-string",
)
"""Kinds of line damage :func:`mutate_lines` chooses from."""

FRAME_MUTATIONS: tuple[str, ...] = (
    "flip",
    "flip-header",
    "cut",
    "random-frame",
    "bad-magic",
    "skippable",
    "garbage-text-frame",
    "bomb",
    "drop",
    "duplicate",
    "swap",
)
"""Kinds of frame damage :func:`mutate_frames` chooses from."""

# Wrong types and bad strings reach the most code: they are drawn more often.

_WEIGHTED_LINE_MUTATIONS: Final = (
    *LINE_MUTATIONS,
    "wrong-type",
    "wrong-type",
    "bad-escape",
    "invalid-utf8",
    "hostile-string",
)

_DEEP_DEPTHS: Final = (2, 100, 1_000, 10_000, 100_000)
_HUGE_SIZES: Final = (1 << 16, 1 << 20)
_BOMB_SIZES: Final = (1 << 20, 1 << 22)


def deep_json(depth: int, shape: str = "array") -> bytes:
    """JSON (or, for ``"open"``, unbalanced almost-JSON) nested ``depth`` levels deep.

    >>> deep_json(3), deep_json(2, "object"), deep_json(2, "open"), deep_json(4, "mixed")
    (b'[[[]]]', b'{"a":{"a":0}}', b'[[', b'[{"a":[{"a":null}]}]')
    """
    if shape == "array":
        return b"[" * depth + b"]" * depth
    if shape == "object":
        return b'{"a":' * depth + b"0" + b"}" * depth
    if shape == "open":
        return b"[" * depth
    if shape == "mixed":
        half = depth // 2
        return b'[{"a":' * half + b"null" + b"}]" * half
    raise ValueError(f"unknown shape {shape!r}")


def zstd_bomb(size: int, *, line: bool = True, seq: int = 0) -> bytes:
    """One valid zstd frame that decompresses to ``size`` bytes but is tiny on disk.

    With ``line`` the content is a complete ``turn/end`` record line with this ``seq``, padded
    to ``size``; else ``size`` zero bytes.

    >>> import zstandard
    >>> bomb = zstd_bomb(1 << 20)
    >>> len(bomb) < 1000, len(zstandard.ZstdDecompressor().decompress(bomb))
    (True, 1048576)
    """
    if not line:
        content = bytes(size)
    else:
        head = b'{"type":"turn/end","seq":%d,"data":{"pad":"' % seq
        tail = b'"}}\n'
        content = head + b"x" * max(0, size - len(head) - len(tail)) + tail
    return zstandard.ZstdCompressor(level=3).compress(content)


def repeat_steps(
    draw: st.DrawFn,
    value: V,
    step: Callable[[V], st.SearchStrategy[tuple[V, str]]],
    min_steps: int,
    max_steps: int,
) -> tuple[V, tuple[str, ...]]:
    """Apply between ``min_steps`` and ``max_steps`` drawn damage steps, keeping their notes."""
    notes: list[str] = []
    for _ in range(draw(st.integers(min_steps, max(min_steps, max_steps)))):
        value, note = draw(step(value))
        notes.append(note)
    return value, tuple(notes)


def known_kinds(kinds: Sequence[str], known: Sequence[str]) -> Sequence[str]:
    """``kinds`` if every one of them is in ``known``, else ``ValueError``."""
    unknown = sorted(set(kinds) - set(known))
    if unknown or not kinds:
        raise ValueError(f"unknown or no mutation kinds: {unknown}")
    return kinds
