"""One session log, bytes to a loaded :class:`SessionLog`, exactly as the harness loads it.

bytes → lines (:mod:`~sessionref.log.frames`, :mod:`~sessionref.log.lines`) → the committed
prefix (:mod:`~sessionref.log.scanner`) → header and event validation with legacy migrations
(:mod:`~sessionref.log.header`, :mod:`~sessionref.log.validate`) → closers
(:mod:`~sessionref.log.closers`). Every read failure names the file and, where there is one,
the line or byte offset.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

from sessionref.collector import collection_paused
from sessionref.errors import SessionLogError
from sessionref.log.closers import interrupted_turn_closers
from sessionref.log.frames import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    Chunk,
    counted_line_pieces,
    plain_chunks,
)
from sessionref.log.header import loaded_header, parse_header_line
from sessionref.log.inflate import torn_frame_prefix
from sessionref.log.scanner import PrefixScanner
from sessionref.log.structs import LogRecord, SessionLog
from sessionref.log.validate import validate_events
from sessionref.log.zstdfile import as_file, body_plaintext, locate_zstd_log, torn_frame_bytes


def _scan(
    scanner: PrefixScanner, pieces: Iterable[tuple[int, bytearray, int]], first_line: int
) -> tuple[bool, int]:
    """Feed ``scanner`` the whole lines of ``pieces`` (numbered in the file, the first
    ``first_line``; see :func:`~sessionref.log.frames.counted_line_pieces`); returns whether
    the input ended on a newline, and the number its next line would have."""
    ended, following = True, first_line
    for number, piece, count in pieces:
        if count:
            cut = piece.rfind(b"\n") + 1
            scanner.feed(piece if cut == len(piece) else piece[:cut], number, count)
        ended, following = piece.endswith(b"\n"), number + count
    return ended, following


@contextlib.contextmanager
def _naming(path: str) -> Iterator[None]:
    """Every :class:`SessionLogError` raised inside names ``path``, once, in front.

    >>> with _naming("f.jsonl"):
    ...     raise SessionLogError("line 2 is longer than 9 bytes")
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: f.jsonl: line 2 is longer than 9 bytes
    """
    try:
        yield
    except SessionLogError as exc:
        raise SessionLogError(f"{path}: {exc}") from None


def _header_and_rest(
    pieces: Iterator[tuple[int, bytearray, int]],
) -> tuple[Any, Iterator[tuple[int, bytearray, int]]]:
    """The parsed header line of a plain log, and the pieces of the lines after it."""
    first = next(pieces, None)
    end = -1 if first is None else first[1].find(b"\n")
    if first is None or end < 0:
        raise SessionLogError("empty or header-less session log")
    header = parse_header_line(bytes(first[1][:end]))

    def rest() -> Iterator[tuple[int, bytearray, int]]:
        if end + 1 < len(first[1]):
            yield first[0] + 1, first[1][end + 1 :], first[2] - 1
        yield from pieces

    return header, rest()


def _load(header: Any, records: list[LogRecord], session_id: str) -> SessionLog:
    """Validate a scanned log as ``session_id`` and close an interrupted last turn."""
    loaded = loaded_header(header, session_id)
    validate_events(records, session_id)
    records += interrupted_turn_closers(records)
    return SessionLog(loaded, records)


def read_plain(
    chunks: Iterable[Chunk],
    session_id: str,
    path: str = "session.jsonl",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> SessionLog:
    """A plain JSONL log given in chunks, loaded as the harness loads it; a failure names
    ``path`` once, then what is wrong (with the line where there is one).

    >>> log = read_plain([b'{"type":"session","version":0,"id":"s","createdAt":1,'
    ...     b'"delegationDepth":0}\\n{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\\n'
    ...     b'{"type":"step/st'], "s")
    >>> [(r.type, r.seq) for r in log.records]
    [('turn/start', 0), ('turn/end', 1)]
    >>> read_plain([b'{"type":"session"}\\n' + b"x" * 99], "s", "f.jsonl", 50)
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: f.jsonl: line 2 is longer than 50 bytes
    """
    with _naming(path), collection_paused():
        header, rest = _header_and_rest(counted_line_pieces(chunks, max_line_bytes))
        scanner = PrefixScanner()
        _scan(scanner, rest, 2)
        return _load(header, scanner.records, session_id)


def read_plain_file(
    file: BinaryIO,
    session_id: str,
    path: str,
    max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> SessionLog:
    """:func:`read_plain` of an open file, at most ``max_bytes`` of it."""
    return read_plain(plain_chunks(file, max_bytes), session_id, path, max_line_bytes)


def read_zstd(
    source: BinaryIO | bytes,
    session_id: str,
    path: str = "session.jsonl.zstd",
    max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> SessionLog:
    """A zstd log (an open file, read from its start, or bytes), frame by frame: complete
    frames must hold only whole, committed records; the complete lines of a torn last frame
    are kept as far as they continue the log. The file is read in bounded pieces, never
    mapped (:mod:`~sessionref.log.zstdfile`): one that shrinks meanwhile is an error.

    >>> import zstandard
    >>> frame = zstandard.ZstdCompressor(write_checksum=True).compress
    >>> head = frame(b'{"type":"session","version":0,"id":"s","createdAt":1,'
    ...              b'"delegationDepth":0}\\n')
    >>> body = frame(b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\\n')
    >>> [r.seq for r in read_zstd(head + body[:-3], "s").records]
    [0, 1]
    """
    file = as_file(source)
    with _naming(path), collection_paused():
        located = locate_zstd_log(file, max_line_bytes)
        header = parse_header_line(located.header[:-1])
        scanner = PrefixScanner()
        body = body_plaintext(file, located, max_bytes)
        # Line 1 is the header frame's; the body's lines are numbered on from 2.
        ended, following = _scan(scanner, counted_line_pieces(body, max_line_bytes, 2), 2)
        if not ended or not scanner.committed:
            where = "" if scanner.issue is None else f" ({scanner.issue})"
            raise SessionLogError(
                f"corrupt zstd log: a complete frame holds a torn or unparsable record{where}"
            )
        if located.torn_start is not None:
            torn = torn_frame_prefix(torn_frame_bytes(file, located), max_bytes)
            _scan(scanner, counted_line_pieces([torn], max_line_bytes, following), following)
        return _load(header, scanner.records, session_id)
