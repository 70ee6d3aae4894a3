"""Bytes of a log file as the harness takes them in: plain chunks, or zstd frames one by one.

A zstd log is a run of independent frames; the first holds exactly the header line. Frames
are located by their structure before any is decompressed, as the harness does: a complete
frame that does not decompress (checksum, data), a reserved bit, a skippable frame or any
other bytes where a frame should start make the log corrupt; an incomplete last frame (fewer
than 4 stray bytes included) is a torn write, decoded as far as it goes.
"""

from __future__ import annotations

import functools
import io
import struct
from collections.abc import Iterable, Iterator
from typing import IO, BinaryIO, Final, Protocol, cast

import msgspec
import zstandard

from sessionref.errors import SessionLogError
from sessionref.log.blocks import Compressed, walk_blocks
from sessionref.log.inflate import lent_decompressor

DEFAULT_MAX_DECOMPRESSED_BYTES: Final = 1 << 30
DEFAULT_MAX_LINE_BYTES: Final = 64 << 20
ZSTD_MAGIC: Final = 0xFD2FB528
CHUNK_SIZE: Final = 1 << 18
Chunk = bytes | bytearray | memoryview


class FrameScan(msgspec.Struct, frozen=True):
    """Where the complete frames of a zstd log lie, and where a torn last frame starts."""

    frames: list[tuple[int, int]]
    torn_start: int | None = None


_U32: Final = struct.Struct("<I")


def _frame_end(buffer: Compressed, start: int, size: int, base: int = 0) -> int:
    """End of the frame starting at ``start``; ``-1`` if the buffer ends inside it. An error
    names the byte as ``base`` plus its place in ``buffer`` (where the buffer lies in a file)."""
    if size - start < 4:
        return -1
    if _U32.unpack_from(buffer, start)[0] != ZSTD_MAGIC:
        raise SessionLogError(f"corrupt zstd log: invalid frame magic at byte {base + start}")
    offset = start + 4
    if offset == size:
        return -1
    descriptor = buffer[offset]
    if descriptor & 0x18:
        where = base + offset
        raise SessionLogError(f"corrupt zstd log: reserved frame header bit at byte {where}")
    offset, last = walk_blocks(buffer, offset + _HEADER_BYTES[descriptor], size, base)
    if not last:
        return -1
    if descriptor & 4:
        offset += 4
    return offset if offset <= size else -1


def first_block(descriptor: int) -> int:
    """Bytes from a frame's start to its first block, by its header's descriptor.

    >>> first_block(0x00), first_block(0xC4)
    (6, 14)
    """
    return 4 + _HEADER_BYTES[descriptor]


def _header_bytes(descriptor: int) -> int:
    """Bytes from the frame header descriptor to the first block: the descriptor itself, the
    window byte, the dictionary id and the content size, as the descriptor declares them."""
    size_flag, single_segment, dictionary = descriptor >> 6, descriptor & 0x20, descriptor & 3
    content_size = (1 if single_segment else 0) if size_flag == 0 else 1 << size_flag
    return 1 + (0 if single_segment else 1) + (4 if dictionary == 3 else dictionary) + content_size


_HEADER_BYTES: Final = [_header_bytes(descriptor) for descriptor in range(256)]
_FRAME_START: Final = struct.Struct("<IB")
"""The magic number and the frame header descriptor."""
_SKIPS: Final = [0 if d & 0x18 else first_block(d) for d in range(256)]
"""Bytes from a frame's start to its first block, by descriptor; 0 for a reserved bit set."""
_TRAILERS: Final = [3 + (4 if d & 4 else 0) for d in range(256)]
"""Bytes a one-block frame adds after the block's content: its header, the checksum."""
_FAST_READ: Final = 4 + max(_HEADER_BYTES) + 4
"""The most bytes :func:`scan_frames` reads of a frame inline: magic, header, block header."""


