"""Damage to the JSON lines of a log: the first layer of :mod:`sessionref.testing.mutations`."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any, Final

from hypothesis import strategies as st

from sessionref.log.writer import render_batch, render_header
from sessionref.testing._js import js_stringify
from sessionref.testing.mutations.paths import (
    MAX_EDIT_DEPTH,
    applicable,
    get_path,
    has_path,
    json_depth,
    json_paths,
    parent_of,
    remove_path,
    set_path,
)
from sessionref.testing.mutations.values import (
    _DEEP_DEPTHS,
    _HUGE_SIZES,
    _WEIGHTED_LINE_MUTATIONS,
    BAD_ESCAPES,
    DEEP_SHAPES,
    GARBAGE_LINES,
    HEADER_FIELDS,
    HOSTILE_STRINGS,
    INVALID_UTF8,
    LINE_MUTATIONS,
    RECORD_FIELDS,
    WRONG_VALUES,
    JsonPath,
    deep_json,
    known_kinds,
    repeat_steps,
)
from sessionref.testing.store import LogRecords

__all__ = ["json_paths", "log_lines", "mutate_lines", "next_seq"]

_PLACEHOLDER: Final = "\x00sessionref-placeholder\x00"


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


def _parse(line: bytes) -> Any:
    """A line's JSON value to edit, or ``None`` if it does not parse or nests too deeply to copy."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if json_depth(value) <= MAX_EDIT_DEPTH else None


def _render(value: Any, splice: bytes | None = None) -> bytes:
    """``JSON.stringify`` bytes of ``value``; ``splice`` replaces the placeholder string."""
    out = js_stringify(value).encode("utf-8")
    if splice is not None:
        out = out.replace(js_stringify(_PLACEHOLDER).encode("utf-8"), splice, 1)
    return out


@st.composite
def _field_path(draw: st.DrawFn, record: Any, header: bool) -> JsonPath | None:
    """A path to damage: a named field (present or not) or any node of the record."""
    named = [p for p in (HEADER_FIELDS if header else RECORD_FIELDS) if applicable(record, p)]
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
            out[index] = _render(set_path(record, path, _PLACEHOLDER), deep)
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
            out[index] = _render(set_path(record, path, text))
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
        strings = [p for p in json_paths(record) if isinstance(get_path(record, p), str)]
        echoed = (("id",), ("type",), ("cwd",)) if index == 0 else (("type",),)
        named = [p for p in echoed if applicable(record, p)]
        # Half the time a field that readers echo in their errors.
        pools = [st.sampled_from(pool) for pool in (named, strings) if pool]
        path = draw(st.one_of(pools)) if pools else path
        hostile = draw(st.sampled_from(HOSTILE_STRINGS))
        out[index] = _render(set_path(record, path, hostile))
        return out, f"set {path} of line {index + 1} to {hostile!r}"
    if kind == "remove-field":
        if parent_of(record, path) is None or not has_path(record, path):
            return out, f"remove missing {path} of line {index + 1} (no-op)"
        out[index] = _render(remove_path(record, path))
        return out, f"remove {path} of line {index + 1}"
    if kind == "wrong-seq":
        seq_paths = [p for p in (("seq",), ("seq0",)) if has_path(record, p)]
        if seq_paths:
            path = seq_paths[0]
            current = parent_of(record, path)[path[-1]]
            shift = draw(st.sampled_from([-2, -1, 1, 2]))
            moved = current + shift if _is_int(current) else shift
            out[index] = _render(set_path(record, path, moved))
            return out, f"set {path} of line {index + 1} to {moved!r}"
    value = draw(st.sampled_from(WRONG_VALUES))
    out[index] = _render(set_path(record, path, copy.deepcopy(value)))
    return out, f"set {path} of line {index + 1} to {value!r}"


def _holds(line: bytes, path: JsonPath, header: bool, present: bool) -> bool:
    """Whether a line (the header or a record) can take ``path``, or has it if ``present``."""
    if path not in (HEADER_FIELDS if header else RECORD_FIELDS) or not line.startswith(b"{"):
        return False
    record = _parse(line)
    if record is None:
        return False
    return has_path(record, path) if present else applicable(record, path)


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
    chosen = _WEIGHTED_LINE_MUTATIONS if kinds is None else known_kinds(kinds, LINE_MUTATIONS)
    return repeat_steps(
        draw,
        list(lines),
        lambda out: _line_mutation(out, chosen, huge_sizes, deep_depths),
        min_mutations,
        max_mutations,
    )
