"""Finding a zstd log's frames: the inline path :func:`scan_frames` takes for a common frame
gives what walking every frame by its full structure (:func:`_frame_end`) gives, on frames of
every header form, several blocks, RLE blocks, torn tails and stray bytes."""

from __future__ import annotations

import random

import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionref.errors import SessionLogError
from sessionref.log.frames import FrameScan, _frame_end, newline_count, scan_frames
from tests.conftest import examples


def walked(buffer: bytes) -> FrameScan | str:
    """The frames of ``buffer`` found by the full structure alone, or the error it raises."""
    frames: list[tuple[int, int]] = []
    start = 0
    try:
        while start < len(buffer):
            end = _frame_end(buffer, start, len(buffer))
            if end < 0:
                return FrameScan(frames, start)
            frames.append((start, end))
            start = end
    except SessionLogError as exc:
        return str(exc)
    return FrameScan(frames)


def scanned(buffer: bytes) -> FrameScan | str:
    try:
        return scan_frames(buffer)
    except SessionLogError as exc:
        return str(exc)


plaintexts = st.one_of(
    st.binary(max_size=300),
    st.binary(min_size=1, max_size=3).map(lambda b: b * 40_000),  # RLE and several blocks
    st.integers(0, 99).map(lambda seed: random.Random(seed).randbytes(60_000)),  # raw blocks
)
RLE_FRAME = bytes.fromhex("28b52ffd20052b000078")
"""One RLE block, the last: ``xxxxx`` (zstd writes these inside larger frames)."""
compressed = st.builds(
    lambda text, checksum, size, level, dict_id: zstandard.ZstdCompressor(
        level=level, write_checksum=checksum, write_content_size=size, write_dict_id=dict_id
    ).compress(text),
    plaintexts,
    st.booleans(),
    st.booleans(),
    st.sampled_from([1, 3, 19]),
    st.booleans(),
)
frames = compressed | st.just(RLE_FRAME)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(frames, max_size=6),
    st.integers(0, 40),
    st.binary(max_size=6),
)
def test_the_inline_path_finds_what_the_full_structure_finds(
    parts: list[bytes], cut: int, stray: bytes
) -> None:
    buffer = b"".join(parts)
    for candidate in (buffer, buffer[: max(0, len(buffer) - cut)], buffer + stray):
        assert scanned(candidate) == walked(candidate)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from([b"\n", b"a", b"\n\n", b"\xff", b"{}\r"])).map(b"".join))
def test_newline_count_is_the_count_of_newlines(text: bytes) -> None:
    assert newline_count(text) == newline_count(bytearray(text)) == text.count(b"\n")


def by_the_format(buffer: bytes) -> FrameScan | str:
    """The frames of ``buffer`` walked a block at a time as RFC 8878 lays a frame out (magic,
    frame header, blocks of a 3-byte header each, a checksum), written apart from the scanner."""
    frames: list[tuple[int, int]] = []
    start = 0
    while start < len(buffer):
        if len(buffer) - start < 4:  # stray bytes of a torn write
            return FrameScan(frames, start)
        if buffer[start : start + 4] != MAGIC:
            return f"corrupt zstd log: invalid frame magic at byte {start}"
        if len(buffer) - start == 4:
            return FrameScan(frames, start)
        descriptor = buffer[start + 4]
        if descriptor & 0x18:
            return f"corrupt zstd log: reserved frame header bit at byte {start + 4}"
        single = descriptor & 0x20
        content = [1 if single else 0, 2, 4, 8][descriptor >> 6]
        offset = start + 5 + (0 if single else 1) + [0, 1, 2, 4][descriptor & 3] + content
        while True:
            if len(buffer) - offset < 3:
                return FrameScan(frames, start)
            header = int.from_bytes(buffer[offset : offset + 3], "little")
            kind = (header >> 1) & 3
            if kind == 3:
                return f"corrupt zstd log: reserved block type at byte {offset}"
            offset += 3 + (1 if kind == 1 else header >> 3)
            if header & 1:
                break
        offset += 4 if descriptor & 4 else 0
        if offset > len(buffer):
            return FrameScan(frames, start)
        frames.append((start, offset))
        start = offset
    return FrameScan(frames)


MAGIC = bytes.fromhex("28b52ffd")
EMPTY_RAW, EMPTY_COMPRESSED = b"\x00\x00\x00", b"\x04\x00\x00"
blocks = st.one_of(
    st.tuples(
        st.sampled_from([EMPTY_RAW, EMPTY_COMPRESSED]),
        st.sampled_from([1, 63, 64, 65, 4095, 4096, 4097, 9000]),
    ).map(lambda run: run[0] * run[1]),
    st.binary(max_size=5).map(lambda data: (len(data) << 3).to_bytes(3, "little") + data),  # raw
    st.just(b"\x02\x00\x00x"),  # RLE: one byte
    st.just(b"\x06\x00\x00"),  # reserved
)
empty_frames = st.builds(
    lambda descriptor, body, last: MAGIC + bytes([descriptor, 0x48]) + b"".join(body) + last,
    st.sampled_from([0x00, 0x04]),  # a window byte, with and without a checksum
    st.lists(blocks, max_size=6),
    st.sampled_from([b"\x01\x00\x00", b"\x01\x00\x00abcd"]),  # the last block, empty
)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(empty_frames | frames, min_size=1, max_size=4), st.integers(0, 40000))
def test_runs_of_empty_blocks_are_passed_as_a_block_at_a_time_passes_them(
    parts: list[bytes], cut: int
) -> None:
    """A frame of many empty blocks (a hostile log makes millions) is passed by comparing
    runs of them at once: the frames, the torn tail and the errors, at the same bytes, are
    those a walk of one block at a time finds, wherever the buffer ends."""
    buffer = b"".join(parts)
    for candidate in (buffer, buffer[: max(0, len(buffer) - cut)], buffer[:cut], buffer + b"\x28"):
        assert scanned(candidate) == by_the_format(candidate)
