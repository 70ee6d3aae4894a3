"""Stage 5: size every unit once and drop the oldest until the source fits (SPEC §4.1)."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from sessionref.codecs.jsjson import tag_safe_json
from sessionref.codecs.jsstring import utf8_length
from sessionref.pipeline.messages import Unit


class SourceFields(msgspec.Struct, frozen=True, rename="camel"):
    """The fixed fields of a source's data object, in wire order."""

    session_id: str
    label: str
    cwd: str | None
    captured_through_seq: int | None


class SizedUnit(msgspec.Struct):
    """A unit with its current text, that text's byte length and its serialized form."""

    unit: Unit
    text: str
    text_bytes: int
    json: bytes
    omitted_bytes: int = 0

    @classmethod
    def of(cls, unit: Unit, text: str | None = None, omitted_bytes: int = 0) -> SizedUnit:
        """Size ``unit`` showing ``text`` (its own text by default).

        >>> SizedUnit.of(Unit("user", "<é")).json
        b'{"role":"user","text":"\\\\u003c\\xc3\\xa9"}'
        """
        shown = unit.text if text is None else text
        json = b'{"role":"' + unit.role.encode() + b'","text":' + tag_safe_json(shown) + b"}"
        return cls(unit, shown, utf8_length(shown), json, omitted_bytes)


class Retained(msgspec.Struct):
    """A source after the drop phase; ``size`` is its data object's exact byte length."""

    fields: SourceFields
    opening: bytes
    units: list[SizedUnit]
    size: int
    original_messages: int
    omitted_messages: int
    dropped_bytes: int
    compacted: bool

    def data_json(self) -> bytes:
        """The tag-safe JSON of the data object, built from the pieces already sized."""
        return self.opening + b",".join(unit.json for unit in self.units) + b"]}"


def data_size(opening: bytes, units: list[SizedUnit]) -> int:
    """Byte length of ``opening + ",".join(units) + "]}"`` without building it.

    >>> data_size(b"{[", [SizedUnit.of(Unit("user", "a"))] * 2)
    57
    """
    return len(opening) + sum(len(u.json) for u in units) + max(len(units) - 1, 0) + 2


def retain_budget(units: Iterable[Unit], fields: SourceFields, max_bytes: int) -> Retained:
    """Drop the oldest units that are neither checkpoints nor the last until the data fits.

    Each unit is serialized once; the size afterwards moves by running sums, never by
    serializing the snapshot again.

    >>> fields = SourceFields("s", "s", None, 3)
    >>> kept = retain_budget([Unit("user", "a" * 50), Unit("assistant", "b")], fields, 120)
    >>> [u.text for u in kept.units], kept.omitted_messages, kept.dropped_bytes, kept.size
    (['b'], 1, 50, 112)
    """
    sized = [SizedUnit.of(unit) for unit in units]
    opening = tag_safe_json(fields)[:-1] + b',"conversation":['
    size = data_size(opening, sized)
    last = len(sized) - 1
    kept: list[SizedUnit] = []
    dropped = dropped_bytes = 0
    for index, unit in enumerate(sized):
        if size > max_bytes and index != last and not unit.unit.checkpoint:
            size -= len(unit.json) + (1 if len(sized) - dropped > 1 else 0)
            dropped += 1
            dropped_bytes += unit.text_bytes
        else:
            kept.append(unit)
    return Retained(
        fields=fields,
        opening=opening,
        units=kept,
        size=size,
        original_messages=len(sized),
        omitted_messages=dropped,
        dropped_bytes=dropped_bytes,
        compacted=any(item.unit.checkpoint for item in sized),
    )
