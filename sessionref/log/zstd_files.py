"""Zstd files that a writer renames into place once complete (Codex's compressed rollouts),
read with the frame scanner of :mod:`sessionref.log.frames`, where a torn last frame is damage
rather than a write in progress; only as much is decompressed as is read.
"""

from __future__ import annotations

from collections.abc import Iterator

from sessionref.errors import SessionLogError
from sessionref.log.frames import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    Compressed,
    body_chunks,
    scan_frames,
)

__all__ = ["plaintext_chunks"]


def plaintext_chunks(
    location: str, compressed: Compressed, limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES
) -> Iterator[bytes]:
    """The plaintext of the zstd file at ``location`` in chunks, decompressed only as far as
    they are taken; the file must end on a frame (one a writer renamed into place once
    complete, as Codex does its compressed rollouts). A torn last frame, a frame that does not
    decompress or plaintext over ``limit`` raises :class:`SessionLogError` naming the file.

    >>> from sessionref.log.writer import zstd_frame
    >>> frame = zstd_frame(b"a\\n")
    >>> list(plaintext_chunks("f", frame + frame)), list(plaintext_chunks("f", b""))
    ([b'a\\na\\n'], [])
    >>> list(plaintext_chunks("f", frame[:-1]))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: f: corrupt zstd file: it ends inside the frame at byte 0
    """
    try:
        scan = scan_frames(compressed)
        if scan.torn_start is not None:
            raise SessionLogError(
                f"corrupt zstd file: it ends inside the frame at byte {scan.torn_start}"
            )
        if scan.frames:
            yield from body_chunks(compressed, (scan.frames[0][0], scan.frames[-1][1]), limit)
    except SessionLogError as exc:
        raise SessionLogError(f"{location}: {exc}") from None
