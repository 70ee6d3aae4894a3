"""Valid logs written by the writer, then damaged only after their last ``turn/end``.

The harness loads such a log (docs/format.md §Recovery): the readable prefix ends at the
damage, and every event through the last ``turn/end`` survives. Two exceptions are drawn on
purpose: a bad record inside a *complete* zstd frame, which the harness refuses wherever it is
(docs/format.md §Recovery), and a line that is JSON ``null``, on which the harness's scanner
fails ("Cannot read properties of null (reading 'seq')"; not in the oracle's FINDINGS, seen
with ``real.mjs``).

Plain damage: a garbage line, a line whose seq breaks the sequence, a torn final write, or the
file cut short, somewhere after the last ``turn/end`` line. zstd damage: the last frame torn
(cut short), possibly holding garbage or a seq gap; stray bytes after the last frame; or a
garbage line in a complete frame.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from sessionref.log.writer import render_batch, render_header, zstd_frame
from sessionref.testing import LogRecords, expand_records, session_logs

Record = dict[str, Any]

GARBAGE: tuple[bytes, ...] = (
    b"garbage",
    b"",
    b"   ",
    b"{",
    b"{}",
    b"[1,2]",
    b'"x"',
    b"5",
    b"NaN",
    b"\xff\xfe{}",
    b"null",
    b'{"type":"turn/start","seq":',
    b'{"type":"text-chunks","seq0":0,"time0":0,"data":{}}',
)
"""Lines a crash or a stray writer could leave; none of them is a ``turn/end``."""

REFUSED = ("complete frame", "garbage line b'null'")
"""Steps after which the harness refuses the file."""

PLAIN_KINDS = ("garbage", "seq-gap", "seq-dup", "torn-tail", "truncate")
ZSTD_KINDS = ("torn-frame", "torn-frame-garbage", "stray-bytes", "bad-complete-frame")


@dataclass(frozen=True)
class DamagedTail:
    """A damaged log file and what it was made from."""

    log: LogRecords
    """The valid log before the damage."""
    compress: bool
    """Whether :attr:`data` is ``session.jsonl.zstd``."""
    data: bytes
    """The file's bytes."""
    intact_events: int
    """How many events (expanded) lie through the last ``turn/end``: all of them must load."""
    steps: tuple[str, ...]
    """What was done."""

    def __repr__(self) -> str:
        head = self.data[:120]
        return (
            f"DamagedTail(id={self.log['header']['id']!r}, compress={self.compress}, "
            f"steps={list(self.steps)!r}, intact_events={self.intact_events}, "
            f"data={head!r}… ({len(self.data)} bytes))"
        )


def _line(record: Record) -> bytes:
    return render_batch([record], pack=False)


def _last_turn_end(records: list[Record]) -> int:
    """The index of the last ``turn/end`` record, -1 if there is none."""
    ends = [i for i, record in enumerate(records) if record.get("type") == "turn/end"]
    return ends[-1] if ends else -1


def _event_line(seq: int) -> bytes:
    """A well-formed event line with this seq (it breaks the sequence where it is put)."""
    return _line({"type": "turn/start", "seq": seq, "time": 0, "data": {"turn": 99}})


@st.composite
def _bad_line(draw: st.DrawFn, kind: str, expected_seq: int) -> tuple[bytes, str]:
    if kind == "seq-gap":
        seq = expected_seq + draw(st.integers(1, 3))
        return _event_line(seq), f"seq {seq} where {expected_seq} is due"
    if kind == "seq-dup" and expected_seq > 0:
        seq = draw(st.integers(0, expected_seq - 1))
        return _event_line(seq), f"seq {seq} again where {expected_seq} is due"
    line = draw(st.sampled_from(GARBAGE))
    return line + b"\n", f"garbage line {line!r}"


def _events_before(records: list[Record]) -> int:
    return len(expand_records(records)) if records else 0


