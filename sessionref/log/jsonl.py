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
import stat
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO, Final, TypeVar

import msgspec

from sessionref.codecs.jsjson import js_json, parse_json
from sessionref.errors import LogUnreadable, SessionLogError
from sessionref.log.discovery import NotALog, not_a_log
from sessionref.log.frames import DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_LINE_BYTES

T = TypeVar("T")

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "committed_lines",
    "decode_line",
    "decode_lines",
    "file_bytes",
    "file_size",
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
    return committed_lines(file_bytes(location, max_bytes), max_line_bytes, location)


def file_bytes(location: str, max_bytes: int) -> bytes:
    """The bytes of the regular file at ``location``; raises :class:`SessionLogError` naming
    it when it is not a readable file or holds more than ``max_bytes``.

    >>> file_bytes("/nonexistent", 1)
    Traceback (most recent call last):
    sessionref.errors.LogUnreadable: cannot read /nonexistent: No such file or directory
    """
    try:
        with open_regular(location) as file:
            file_size(file, location, max_bytes)
            data = file.read()  # sized by the file: read(max_bytes + 1) would allocate that
    except OSError as exc:
        raise LogUnreadable(f"cannot read {location}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # it grew while being read
        raise SessionLogError(f"{location}: over the limit of {max_bytes} bytes")
    return data


def file_size(file: BinaryIO, location: str, max_bytes: int) -> int:
    """The size of ``file``, open from ``location``; over ``max_bytes`` raises
    :class:`SessionLogError` naming it.

    >>> with open("/dev/null", "rb") as file:
    ...     file_size(file, "/dev/null", 0)
    0
    """
    size = os.fstat(file.fileno()).st_size
    if size > max_bytes:
        raise SessionLogError(f"{location}: {size} bytes, over the limit of {max_bytes}")
    return size


def open_regular(location: str) -> BinaryIO:
    """The file at ``location``, open for reading, when it is a regular file; anything else
    is a :class:`~sessionref.log.discovery.NotALog` naming the file and what it is, as a DSH
    store passes it over (:func:`~sessionref.log.discovery.not_a_log`). What it is is looked
    at before it is opened, so a FIFO is never opened (which would let a writer waiting on it
    go on, into a broken pipe) nor a device; one put in its place meanwhile is opened without
    waiting and refused. Raises ``OSError`` when it cannot be looked at or opened.

    >>> open_regular("/dev/null")
    Traceback (most recent call last):
    sessionref.log.discovery.NotALog: /dev/null: a character device in place of a log file
    """
    _check_regular(location, os.stat(location).st_mode)
    descriptor = os.open(location, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        _check_regular(location, os.fstat(descriptor).st_mode)
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return os.fdopen(descriptor, "rb")


def _check_regular(location: str, mode: int) -> None:
    """Raise :func:`open_regular`'s error unless ``mode`` is a regular file's."""
    if not stat.S_ISREG(mode):
        raise NotALog(not_a_log(location, mode))


def committed_lines(data: bytes, max_line_bytes: int, location: str) -> list[bytes]:
    """The lines of ``data`` up to its last newline; a longer line than ``max_line_bytes``
    fails, naming ``location`` and the line.

    >>> committed_lines(b"a\\nbb\\ntorn", 5, "f")
    [b'a', b'bb']
    >>> committed_lines(b"a\\nbbbbbb\\n", 5, "f")
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: f: line 2 is longer than 5 bytes
    """
    lines = data.split(b"\n")
    lines.pop()  # what follows the last newline: the torn line, or nothing
    if lines and max(map(len, lines)) > max_line_bytes:
        number = next(i for i, line in enumerate(lines, 1) if len(line) > max_line_bytes)
        raise SessionLogError(f"{location}: line {number} is longer than {max_line_bytes} bytes")
    return lines


def decode_line(decoder: msgspec.json.Decoder[Any], kind: type[T], line: bytes) -> T | Any | None:
    """One line by ``decoder`` where msgspec takes it, else parsed as ``JSON.parse`` parses
    it (U+FFFD for invalid UTF-8, lone surrogates kept) and converted to ``kind`` (whose
    fields hold built values where the decoder's may keep them raw); ``None`` for a line that
    is not JSON or not of that shape.

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


def decode_lines(
    decoder: msgspec.json.Decoder[Any], kind: type[T], lines: list[bytes]
) -> list[T | Any | None]:
    """:func:`decode_line` of each line: all at once by msgspec when it takes every line (one
    call in C), else line by line.

    >>> class Line(msgspec.Struct):
    ...     type: Any = None
    >>> decoder = msgspec.json.Decoder(Line)
    >>> decode_lines(decoder, Line, [b'{"type":1}', b'{"type":2}'])
    [Line(type=1), Line(type=2)]
    >>> decode_lines(decoder, Line, [b'{"type":1}', b'', b'[]'])
    [Line(type=1), None, None]
    """
    try:
        decoded: list[Any] = decoder.decode_lines(b"\n".join(lines))
    except (msgspec.DecodeError, RecursionError):
        pass
    else:
        if len(decoded) == len(lines):  # no blank line was passed over
            return decoded
    return [decode_line(decoder, kind, line) for line in lines]


_ANY: Final = msgspec.json.Decoder()


def built(value: Any) -> Any:
    """A field's value: decoded when a decoder kept it raw, else as it is.

    >>> built(msgspec.Raw(b'{"a":"\\\\ud800"}')), built(msgspec.Raw(b'"\\xff"')), built(3)
    ({'a': '\ud800'}, '\ufffd', 3)
    """
    if type(value) is not msgspec.Raw:
        return value
    try:
        return _ANY.decode(value)
    except (msgspec.DecodeError, RecursionError):
        try:
            return parse_json(bytes(value))
        except (ValueError, RecursionError):
            return None


def raw_text(value: Any) -> str:
    """A value's JSON text: the bytes a decoder kept raw, or the value written as
    ``JSON.stringify`` writes it.

    >>> raw_text(msgspec.Raw(b'{"a": 1}')), raw_text({"a": 1})
    ('{"a": 1}', '{"a":1}')
    """
    if type(value) is msgspec.Raw:
        return bytes(value).decode("utf-8", "replace")
    return js_json(value).decode("utf-8", "surrogatepass")


_DAYS: dict[str, int] = {}
"""Milliseconds at the start of each day met, by its ``YYYY-MM-DD``."""
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
    if len(text) == 24 and text[10] == "T" and text[19] == "." and text[23] == "Z":
        fast = _fast_millis(text)  # how both harnesses write a time
        if fast is not None:
            return fast
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


def _fast_millis(text: str) -> int | None:
    """:func:`iso_millis` of ``YYYY-MM-DDThh:mm:ss.fffZ``, the day's start remembered;
    ``None`` when the text is not quite that (the regular path decides).

    >>> _fast_millis("2025-06-01T10:00:00.123Z"), _fast_millis("2025-06-01T1_:00:00.123Z")
    (1748772000123, None)
    """
    clock = text[11:13] + text[14:16] + text[17:19] + text[20:23]
    if not (clock.isascii() and clock.isdigit() and text[13] == text[16] == ":"):
        return None
    hours, minutes, seconds = int(clock[:2]), int(clock[2:4]), int(clock[4:6])
    if hours > 23 or minutes > 59 or seconds > 59:
        return None
    day = _DAYS.get(text[:10])
    if day is None:
        start = iso_millis(text[:10] + "T00:00:00Z")
        if start is None:
            return None
        day = _DAYS.setdefault(text[:10], start)
    return day + ((hours * 60 + minutes) * 60 + seconds) * 1000 + int(clock[6:])


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
