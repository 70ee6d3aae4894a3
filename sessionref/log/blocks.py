"""The blocks of a zstd frame, walked by their headers alone (RFC 8878 §3.1.1.2): each a
3-byte header (last-block bit, type, size), then its content, one byte for an RLE block. The
frame scanners of :mod:`~sessionref.log.frames` and :mod:`~sessionref.log.framefile` walk a
frame's blocks with :func:`walk_blocks`; a run of empty blocks, which a hostile log makes by
the million, is passed by comparing thousands of them at a time.
"""

from __future__ import annotations

import struct
from typing import Final

from sessionref.errors import SessionLogError

_U32: Final = struct.Struct("<I")
Compressed = bytes | bytearray
"""Bytes of a zstd log: all of it, or a window of it read from its file."""


def walk_blocks(buffer: Compressed, offset: int, size: int, base: int = 0) -> tuple[int, bool]:
    """Pass the blocks of a frame from the one at ``offset`` while their headers lie in the
    first ``size`` bytes of ``buffer``: where the walk stopped (past the last block, or at the
    header it could not read whole: the end of a block may lie past ``size``) and whether it
    passed the frame's last block. An error names a byte as ``base`` plus its place in
    ``buffer``.

    >>> empty, rle, last_of_two = b"\\x00\\x00\\x00", b"\\x02\\x00\\x00x", b"\\x11\\x00\\x00"
    >>> walk_blocks(empty + rle + last_of_two[:2], 0, 9), walk_blocks(last_of_two, 0, 3)
    ((7, False), (5, True))
    """
    unpack = _U32.unpack_from
    while True:  # blocks: a 3-byte header each, then 1 byte (RLE) or its size
        if size - offset < 4:  # the last block may be an empty one at the very end
            if size - offset < 3:
                return offset, False
            block = int.from_bytes(buffer[offset : offset + 3], "little")
        else:
            block = unpack(buffer, offset)[0] & 0xFFFFFF
        kind = block & 6
        if kind == 6:
            where = base + offset
            raise SessionLogError(f"corrupt zstd log: reserved block type at byte {where}")
        if not block & ~4 and buffer.startswith(_EMPTY_RUNS[block][1], offset, size):
            offset = _past_empty_run(buffer, offset, size, block)
            continue
        offset += 4 if kind == 2 else 3 + (block >> 3)
        if block & 1:
            return offset, True


_EMPTY_RUNS: Final = {
    block: [block.to_bytes(3, "little") * count for count in (4096, 64, 1)] for block in (0, 4)
}
"""Runs of one empty block that is not a frame's last (raw or compressed, no content: its
3-byte header alone), 4,096, 64 and 1 long: what a hostile frame of millions is made of."""


def _past_empty_run(buffer: Compressed, offset: int, size: int, block: int) -> int:
    """Where the run of empty blocks ``block`` (:data:`_EMPTY_RUNS`) from ``offset`` ends,
    found by comparing thousands at a time, where a block at a time takes a second a million;
    each is one the block walk of :func:`walk_blocks` would pass, so it ends where that would.

    >>> _past_empty_run(bytes(3000) + b"\\x04\\x00\\x00" + bytes(8), 0, 3011, 0)
    3000
    """
    for run in _EMPTY_RUNS[block]:
        while buffer.startswith(run, offset, size):
            offset += len(run)
    return offset
