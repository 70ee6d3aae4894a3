"""The JSONL files of other harnesses (Claude Code, Codex CLI), as far as their readers share
them: a file's committed lines under the store's limits, one line to a struct as
``JSON.parse`` reads it, and ISO-8601 times (docs/harnesses.md §Reading).

Both harnesses append one JSON object per line, so a line is committed once its newline is
written: a torn last line is left out, as a DSH log's is. A line that is not JSON, not an
object, or not of the shape a reader asks for is skipped; invalid UTF-8 reads as U+FFFD and
lone-surrogate escapes as lone surrogates, as JavaScript reads them.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec

from sessionref.errors import SessionLogError
from sessionref.log.frames import DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_LINE_BYTES
from sessionref.log.lines import parse_json

T = TypeVar("T")

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "committed_lines",
    "decode_line",
    "iso_millis",
    "read_committed",
]


def read_committed(
    path: str | os.PathLike[str],
    max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> list[bytes]:
    """The committed lines of a JSONL file (each without its newline); raises
    :class:`SessionLogError` naming the file when it is not a readable file or is over a limit.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(suffix=".jsonl") as file:
    ...     _ = file.write(b'{"a":1}\\n{"b"'); file.flush()
    ...     read_committed(file.name)
    [b'{"a":1}']
    """
    location = os.fspath(path)
    try:
        with open(location, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size > max_bytes:
                raise SessionLogError(f"{location}: {size} bytes, over the limit of {max_bytes}")
            data = file.read(max_bytes + 1)
    except IsADirectoryError:
        raise SessionLogError(f"{location}: a directory, not a log file") from None
    except OSError as exc:
        raise SessionLogError(f"cannot read {location}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # it grew while being read
        raise SessionLogError(f"{location}: over the limit of {max_bytes} bytes")
    return committed_lines(data, max_line_bytes, location)


def committed_lines(data: bytes, max_line_bytes: int, location: str) -> list[bytes]:
    """The lines of ``data`` up to its last newline; a longer line than ``max_line_bytes``
    fails, naming ``location`` and the line.

    >>> committed_lines(b"a\\nbb\\ntorn", 5, "f")
    [b'a', b'bb']
    >>> committed_lines(b"a\\nbbbbbb\\n", 5, "f")
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: f: line 2 is longer than 5 bytes
    """
    end = data.rfind(b"\n") + 1
    lines = data[:end].split(b"\n")
    lines.pop()  # what follows the last newline: the torn line, or nothing
    if lines and max(map(len, lines)) > max_line_bytes:
        number = next(i for i, line in enumerate(lines, 1) if len(line) > max_line_bytes)
        raise SessionLogError(f"{location}: line {number} is longer than {max_line_bytes} bytes")
    return lines


def decode_line(decoder: msgspec.json.Decoder[T], kind: type[T], line: bytes) -> T | None:
    """One line as ``kind``: by ``decoder`` where msgspec takes it, else parsed as
    ``JSON.parse`` parses it (U+FFFD for invalid UTF-8, lone surrogates kept) and converted;
    ``None`` for a line that is not JSON or not of that shape.

    >>> class Line(msgspec.Struct):
    ...     type: Any = None
    >>> decoder = msgspec.json.Decoder(Line)
    >>> [decode_line(decoder, Line, raw) for raw in (b'{"type":"\\xff"}', b'[1]', b'{')]
    [Line(type='\\ufffd'), None, None]
    """
    try:
        return decoder.decode(line)
    except msgspec.DecodeError:  # a ValidationError is a DecodeError
        pass
    except RecursionError:
        return None
    try:
        value = parse_json(line)
        return msgspec.convert(value, kind) if isinstance(value, dict) else None
    except (ValueError, RecursionError):  # a msgspec.ValidationError is a ValueError
        return None


_ISO: Final = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d)?\Z"
)


def iso_millis(text: Any) -> int | None:
    """Milliseconds since the epoch of an ISO-8601 time (UTC when it names no zone);
    ``None`` for anything else.

    >>> iso_millis("2025-06-01T10:00:00.123Z"), iso_millis("2025-06-01T12:00:00+02:00")
    (1748772000123, 1748772000000)
    >>> iso_millis("yesterday"), iso_millis(7)
    (None, None)
    """
    if type(text) is not str:
        return None
    found = _ISO.match(text)
    if found is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = found.groups()
    try:
        moment = datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second),
            tzinfo=timezone.utc,
        )
    except ValueError:
        return None
    millis = int(moment.timestamp()) * 1000 + int((fraction or "0")[:3].ljust(3, "0"))
    if zone and zone != "Z":
        sign = -1 if zone[0] == "+" else 1
        digits = zone[1:].replace(":", "")
        millis += sign * (int(digits[:2]) * 60 + int(digits[2:])) * 60_000
    return millis


def file_version(path: Path) -> tuple[str, int, int] | None:
    """What tells one version of a file from another: its path, size and modification time;
    ``None`` when it cannot be read.

    >>> file_version(Path("/nonexistent")) is None
    True
    """
    try:
        stat = path.stat()
    except OSError:
        return None
    return (str(path), stat.st_size, stat.st_mtime_ns)
