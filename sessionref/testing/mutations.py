"""Hypothesis strategies that damage valid session logs at the byte level of their on-disk form.

A valid log (by default from :func:`~sessionref.testing.session_logs`) is serialized the way DSH
writes it (:mod:`sessionref.log.writer`) — :func:`log_lines`, one JSON line per record; with
zstd, independent frames of whole lines — and then damaged in up to three layers, in this order:

1. **lines** (:func:`mutate_lines`): drop, duplicate, move or swap lines; flip bytes; tear a line
   in the middle of the file; inject garbage lines, deeply nested JSON (up to 10^5 brackets), huge
   lines, invalid UTF-8 and lone-surrogate escapes; give a field a value of the wrong JSON type
   or remove it (:data:`RECORD_FIELDS`, :data:`HEADER_FIELDS`, and every node of the record);
   put :data:`HOSTILE_STRINGS` (line breaks, terminal escapes, forged error lines) in strings.
2. **frames** (:func:`mutate_frames`, zstd only): flip bytes inside a frame, cut a frame, insert
   garbage frames (random bytes, a zstd magic followed by noise, skippable frames, well-formed
   frames of garbage text, zstd bombs), drop, duplicate or swap frames. Lines are grouped into
   frames by :func:`frame_lines`, which may also pack several lines into one frame or split a
   line across two, as a writer appending in pieces would.
3. **bytes** (:func:`mutate_bytes`): truncate anywhere, flip, insert or delete bytes of the file,
   or append a torn write.

Each step is recorded as a short description in :attr:`MutatedLog.mutations`, so a failing example
says what was done. Nothing here promises that a mutated log is unreadable: many mutations leave a
valid log (swapping two identical lines, flipping a letter inside a text). What a reader must
promise is only that it answers, with a snapshot or with its own error, and in bounded time.

>>> from hypothesis import given, settings
>>> from sessionref.testing import mutated_logs, session_logs
>>> @settings(max_examples=10, deadline=None)
... @given(mutated_logs(session_logs(max_turns=1)))
... def test_something_was_done(mutated):
...     assert mutated.mutations and isinstance(mutated.data, bytes)
>>> test_something_was_done()
"""

from __future__ import annotations

import copy
import json
import os
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

import zstandard
from hypothesis import strategies as st

from sessionref.log.writer import log_path, render_batch, render_header
from sessionref.testing._js import js_stringify
from sessionref.testing.logs import session_logs
from sessionref.testing.store import LogRecords

V = TypeVar("V")

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
    "MutatedLog",
    "deep_json",
    "frame_lines",
    "json_paths",
    "log_lines",
    "mutate_bytes",
    "mutate_frames",
    "mutate_lines",
    "mutated_logs",
    "mutated_stores",
    "next_seq",
    "write_mutated_store",
    "zstd_bomb",
]

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


def log_lines(log: LogRecords) -> list[bytes]:
    """The UTF-8 JSON lines of a log without their newlines; line 1 is the header.

    >>> log = {"header": {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0},
    ...        "events": [{"type": "turn/start", "seq": 0, "time": 2, "data": {"turn": 1}}]}
    >>> for line in log_lines(log): print(line)
    b'{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}'
    b'{"type":"turn/start","seq":0,"time":2,"data":{"turn":1}}'
    """
    records = (render_batch([record], pack=False) for record in log["events"])
    return [line[:-1] for line in (render_header(log["header"]), *records)]


