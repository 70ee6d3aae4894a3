"""Recovery as the harness reads a log (docs/format.md; FINDINGS A.1, A.2, A.4, A.5, B.9, B.10,
B.12, C.1–C.4): which records a damaged log keeps, and the ``capturedThroughSeq`` after closers.

Each store below was read by the real DSH stack (``real.mjs surface``); ``READABLE[name]`` is
the ``capturedThroughSeq`` it answered (``"empty"`` for a log without events), ``None``
where it refused the log.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionref import DirectoryStore
from sessionref.errors import SessionLogError
from sessionref.log.records import captured_through_seq
from sessionref.log.writer import render_header, zstd_frame
from sessionref.snapshot import project_units
from tests.log_damage import lines, place, plain_log, zstd_log
from tests.logs import answer, call_result, event, header, prompt, two_turns

OPEN = [event("turn/start", 12, {"turn": 3}), prompt(13, "third question")]
LATER = [event("step/start", 14, {"turn": 3, "step": 1}), answer(15, "late", turn=3)]
SEQ0_EVENT = {"type": "step/start", "seq0": 14, "time": 1, "data": {"turn": 3, "step": 1}}
"""An event line with ``seq0`` where its ``seq`` should be: the harness reads ``seq``, a gap."""
GARBAGE = {
    "garbage": b"not json\n",
    "blank": b"\n",
    "gap": lines([event("step/start", 20, {"turn": 3, "step": 1})]),
    "dup": lines([prompt(13, "again")]),
    "array": b"[1,2]\n",
    "event-with-seq0": lines([SEQ0_EVENT]),
    "row": lines(
        [
            {
                "type": "text-chunks",
                "seq0": 14,
                "time0": 1,
                "data": {"turn": 3, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b"]},
            }
        ]
    ),
}
STEP = lines([event("step/start", 14, {"turn": 3, "step": 1})])[:-1]
STEP_END = lines([event("step/end", 16, {"turn": 3, "step": 1})])[:-1]
JOINED = STEP + lines([answer(15, "late", turn=3)])  # two events on one line
SPLIT = STEP_END[:-1] + b"\n}\n"  # one event over two lines
GARBAGE |= {  # lines msgspec takes in bulk but JSON.parse does not, alone or adding up
    "joined": JOINED,
    "joined-spaced": JOINED.replace(b"}{", b"} {"),
    "split": SPLIT,
    "joined-blank": JOINED + b"\n",
    "joined-split": JOINED + SPLIT,
    "split-joined": SPLIT[:-1] + JOINED,
}
PENDING_CALL = [
    event("turn/start", 12, {"turn": 3}),
    prompt(13, "run it"),
    event("step/start", 14, {"turn": 3, "step": 1}),
    answer(
        15,
        "calling",
        {"type": "tool-call", "id": "c1", "name": "bash", "input": {}},
        {"type": "tool-call", "id": "c2", "name": "bash", "input": {}},
        turn=3,
    ),
    event("tool/call", 16, {"turn": 3, "step": 1, "callId": "c1"}),
]
TURN_END = lines([event("turn/end", 21, {"turn": 3, "reason": {"kind": "completed"}})])

PLAIN: dict[str, bytes] = {
    **{
        f"after-last-turn-end-{k}": plain_log([*two_turns(), *OPEN, g, *LATER])
        for k, g in GARBAGE.items()
    },
    **{
        f"before-a-later-turn-end-{k}": plain_log([*two_turns(), *OPEN, g, *LATER, TURN_END])
        for k, g in GARBAGE.items()
    },
    "last-line-without-newline": plain_log([*two_turns(), *OPEN])[:-1],
    "valid-last-line-without-newline": plain_log([*two_turns(), *OPEN, *LATER])[:-1],
    "event-with-seq0-then-the-run": plain_log(
        [*two_turns(), *OPEN, SEQ0_EVENT, answer(15, "late", turn=3)]
    ),
    "pending-calls": plain_log([*two_turns(), *PENDING_CALL]),
    "pending-call-resolved": plain_log([*two_turns(), *PENDING_CALL, call_result(17, "c2", "ok")]),
    "invalid-utf8": plain_log([*two_turns()]).replace(b"first question", b"first \xff\xfe"),
    "integral-floats": plain_log(two_turns()).replace(
        b'"seq":1,"time":1001', b'"seq":1.0,"time":1001.0'
    ),
    "lone-surrogate": plain_log(two_turns()).replace(b"first question", b"first \\ud800"),
}
TURN1, TURN2 = two_turns()[:6], two_turns()[6:]
HEAD = zstd_frame(render_header(header()))
FRAME1, FRAME2 = (zstd_frame(lines(batch)) for batch in (TURN1, TURN2))
SKIPPABLE = b"\x50\x2a\x4d\x18\x04\x00\x00\x00abcd"


def raw_frame(payload: bytes, window_log: int = 21, flags: int = 0) -> bytes:
    """A zstd frame by hand: no checksum, a window of ``2**window_log`` bytes, ``payload`` in
    one last raw block; ``flags`` or-ed into its descriptor (bit 4: the unused bit)."""
    block = (1 | len(payload) << 3).to_bytes(3, "little")
    return b"\x28\xb5\x2f\xfd" + bytes([flags, (window_log - 10) << 3]) + block + payload


def with_dictionary_id(frame: bytes) -> bytes:
    """``frame`` (made by :func:`raw_frame`) naming dictionary 7, which no reader has."""
    return frame[:4] + bytes([frame[4] | 1]) + frame[5:6] + b"\x07" + frame[6:]


UNDECODABLE = b"\x28\xb5\x2f\xfd\x00\x58" + (len(lines(TURN2)) << 3).to_bytes(3, "little")
UNDECODABLE += lines(TURN2) + (2 << 1 | 8 << 3).to_bytes(3, "little") + b"\xff" * 8 + b"\x00\x00"
"""A torn last frame: a raw block of whole records, then a compressed block of garbage, then
a block header cut short. Decoding it as far as it goes fails at the garbage, and the harness
then keeps nothing of that frame (not even the records of its first block)."""
ZSTD: dict[str, bytes] = {
    "torn-frame-complete-records": HEAD + FRAME1 + FRAME2[:-2],
    "torn-frame-mid-record": HEAD + FRAME1 + FRAME2[:-40],
    "trailing-3-bytes": HEAD + FRAME1 + FRAME2 + b"\x00\x00\x00",
    "trailing-4-bytes": HEAD + FRAME1 + FRAME2 + b"\x00\x00\x00\x00",
    "skippable-frame": HEAD + FRAME1 + SKIPPABLE + FRAME2,
    "garbage-after-last-turn-end": zstd_log([two_turns(), [*OPEN, b"not json\n"]]),
    "frame-ends-inside-a-record": HEAD + FRAME1 + zstd_frame(lines(TURN2)[:-1]),
    "header-frame-only": HEAD,
    "joined-split-in-a-frame": zstd_log([two_turns(), [*OPEN, GARBAGE["joined-split"]]]),
    "unused-descriptor-bit": HEAD + FRAME1 + raw_frame(lines(TURN2), flags=0x10),
    "dictionary-id": HEAD + FRAME1 + with_dictionary_id(raw_frame(lines(TURN2))),
    "window-log-27": HEAD + FRAME1 + raw_frame(lines(TURN2), window_log=27),
    "window-log-28": HEAD + FRAME1 + raw_frame(lines(TURN2), window_log=28),
    "torn-frame-undecodable": HEAD + FRAME1 + UNDECODABLE,
    "joined-split-in-a-torn-frame": HEAD
    + FRAME1
    + zstd_frame(lines([*TURN2, *OPEN, GARBAGE["joined-split"], *LATER]))[:-2],
}
READABLE: dict[str, int | str | None] = {
    **{f"after-last-turn-end-{k}": 14 for k in GARBAGE},
    **{f"before-a-later-turn-end-{k}": None for k in GARBAGE},
    "last-line-without-newline": 13,
    "valid-last-line-without-newline": 16,
    "event-with-seq0-then-the-run": 14,
    "pending-calls": 20,
    "pending-call-resolved": 20,
    "invalid-utf8": 11,
    "integral-floats": 11,
    "lone-surrogate": 11,
    "torn-frame-complete-records": 11,
    "torn-frame-mid-record": 5,
    "trailing-3-bytes": 11,
    "trailing-4-bytes": None,
    "skippable-frame": None,
    "garbage-after-last-turn-end": None,
    "frame-ends-inside-a-record": None,
    "header-frame-only": "empty",
    "joined-split-in-a-frame": None,
    "joined-split-in-a-torn-frame": 14,
    "unused-descriptor-bit": None,
    "dictionary-id": None,
    "window-log-27": 11,
    "window-log-28": None,
    "torn-frame-undecodable": 5,
}


def read_cts(root: Path) -> int | str | None:
    """``READABLE``'s answer for the session ``s`` stored under ``root``."""
    try:
        log = DirectoryStore(root).read("s")
        list(project_units(log.records))
    except SessionLogError:
        return None
    found = captured_through_seq(log.records)
    return "empty" if found is None else found


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_plain_logs_keep_what_the_harness_keeps(tmp_path: Path, name: str) -> None:
    place(tmp_path, PLAIN[name], compress=False)
    assert read_cts(tmp_path) == READABLE[name]


