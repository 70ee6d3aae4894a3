"""Single zstd frames decompressed whole, with a bound on what they may make.

The body of a zstd log is decompressed as a bounded stream
(:func:`~sessionref.log.frames.frames_plaintext`), but its header frame and a torn last frame are
decompressed on their own. A frame of a few kilobytes can hold gigabytes
of run-length blocks (a zstd bomb), so each is given to the decompressor in pieces too small
to make much more than is left of its bound, and refused as soon as it makes more than it
may: the header frame one line of at most ``max_line_bytes`` and its newline, a torn frame
the log's ``max_bytes`` (docs/format.md §Recovery).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Final

import zstandard

from sessionref.errors import SessionLogError

FEED: Final = 64
"""The fewest compressed bytes given to the decompressor at a time: a block takes at least 3,
so at most 22 blocks (under 3 MiB of plaintext) are made past a bound before it is seen."""

MAX_RATIO: Final = (128 << 10) // 3 + 1
"""The most plaintext one compressed byte can make: a block of at least 3 bytes makes at most
128 KiB. While the bound is far, more than :data:`FEED` bytes are given at a time (as many as
make at most what is left of it, and the end of a block begun before), so a frame well under
its bound is decompressed in a call or a few, not a call per 64 bytes."""


_IDLE: Final[list[zstandard.ZstdDecompressor]] = []
"""Decompressors made and not in use now (see :func:`lent_decompressor`)."""
KEPT_BYTES: Final = 16 << 20
"""The most memory an idle decompressor may hold (its window buffers, as big as the largest
window it decompressed, 2 MiB for a log's frames): one that holds more is let go."""


@contextlib.contextmanager
def lent_decompressor() -> Iterator[zstandard.ZstdDecompressor]:
    """A decompressor that nothing else uses until it is given back, as the block ends.

    Making one costs some 15 µs (its context, then its window buffers on first use), which
    a read paid twice per log (the header frame, then the body): a fixed cost of every
    session in a batch of small logs. One that was given back is lent again instead. Each
    use of it (``decompressobj``, ``stream_reader``) starts afresh, whatever the one before
    did (ended, failed, or was dropped half-way), so a lent decompressor decompresses as a
    new one; and as one is lent to one user at a time, readers in other threads or generators
    left half-read never share one. There are never more idle than were in use at once, and
    none that holds more than :data:`KEPT_BYTES`.

    >>> with lent_decompressor() as first:
    ...     pass
    >>> with lent_decompressor() as again, lent_decompressor() as other:
    ...     again is first, other is first
    (True, False)
    """
    try:
        decompressor = _IDLE.pop()  # atomic, as is the append: no lock between threads
    except IndexError:
        decompressor = zstandard.ZstdDecompressor()
    try:
        yield decompressor
    finally:
        if decompressor.memory_size() <= KEPT_BYTES:
            _IDLE.append(decompressor)


def bounded_plaintext(frame: bytes, limit: int) -> tuple[bytes, bool] | None:
    """The plaintext of ``frame`` (a zstd frame, or the start of one) and whether the frame
    ended there; ``None`` once it makes more than ``limit`` bytes. A damaged frame raises
    ``zstandard.ZstdError``.

    >>> frame = zstandard.ZstdCompressor().compress(b"abc\\n" * 100)
    >>> bounded_plaintext(frame, 400) == (b"abc\\n" * 100, True), bounded_plaintext(frame, 399)
    (True, None)
    """
    pieces: list[bytes] = []
    made = start = 0
    with lent_decompressor() as lent:
        decompressor = lent.decompressobj()
        while start < len(frame):
            end = start + max(FEED, (limit - made) // MAX_RATIO)
            pieces.append(piece := decompressor.decompress(frame[start:end]))
            made, start = made + len(piece), end
            if made > limit:
                return None
        return b"".join(pieces), decompressor.eof


def decompress_frame(frame: bytes, max_line_bytes: int) -> bytes:
    """A complete header frame's plaintext, at most a line of ``max_line_bytes`` and its
    newline; a damaged frame, or one that makes more, raises :class:`SessionLogError`.

    >>> decompress_frame(zstandard.ZstdCompressor().compress(b"a\\n"), 1)
    b'a\\n'
    >>> try:
    ...     decompress_frame(zstandard.ZstdCompressor().compress(b"ab\\n"), 1)
    ... except SessionLogError as exc:
    ...     print(exc)
    corrupt zstd log: first frame holds more than one header line of at most 1 bytes
    """
    try:
        made = bounded_plaintext(frame, max_line_bytes + 1)
    except zstandard.ZstdError as exc:
        raise SessionLogError(f"corrupt zstd log: frame failed validation: {exc}") from None
    if made is None:
        raise SessionLogError(
            "corrupt zstd log: first frame holds more than one header line"
            f" of at most {max_line_bytes} bytes"
        )
    if not made[1]:
        raise SessionLogError("corrupt zstd log: frame failed validation")
    return made[0]


def torn_frame_prefix(frame_start: bytes, max_bytes: int) -> bytes:
    """What an incomplete frame decompresses to as far as it goes (nothing if it cannot);
    more than ``max_bytes`` raises :class:`SessionLogError`.

    >>> frame = zstandard.ZstdCompressor(write_checksum=True).compress(b"abc\\n" * 100)
    >>> torn_frame_prefix(frame[:-2], 400) == b"abc\\n" * 100, torn_frame_prefix(b"\\x00\\x00", 1)
    (True, b'')
    """
    try:
        made = bounded_plaintext(frame_start, max_bytes)
    except zstandard.ZstdError:
        return b""
    if made is None:
        raise SessionLogError(f"decompressed log exceeds {max_bytes} bytes")
    return made[0]