def next_seq(lines: Sequence[bytes]) -> int:
    """The seq the next event appended to these record lines would get (header excluded).

    Lines that do not parse, or carry no usable ``seq``/``seq0``, are passed over.

    >>> next_seq([b'{"id":"s"}', b'{"type":"a","seq":0}',
    ...           b'{"type":"text-chunks","seq0":1,"data":{"texts":["a","b"]}}'])
    3
    """
    following = 0
    for line in lines[1:]:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        seq, seq0, data = record.get("seq"), record.get("seq0"), record.get("data")
        if isinstance(seq, int) and not isinstance(seq, bool):
            following = max(following, seq + 1)
        elif isinstance(seq0, int) and not isinstance(seq0, bool) and isinstance(data, dict):
            members = data.get("texts", data.get("args"))
            if isinstance(members, list):
                following = max(following, seq0 + len(members))
    return following


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def json_paths(value: Any, max_depth: int = 8, limit: int = 512) -> list[JsonPath]:
    """Paths of the nodes of a JSON value (the root excluded), breadth first.

    >>> json_paths({"a": [1, {"b": 2}], "c": 3})
    [('a',), ('c',), ('a', 0), ('a', 1), ('a', 1, 'b')]
    """
    found: list[JsonPath] = []
    queue: deque[tuple[JsonPath, Any]] = deque([((), value)])
    while queue and len(found) < limit:
        path, node = queue.popleft()
        if path:
            found.append(path)
        if len(path) >= max_depth:
            continue
        if isinstance(node, dict):
            queue.extend(((*path, key), child) for key, child in node.items())
        elif isinstance(node, list):
            queue.extend(((*path, index), child) for index, child in enumerate(node))
    return found


def _parent(root: Any, path: JsonPath) -> Any:
    node = root
    for key in path[:-1]:
        in_object = isinstance(node, dict) and isinstance(key, str) and key in node
        in_array = isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)
        if not (in_object or in_array):
            return None
        node = node[key]
    return node


def _applicable(root: Any, path: JsonPath) -> bool:
    """Whether ``path`` can be set in ``root``: its parent exists and takes that key."""
    parent = _parent(root, path)
    key = path[-1]
    if isinstance(parent, dict):
        return isinstance(key, str)
    return isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent)


def _set(root: Any, path: JsonPath, value: Any) -> Any:
    changed = copy.deepcopy(root)
    _parent(changed, path)[path[-1]] = value
    return changed


def _remove(root: Any, path: JsonPath) -> Any:
    changed = copy.deepcopy(root)
    parent = _parent(changed, path)
    if isinstance(parent, dict):
        parent.pop(path[-1], None)
    else:
        del parent[path[-1]]
    return changed


_MAX_EDIT_DEPTH: Final = 64


def _depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(node, dict):
            stack.extend((child, level + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, level + 1) for child in node)
    return deepest


def _parse(line: bytes) -> Any:
    """A line's JSON value to edit, or ``None`` if it does not parse or nests too deeply to copy."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if _depth(value) <= _MAX_EDIT_DEPTH else None


def _render(value: Any, splice: bytes | None = None) -> bytes:
    """``JSON.stringify`` bytes of ``value``; ``splice`` replaces the placeholder string."""
    out = js_stringify(value).encode("utf-8")
    if splice is not None:
        out = out.replace(js_stringify(_PLACEHOLDER).encode("utf-8"), splice, 1)
    return out


def _known(kinds: Sequence[str], known: Sequence[str]) -> Sequence[str]:
    unknown = sorted(set(kinds) - set(known))
    if unknown or not kinds:
        raise ValueError(f"unknown or no mutation kinds: {unknown}")
    return kinds


@st.composite
def _field_path(draw: st.DrawFn, record: Any, header: bool) -> JsonPath | None:
    """A path to damage: a named field (present or not) or any node of the record."""
    named = [p for p in (HEADER_FIELDS if header else RECORD_FIELDS) if _applicable(record, p)]
    existing = json_paths(record)
    choices = [st.sampled_from(pool) for pool in (named, existing) if pool]
    if not choices:
        return None
    return draw(st.one_of(choices))


def _quote_positions(line: bytes) -> list[int]:
    """Offsets just after each ``"``: inside a string, about half the time."""
    return [i + 1 for i, byte in enumerate(line) if byte == 0x22]