def _frame_shape(skip: int) -> struct.Struct:
    """The magic number, the descriptor and the first block's header (and one byte more) of
    a frame whose first block starts ``skip`` bytes in: one unpack for a common frame."""
    return struct.Struct(f"<IB{skip - 5}xI")


_SHAPES: Final = {skip: _frame_shape(skip) for skip in set(_SKIPS) if skip}


def _common_run_end(buffer: Compressed, start: int, frames: list[tuple[int, int]]) -> int:
    """Append to ``frames`` the run of frames from ``start`` with the same descriptor as the
    first, each one last block read inline (a writer's frames all look alike), and return
    where the run ends: ``start`` when the frame there is not such a frame.

    >>> frame = zstandard.ZstdCompressor().compress(b"a\\n")
    >>> found = []
    >>> _common_run_end(frame * 3 + b"\\x00" * 20, 0, found), found
    (33, [(0, 11), (11, 22), (22, 33)])
    """
    size = len(buffer)
    last_fast = size - _FAST_READ
    if start > last_fast:
        return start
    magic, descriptor = _FRAME_START.unpack_from(buffer, start)
    skip = _SKIPS[descriptor]
    if magic != ZSTD_MAGIC or not skip:
        return start
    unpack, fixed, append = _SHAPES[skip].unpack_from, skip + _TRAILERS[descriptor], frames.append
    while start <= last_fast:
        magic, found, block = unpack(buffer, start)
        if magic != ZSTD_MAGIC or found != descriptor or block & 3 != 1:
            break  # not one last block, raw or compressed, whose size follows
        end = start + fixed + ((block & 0xFFFFFF) >> 3)
        if end > size:
            break
        append((start, end))
        start = end
    return start


def scan_frames(buffer: Compressed, max_frames: int | None = None, base: int = 0) -> FrameScan:
    """The complete frames of ``buffer`` (at most ``max_frames``) and a torn tail's start;
    an error names a byte as ``base`` plus its place in ``buffer`` (a window of a file that
    starts at byte ``base``, see :mod:`~sessionref.log.zstdfile`).

    >>> frame = zstandard.ZstdCompressor().compress(b"a\\n")
    >>> scan_frames(frame + frame[:5]) == FrameScan([(0, len(frame))], len(frame))
    True
    >>> scan_frames(frame + b"\\x00\\x00\\x00\\x00")
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: corrupt zstd log: invalid frame magic at byte 11
    """
    frames: list[tuple[int, int]] = []
    start, size = 0, len(buffer)
    while start < size:
        if max_frames is None:  # the common frames in a run, the others one by one
            start = _common_run_end(buffer, start, frames)
            if start == size:
                break
        end = _frame_end(buffer, start, size, base)
        if end < 0:
            return FrameScan(frames, start)
        frames.append((start, end))
        if max_frames is not None and len(frames) >= max_frames:
            break
        start = end
    return FrameScan(frames)


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def file_chunks(file: _Readable) -> Iterator[bytes]:
    """What ``file.read(CHUNK_SIZE)`` gives, call after call, until it gives nothing."""
    return iter(functools.partial(file.read, CHUNK_SIZE), b"")


def at_most(chunks: Iterable[bytes], limit: int, what: str) -> Iterator[bytes]:
    """``chunks``, raising :class:`SessionLogError` once more than ``limit`` bytes passed.

    >>> list(at_most([b"ab", b"c"], 2, "log"))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: log exceeds 2 bytes
    """
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > limit:
            raise SessionLogError(f"{what} exceeds {limit} bytes")
        yield chunk


