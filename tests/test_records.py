"""Record-level codecs: line limits, zstd frames, error positions."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from sessionref.errors import SessionLogError
from sessionref.log.frames import check_line_lengths, decompress_frames, zstd_chunks
from sessionref.log.reader import read_plain


def first_long_line(buffer: bytes, limit: int) -> int | None:
    for number, line in enumerate(buffer.split(b"\n"), 1):
        if len(line) > limit:
            return number
    return None


@given(st.binary(max_size=60).map(lambda b: b.replace(b"\x00", b"\n")), st.integers(0, 10))
def test_line_limit_finds_the_first_long_line(buffer: bytes, limit: int) -> None:
    try:
        check_line_lengths(buffer, limit)
        found = None
    except SessionLogError as exc:
        found = int(str(exc).split()[1])
    assert found == first_long_line(buffer, limit)


@given(st.lists(st.binary(min_size=1, max_size=40), min_size=1, max_size=6), st.integers(1, 12))
def test_frames_decompress_whole_and_a_torn_last_frame_is_dropped(
    lines: list[bytes], cut: int
) -> None:
    frames = [zstandard.ZstdCompressor().compress(line) for line in lines]
    joined = b"".join(frames)
    assert decompress_frames(joined) == b"".join(lines)
    torn = joined[: len(joined) - min(cut, len(frames[-1]) - 1)]
    assert decompress_frames(torn) == b"".join(lines[:-1])
    assert b"".join(zstd_chunks(io.BytesIO(torn))) == b"".join(lines[:-1])


def test_a_torn_last_frame_longer_than_the_tail_window_is_dropped(tmp_path: Path) -> None:
    head = zstandard.ZstdCompressor().compress(b"header\n")
    body = random.Random(7).randbytes(3 << 20)  # incompressible: a frame over 3 MB
    last = zstandard.ZstdCompressor().compress(body)
    path = tmp_path / "log.zstd"
    path.write_bytes(head + last[:-10])
    with path.open("rb") as file:
        assert b"".join(zstd_chunks(file)) == b"header\n"
    path.write_bytes(head + last)
    with path.open("rb") as file:
        assert b"".join(zstd_chunks(file)) == b"header\n" + body
    small = zstandard.ZstdCompressor().compress(random.Random(8).randbytes(300_000))
    path.write_bytes(head + last + small[:-10])  # a torn frame after megabytes of output
    with path.open("rb") as file:
        assert b"".join(zstd_chunks(file)) == b"header\n" + body


@given(st.integers(1, 40), st.integers(2, 3000), st.sampled_from(["json", "gap", "long"]))
def test_errors_name_the_line_whatever_the_chunking(bad: int, chunk: int, defect: str) -> None:
    """Line ``bad + 1`` of the file is damaged before the last ``turn/end``, which makes the
    log corrupt; pieces must not shift the line number in the message."""
    lines = [b'{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}']
    lines += [b'{"type":"turn/start","seq":%d,"time":1,"data":{"turn":1}}' % s for s in range(45)]
    lines.append(
        b'{"type":"turn/end","seq":45,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}'
    )
    damaged = {"json": b"{oops", "gap": b'{"type":"turn/start","seq":99}', "long": b" " * 200}
    lines[bad] = damaged[defect]
    log = b"\n".join(lines) + b"\n"
    chunks = [log[i : i + chunk] for i in range(0, len(log), chunk)]
    with pytest.raises(SessionLogError) as caught:
        read_plain(chunks, "s", max_line_bytes=120)
    assert f"line {bad + 1}" in str(caught.value)
