"""The frames of a zstd file found from its bytes given a piece at a time, holding no more
than a piece (and the few bytes of a header a piece ends in).

:func:`~sessionref.log.frames.scan_frames` finds the frames of bytes held whole. A file is
read in pieces instead (:mod:`~sessionref.log.zstdfile`: a file mapped into memory and
truncated meanwhile is a SIGBUS): the frames a piece holds whole are scanned as the whole
file would be, and a frame that goes on past it is followed block by block
(:func:`~sessionref.log.blocks.walk_blocks`), the contents of its blocks passed without being
kept. So a frame of any size, a compressed Codex rollout's one frame or millions of empty
blocks, costs one pass and the memory of a piece, and the frames, the torn tail and the
errors (at the same bytes) are those of the whole file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from sessionref.log.blocks import walk_blocks
from sessionref.log.frames import Chunk, first_block, scan_frames


class FoundFrames(NamedTuple):
    """Where the complete frames of a zstd file lie: the first (``None`` when there is none),
    the end of the last, and the start of a torn last frame (``None`` when it ends on one)."""

    first: tuple[int, int] | None
    end: int
    torn_start: int | None


class _Walk:
    """A walk through the frames of a file whose bytes come in pieces: ``window`` holds the
    bytes from ``at`` on that were read and not passed yet; ``frame`` is the start of the frame
    whose blocks are being walked (``-1``: ``at`` is where a frame starts), ``at`` then its
    next block's header, or its end once its last block is passed (``closing``)."""

    def __init__(self, first_only: bool) -> None:
        self.first_only = first_only
        self.window = bytearray()
        self.at = self.taken = self.end = 0
        self.frame = -1
        self.checksum = 0
        self.closing = False
        self.first: tuple[int, int] | None = None

    def take(self, piece: Chunk) -> bool:
        """Walk on through the next ``piece`` of the file; whether the walk is done (the first
        frame found, when only that is looked for)."""
        skipped = self.at - self.taken  # bytes of a block's content the piece begins with
        self.taken += len(piece)
        if skipped < len(piece):
            self.window += piece[max(0, skipped) :]
        while self._step():
            pass
        return self.first_only and self.first is not None

    def _pass(self, to: int) -> None:
        """Move ``at`` on to ``to``, dropping the bytes before it."""
        del self.window[: to - self.at]
        self.at = to

    def _found(self, start: int, end: int) -> None:
        """A complete frame from ``start`` to ``end``."""
        self.first = self.first or (start, end)
        self.end = end

    def _step(self) -> bool:
        """Pass what the window holds, one step; whether there may be a next step."""
        if self.first_only and self.first is not None:
            return False
        if self.frame < 0:
            return self._frames()
        if self.at > self.taken:  # a block's content, or the frame's end, is still ahead
            return False
        if self.closing:
            self._found(self.frame, self.at)
            self.frame, self.closing = -1, False
            return True
        offset, last = walk_blocks(self.window, 0, len(self.window), self.at)
        if last:
            offset += self.checksum
            self.closing = True
        self._pass(self.at + offset)
        return last

    def _frames(self) -> bool:
        """Scan the whole frames the window holds from a frame's start, as the whole file
        would be (same errors), then go into the frame it ends inside once it holds the
        frame's descriptor (which :func:`scan_frames` checked)."""
        at, window = self.at, self.window
        scan = scan_frames(window, 1 if self.first_only else None, base=at)
        if scan.frames:
            (start, end), last = scan.frames[0], scan.frames[-1][1]
            self._found(at + start, at + end)
            self.end = at + last
        torn = len(window) if scan.torn_start is None else scan.torn_start
        if (self.first_only and self.first is not None) or len(window) - torn < 5:
            self._pass(at + torn)
            return False
        descriptor = window[torn + 4]
        self.frame, self.checksum = at + torn, 4 if descriptor & 4 else 0
        self._pass(self.frame + first_block(descriptor))
        return True


def find_frames(pieces: Iterable[Chunk], first_only: bool = False) -> FoundFrames:
    """The frames of the file whose bytes are ``pieces``, as
    :func:`~sessionref.log.frames.scan_frames` finds them in the whole: pieces are taken only
    as far as the first frame when ``first_only`` (its ``torn_start`` then says nothing).

    >>> import zstandard
    >>> frame = zstandard.ZstdCompressor().compress(b"a\\n")
    >>> find_frames([frame[:3], frame[3:] + frame, frame[:4]])
    FoundFrames(first=(0, 11), end=22, torn_start=22)
    >>> find_frames(iter([frame, b"never taken"]), first_only=True)
    FoundFrames(first=(0, 11), end=11, torn_start=None)
    """
    walk = _Walk(first_only)
    for piece in pieces:
        if walk.take(piece):
            return FoundFrames(walk.first, walk.end, None)
    torn = walk.frame if walk.frame >= 0 else walk.at if walk.window else None
    return FoundFrames(walk.first, walk.end, torn)
