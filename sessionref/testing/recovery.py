"""A reference of how the harness recovers the events of a log file, damaged tail and all.

Modelled on the real stack's observed behaviour (docs/format.md §Recovery),
independently of the library: the harness scans the record lines after the header one by one.
The first line that does not parse, or whose seq is not the next one, ends the readable prefix,
unless a later line holds a ``turn/end``: then the log is corrupt. A final piece without ``\\n``
is a torn write and is dropped. In a zstd log every complete frame must decode, end on a line
boundary and hold only good records; an incomplete last frame is decoded as far as it goes, and
its complete lines are scanned like those of a plain log.

Only the recovery is modelled here: the validation of the recovered events (envelopes, message
shapes, the surface fold) is :mod:`sessionref.testing.reference`'s.

>>> data = (b'{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}\\n'
...         b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\\n'
...         b'garbage\\n'
...         b'{"type":"turn/start","seq":1,"time":1,"data":{"turn":2}}\\n'
...         b'{"type":"turn/end","se')
>>> [e["seq"] for e in recovered_events(data, compress=False)]
[0]
"""

from __future__ import annotations

import json
from typing import Any, Final

import zstandard

from sessionref.testing.reference import expand_row, migrate

__all__ = ["recovered_events", "zstd_frame_spans"]

Event = dict[str, Any]

_MAGIC: Final = 0xFD2FB528


def _parse(line: bytes) -> Any:
    """``JSON.parse`` of a line read with U+FFFD for invalid UTF-8; ``ValueError`` if not JSON
    or nested too deeply to parse here (the reader cannot parse such a line either).

    >>> _parse(b'{"seq": 0}')
    {'seq': 0}
    >>> _parse(b"[" * 100_000 + b"]" * 100_000)
    Traceback (most recent call last):
    ValueError: nested too deeply to parse
    """

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    try:
        return json.loads(line.decode("utf-8", "replace"), parse_constant=refuse)
    except RecursionError:
        raise ValueError("nested too deeply to parse") from None


_PAYLOADS: Final = {"text-chunks": "texts", "reasoning-chunks": "texts", "tool-call-chunks": "args"}
_SAFE: Final = 2**53 - 1


def _safe_int(value: object, low: int = -_SAFE) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and value == int(value)
        and low <= value <= _SAFE
    )


def _row_ok(row: dict[str, Any]) -> bool:
    """Whether a packed row has exactly the shape the harness accepts
    (docs/format.md §Packed rows)."""
    payload = _PAYLOADS[row["type"]]
    data = row.get("data")
    if set(row) != {"type", "seq0", "time0", "data"} or not isinstance(data, dict):
        return False
    keys = {"turn", "step", "index", "dt", payload}
    allowed = [keys | {"id"}, keys | {"id", "name"}] if payload == "args" else [keys]
    members, dt = data.get(payload), data.get("dt")
    return (
        set(data) in allowed
        and _safe_int(row["seq0"], 0)
        and _safe_int(row["time0"])
        and all(isinstance(data[k], (int, float)) for k in ("turn", "step", "index"))
        and isinstance(members, list)
        and bool(members)
        and all(isinstance(m, str) for m in members)
        and isinstance(dt, list)
        and all(_safe_int(gap) for gap in dt)
        and len(dt) == len(members) - 1
        and all(isinstance(data.get(k, ""), str) for k in ("id", "name"))
    )


def _decode(line: bytes) -> list[Any]:
    """The events one record line stores; ``ValueError`` if it is not JSON or a malformed row."""
    value = _parse(line)
    kind = value.get("type") if isinstance(value, dict) else None
    if not isinstance(kind, str) or kind not in _PAYLOADS:  # any JSON value may be a type
        return [value]
    if not _row_ok(value):
        raise ValueError("malformed packed row")
    return expand_row(value)


