"""Stage 6: cut the largest texts head/tail with an exact omission notice
(docs/snapshot.md §Cut)."""

from __future__ import annotations

import heapq

import msgspec

from sessionref.codecs.jsstring import utf8_encode
from sessionref.errors import BUDGET_EXCEEDED, SessionReferenceError
from sessionref.pipeline.messages import SourceData, Turn
from sessionref.pipeline.retain_budget import Retained, SizedUnit

_BOM = b"\xef\xbb\xbf"


class Fitted(msgspec.Struct, frozen=True):
    """A source that fits its budget: the data object to serialize and what was left out."""

    data: SourceData
    compacted: bool
    original_messages: int
    omitted_messages: int
    omitted_bytes: int


def _notice(omitted: int) -> str:
    return f"\n[… omitted {omitted} UTF-8 bytes …]"


def _head_end(data: bytes, end: int) -> int:
    """``end`` moved back so ``data[:end]`` does not end inside a UTF-8 sequence.

    >>> _head_end("aé".encode(), 2)
    1
    """
    start = end
    while start > 0 and start > end - 4 and data[start - 1] & 0xC0 == 0x80:
        start -= 1
    if start == 0 or start <= end - 4:
        return end
    lead = data[start - 1]
    width = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    return end if start - 1 + width <= end else start - 1


def _tail_start(data: bytes, start: int) -> int:
    """``start`` moved forward past continuation bytes, to where a character begins.

    >>> _tail_start("éa".encode(), 1)
    2
    """
    while start < len(data) and data[start] & 0xC0 == 0x80:
        start += 1
    return start


def _bounds(data: bytes, r: int) -> tuple[int, int]:
    """Where the head (``ceil(r/2)`` bytes) ends and the tail (``floor(r/2)`` bytes) starts.

    >>> _bounds("aébc".encode(), 4)
    (1, 3)
    """
    tail_bytes = r // 2
    tail_start = _tail_start(data, len(data) - tail_bytes) if tail_bytes else len(data)
    return _head_end(data, (r + 1) // 2), tail_start


def _shown_length(data: bytes, start: int, end: int) -> int:
    """Byte length of ``data[start:end]`` once decoded: a leading BOM is dropped."""
    return end - start - (3 if end - start >= 3 and data.startswith(_BOM, start) else 0)


def cut_text(text: str, limit: int) -> tuple[str, int]:
    """Keep a head and a tail of ``text`` and say how many bytes are gone, within ``limit``.

    Returns the new text and the omitted byte count. ``limit`` must be below the text's byte
    length: a text that fits needs no cut.

    >>> cut_text("abcdefghij" * 10, 40)
    ('abcdhij\\n[… omitted 93 UTF-8 bytes …]', 93)
    >>> cut_text("abc", 2)
    ('', 3)
    """
    data = utf8_encode(text)
    total = len(data)
    if not 0 <= limit < total:
        raise ValueError(f"a cut of {total} bytes needs a limit in [0, {total})")

    def fits(r: int) -> bool:  # lengths only: a probe copies nothing
        head_end, tail_start = _bounds(data, r)
        omitted = tail_start - head_end
        shown = _shown_length(data, 0, head_end) + _shown_length(data, tail_start, total)
        return shown + len(_notice(omitted).encode()) <= limit

    best = -1
    lo, hi = 0, limit
    while lo <= hi:
        r = (lo + hi) // 2
        if fits(r):
            best, lo = r, r + 1
        else:
            hi = r - 1
    if best < 0:
        return "", total
    head_end, tail_start = _bounds(data, best)
    pieces = (data[:head_end], data[tail_start:])
    shown = "".join(piece.decode("utf-8").removeprefix("\ufeff") for piece in pieces)
    return shown + _notice(tail_start - head_end), tail_start - head_end


def _budget_exceeded() -> SessionReferenceError:
    """The error of a source that does not fit even cut, worded as the package words it (the
    command line words its own, naming the session and the budget).

    >>> print(_budget_exceeded())
    referenced session snapshot cannot fit the configured byte budget
    """
    return SessionReferenceError(
        "referenced session snapshot cannot fit the configured byte budget", BUDGET_EXCEEDED
    )


def truncate(retained: Retained, max_bytes: int) -> Fitted:
    """Cut the unit with the largest text (earliest on a tie) until the data object fits.

    Every cut starts from the unit's original text; a cut that cannot shrink the text, or
    nothing left to cut, raises BUDGET_EXCEEDED. ``retained`` is left as it was.

    >>> from sessionref.pipeline.retain_budget import retain_budget
    >>> from sessionref.pipeline.messages import Unit
    >>> kept = retain_budget([Unit("user", "x" * 200)], SourceData("s", "s", None, 0), 160)
    >>> fitted = truncate(kept, 160)
    >>> fitted.omitted_bytes, len(kept.units[0].text)
    (181, 200)
    """
    shown = list(retained.units)
    size = retained.size
    heap = [(-unit.text_bytes, index) for index, unit in enumerate(shown)]
    heapq.heapify(heap)
    while size > max_bytes:
        if not heap or heap[0][0] == 0:
            raise _budget_exceeded()
        _, index = heapq.heappop(heap)
        unit = shown[index]
        target = max(0, unit.text_bytes - (size - max_bytes))
        text, omitted = cut_text(unit.unit.shown_text(), target)
        if text == unit.shown_text():
            raise _budget_exceeded()
        shown[index] = SizedUnit.of(unit.unit, text, omitted)
        size += shown[index].json_bytes - unit.json_bytes
        heapq.heappush(heap, (-shown[index].text_bytes, index))
    conversation = [Turn(unit.unit.role, unit.shown_text()) for unit in shown]
    return Fitted(
        data=msgspec.structs.replace(retained.source, conversation=conversation),
        compacted=retained.compacted,
        original_messages=retained.original_messages,
        omitted_messages=retained.omitted_messages,
        omitted_bytes=retained.dropped_bytes + sum(unit.omitted_bytes for unit in shown),
    )