def plain_chunks(file: BinaryIO, limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> Iterator[bytes]:
    """The bytes of ``file`` in chunks of at most 256 KiB; more than ``limit`` raises.

    >>> list(plain_chunks(io.BytesIO(b"ab"))), list(plain_chunks(io.BytesIO(b"abc"), 2))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: log exceeds 2 bytes
    """
    return at_most(file_chunks(file), limit, "log")


def check_header_frame(plaintext: bytes) -> None:
    """The first frame must hold exactly one line, its newline last."""
    if not plaintext or plaintext.find(b"\n") != len(plaintext) - 1:
        raise SessionLogError("corrupt zstd log: first frame is not exactly one header line")


def frames_plaintext(source: _Readable, limit: int) -> Iterator[bytes]:
    """The plaintext of the complete frames ``source.read()`` gives, in 256 KiB chunks,
    decompressed across frames in one pass; a damaged frame raises :class:`SessionLogError`.
    The frames were located by :func:`scan_frames`, so none is skippable or torn.

    >>> list(frames_plaintext(io.BytesIO(zstandard.ZstdCompressor().compress(b"a\\n")), 9))
    [b'a\\n']
    """
    with lent_decompressor() as decompressor:  # given back when the generator ends or is closed
        reader = decompressor.stream_reader(
            cast(IO[bytes], source),  # stream_reader calls read() only
            read_across_frames=True,
            closefd=False,
        )
        try:
            yield from at_most(file_chunks(reader), limit, "decompressed log")
        except zstandard.ZstdError as exc:
            raise SessionLogError(f"corrupt zstd log: a frame failed validation: {exc}") from None


CHANGED: Final = "the file changed while it was read: it is shorter now"


class FileSpan:
    """Bytes ``start:end`` of an open file (or of bytes in a ``BytesIO``) read as a file, a
    piece at a time; a file that ends before ``end`` raises :class:`SessionLogError`.

    >>> span = FileSpan(io.BytesIO(b"abcdef"), 1, 4)
    >>> span.read(2), span.read(), span.read()
    (b'bc', b'd', b'')
    >>> FileSpan(io.BytesIO(b"ab"), 1, 4).read()
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: the file changed while it was read: it is shorter now
    """

    def __init__(self, file: BinaryIO, start: int, end: int) -> None:
        file.seek(start)
        self.file, self.left = file, end - start

    def read(self, size: int = -1, /) -> bytes:
        want = self.left if size < 0 else min(size, self.left)
        piece = self.file.read(want)
        if len(piece) < want:
            raise SessionLogError(CHANGED)
        self.left -= want
        return piece


def zstd_chunks(file: BinaryIO, limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> Iterator[bytes]:
    """:func:`complete_frames` of ``file``'s bytes (header frame included)."""
    yield from complete_frames(file.read(), limit)


def complete_frames(
    buffer: Compressed, limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES, torn_ok: bool = True
) -> Iterator[bytes]:
    """The plaintext of every complete frame of ``buffer`` in chunks, decompressed only as far
    as they are taken; a torn last frame is left out, or, unless ``torn_ok`` (a file a writer
    renamed into place once complete, as Codex does its compressed rollouts), is damage.

    >>> frame = zstandard.ZstdCompressor().compress(b"a\\n")
    >>> list(complete_frames(frame + frame)), list(zstd_chunks(io.BytesIO(frame + frame[:-1])))
    ([b'a\\na\\n'], [b'a\\n'])
    >>> list(complete_frames(frame[:-1], torn_ok=False))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: corrupt zstd file: it ends inside the frame at byte 0
    """
    scan = scan_frames(buffer)
    end = scan.frames[-1][1] if scan.frames else 0
    yield from frames_text(io.BytesIO(buffer), end, scan.torn_start, limit, torn_ok)


def frames_text(
    file: BinaryIO, end: int, torn_start: int | None, limit: int, torn_ok: bool
) -> Iterator[bytes]:
    """:func:`complete_frames` of a file whose frames a scan found: complete ones in its
    first ``end`` bytes (from its start, as every frame follows the one before), and a torn
    last one from ``torn_start``, if any."""
    if torn_start is not None and not torn_ok:
        raise SessionLogError(f"corrupt zstd file: it ends inside the frame at byte {torn_start}")
    if end:
        yield from frames_plaintext(FileSpan(file, 0, end), limit)


def decompress_frames(compressed: bytes, limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> bytearray:
    """:func:`zstd_chunks` of ``compressed`` as one buffer.

    >>> decompress_frames(zstandard.ZstdCompressor().compress(b"a\\n"))
    bytearray(b'a\\n')
    """
    return bytearray().join(zstd_chunks(io.BytesIO(compressed), limit))


def line_pieces(chunks: Iterable[Chunk], max_line_bytes: int) -> Iterator[tuple[int, bytearray]]:
    """Regroup ``chunks`` into pieces of whole lines: ``(number of its first line, piece)``.

    Every piece but the last ends with a newline; a line longer than ``max_line_bytes``
    raises :class:`SessionLogError` as soon as it is seen.

    >>> list(line_pieces([b"a\\nb", b"c\\nd"], 10))
    [(1, bytearray(b'a\\n')), (2, bytearray(b'bc\\n')), (3, bytearray(b'd'))]
    """
    return ((line, piece) for line, piece, _ in counted_line_pieces(chunks, max_line_bytes))


def counted_line_pieces(
    chunks: Iterable[Chunk], max_line_bytes: int, first_line: int = 1
) -> Iterator[tuple[int, bytearray, int]]:
    """:func:`line_pieces` with the number of newlines in each piece, counted once for all;
    the first line of ``chunks`` is line ``first_line`` of the file. A line too long is
    named by its number in the file, the first such line first (the whole lines of a chunk
    are checked before the start of a line the chunk ends in).

    >>> list(counted_line_pieces([b"a\\nb\\n", b"c"], 10))
    [(1, bytearray(b'a\\nb\\n'), 2), (3, bytearray(b'c'), 0)]
    >>> list(counted_line_pieces([b"abc\\ndefg"], 2, first_line=2))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: line 2 is longer than 2 bytes
    """
    carry = bytearray()
    line = first_line
    for chunk in chunks:
        piece = carry
        piece += chunk
        cut = piece.rfind(b"\n") + 1
        carry = piece[cut:]
        del piece[cut:]
        count = 0
        if piece:
            check_line_lengths(piece, max_line_bytes, line)
            count = newline_count(piece)
        if len(carry) > max_line_bytes:
            raise SessionLogError(f"line {line + count} is longer than {max_line_bytes} bytes")
        if piece:
            yield line, piece, count
            line += count
    if carry:
        yield line, carry, 0


def newline_count(buffer: bytes | bytearray) -> int:
    """``buffer.count(b"\\n")``, 2.7 times faster on a log's text: CPython counts a one-byte
    needle a byte at a time, where ``replace`` finds each newline with ``memchr`` (a 256 KiB
    piece of JSONL, a line every 430 bytes or so: 75 against 200 µs). The count makes a copy
    of ``buffer`` without its newlines for a moment (a 256 KiB piece, or one long line).

    >>> newline_count(b"a\\nb\\n\\n"), newline_count(bytearray(b"ab"))
    (3, 0)
    """
    return len(buffer) - len(buffer.replace(b"\n", b""))


def check_line_lengths(buffer: bytes | bytearray, limit: int, first_line: int = 1) -> None:
    """Raise :class:`SessionLogError` if a line of ``buffer`` is longer than ``limit`` bytes.

    >>> check_line_lengths(b"ab\\ncd\\n", 2)
    >>> check_line_lengths(b"ab\\ncde\\n", 2)
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: line 2 is longer than 2 bytes
    """
    start = 0
    while len(buffer) - start > limit:
        # The last newline within the next limit + 1 bytes: none means a line that long.
        newline = buffer.rfind(b"\n", start, start + limit + 1)
        if newline < 0:
            number = first_line + buffer.count(b"\n", 0, start)
            raise SessionLogError(f"line {number} is longer than {limit} bytes")
        start = newline + 1
