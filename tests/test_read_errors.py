"""What a read failure names: the first line over ``--max-line-bytes``, numbered in the file the
same for plain and zstd logs, and the log file, once (in the library and on the command line).

Expected line numbers come from splitting the plain bytes on newlines, not from the reader.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionref import DirectoryStore, SessionReferenceResolver, Target
from sessionref.cli import main
from sessionref.errors import SessionLogError, SessionReferenceError
from sessionref.log.frames import CHUNK_SIZE
from tests.log_damage import lines, place, plain_log, zstd_log
from tests.logs import Event, other, title, turn_end, user

LIMIT = 1000


def first_too_long(plain: bytes, limit: int) -> int:
    """The number of the first line of ``plain`` longer than ``limit`` (newline not counted)."""
    return next(n for n, line in enumerate(plain.split(b"\n"), 1) if len(line) > limit)


def events_with_long_lines(at: list[int], count: int, length: int) -> list[Event]:
    """``count`` user messages, those whose seq is in ``at`` padded to ``length`` bytes, then a
    ``turn/end``."""
    events = [other(0)]
    events += [user(seq, "x" * (length if seq in at else 10)) for seq in range(1, count)]
    return [*events, turn_end(count)]


def read_error(root: Path, limit: int = LIMIT) -> str:
    with pytest.raises(SessionLogError) as caught:
        DirectoryStore(root, max_line_bytes=limit).read("s")
    return str(caught.value)


@pytest.mark.parametrize("at", [[1], [3], [3, 5], [7]])
def test_a_line_too_long_has_its_number_in_the_file_plain_and_zstd(
    tmp_path: Path, at: list[int]
) -> None:
    events = events_with_long_lines(at, 8, 2 * LIMIT)
    plain = plain_log(events)
    expected = f"line {first_too_long(plain, LIMIT)} is longer than {LIMIT} bytes"
    assert expected == f"line {at[0] + 2} is longer than {LIMIT} bytes"  # header, turn/start
    place(tmp_path / "plain", plain, compress=False)
    place(tmp_path / "frames", zstd_log([[e] for e in events]), compress=True)
    place(tmp_path / "one-frame", zstd_log([events]), compress=True)
    for store in ("plain", "frames", "one-frame"):
        assert read_error(tmp_path / store).endswith(expected), store


def test_a_line_too_long_in_a_torn_last_zstd_frame_has_its_number(tmp_path: Path) -> None:
    events = events_with_long_lines([6], 8, 2 * LIMIT)
    whole = zstd_log([events[:6], events[6:]])
    place(tmp_path, whole[:-2], compress=True)  # the last frame's checksum torn
    expected = first_too_long(plain_log(events), LIMIT)
    assert read_error(tmp_path).endswith(f"line {expected} is longer than {LIMIT} bytes")


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zstd"])
def test_the_first_line_too_long_is_named_not_one_a_chunk_ends_in(
    tmp_path: Path, compress: bool
) -> None:
    """A long line early, then ordinary lines up to a chunk's end, where a longer line starts:
    the early one is the first too long."""
    events = [other(0), user(1, "x" * 2 * LIMIT)]
    size = len(plain_log(events))
    while size < CHUNK_SIZE - 3 * LIMIT:
        events.append(user(len(events), "y" * 50))
        size += len(lines(events[-1:]))
    events += [user(len(events), "z" * 8 * LIMIT), turn_end(len(events) + 1)]
    plain = plain_log(events)
    newline = plain.rfind(b"\n", 0, CHUNK_SIZE)
    assert plain.find(b"\n", newline + 1) > CHUNK_SIZE + LIMIT  # a chunk ends in a long line
    place(tmp_path, zstd_log([events]) if compress else plain, compress=compress)
    assert read_error(tmp_path).endswith(
        f": line {first_too_long(plain, LIMIT)} is longer than {LIMIT} bytes"
    )
    assert first_too_long(plain, LIMIT) == 3


def damaged_logs(root: Path) -> dict[str, Path]:
    """One session ``s`` per store under ``root``, each failing its read a different way."""
    events = [other(0), user(1, "q"), title(2, "t"), turn_end(3)]
    body = zstd_log([events[:2], events[2:]])
    checksum = len(zstd_log([events[:2]])) - 2  # of the first frame after the header's
    flipped = body[:checksum] + bytes([body[checksum] ^ 0xFF]) + body[checksum + 1 :]
    return {
        "corrupt zstd": place(root / "a", flipped, compress=True),
        "corrupt plain": place(
            root / "b", plain_log([*events[:2], b"x\n", *events[2:]]), compress=False
        ),
        "line too long": place(
            root / "c", plain_log(events_with_long_lines([2], 4, 2 * LIMIT)), compress=False
        ),
        "zstd torn record": place(root / "d", zstd_log([[*events[:2], b'{"ty']]), compress=True),
    }


def test_a_read_failure_names_its_log_once(tmp_path: Path) -> None:
    for kind, path in damaged_logs(tmp_path).items():
        root = path.parents[2]
        resolver = SessionReferenceResolver(DirectoryStore(root, max_line_bytes=LIMIT))
        with pytest.raises(SessionReferenceError) as caught:
            resolver.prepare(Target("t"), [], [{"sessionId": "s"}])
        assert caught.value.message.count(str(root)) == 1, (kind, caught.value.message)
        assert f"failed to read referenced session: {path}: " in caught.value.message, kind


def test_the_command_line_names_a_failed_log_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for kind, path in damaged_logs(tmp_path).items():
        root = path.parents[2]
        assert main(["snapshot", "--root", str(root), "--max-line-bytes", str(LIMIT), "s"]) == 1
        err = capsys.readouterr().err
        assert err.startswith(
            f'SESSION_REFERENCE_READ_FAILED: cannot read session "s" from {path}: '
        )
        assert err.count(str(root)) == 1, (kind, err)
