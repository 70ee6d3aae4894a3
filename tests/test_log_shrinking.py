"""A zstd DSH log read from its file in pieces, never mapped into memory: one truncated in
place while it is read is an error naming it (a mapping made the pages past its new end a
SIGBUS that killed the process, an MCP server with it), and the pieces find the frames the
whole file holds, with the same errors."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionref import DirectoryStore
from sessionref.errors import SessionLogError
from sessionref.log import framefile, zstdfile
from sessionref.log.frames import ZSTD_MAGIC, scan_frames
from sessionref.log.reader import read_zstd
from sessionref.log.writer import zstd_frame
from sessionref.snapshot import project_units
from tests.conftest import examples, script_output
from tests.log_damage import place, zstd_log
from tests.logs import turn
from tests.test_frames import empty_frames, frames

REPLIES = [random.Random(number).randbytes(6000).hex() for number in range(60)]
"""Replies that hardly compress: the log is some 400 KB, many pages and pieces."""
LOG = zstd_log(turn(6 * number, number + 1, "q", reply) for number, reply in enumerate(REPLIES))
CHANGED = "the file changed while it was read: it is shorter now"

SHRINKING = """
import os, sys
import sessionref.log.reader as reader
from sessionref import DirectoryStore
from sessionref.errors import SessionReferenceError

parse = reader.parse_header_line

def shrunk_first(line):
    os.truncate(sys.argv[2], 0)  # the file shrinks once its frames are found, before the body
    return parse(line)

reader.parse_header_line = shrunk_first
try:
    DirectoryStore(sys.argv[1]).read("s")
except SessionReferenceError as exc:
    print(exc.code, exc)
