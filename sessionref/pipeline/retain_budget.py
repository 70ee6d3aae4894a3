"""Stage 5: size every unit once and drop the oldest until the source fits (SPEC §4.1)."""

from __future__ import annotations

from collections import deque
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


class _Window:
    """The units kept so far, oldest first: ``settled`` ones that will never be dropped
    (checkpoints older than every droppable unit), then the ``open`` ones, whose first is
    the oldest droppable unit. Keeps the data object's byte length as a running sum."""

    def __init__(self, opening: bytes) -> None:
        self.settled: list[SizedUnit] = []
        self.open: deque[SizedUnit] = deque()
        self.fixed = len(opening) + 2
        self.json_bytes = 0
        self.count = 0

    def size(self) -> int:
        """The data object's byte length with the units kept now."""
        return self.fixed + self.json_bytes + max(self.count - 1, 0)

    def add(self, unit: SizedUnit) -> None:
        """Keep ``unit`` as the newest."""
        if self.open or not unit.unit.checkpoint:
            self.open.append(unit)
        else:
            self.settled.append(unit)
        self.json_bytes += len(unit.json)
        self.count += 1

    def drop_oldest(self) -> SizedUnit:
        """Remove the oldest droppable unit; checkpoints it uncovers settle."""
        unit = self.open.popleft()
        self.json_bytes -= len(unit.json)
        self.count -= 1
        while self.open and self.open[0].unit.checkpoint:
            self.settled.append(self.open.popleft())
        return unit


def retain_budget(units: Iterable[Unit], fields: SourceFields, max_bytes: int) -> Retained:
    """Drop the oldest units that are neither checkpoints nor the last until the data fits.

    One pass, memory bounded by the budget: while the units kept so far are over it, the
    oldest droppable one goes, because every later unit only adds bytes, so the full
    snapshot would drop it too. Each unit is serialized once; sizes move by running sums.

    >>> fields = SourceFields("s", "s", None, 3)
    >>> kept = retain_budget([Unit("user", "a" * 50), Unit("assistant", "b")], fields, 120)
    >>> [u.text for u in kept.units], kept.omitted_messages, kept.dropped_bytes, kept.size
    (['b'], 1, 50, 112)
    """
    opening = tag_safe_json(fields)[:-1] + b',"conversation":['
    window = _Window(opening)
    original = dropped = dropped_bytes = 0
    compacted = False
    for unit in units:
        newest = SizedUnit.of(unit)
        window.add(newest)
        original += 1
        compacted = compacted or unit.checkpoint
        while window.size() > max_bytes and window.open and window.open[0] is not newest:
            dropped += 1
            dropped_bytes += window.drop_oldest().text_bytes
    return Retained(
        fields=fields,
        opening=opening,
        units=[*window.settled, *window.open],
        size=window.size(),
        original_messages=original,
        omitted_messages=dropped,
        dropped_bytes=dropped_bytes,
        compacted=compacted,
    )
