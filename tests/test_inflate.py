"""Single zstd frames decompressed under a bound (sessionref/log/inflate.py): a bomb is refused
soon after the bound, and a frame well under it costs about what decompressing it whole costs
(not one decompressor call per 64 compressed bytes)."""

from __future__ import annotations

import io
import itertools
import os
from typing import Any

import pytest
import zstandard

from sessionref.errors import SessionLogError
from sessionref.log import inflate
from sessionref.log.frames import frames_plaintext
from sessionref.log.inflate import decompress_frame, lent_decompressor, torn_frame_prefix

BLOCK: int = 128 << 10
"""The largest block a zstd frame holds (its format's Block_Maximum_Size)."""


class Fed:
    """What the decompressors made while a test ran: the size of each piece of plaintext."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pieces: list[int] = []
        real = zstandard.ZstdDecompressor
        pieces = self.pieces

        class Counted:
            def __init__(self, inner: Any) -> None:
                self.inner = inner

            def decompress(self, data: bytes) -> bytes:
                made: bytes = self.inner.decompress(data)
                pieces.append(len(made))
                return made

            @property
            def eof(self) -> bool:
                return bool(self.inner.eof)

        class Decompressor:
            def decompressobj(self) -> Counted:
                return Counted(real().decompressobj())

            def memory_size(self) -> int:
                return 0

        monkeypatch.setattr(zstandard, "ZstdDecompressor", Decompressor)
        monkeypatch.setattr(inflate, "_IDLE", [])  # none lent that was made before


def lines(count: int) -> bytes:
    """``count`` JSON lines of random text (they compress about 2:1)."""
    return b"".join(
        b'{"seq":%d,"text":"%s"}\n' % (i, os.urandom(30).hex().encode()) for i in range(count)
    )


def test_a_large_torn_frame_under_its_bound_is_fed_in_few_pieces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A torn last frame of some 4 MB (a batch of records cut short) under the 1 GiB limit:
    it was given to the decompressor 64 bytes at a time, some 60,000 calls, twice the time of
    decompressing it whole."""
    text = lines(50_000)
    torn = zstandard.ZstdCompressor(write_checksum=True).compress(text)[:-2]
    fed = Fed(monkeypatch)
    assert torn_frame_prefix(torn, 1 << 30) == text
    assert len(fed.pieces) <= len(torn) // 4096


def test_a_header_frame_is_fed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    line = (
        b'{"type":"session","id":"s","cwd":"/w","padding":"%s"}\n' % os.urandom(500).hex().encode()
    )
    frame = zstandard.ZstdCompressor().compress(line)
    assert len(frame) > 64
    fed = Fed(monkeypatch)
    assert decompress_frame(frame, 64 << 20) == line
    assert len(fed.pieces) == 1


def rle_blocks(count: int) -> bytes:
    """A frame (no content size, a 128 KiB window) of ``count`` run-length blocks of a full
    block each, 4 bytes apiece, that never ends: a zstd bomb, built from the format's spec."""
    block = (BLOCK << 3 | 2).to_bytes(3, "little") + b"a"
    return b"\x28\xb5\x2f\xfd\x00\x38" + block * count


@pytest.mark.parametrize("limit", [1 << 20, 64 << 20])
def test_a_bomb_is_refused_soon_after_its_bound(
    monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    """Past the bound, at most 3 MiB more is made before the bomb is refused (docs/format.md
    §Recovery: refused as soon as it makes more, not once decompressed)."""
    bomb = rle_blocks(2 * limit // BLOCK)
    fed = Fed(monkeypatch)
    with pytest.raises(SessionLogError, match=f"exceeds {limit} bytes"):
        torn_frame_prefix(bomb, limit)
    assert limit < sum(fed.pieces) <= limit + (3 << 20)


def test_a_decompressor_given_back_is_lent_again_to_one_user_at_a_time() -> None:
    """Reads reuse decompressors (making one is a fixed cost of every log read) but never
    share one: two bodies read in turns, each through a generator left half-read, come out
    whole, and so does a frame decompressed after a read that failed half-way."""
    compress = zstandard.ZstdCompressor(write_checksum=True).compress
    one, two = lines(20_000), lines(30_000)
    first = frames_plaintext(io.BytesIO(compress(one) + compress(one)), 1 << 30)
    second = frames_plaintext(io.BytesIO(compress(two)), 1 << 30)
    made: list[list[bytes]] = [[], []]
    for pieces in itertools.zip_longest(first, second, fillvalue=b""):  # in turns
        made[0].append(pieces[0])
        made[1].append(pieces[1])
    assert len(made[0]) > 2 and b"".join(made[0]) == one + one and b"".join(made[1]) == two
    damaged = bytearray(compress(two))
    damaged[len(damaged) // 2] ^= 0xFF
    with pytest.raises(SessionLogError, match="failed validation"):
        list(frames_plaintext(io.BytesIO(bytes(damaged)), 1 << 30))
    assert decompress_frame(compress(b"h\n"), 9) == b"h\n"
    with lent_decompressor() as lent:
        pass
    with lent_decompressor() as again:
        assert again is lent


def test_an_idle_decompressor_holds_little_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """One that decompressed a frame of a window over ``KEPT_BYTES`` is not kept idle."""
    monkeypatch.setattr(inflate, "_IDLE", [])
    monkeypatch.setattr(inflate, "KEPT_BYTES", 1 << 20)
    big = io.BytesIO()
    with zstandard.ZstdCompressor(level=19).stream_writer(big, closefd=False) as writer:
        writer.write(os.urandom(4 << 20))  # no content size: a window of 8 MiB
    assert list(frames_plaintext(io.BytesIO(big.getvalue()), 1 << 30))
    assert inflate._IDLE == []
    assert decompress_frame(zstandard.ZstdCompressor().compress(b"h\n"), 9) == b"h\n"
    assert len(inflate._IDLE) == 1
