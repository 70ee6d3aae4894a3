"""A zstd log read from its open file a piece at a time: never mapped, never held whole.

A file mapped into memory and truncated meanwhile (a disk, a hand edit, a copy replacing
it) makes every page past its new end a SIGBUS that kills the process, an MCP server with
it; and the compressed file read whole first would hold about half as much again as the
log's text. So the file is read twice, in bounded pieces. Pass 1 reads it in pieces of
:data:`READ_SIZE` (:func:`file_pieces`) and locates its frames exactly as
:func:`~sessionref.log.frames.scan_frames` does over the whole (same errors at the same
bytes): a frame that goes on past a piece is followed block by block, its contents not kept
(:func:`~sessionref.log.framefile.find_frames`), so a frame of millions of empty blocks costs
one pass; the header frame is then read again on its own. Pass 2 decompresses the body from
the same file (:func:`body_plaintext`), then the torn last frame's bytes are read
(:func:`torn_frame_bytes`). The file's size is taken once, first: a log a writer appends to
meanwhile is read as it was then, and one found shorter than that raises
:class:`SessionLogError` ("changed while read"), whichever pass finds it.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import BinaryIO, Final, cast

import msgspec

from sessionref.errors import SessionLogError
from sessionref.log.framefile import find_frames
from sessionref.log.frames import (
    CHANGED,
    DEFAULT_MAX_LINE_BYTES,
    FileSpan,
    check_header_frame,
    frames_plaintext,
    frames_text,
)
from sessionref.log.inflate import decompress_frame

READ_SIZE: Final = 1 << 20
"""How many compressed bytes pass 1 reads at a time."""


class ZstdLog(msgspec.Struct, frozen=True):
    """A zstd log located: its header frame's plaintext, the byte range of the other complete
    frames, the torn last frame's start (``None`` when the log ends on a frame) and the size
    of the file when it was scanned."""

    header: bytes
    body: tuple[int, int]
    torn_start: int | None
    size: int


def as_file(source: BinaryIO | bytes) -> BinaryIO:
    """``source``, or its bytes read as a file."""
    return io.BytesIO(source) if isinstance(source, bytes) else source


def locate_zstd_log(
    source: BinaryIO | bytes, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> ZstdLog:
    """Scan the frames of ``source`` (an open file, read from its start; or bytes) and
    decompress the header frame, which must be one line (of at most ``max_line_bytes``).

    >>> import zstandard
    >>> one = zstandard.ZstdCompressor().compress
    >>> locate_zstd_log(one(b"h\\n") + one(b"a\\n")).header
    b'h\\n'
    >>> locate_zstd_log(one(b"h\\na\\n"))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: corrupt zstd log: first frame is not exactly one header line
    """
    file = as_file(source)
    size = file.seek(0, os.SEEK_END)
    file.seek(0)
    header_frame, body, torn_start = _scan_file(file, size)
    if header_frame is None:
        raise SessionLogError("empty or header-less zstd session log")
    header = decompress_frame(header_frame, max_line_bytes)
    check_header_frame(header)
    return ZstdLog(header, body, torn_start, size)


def _scan_file(file: BinaryIO, size: int) -> tuple[bytes | None, tuple[int, int], int | None]:
    """Pass 1 over the first ``size`` bytes of ``file``: the first complete frame's bytes
    (``None`` if there is none), the range of the complete frames after it, the torn last
    frame's start.

    >>> import zstandard
    >>> frame = zstandard.ZstdCompressor().compress(b"a\\n")
    >>> _scan_file(io.BytesIO(frame * 2 + frame[:5]), 27) == (frame, (11, 22), 22)
    True
    """
    found = find_frames(file_pieces(file, size))
    if found.first is None:
        return None, (0, 0), found.torn_start
    header = FileSpan(file, *found.first).read()
    return header, (found.first[1], found.end), found.torn_start


def file_pieces(file: BinaryIO, size: int) -> Iterator[memoryview]:
    """The first ``size`` bytes of ``file`` from where it is, :data:`READ_SIZE` at a time into
    one buffer (a piece holds until the next is asked for); a file that ends before raises
    :class:`SessionLogError` ("changed while read").

    >>> [bytes(piece) for piece in file_pieces(io.BytesIO(b"abc"), 2)]
    [b'ab']
    >>> list(file_pieces(io.BytesIO(b"abc"), 4))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: the file changed while it was read: it is shorter now
    """
    taken = 0
    readinto = cast(io.BufferedIOBase, file).readinto
    with memoryview(bytearray(min(READ_SIZE, size))) as buffer:
        while taken < size:
            got = readinto(buffer[: min(READ_SIZE, size - taken)])
            if not got:
                raise SessionLogError(CHANGED)
            taken += got
            yield buffer[:got]


def file_text(file: BinaryIO, size: int, limit: int) -> Iterator[bytes]:
    """The plaintext of the first ``size`` bytes of ``file``, a zstd file a writer renamed into
    place whole (:func:`~sessionref.log.frames.complete_frames` with ``torn_ok`` false), in
    chunks decompressed from the file only as far as they are taken: its frames are located
    first (pass 1, in pieces), so a torn or corrupt one raises before any text is given.

    >>> import zstandard
    >>> frame = zstandard.ZstdCompressor().compress(b"a\\n")
    >>> list(file_text(io.BytesIO(frame * 2), 22, 4))
    [b'a\\na\\n']
    >>> list(file_text(io.BytesIO(frame * 2), 21, 4))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: corrupt zstd file: it ends inside the frame at byte 11
    """
    found = find_frames(file_pieces(file, size))
    yield from frames_text(file, found.end, found.torn_start, limit, torn_ok=False)


def body_plaintext(file: BinaryIO, located: ZstdLog, limit: int) -> Iterator[bytes]:
    """Pass 2: the plaintext of the body's frames, read from ``file`` as they are decompressed
    (:func:`~sessionref.log.frames.frames_plaintext`); more than ``limit`` bytes raises."""
    return frames_plaintext(FileSpan(file, *located.body), limit)


def torn_frame_bytes(file: BinaryIO, located: ZstdLog) -> bytes:
    """The bytes of the torn last frame (none when the log ends on a frame), read from
    ``file``; they end where the file did when it was scanned."""
    if located.torn_start is None:
        return b""
    return FileSpan(file, located.torn_start, located.size).read()
