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