@pytest.mark.parametrize("name", sorted(ZSTD))
def test_zstd_logs_keep_what_the_harness_keeps(tmp_path: Path, name: str) -> None:
    place(tmp_path, ZSTD[name], compress=True)
    assert read_cts(tmp_path) == READABLE[name]


def texts(root: Path) -> list[str]:
    return [unit.text for unit in project_units(DirectoryStore(root).read("s").records)]


def test_invalid_utf8_becomes_replacement_characters(tmp_path: Path) -> None:
    place(tmp_path, PLAIN["invalid-utf8"], compress=False)
    assert texts(tmp_path)[0] == "first \ufffd\ufffd"


def test_a_lone_surrogate_survives(tmp_path: Path) -> None:
    place(tmp_path, PLAIN["lone-surrogate"], compress=False)
    assert texts(tmp_path)[0] == "first \ud800"


def test_closers_never_show(tmp_path: Path) -> None:
    place(tmp_path, PLAIN["pending-calls"], compress=False)
    log = DirectoryStore(tmp_path).read("s")
    assert [r.type for r in log.records[-4:]] == [
        "tool/result",
        "tool/result",
        "step/end",
        "turn/end",
    ]
    assert texts(tmp_path)[-2:] == ["run it", "calling"]


def test_a_torn_frame_keeps_its_complete_lines(tmp_path: Path) -> None:
    place(tmp_path, ZSTD["torn-frame-complete-records"], compress=True)
    assert texts(tmp_path) == ["first question", "first answer", "second question", "second answer"]