class _Scanner:
    """The harness's line scanner: the contiguous prefix, and whether a problem was seen."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.problem: str | None = None

    def line(self, line: bytes) -> None:
        try:
            decoded = _decode(line)
        except ValueError as error:
            self.problem = self.problem or f"unparsable line: {error}"
            return
        if any(value is None for value in decoded):
            raise ValueError("a null record")  # the harness fails reading its seq
        holds_turn_end = any(
            isinstance(value, dict) and value.get("type") == "turn/end" for value in decoded
        )
        if self.problem is not None:
            if holds_turn_end:
                raise ValueError(f"damage before a turn/end: {self.problem}")
            return
        for offset, value in enumerate(decoded):
            seq = value.get("seq") if isinstance(value, dict) else None
            if isinstance(seq, bool) or seq != len(self.events):
                del self.events[len(self.events) - offset :]
                self.problem = f"seq gap: {seq!r} for {len(self.events)}"
                if holds_turn_end:
                    raise ValueError(f"damage before a turn/end: {self.problem}")
                return
            self.events.append(value)

    def complete_lines(self, data: bytes) -> None:
        """Scan every newline-terminated line of ``data``; a final piece without one is torn."""
        for line in data.split(b"\n")[:-1]:
            self.line(line)


def zstd_frame_spans(data: bytes) -> tuple[list[tuple[int, int]], int | None]:
    """The ``(start, end)`` of each structurally complete zstd frame, and where an incomplete
    last frame starts (``None`` if there is none). ``ValueError`` for bytes that are no frame.

    >>> import zstandard
    >>> frame = zstandard.ZstdCompressor(write_checksum=True).compress(b"{}\\n")
    >>> zstd_frame_spans(frame + frame[:5])
    ([(0, 16)], 16)
    """
    spans: list[tuple[int, int]] = []
    offset = 0
    while offset < len(data):
        start = offset
        if len(data) - offset < 5:
            return spans, start
        if int.from_bytes(data[offset : offset + 4], "little") != _MAGIC:
            raise ValueError(f"no zstd frame at byte {offset}")
        descriptor = data[offset + 4]
        if descriptor & 0x18:
            raise ValueError(f"reserved bit in the frame header at byte {offset + 4}")
        size_flag, single = descriptor >> 6, bool(descriptor & 0x20)
        size_bytes = (1 if single else 0) if size_flag == 0 else 1 << size_flag
        offset += 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3] + size_bytes
        last = False
        while not last:
            if len(data) - offset < 3:
                return spans, start
            block = int.from_bytes(data[offset : offset + 3], "little")
            last, kind = bool(block & 1), (block >> 1) & 3
            if kind == 3:
                raise ValueError(f"reserved block type at byte {offset}")
            offset += 3 + (1 if kind == 1 else block >> 3)
            if offset > len(data):
                return spans, start
        offset += 4 if descriptor & 4 else 0
        if offset > len(data):
            return spans, start
        spans.append((start, offset))
    return spans, None


def _whole_frame(frame: bytes) -> bytes:
    """The content of one complete frame; ``ValueError`` if it does not decode to its end."""
    decompressor = zstandard.ZstdDecompressor().decompressobj()
    try:
        content = decompressor.decompress(frame)
    except zstandard.ZstdError as error:
        raise ValueError(f"a damaged zstd frame: {error}") from error
    if not decompressor.eof:
        raise ValueError("a zstd frame that does not decode to its end")
    return content


def _zstd_events(data: bytes) -> list[Event]:
    spans, torn = zstd_frame_spans(data)
    if not spans:
        raise ValueError("no complete zstd frame")
    frames = [_whole_frame(data[a:b]) for a, b in spans]
    header, *batches = frames
    if header.count(b"\n") != 1 or not header.endswith(b"\n"):
        raise ValueError("the first frame must hold exactly the header line")
    scanner = _Scanner()
    body = b"".join(batches)
    if body and not body.endswith(b"\n"):
        raise ValueError("a complete frame ends inside a record")
    scanner.complete_lines(body)
    if scanner.problem is not None:
        raise ValueError(f"a complete frame holds a bad record: {scanner.problem}")
    if torn is not None:
        try:
            tail = zstandard.ZstdDecompressor().decompressobj().decompress(data[torn:])
        except zstandard.ZstdError:
            tail = b""
        scanner.complete_lines(tail)
    return scanner.events


def recovered_events(data: bytes, *, compress: bool) -> list[Event]:
    """The events the harness reads from a log file: expanded, legacy shapes migrated (see
    :func:`~sessionref.testing.reference.migrate`), before closers.

    ``compress`` says the file is ``session.jsonl.zstd``. Raises ``ValueError`` where the
    harness refuses the file. The header line is not checked here.

    >>> header = b'{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}\\n'
    >>> recovered_events(header + b'{"type":"turn/st', compress=False)  # a torn last line
    []
    >>> recovered_events(b'{"type":"session"', compress=False)
    Traceback (most recent call last):
    ValueError: no complete header line
    """
    if compress:
        return [migrate(event) for event in _zstd_events(data)]
    header_end = data.find(b"\n")
    if header_end < 0:
        raise ValueError("no complete header line")
    scanner = _Scanner()
    scanner.complete_lines(data[header_end + 1 :])
    return [migrate(event) for event in scanner.events]
