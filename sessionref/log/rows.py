"""Packed chunk rows: the strict shape the harness requires before it expands one (docs/format.md).

A row is ``{type, seq0, time0, data}`` exactly; ``data`` is ``{turn, step, index, dt, texts}``
(``{turn, step, index, id, name?, dt, args}`` for tool calls) exactly, with numbers for turn,
step and index, a non-empty array of strings for the members, ``dt`` an array of safe
integers one shorter than the members, and every member's seq and time safe integers. A row
that breaks any of this is an unparsable line to the harness.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Final

import msgspec

from sessionref.log.jsvalue import MAX_SAFE_INTEGER, has_exact_keys, is_number, is_safe_int
from sessionref.log.structs import PACKED_CHUNK_TYPES, LogRecord

GAP_BOUND: Final = 1 << 40
"""The fast decoder takes member time gaps up to this (some 35 years in milliseconds), so
that the member times of a row it takes are surely safe while ``|time0| + gaps * GAP_BOUND``
is; a larger gap is looked at again with :func:`check_row_value`."""
_Gap = Annotated[int, msgspec.Meta(ge=-GAP_BOUND, le=GAP_BOUND)]


class MalformedRow(ValueError):
    """A packed row the harness refuses to expand."""


class _TextRow(
    msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True, rename={"members": "texts"}
):
    turn: int | float
    step: int | float
    index: int | float
    dt: list[_Gap]
    members: list[str]


class _ToolRow(
    msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True, rename={"members": "args"}
):
    turn: int | float
    step: int | float
    index: int | float
    id: str
    dt: list[_Gap]
    members: list[str]
    name: str | msgspec.UnsetType = msgspec.UNSET


_TEXT_ROW: Final = msgspec.json.Decoder(_TextRow).decode
_ROW_DECODERS: Final[dict[str, Callable[[msgspec.Raw], _TextRow | _ToolRow]]] = {
    "text-chunks": _TEXT_ROW,
    "reasoning-chunks": _TEXT_ROW,
    "tool-call-chunks": msgspec.json.Decoder(_ToolRow).decode,
}
"""The fast decoder of each row type's data; a row's members are ``members`` in both."""
_NO_EVENT_FIELDS: Final = (msgspec.UNSET,) * 5
"""``(seq, time, surfaceOp, sourceEventSeqs, ignorable)`` of a row: none of them."""


def _check_members(members: Sequence[object], dt: Sequence[Any], seq0: int, time0: int) -> None:
    """Members non-empty, one ``dt`` fewer than members, member seqs and times safe."""
    if not members:
        raise MalformedRow("members must be a non-empty string array")
    if len(dt) != len(members) - 1:
        raise MalformedRow(f"dt length {len(dt)} does not match {len(members)} members")
    if seq0 + len(members) - 1 > MAX_SAFE_INTEGER:
        raise MalformedRow("member seqs must stay safe integers")
    if abs(time0) + sum(map(abs, dt)) <= MAX_SAFE_INTEGER:
        return
    time = time0
    for gap in dt:
        time += int(gap)
        if abs(time) > MAX_SAFE_INTEGER:
            raise MalformedRow("member times must stay safe integers")


def check_fast_row(record: LogRecord) -> int | None:
    """The number of members of a well-formed row decoded by the fast decoder; ``None`` means
    "look again with :func:`check_row_value`", which says exactly what is wrong, if anything
    (so does a row whose member times come near the safe-integer limit).

    >>> data = msgspec.Raw(b'{"turn":1,"step":1,"index":0,"dt":[3],"texts":["a","b"]}')
    >>> check_fast_row(LogRecord("text-chunks", seq0=4, time0=9, data=data))
    2
    >>> check_fast_row(LogRecord("text-chunks", seq0=4, time0=9, data=data, ignorable=True))
    """
    seq0, time0 = record.seq0, record.time0
    if (
        seq0 is msgspec.UNSET
        or time0 is msgspec.UNSET
        or (record.seq, record.time, record.surface_op, record.source_event_seqs, record.ignorable)
        != _NO_EVENT_FIELDS
    ):
        return None
    try:  # the data of a row without any is an empty Raw, which does not decode
        row = _ROW_DECODERS[record.type](record.data)
    except msgspec.DecodeError:  # a ValidationError is a DecodeError
        return None
    gaps = len(row.dt)  # _check_members, inline: one dt fewer, seqs and times safe
    if (
        len(row.members) == gaps + 1
        and seq0 + gaps <= MAX_SAFE_INTEGER
        and abs(time0) + gaps * GAP_BOUND <= MAX_SAFE_INTEGER
    ):
        return gaps + 1
    return None


def _plain_gaps(dt: list[Any]) -> bool:
    """Whether ``dt`` holds only ints, all safe: the common case, checked in C.

    >>> _plain_gaps([1, 2]), _plain_gaps([1.0]), _plain_gaps([2**53]), _plain_gaps([])
    (True, False, False, True)
    """
    return set(map(type, dt)) <= {int} and (
        not dt or (min(dt) >= -MAX_SAFE_INTEGER and max(dt) <= MAX_SAFE_INTEGER)
    )


def check_row_value(value: dict[str, Any]) -> int:
    """The number of members of ``value``, a parsed row line; raises :class:`MalformedRow`
    unless it is a well-formed row.

    >>> row = {"type": "text-chunks", "seq0": 1, "time0": 5.0,
    ...        "data": {"turn": 1, "step": 1, "index": 0, "dt": [2.0], "texts": ["a", "b"]}}
    >>> check_row_value(row)
    2
    >>> try:
    ...     check_row_value({**row, "data": {**row["data"], "dt": [2, 1]}})
    ... except MalformedRow as exc:
    ...     print(exc)
    dt length 2 does not match 2 members
    """
    tag = value["type"]
    if not has_exact_keys(value, ("type", "seq0", "time0", "data")):
        raise MalformedRow("envelope must be exactly {type, seq0, time0, data}")
    if not is_safe_int(value["seq0"], 0):
        raise MalformedRow("seq0 must be a non-negative safe integer")
    if not is_safe_int(value["time0"]):
        raise MalformedRow("time0 must be a safe integer")
    data = value["data"]
    if type(data) is not dict:
        raise MalformedRow("data must be an object")
    field = PACKED_CHUNK_TYPES[tag][1]
    if tag == "tool-call-chunks":
        keys = ("turn", "step", "index", "id", "dt", "args")
        if not has_exact_keys(data, keys, ("name",)):
            raise MalformedRow("data must be exactly {turn, step, index, id, name?, dt, args}")
        if type(data["id"]) is not str or type(data.get("name", "")) is not str:
            raise MalformedRow("id (and name when present) must be strings")
    elif not has_exact_keys(data, ("turn", "step", "index", "dt", "texts")):
        raise MalformedRow("data must be exactly {turn, step, index, dt, texts}")
    if not all(is_number(data[key]) for key in ("turn", "step", "index")):
        raise MalformedRow("turn/step/index must be numbers")
    members, dt = data[field], data["dt"]
    if type(members) is not list or not set(map(type, members)) <= {str}:
        raise MalformedRow(f"{field} must be a non-empty string array")
    if type(dt) is not list or not (_plain_gaps(dt) or all(map(is_safe_int, dt))):
        raise MalformedRow("dt must be an array of safe integers")
    _check_members(members, dt, int(value["seq0"]), int(value["time0"]))
    return len(members)