INVALID_UTF8_DAMAGE = {
    "texts": lambda log: (
        log.replace(b"the ", b"th\xff ")
        .replace(b"and ", b"an\xc3 ")
        .replace("的".encode(), "的".encode()[:2])
    ),
    "a key": lambda log: log.replace(b'"surfaceOp":"append"', b'"surface\xffOp":"append"', 3),
    "a type": lambda log: log.replace(b'"type":"step/end"', b'"type":"step/\xe2\x82nd"', 1),
}


@pytest.mark.parametrize("damage", INVALID_UTF8_DAMAGE)
def test_invalid_utf8_anywhere_reads_as_the_log_decoded_with_replacement_characters(
    tmp_path: Path, damage: str
) -> None:
    """msgspec checks UTF-8 only in the strings it builds, so the raw parts of a record keep
    invalid bytes until they are decoded; whatever is decoded must be what the harness reads,
    each line decoded with U+FFFD (FINDINGS: invalid-utf8). The reference is the same log with
    every invalid sequence replaced up front: prompts, answers, packed rows, tool results,
    titles and reasoning hold some; or a key or an event type does."""
    from benchmarks.generate import CHAT, generate_session
    from sessionref.log.reader import read_plain
    from sessionref.log.structs import raw_data

    made = generate_session(tmp_path / "zstd", "s", 12, profile=CHAT, plain_root=tmp_path)
    clean = Path(str(made.plain_path)).read_bytes()
    damaged = INVALID_UTF8_DAMAGE[damage](clean)
    assert damaged != clean
    repaired = damaged.decode("utf-8", "replace").encode("utf-8")

    def read(data: bytes) -> tuple[object, ...]:
        try:
            log = read_plain([data], "s")
        except SessionLogError as exc:
            return ("refused", str(exc))
        records = [(r.type, r.seq, r.seq0, raw_data(r)) for r in log.records]
        units = [(u.role, u.text, u.checkpoint) for u in project_units(log.records)]
        return log.header, records, units

    assert read(damaged) == read(repaired)