"""


def test_a_log_truncated_while_it_is_read_is_an_error_not_a_signal(tmp_path: Path) -> None:
    path = place(tmp_path, LOG, compress=True)
    said = script_output(SHRINKING, str(tmp_path), str(path))
    assert said == f"SESSION_REFERENCE_READ_FAILED {path}: {CHANGED}\n"


class Shrinking:
    """An open file that truncates its file to ``size`` bytes at its ``at``-th read (from
    0; ``None``: never), counting them. It is unbuffered, so each read after that one sees
    the truncation (a buffered file may give bytes it read ahead before it, as they were)."""

    def __init__(self, path: Path, at: int | None, size: int) -> None:
        self.file = path.open("rb", buffering=0)
        self.path, self.at, self.size, self.reads = path, at, size, 0

    def _next(self) -> None:
        if self.reads == self.at:
            os.truncate(self.path, self.size)
        self.reads += 1

    def readinto(self, buffer: Any) -> int | None:
        self._next()
        return self.file.readinto(buffer)

    def read(self, size: int = -1) -> bytes:
        self._next()
        return self.file.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.file.seek(offset, whence)


def shrinking_read(path: Path, at: int | None) -> tuple[list[str], int]:
    """The texts of the log at ``path`` read through :class:`Shrinking`, and its reads."""
    file = Shrinking(path, at, path.stat().st_size // 2)
    try:
        log = read_zstd(cast(BinaryIO, file), "s", str(path))
    finally:
        file.file.close()
    return [unit.text for unit in project_units(log.records)], file.reads


def test_a_log_truncated_at_any_read_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Truncated to half before each read in turn (the frames in 64 KiB pieces, the body as
    it is decompressed, the torn last frame): always the error, never a wrong log."""
    monkeypatch.setattr(zstdfile, "READ_SIZE", 1 << 16)
    torn = zstd_frame(b'{"type":"turn/start","seq":360,"time":1,"data":{"turn":61}}\n')
    path = place(tmp_path, LOG + torn[:-3], compress=True)
    texts, reads = shrinking_read(path, None)
    assert texts == [text for reply in REPLIES for text in ("q", reply)]
    pieces = -(-len(LOG + torn[:-3]) // (1 << 16))
    assert reads >= pieces + 2 + 1  # the scan, the body's reads, the torn frame
    for at in range(reads):
        path.write_bytes(LOG + torn[:-3])
        with pytest.raises(SessionLogError) as caught:
            shrinking_read(path, at)
        assert str(caught.value) == f"{path}: {CHANGED}"


def test_a_log_that_grows_while_it_is_read_is_read_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer appending meanwhile: what was there when the read began, as a mapping of
    the file then was."""
    path = place(tmp_path, LOG, compress=True)
    parse = zstdfile.decompress_frame

    def grown_first(frame: bytes, limit: int) -> bytes:
        with path.open("ab") as file:
            file.write(zstd_frame(b'{"type":"turn/start","seq":360,"time":1,"data":{"turn":61}}\n'))
        return parse(frame, limit)

    monkeypatch.setattr(zstdfile, "decompress_frame", grown_first)
    log = DirectoryStore(tmp_path).read("s")
    assert [record.seq for record in log.records] == list(range(360))


def whole(buffer: bytes) -> tuple[bytes | None, tuple[int, int], int | None] | str:
    """What :func:`scan_frames` finds in the whole of ``buffer``, as pass 1 answers it."""
    try:
        scan = scan_frames(buffer)
    except SessionLogError as exc:
        return str(exc)
    if not scan.frames:
        return None, (0, 0), scan.torn_start
    (start, end), last = scan.frames[0], scan.frames[-1][1]
    return buffer[start:end], (end, last), scan.torn_start


def in_pieces(buffer: bytes) -> tuple[bytes | None, tuple[int, int], int | None] | str:
    try:
        return zstdfile._scan_file(cast(BinaryIO, zstdfile.as_file(buffer)), len(buffer))
    except SessionLogError as exc:
        return str(exc)


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(frames | empty_frames, max_size=5),
    st.integers(0, 40),
    st.binary(max_size=6),
    st.sampled_from([1, 2, 3, 5, 64, 1000, 1 << 20]),
)
def test_pieces_find_what_the_whole_file_holds(
    parts: list[bytes], cut: int, stray: bytes, read_size: int
) -> None:
    """Frames, torn tails and errors (at the same byte) whatever the pieces' size."""
    buffer = b"".join(parts)
    saved = zstdfile.READ_SIZE
    zstdfile.READ_SIZE = read_size  # type: ignore[misc]
    try:
        for candidate in (buffer, buffer[: max(0, len(buffer) - cut)], buffer + stray):
            assert in_pieces(candidate) == whole(candidate)
    finally:
        zstdfile.READ_SIZE = saved  # type: ignore[misc]


def frame_walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each buffer :mod:`~sessionref.log.framefile` scans for frames or walks
    the blocks of from now on, one per call (the frames, a frame's blocks)."""
    looked_at: list[int] = []

    def counted(walk: Callable[..., Any]) -> Callable[..., Any]:
        def looked(buffer: bytearray, *args: Any, **kwargs: Any) -> Any:
            looked_at.append(len(buffer))
            return walk(buffer, *args, **kwargs)

        return looked

    for name in ("scan_frames", "walk_blocks"):
        monkeypatch.setattr(framefile, name, counted(getattr(framefile, name)))
    return looked_at


def test_a_frame_of_many_empty_blocks_is_walked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame of 100,000 empty blocks read 64 bytes at a time: scanned whole after every
    piece, that would be some 4,700 scans of up to 300 KB; the frame is followed block by
    block instead, so the bytes looked at add up to those of the file (and a header or so a
    piece)."""
    hostile = ZSTD_MAGIC.to_bytes(4, "little") + b"\x00\x00" + b"\x00" * 300_000 + b"\x01\x00\x00"
    buffer = zstd_frame(b"h\n") + hostile + zstd_frame(b"a\n")
    monkeypatch.setattr(zstdfile, "READ_SIZE", 64)
    looked_at = frame_walks(monkeypatch)
    assert in_pieces(buffer) == whole(buffer)
    assert sum(looked_at) < len(buffer) + 3 * len(looked_at)