@st.composite
def _plain(draw: st.DrawFn, log: LogRecords, end: int) -> tuple[bytes, tuple[str, ...]]:
    records = log["events"]
    lines = [render_header(log["header"]), *(_line(r) for r in records)]
    kind = draw(st.sampled_from(PLAIN_KINDS))
    at = draw(st.integers(end + 1, len(records)))  # records[at] is the first after the damage
    intact = b"".join(lines[: at + 1])
    rest = b"".join(lines[at + 1 :])
    if kind == "torn-tail":
        whole = lines[-1] if records[end + 1 :] else _event_line(len(expand_records(records)))
        cut = draw(st.integers(1, len(whole) - 1))
        return intact + rest + whole[:cut].rstrip(b"\n"), (f"torn final write of {cut} bytes",)
    if kind == "truncate":
        tail = rest
        cut = draw(st.integers(0, len(tail)))
        return intact + tail[:cut], (f"file cut {len(tail) - cut} bytes short",)
    line, step = draw(_bad_line(kind, _events_before(records[:at])))
    return intact + line + rest, (f"{step} before record {at + 1}",)


def _batches(
    draw: st.DrawFn, records: list[Record], end: int
) -> tuple[list[list[Record]], list[list[Record]]]:
    """Records cut into batches at drawn points and right after the last turn/end: the batches
    through it, and those after it."""
    drawn = draw(st.lists(st.integers(1, max(1, len(records) - 1)), max_size=4))
    bounds = sorted({0, end + 1, len(records)} | {c for c in drawn if 0 < c < len(records)})
    spans = list(itertools.pairwise(bounds))
    head = [records[a:b] for a, b in spans if b <= end + 1 and a < b]
    tail = [records[a:b] for a, b in spans if a >= end + 1 and a < b]
    return head, tail


@st.composite
def _zstd(draw: st.DrawFn, log: LogRecords, end: int) -> tuple[bytes, tuple[str, ...]]:
    records = log["events"]
    head, tail = _batches(draw, records, end)
    frames = [zstd_frame(render_header(log["header"]))]
    frames += [zstd_frame(render_batch(batch, pack=False)) for batch in head]
    tail_bytes = [render_batch(batch, pack=False) for batch in tail]
    kind = draw(st.sampled_from(ZSTD_KINDS))
    last_batch = len(tail[-1]) if tail else 0
    if kind == "stray-bytes":
        stray = draw(st.sampled_from([b"\x00", b"\x00\x00", b"\x28\xb5\x2f", b"\x28"]))
        body = frames + [zstd_frame(data) for data in tail_bytes]
        return b"".join(body) + stray, (f"stray bytes {stray!r} after the last frame",)
    if kind == "bad-complete-frame":
        line, step = draw(_bad_line("garbage", 0))
        body = [*frames, zstd_frame(line), *(zstd_frame(data) for data in tail_bytes)]
        return b"".join(body), (f"a complete frame holding {step}",)
    steps: tuple[str, ...] = ()
    if kind == "torn-frame-garbage" or not tail_bytes:
        bad = draw(st.sampled_from(PLAIN_KINDS[:3]))
        before_last = tail_bytes and draw(st.booleans())
        due = _events_before(records[: len(records) - last_batch] if before_last else records)
        line, step = draw(_bad_line(bad, due))
        after = tail_bytes.pop() if before_last else b""
        torn_data, steps = line + after, (f"last frame holds {step}",)
    else:
        torn_data = tail_bytes.pop()
    torn = zstd_frame(torn_data)
    cut = draw(st.integers(1, len(torn) - 1))
    body = frames + [zstd_frame(data) for data in tail_bytes]
    return b"".join(body) + torn[:cut], (*steps, f"last frame torn to {cut} of {len(torn)} bytes")


@st.composite
def damaged_tails(
    draw: st.DrawFn,
    logs: st.SearchStrategy[LogRecords] | None = None,
    compress: bool | None = None,
) -> DamagedTail:
    """Logs damaged after their last ``turn/end``, plain or zstd (``None``: either)."""
    log = draw(session_logs(max_turns=3) if logs is None else logs)
    packed = draw(st.booleans()) if compress is None else compress
    end = _last_turn_end(log["events"])
    intact = _events_before(log["events"][: end + 1])
    data, steps = draw(_zstd(log, end) if packed else _plain(log, end))
    return DamagedTail(log, packed, data, intact, steps)


def describe(case: DamagedTail) -> str:
    """One line about a case, for scripts."""
    return json.dumps({"id": case.log["header"]["id"], "steps": case.steps}, ensure_ascii=True)