@st.composite
def _huge_text(draw: st.DrawFn, sizes: Sequence[int]) -> str:
    size = draw(st.sampled_from(sizes))
    unit = draw(st.sampled_from(["x", "é<", "中文🙂", "\ud800a", "a\n"]))
    return (unit * (size // max(1, len(unit.encode("utf-8", "surrogatepass"))) + 1))[:size]


@st.composite
def _line_mutation(
    draw: st.DrawFn,
    lines: list[bytes],
    kinds: Sequence[str],
    huge_sizes: Sequence[int],
    deep_depths: Sequence[int],
) -> tuple[list[bytes], str]:
    """One damage to a list of lines (line 0 is the header); returns the lines and a description."""
    kind = draw(st.sampled_from(kinds))
    out = list(lines)
    index = draw(st.integers(0, len(out) - 1)) if out else 0
    where = draw(st.integers(0, len(out)))
    if not out and kind != "blank":
        kind = "garbage"  # every other kind works on an existing line
    if kind == "drop":
        del out[index]
        return out, f"drop line {index + 1}"
    if kind == "duplicate":
        out.insert(where, out[index])
        return out, f"copy line {index + 1} to {where + 1}"
    if kind == "move":
        line = out.pop(index)
        out.insert(min(where, len(out)), line)
        return out, f"move line {index + 1} to {min(where, len(out) - 1) + 1}"
    if kind == "swap":
        other = draw(st.integers(0, len(out) - 1))
        out[index], out[other] = out[other], out[index]
        return out, f"swap lines {index + 1} and {other + 1}"
    if kind == "blank":
        out.insert(where, draw(st.sampled_from([b"", b" ", b"\t \t"])))
        return out, f"blank line at {where + 1}"
    if kind == "garbage":
        junk = draw(st.one_of(st.sampled_from(GARBAGE_LINES), st.binary(max_size=48)))
        out.insert(where, junk)
        return out, f"garbage line {junk[:40]!r} at {where + 1}"
    line = out[index]
    if kind == "flip":
        if not line:
            return out, "flip in an empty line (no-op)"
        at = draw(st.integers(0, len(line) - 1))
        mask = draw(st.integers(1, 255))
        out[index] = line[:at] + bytes([line[at] ^ mask]) + line[at + 1 :]
        return out, f"flip byte {at} of line {index + 1} by {mask:#04x}"
    if kind == "tear":
        at = draw(st.integers(0, max(0, len(line) - 1)))
        out[index] = line[:at]
        return out, f"tear line {index + 1} at byte {at}"
    if kind == "deep":
        return _deep(draw, out, index, where, deep_depths)
    if kind == "huge":
        return _huge(draw, out, index, where, huge_sizes)
    if kind in ("invalid-utf8", "bad-escape"):
        pool = INVALID_UTF8 if kind == "invalid-utf8" else BAD_ESCAPES
        inserted = draw(st.sampled_from(pool))
        quotes = _quote_positions(line)
        at = draw(st.sampled_from(quotes)) if quotes else draw(st.integers(0, len(line)))
        out[index] = line[:at] + inserted + line[at:]
        return out, f"insert {inserted!r} at byte {at} of line {index + 1}"
    return _field_damage(draw, out, index, kind)


def _deep(
    draw: st.DrawFn, out: list[bytes], index: int, where: int, depths: Sequence[int]
) -> tuple[list[bytes], str]:
    depth = draw(st.sampled_from(depths))
    shape = draw(st.sampled_from(DEEP_SHAPES))
    deep = deep_json(depth, shape)
    place = draw(st.sampled_from(["line", "data", "value"]))
    record = _parse(out[index])
    if place == "value" and record is not None:
        path = draw(_field_path(record, index == 0))
        if path is not None:
            out[index] = _render(_set(record, path, _PLACEHOLDER), deep)
            return out, f"{shape} nesting {depth} deep at {path} of line {index + 1}"
    if place == "line":
        out.insert(where, deep)
        return out, f"{shape} nesting {depth} deep as line {where + 1}"
    seq = next_seq(out[:where])
    envelope = {"type": "turn/start", "seq": seq, "time": 0, "data": _PLACEHOLDER}
    out.insert(where, _render(envelope, deep))
    return out, f"{shape} nesting {depth} deep in the data of line {where + 1}"


def _huge(
    draw: st.DrawFn, out: list[bytes], index: int, where: int, sizes: Sequence[int]
) -> tuple[list[bytes], str]:
    text = draw(_huge_text(sizes))
    place = draw(st.sampled_from(["garbage", "message", "value"]))
    record = _parse(out[index])
    if place == "value" and record is not None:
        paths = [p for p in json_paths(record) if p[-1] == "text"]
        path = draw(st.sampled_from(paths)) if paths else draw(_field_path(record, index == 0))
        if path is not None:
            out[index] = _render(_set(record, path, text))
            return out, f"huge string ({len(text)} chars) at {path} of line {index + 1}"
    if place == "message" or record is None:
        seq = next_seq(out)
        data: dict[str, Any] = {
            "id": "huge",
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": "user"},
        }
        message = {"type": "user/message", "seq": seq, "time": 0, "data": data}
        out.append(_render({**message, "surfaceOp": "append"}))
        return out, f"append a user message of {len(text)} chars as seq {seq}"
    junk = text.encode("utf-8", "surrogatepass")
    out.insert(where, junk)
    return out, f"huge garbage line ({len(junk)} bytes) at {where + 1}"


def _field_damage(
    draw: st.DrawFn, out: list[bytes], index: int, kind: str
) -> tuple[list[bytes], str]:
    record = _parse(out[index])
    path: JsonPath | None = None
    if kind in ("wrong-type", "remove-field") and draw(st.booleans()):
        # Field first, then a line that has it: rare fields (packed members, display,
        # the content of a pruned tool result) get hit as often as common ones.
        path = draw(st.sampled_from([*RECORD_FIELDS, *HEADER_FIELDS]))
        present = kind == "remove-field"
        holders = [i for i, line in enumerate(out) if _holds(line, path, i == 0, present)]
        if holders:
            index = draw(st.sampled_from(holders))
            record = _parse(out[index])
        else:
            path = None
    if record is None:
        return out, f"{kind} on unparsable line {index + 1} (no-op)"
    path = path or draw(_field_path(record, index == 0))
    if path is None:
        return out, f"{kind} on line {index + 1} without fields (no-op)"
    if kind == "hostile-string":
        strings = [p for p in json_paths(record) if isinstance(_get(record, p), str)]
        echoed = (("id",), ("type",), ("cwd",)) if index == 0 else (("type",),)
        named = [p for p in echoed if _applicable(record, p)]
        # Half the time a field that readers echo in their errors.
        pools = [st.sampled_from(pool) for pool in (named, strings) if pool]
        path = draw(st.one_of(pools)) if pools else path
        hostile = draw(st.sampled_from(HOSTILE_STRINGS))
        out[index] = _render(_set(record, path, hostile))
        return out, f"set {path} of line {index + 1} to {hostile!r}"
    if kind == "remove-field":
        if _parent(record, path) is None or not _has(record, path):
            return out, f"remove missing {path} of line {index + 1} (no-op)"
        out[index] = _render(_remove(record, path))
        return out, f"remove {path} of line {index + 1}"
    if kind == "wrong-seq":
        seq_paths = [p for p in (("seq",), ("seq0",)) if _has(record, p)]
        if seq_paths:
            path = seq_paths[0]
            current = _parent(record, path)[path[-1]]
            shift = draw(st.sampled_from([-2, -1, 1, 2]))
            moved = current + shift if _is_int(current) else shift
            out[index] = _render(_set(record, path, moved))
            return out, f"set {path} of line {index + 1} to {moved!r}"
    value = draw(st.sampled_from(WRONG_VALUES))
    out[index] = _render(_set(record, path, copy.deepcopy(value)))
    return out, f"set {path} of line {index + 1} to {value!r}"


def _holds(line: bytes, path: JsonPath, header: bool, present: bool) -> bool:
    """Whether a line (the header or a record) can take ``path``, or has it if ``present``."""
    if path not in (HEADER_FIELDS if header else RECORD_FIELDS) or not line.startswith(b"{"):
        return False
    record = _parse(line)
    if record is None:
        return False
    return _has(record, path) if present else _applicable(record, path)


def _get(root: Any, path: JsonPath) -> Any:
    return _parent(root, path)[path[-1]] if _has(root, path) else None


def _has(root: Any, path: JsonPath) -> bool:
    parent = _parent(root, path)
    key = path[-1]
    if isinstance(parent, dict):
        return key in parent
    return isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent)


def _repeat(
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


@st.composite
def mutate_lines(
    draw: st.DrawFn,
    lines: Sequence[bytes],
    *,
    min_mutations: int = 1,
    max_mutations: int = 3,
    kinds: Sequence[str] | None = None,
    huge_sizes: Sequence[int] = _HUGE_SIZES,
    deep_depths: Sequence[int] = _DEEP_DEPTHS,
) -> tuple[list[bytes], tuple[str, ...]]:
    """Damaged copies of ``lines`` (line 0 is the header), with a description of each step.

    ``kinds`` limits the damage to some of :data:`LINE_MUTATIONS` (default: all, wrong types
    and bad strings weighted up). ``huge_sizes`` are the lengths of huge strings and lines (in
    characters), ``deep_depths`` the nesting depths of deep JSON. With no line left, every kind
    but ``"blank"`` inserts a garbage line.

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=20, deadline=None)
    ... @given(mutate_lines([b'{"type":"session","id":"s","createdAt":1}',
    ...                      b'{"type":"turn/start","seq":0,"data":{"turn":1}}'],
    ...                     huge_sizes=[100], deep_depths=[10]))
    ... def test_steps_are_described(damaged):
    ...     lines, steps = damaged
    ...     assert 1 <= len(steps) <= 3 and all(isinstance(line, bytes) for line in lines)
    >>> test_steps_are_described()
    """
    chosen = _WEIGHTED_LINE_MUTATIONS if kinds is None else _known(kinds, LINE_MUTATIONS)
    return _repeat(
        draw,
        list(lines),
        lambda out: _line_mutation(out, chosen, huge_sizes, deep_depths),
        min_mutations,
        max_mutations,
    )


@st.composite
def frame_lines(draw: st.DrawFn, lines: Sequence[bytes]) -> tuple[list[bytes], tuple[str, ...]]:
    """Independent zstd frames holding ``lines`` (each with its newline), valid but varied.

    Mostly one frame per line, as DSH writes them; sometimes several lines share a frame or a
    record line is split across two frames (a header line stays whole in the first frame).
    Compression level, checksums and content sizes vary.

    >>> from hypothesis import find
    >>> frames, _ = find(frame_lines([b"{}", b"[]"]), lambda found: len(found[0]) == 2)
    >>> import zstandard
    >>> [zstandard.ZstdDecompressor().decompressobj().decompress(f) for f in frames]
    [b'{}\\n', b'[]\\n']
    """
    level = draw(st.sampled_from([3, 1, -5, 9]))
    checksum = draw(st.booleans())
    content_size = draw(st.booleans())
    compressor = zstandard.ZstdCompressor(
        level=level, write_checksum=checksum, write_content_size=content_size
    )
    pieces = [line + b"\n" for line in lines]
    steps = [f"frames at level {level}, checksum={checksum}, content size={content_size}"]
    layout = draw(st.sampled_from(["one per line", "one per line", "grouped", "split"]))
    if layout == "grouped" and len(pieces) > 1:
        at = draw(st.integers(0, len(pieces) - 2))
        count = draw(st.integers(2, min(6, len(pieces) - at)))
        pieces[at : at + count] = [b"".join(pieces[at : at + count])]
        steps.append(f"lines {at + 1}..{at + count} in one frame")
    elif layout == "split" and len(pieces) > 1:
        at = draw(st.integers(1, len(pieces) - 1))
        if len(pieces[at]) > 1:
            cut = draw(st.integers(1, len(pieces[at]) - 1))
            pieces[at : at + 1] = [pieces[at][:cut], pieces[at][cut:]]
            steps.append(f"line {at + 1} split across two frames at byte {cut}")
    return [compressor.compress(piece) for piece in pieces], tuple(steps)


def zstd_bomb(size: int, *, line: bool = True, seq: int = 0) -> bytes:
    """One valid zstd frame that decompresses to ``size`` bytes but is tiny on disk.

    With ``line`` the content is a complete ``turn/end`` record line with this ``seq``, padded
    to ``size``; else ``size`` zero bytes.

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


@st.composite
def _frame_mutation(
    draw: st.DrawFn, frames: list[bytes], kinds: Sequence[str], bomb_sizes: Sequence[int]
) -> tuple[list[bytes], str]:
    kind = draw(st.sampled_from(kinds))
    out = list(frames)
    where = draw(st.integers(0, len(out)))
    index = draw(st.integers(0, len(out) - 1)) if out else 0
    if (not out or not out[index]) and kind in ("flip", "flip-header", "cut"):
        kind = "random-frame"  # these work on the bytes of an existing frame
    if not out and kind in ("drop", "duplicate", "swap"):
        kind = "random-frame"
    if kind in ("flip", "flip-header"):
        frame = out[index]
        end = min(len(frame), 14) if kind == "flip-header" else len(frame)
        at = draw(st.integers(0, end - 1))
        mask = draw(st.integers(1, 255))
        out[index] = frame[:at] + bytes([frame[at] ^ mask]) + frame[at + 1 :]
        return out, f"flip byte {at} of frame {index + 1} by {mask:#04x}"
    if kind == "cut":
        at = draw(st.integers(0, len(out[index]) - 1))
        out[index] = out[index][:at]
        return out, f"cut frame {index + 1} to {at} bytes"
    if kind == "drop":
        del out[index]
        return out, f"drop frame {index + 1}"
    if kind == "duplicate":
        out.insert(where, out[index])
        return out, f"copy frame {index + 1} to {where + 1}"
    if kind == "swap":
        other = draw(st.integers(0, len(out) - 1))
        out[index], out[other] = out[other], out[index]
        return out, f"swap frames {index + 1} and {other + 1}"
    if kind == "random-frame":
        inserted = draw(st.binary(min_size=1, max_size=64))
    elif kind == "bad-magic":
        inserted = ZSTD_MAGIC + draw(st.binary(max_size=64))
    elif kind == "skippable":
        payload = draw(st.binary(max_size=32))
        nibble = draw(st.integers(0, 15))
        magic = bytes([0x50 | nibble]) + _SKIPPABLE_MAGIC[1:]
        inserted = magic + len(payload).to_bytes(4, "little") + payload
    elif kind == "garbage-text-frame":
        junk = draw(st.one_of(st.sampled_from(GARBAGE_LINES), st.binary(max_size=48)))
        inserted = zstandard.ZstdCompressor().compress(junk + draw(st.sampled_from([b"\n", b""])))
    else:
        size = draw(st.sampled_from(bomb_sizes))
        inserted = zstd_bomb(size, line=draw(st.booleans()))
    out.insert(where, inserted)
    return out, f"insert {kind} ({len(inserted)} bytes) as frame {where + 1}"


@st.composite
def mutate_frames(
    draw: st.DrawFn,
    frames: Sequence[bytes],
    *,
    min_mutations: int = 1,
    max_mutations: int = 2,
    kinds: Sequence[str] | None = None,
    bomb_sizes: Sequence[int] = _BOMB_SIZES,
) -> tuple[list[bytes], tuple[str, ...]]:
    """Damaged copies of a list of zstd frames, with a description of each step.

    ``kinds`` limits the damage to some of :data:`FRAME_MUTATIONS` (default: all);
    ``bomb_sizes`` are the decompressed sizes of the zstd bombs it may insert.

    >>> from hypothesis import given, settings
    >>> frame = zstandard.ZstdCompressor().compress(b'{"type":"session"}\\n')
    >>> @settings(max_examples=20, deadline=None)
    ... @given(mutate_frames([frame, frame], bomb_sizes=[1000]))
    ... def test_frames_change(damaged):
    ...     frames, steps = damaged
    ...     assert steps and all(isinstance(f, bytes) for f in frames)
    >>> test_frames_change()
    """
    chosen = FRAME_MUTATIONS if kinds is None else _known(kinds, FRAME_MUTATIONS)
    return _repeat(
        draw,
        list(frames),
        lambda out: _frame_mutation(out, chosen, bomb_sizes),
        min_mutations,
        max_mutations,
    )


@st.composite
def _byte_mutation(draw: st.DrawFn, data: bytes) -> tuple[bytes, str]:
    kind = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "torn-append"]))
    at = draw(st.integers(0, len(data)))
    if kind == "truncate":
        return data[:at], f"truncate the file to {at} bytes"
    if kind == "flip" and data:
        at = min(at, len(data) - 1)
        mask = draw(st.integers(1, 255))
        return data[:at] + bytes([data[at] ^ mask]) + data[at + 1 :], f"flip byte {at}"
    if kind == "delete" and data:
        count = draw(st.integers(1, 64))
        return data[:at] + data[at + count :], f"delete {count} bytes at {at}"
    if kind == "torn-append":
        torn = draw(st.sampled_from([b'{"type":"turn/end","se', b"{", b'{"type":"x"', ZSTD_MAGIC]))
        return data + torn, f"append torn write {torn!r}"
    inserted = draw(st.binary(min_size=1, max_size=32))
    return data[:at] + inserted + data[at:], f"insert {inserted!r} at byte {at}"


@st.composite
def mutate_bytes(
    draw: st.DrawFn, data: bytes, *, min_mutations: int = 1, max_mutations: int = 2
) -> tuple[bytes, tuple[str, ...]]:
    """Damaged copies of a file's bytes: truncated, flipped, with bytes inserted or deleted.

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=20, deadline=None)
    ... @given(mutate_bytes(b"0123456789", max_mutations=1))
    ... def test_one_step(damaged):
    ...     assert len(damaged[1]) == 1
    >>> test_one_step()
    """
    return _repeat(draw, data, _byte_mutation, min_mutations, max_mutations)


@dataclass(frozen=True)
class MutatedLog:
    """A damaged log file: the valid log it was made from, its bytes on disk, and what was done."""

    log: LogRecords
    """The valid log before the damage."""
    compress: bool
    """Whether :attr:`data` is a ``session.jsonl.zstd`` file (else ``session.jsonl``)."""
    data: bytes
    """The file's bytes after the damage."""
    mutations: tuple[str, ...]
    """One description per step, in the order they were applied."""

    @property
    def session_id(self) -> str:
        """The id in the header of the valid log (the damage may have changed it in the file)."""
        session_id: str = self.log["header"]["id"]
        return session_id

    def path(self, root: str | os.PathLike[str]) -> Path:
        """Where DSH would keep the log of the valid session below ``root``."""
        return log_path(root, self.log["header"], compress=self.compress)

    def write(self, root: str | os.PathLike[str]) -> Path:
        """Write :attr:`data` at :meth:`path` and return the path."""
        path = self.path(root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.data)
        return path

    def __repr__(self) -> str:
        # Falsifying examples print this; a huge file must not flood the report.
        head = self.data[:160]
        more = f"… ({len(self.data)} bytes)" if len(self.data) > len(head) else ""
        return (
            f"MutatedLog(id={self.session_id!r}, compress={self.compress}, "
            f"mutations={list(self.mutations)!r}, data={head!r}{more})"
        )


@st.composite
def mutated_logs(
    draw: st.DrawFn,
    logs: st.SearchStrategy[LogRecords] | None = None,
    *,
    compress: bool | None = None,
    layers: Iterable[str] = ("lines", "frames", "bytes"),
    min_mutations: int = 1,
    max_mutations: int = 3,
    line_kinds: Sequence[str] | None = None,
    frame_kinds: Sequence[str] | None = None,
    huge_sizes: Sequence[int] = _HUGE_SIZES,
    deep_depths: Sequence[int] = _DEEP_DEPTHS,
    bomb_sizes: Sequence[int] = _BOMB_SIZES,
) -> MutatedLog:
    """Valid logs damaged in their on-disk form, plain or zstd (``compress=None``: either).

    ``layers`` picks which of ``"lines"``, ``"frames"`` (zstd only) and ``"bytes"`` may be
    damaged; between ``min_mutations`` and ``max_mutations`` steps are spread over them. With
    ``min_mutations=0`` some logs stay intact. ``logs`` defaults to :func:`session_logs` with
    at most two turns. ``line_kinds`` and ``frame_kinds`` go to :func:`mutate_lines` and
    :func:`mutate_frames` as their ``kinds``.

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=10, deadline=None)
    ... @given(mutated_logs(compress=True, layers=["frames"], bomb_sizes=[1000]))
    ... def test_zstd_frames_only(mutated):
    ...     assert mutated.compress and all("frame" in step for step in mutated.mutations)
    >>> test_zstd_frames_only()
    """
    log = draw(session_logs(max_turns=2) if logs is None else logs)
    packed = draw(st.booleans()) if compress is None else compress
    chosen = [layer for layer in layers if packed or layer != "frames"]
    unknown = set(chosen) - {"lines", "frames", "bytes"}
    if unknown:
        raise ValueError(f"unknown layers {sorted(unknown)}")
    total = draw(st.integers(min_mutations, max(min_mutations, max_mutations)))
    counts = dict.fromkeys(chosen, 0)
    for _ in range(total if chosen else 0):
        counts[draw(st.sampled_from(chosen))] += 1
    steps: list[str] = []
    lines = log_lines(log)
    if counts.get("lines"):
        lines, done = draw(
            mutate_lines(
                lines,
                min_mutations=counts["lines"],
                max_mutations=counts["lines"],
                kinds=line_kinds,
                huge_sizes=huge_sizes,
                deep_depths=deep_depths,
            )
        )
        steps += done
    if packed:
        frames, layout = draw(frame_lines(lines))
        steps += layout
        if counts.get("frames"):
            frames, done = draw(
                mutate_frames(
                    frames,
                    min_mutations=counts["frames"],
                    max_mutations=counts["frames"],
                    kinds=frame_kinds,
                    bomb_sizes=bomb_sizes,
                )
            )
            steps += done
        data = b"".join(frames)
    else:
        data = b"".join(line + b"\n" for line in lines)
    if counts.get("bytes"):
        data, done = draw(
            mutate_bytes(data, min_mutations=counts["bytes"], max_mutations=counts["bytes"])
        )
        steps += done
    return MutatedLog(log, packed, data, tuple(steps))


def mutated_stores(max_sessions: int = 3, **options: Any) -> st.SearchStrategy[list[MutatedLog]]:
    """Lists of :func:`mutated_logs` with distinct session ids, for :func:`write_mutated_store`.

    ``options`` are passed to :func:`mutated_logs`; ``min_mutations`` defaults to 0 here, so a
    store usually mixes damaged and intact logs.

    Example::

        @given(mutated_stores())
        def test_listing_survives(tmp_path_factory, mutated):
            root = tmp_path_factory.mktemp("store")
            write_mutated_store(root, mutated)
            my_list_sessions(root)  # must not raise
    """
    options.setdefault("min_mutations", 0)
    return st.lists(
        mutated_logs(**options),
        min_size=1,
        max_size=max_sessions,
        unique_by=lambda mutated: mutated.session_id,
    )


def write_mutated_store(root: str | os.PathLike[str], logs: Iterable[MutatedLog]) -> list[Path]:
    """Write each damaged log where DSH would keep its valid original; returns the paths.

    Two logs of the same session (same id and compression) raise ``ValueError``.

    >>> import tempfile
    >>> log = {"header": {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0},
    ...        "events": []}
    >>> with tempfile.TemporaryDirectory() as root:
    ...     [p.name for p in write_mutated_store(root, [MutatedLog(log, False, b"{", ())])]
    ['session.jsonl']
    """
    written: list[Path] = []
    for mutated in logs:
        path = mutated.path(root)
        if path in written:
            raise ValueError(f"two logs share the path {path}")
        written.append(mutated.write(root))
    return written
