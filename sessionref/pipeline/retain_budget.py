"""Stage 5: measure every unit once and drop the oldest until the source fits
(docs/snapshot.md §Drop).

Only byte lengths are computed here; the JSON itself is built once, by stage 7.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Final

import msgspec

from sessionref.codecs.jsjson import tag_safe_json, tag_safe_json_length
from sessionref.codecs.jsstring import utf8_length
from sessionref.pipeline.messages import RawText, SourceData, Turn, Unit

_TURN_FRAME: Final = {
    role: len(tag_safe_json(Turn(role, ""))) - tag_safe_json_length("")
    for role in ("user", "assistant")
}


class SizedUnit(msgspec.Struct, frozen=True):
    """A unit showing ``text`` (its own, or a cut of it), with the byte lengths of that
    text and of the conversation item that will show it. A :class:`RawText` comes measured.

    >>> sized = SizedUnit.of(Unit("user", "<é"))
    >>> sized.text_bytes, sized.json_bytes, len(tag_safe_json(Turn("user", "<é")))
    (3, 33, 33)
    """

    unit: Unit
    text: str | RawText
    text_bytes: int
    json_bytes: int
    omitted_bytes: int = 0

    @classmethod
    def of(cls, unit: Unit, text: str | None = None, omitted_bytes: int = 0) -> SizedUnit:
        """Measure ``unit`` showing ``text`` (its own text by default)."""
        shown = unit.text if text is None else text
        if type(shown) is RawText:
            json_bytes = _TURN_FRAME[unit.role] + shown.json_bytes
            return cls(unit, shown, shown.text_bytes, json_bytes, omitted_bytes)
        json_bytes = _TURN_FRAME[unit.role] + tag_safe_json_length(shown)  # type: ignore[arg-type]
        return cls(unit, shown, utf8_length(shown), json_bytes, omitted_bytes)  # type: ignore[arg-type]

    def shown_text(self) -> str:
        """The text this unit shows, built if it is still raw."""
        return self.text if type(self.text) is str else self.text.build()  # type: ignore[union-attr]


class Retained(msgspec.Struct, frozen=True):
    """A source after the drop phase; ``size`` is its data object's exact byte length."""

    source: SourceData
    units: tuple[SizedUnit, ...]
    size: int
    original_messages: int
    omitted_messages: int
    dropped_bytes: int
    compacted: bool


class _Window:
    """The units kept so far, oldest first: ``settled`` ones that will never be dropped
    (checkpoints older than every droppable unit), then the ``open`` ones, whose first is
    the oldest droppable unit. Keeps the data object's byte length as a running sum: the
    ``frame`` (the object with an empty conversation), the items, a comma between two."""

    def __init__(self, frame: int) -> None:
        self.settled: list[SizedUnit] = []
        self.open: deque[SizedUnit] = deque()
        self.frame = frame
        self.json_bytes = 0
        self.count = 0

    def size(self) -> int:
        """The data object's byte length with the units kept now."""
        return self.frame + self.json_bytes + max(self.count - 1, 0)

    def add(self, unit: SizedUnit) -> None:
        """Keep ``unit`` as the newest."""
        if self.open or not unit.unit.checkpoint:
            self.open.append(unit)
        else:
            self.settled.append(unit)
        self.json_bytes += unit.json_bytes
        self.count += 1

    def drop_oldest(self) -> SizedUnit:
        """Remove the oldest droppable unit; checkpoints it uncovers settle."""
        unit = self.open.popleft()
        self.json_bytes -= unit.json_bytes
        self.count -= 1
        while self.open and self.open[0].unit.checkpoint:
            self.settled.append(self.open.popleft())
        return unit


def retain_budget(units: Iterable[Unit], source: SourceData, max_bytes: int) -> Retained:
    """Drop the oldest units that are neither checkpoints nor the last until the data fits.

    One pass, memory bounded by the budget: while the units kept so far are over it, the
    oldest droppable one goes, because every later unit only adds bytes, so the full
    snapshot would drop it too. Each unit is measured once; sizes move by running sums.
    ``source`` holds the data object's fixed fields (its conversation is not read).

    >>> source = SourceData("s", "s", None, 3)
    >>> kept = retain_budget([Unit("user", "a" * 50), Unit("assistant", "b")], source, 120)
    >>> [u.text for u in kept.units], kept.omitted_messages, kept.dropped_bytes, kept.size
    (['b'], 1, 50, 112)
    """
    window = _Window(len(tag_safe_json(msgspec.structs.replace(source, conversation=[]))))
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
        source=source,
        units=(*window.settled, *window.open),
        size=window.size(),
        original_messages=original,
        omitted_messages=dropped,
        dropped_bytes=dropped_bytes,
        compacted=compacted,
    )
