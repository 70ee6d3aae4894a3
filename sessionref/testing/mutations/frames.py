"""Damage to zstd frames and raw bytes: the second and third layers of
:mod:`sessionref.testing.mutations`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import zstandard
from hypothesis import strategies as st

from sessionref.testing.mutations.values import (
    _BOMB_SIZES,
    FRAME_MUTATIONS,
    GARBAGE_LINES,
    ZSTD_MAGIC,
    known_kinds,
    repeat_steps,
    zstd_bomb,
)

__all__ = ["frame_lines", "mutate_bytes", "mutate_frames"]

_SKIPPABLE_MAGIC: Final = b"\x50\x2a\x4d\x18"


@st.composite
def frame_lines(draw: st.DrawFn, lines: Sequence[bytes]) -> tuple[list[bytes], tuple[str, ...]]:
    """Independent zstd frames holding ``lines`` (each with its newline), valid but varied.

    Mostly one frame per line, as DSH writes them; sometimes several lines share a frame or a
    record line is split across two frames (a header line stays whole in the first frame).
    Compression level, checksums and content sizes vary.

    >>> from hypothesis import find
    >>> frames, _ = find(frame_lines([b"{}", b"[]"]), lambda found: len(found[0]) == 2)
    >>> import zstandard
    >>> [zstandard.ZstdDecompressor().decompressobj().decompress(f) for f in frames]
    [b'{}\\n', b'[]\\n']
    """
    level = draw(st.sampled_from([3, 1, -5, 9]))
    checksum = draw(st.booleans())
    content_size = draw(st.booleans())
    compressor = zstandard.ZstdCompressor(
        level=level, write_checksum=checksum, write_content_size=content_size
    )
    pieces = [line + b"\n" for line in lines]
    steps = [f"frames at level {level}, checksum={checksum}, content size={content_size}"]
    layout = draw(st.sampled_from(["one per line", "one per line", "grouped", "split"]))
    if layout == "grouped" and len(pieces) > 1:
        at = draw(st.integers(0, len(pieces) - 2))
        count = draw(st.integers(2, min(6, len(pieces) - at)))
        pieces[at : at + count] = [b"".join(pieces[at : at + count])]
        steps.append(f"lines {at + 1}..{at + count} in one frame")
    elif layout == "split" and len(pieces) > 1:
        at = draw(st.integers(1, len(pieces) - 1))
        if len(pieces[at]) > 1:
            cut = draw(st.integers(1, len(pieces[at]) - 1))
            pieces[at : at + 1] = [pieces[at][:cut], pieces[at][cut:]]
            steps.append(f"line {at + 1} split across two frames at byte {cut}")
    return [compressor.compress(piece) for piece in pieces], tuple(steps)


@st.composite
def _frame_mutation(
    draw: st.DrawFn, frames: list[bytes], kinds: Sequence[str], bomb_sizes: Sequence[int]
) -> tuple[list[bytes], str]:
    kind = draw(st.sampled_from(kinds))
    out = list(frames)
    where = draw(st.integers(0, len(out)))
    index = draw(st.integers(0, len(out) - 1)) if out else 0
    if (not out or not out[index]) and kind in ("flip", "flip-header", "cut"):
        kind = "random-frame"  # these work on the bytes of an existing frame
    if not out and kind in ("drop", "duplicate", "swap"):
        kind = "random-frame"
    if kind in ("flip", "flip-header"):
        frame = out[index]
        end = min(len(frame), 14) if kind == "flip-header" else len(frame)
        at = draw(st.integers(0, end - 1))
        mask = draw(st.integers(1, 255))
        out[index] = frame[:at] + bytes([frame[at] ^ mask]) + frame[at + 1 :]
        return out, f"flip byte {at} of frame {index + 1} by {mask:#04x}"
    if kind == "cut":
        at = draw(st.integers(0, len(out[index]) - 1))
        out[index] = out[index][:at]
        return out, f"cut frame {index + 1} to {at} bytes"
    if kind == "drop":
        del out[index]
        return out, f"drop frame {index + 1}"
    if kind == "duplicate":
        out.insert(where, out[index])
        return out, f"copy frame {index + 1} to {where + 1}"
    if kind == "swap":
        other = draw(st.integers(0, len(out) - 1))
        out[index], out[other] = out[other], out[index]
        return out, f"swap frames {index + 1} and {other + 1}"
    if kind == "random-frame":
        inserted = draw(st.binary(min_size=1, max_size=64))
    elif kind == "bad-magic":
        inserted = ZSTD_MAGIC + draw(st.binary(max_size=64))
    elif kind == "skippable":
        payload = draw(st.binary(max_size=32))
        nibble = draw(st.integers(0, 15))
        magic = bytes([0x50 | nibble]) + _SKIPPABLE_MAGIC[1:]
        inserted = magic + len(payload).to_bytes(4, "little") + payload
    elif kind == "garbage-text-frame":
        junk = draw(st.one_of(st.sampled_from(GARBAGE_LINES), st.binary(max_size=48)))
        inserted = zstandard.ZstdCompressor().compress(junk + draw(st.sampled_from([b"\n", b""])))
    else:
        size = draw(st.sampled_from(bomb_sizes))
        inserted = zstd_bomb(size, line=draw(st.booleans()))
    out.insert(where, inserted)
    return out, f"insert {kind} ({len(inserted)} bytes) as frame {where + 1}"


@st.composite
def mutate_frames(
    draw: st.DrawFn,
    frames: Sequence[bytes],
    *,
    min_mutations: int = 1,
    max_mutations: int = 2,
    kinds: Sequence[str] | None = None,
    bomb_sizes: Sequence[int] = _BOMB_SIZES,
) -> tuple[list[bytes], tuple[str, ...]]:
    """Damaged copies of a list of zstd frames, with a description of each step.

    ``kinds`` limits the damage to some of :data:`FRAME_MUTATIONS` (default: all);
    ``bomb_sizes`` are the decompressed sizes of the zstd bombs it may insert.

    >>> import zstandard
    >>> from hypothesis import given, settings
    >>> frame = zstandard.ZstdCompressor().compress(b'{"type":"session"}\\n')
    >>> @settings(max_examples=20, deadline=None)
    ... @given(mutate_frames([frame, frame], bomb_sizes=[1000]))
    ... def test_frames_change(damaged):
    ...     frames, steps = damaged
    ...     assert steps and all(isinstance(f, bytes) for f in frames)
    >>> test_frames_change()
    """
    chosen = FRAME_MUTATIONS if kinds is None else known_kinds(kinds, FRAME_MUTATIONS)
    return repeat_steps(
        draw,
        list(frames),
        lambda out: _frame_mutation(out, chosen, bomb_sizes),
        min_mutations,
        max_mutations,
    )


@st.composite
def _byte_mutation(draw: st.DrawFn, data: bytes) -> tuple[bytes, str]:
    kind = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "torn-append"]))
    at = draw(st.integers(0, len(data)))
    if kind == "truncate":
        return data[:at], f"truncate the file to {at} bytes"
    if kind == "flip" and data:
        at = min(at, len(data) - 1)
        mask = draw(st.integers(1, 255))
        return data[:at] + bytes([data[at] ^ mask]) + data[at + 1 :], f"flip byte {at}"
    if kind == "delete" and data:
        count = draw(st.integers(1, 64))
        return data[:at] + data[at + count :], f"delete {count} bytes at {at}"
    if kind == "torn-append":
        torn = draw(st.sampled_from([b'{"type":"turn/end","se', b"{", b'{"type":"x"', ZSTD_MAGIC]))
        return data + torn, f"append torn write {torn!r}"
    inserted = draw(st.binary(min_size=1, max_size=32))
    return data[:at] + inserted + data[at:], f"insert {inserted!r} at byte {at}"


@st.composite
def mutate_bytes(
    draw: st.DrawFn, data: bytes, *, min_mutations: int = 1, max_mutations: int = 2
) -> tuple[bytes, tuple[str, ...]]:
    """Damaged copies of a file's bytes: truncated, flipped, with bytes inserted or deleted.

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=20, deadline=None)
    ... @given(mutate_bytes(b"0123456789", max_mutations=1))
    ... def test_one_step(damaged):
    ...     assert len(damaged[1]) == 1
    >>> test_one_step()
    """
    return repeat_steps(draw, data, _byte_mutation, min_mutations, max_mutations)
