"""The writer writes what the harness's own backend writes.

``tests/data/real-written`` holds stores written by the real backend (see its README). Their
events are recovered here without the library's reader (JSON, the reference's row expansion,
zstd frame by frame), written again with :mod:`sessionref.log.writer` in the same append
batches, and compared byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import zstandard

from sessionref.errors import INVALID_CONFIG, SessionReferenceError
from sessionref.log.builder import LogBuilder
from sessionref.log.store import DirectoryStore
from sessionref.log.writer import (
    SessionWriter,
    chunk_row,
    log_path,
    pack_chunks,
    render_batch,
    render_header,
    render_log,
    write_log,
    zstd_frame,
)
from sessionref.testing.recovery import zstd_frame_spans
from sessionref.testing.reference import expand_row

REAL = Path(__file__).parent / "data" / "real-written"
SESSIONS = sorted(path.parent.name for path in (REAL / "zstd").glob("*/*/session.jsonl.zstd"))
TORN = {"real-torn", "real-torn-small"}

Record = dict[str, Any]


def real_file(session_id: str, encoding: str) -> Path:
    (path,) = (REAL / encoding).glob(f"*/{session_id}/session.jsonl*")
    return path


def real_frames(session_id: str) -> tuple[list[bytes], list[bytes]]:
    """The complete zstd frames of a real-written log, and what each holds."""
    data = real_file(session_id, "zstd").read_bytes()
    spans, _ = zstd_frame_spans(data)
    frames = [data[a:b] for a, b in spans]
    return frames, [zstandard.ZstdDecompressor().decompressobj().decompress(f) for f in frames]


def events_of(batch: bytes) -> list[Record]:
    """The events a batch's lines store (rows expanded), read without the library."""
    events: list[Record] = []
    for line in batch.decode("utf-8").split("\n")[:-1]:
        record = json.loads(line)
        events += expand_row(record) if record["type"].endswith("-chunks") else [record]
    return events


@pytest.mark.parametrize("session_id", SESSIONS)
def test_each_batch_is_the_frame_the_harness_wrote(session_id: str) -> None:
    frames, contents = real_frames(session_id)
    header = json.loads(contents[0])
    assert render_header(header) == contents[0]
    assert zstd_frame(render_header(header)) == frames[0]
    for frame, content in zip(frames[1:], contents[1:], strict=True):
        assert render_batch(events_of(content)) == content
        assert zstd_frame(render_batch(events_of(content))) == frame


def plain_events(data: bytes) -> tuple[bytes, list[Record]]:
    """The header line and the events of the complete lines of a plain log."""
    header, _, body = data.partition(b"\n")
    return header, events_of(body[: body.rfind(b"\n") + 1])


@pytest.mark.parametrize("session_id", SESSIONS)
@pytest.mark.parametrize("compress", [False, True])
def test_whole_logs_are_the_files_the_harness_wrote(session_id: str, compress: bool) -> None:
    """Batches as the zstd frames show them (the plain store got the same ones, in a second
    run with other message ids); a torn log is compared through its complete part."""
    _, contents = real_frames(session_id)
    real = real_file(session_id, "zstd" if compress else "none")
    data = real.read_bytes()
    if compress:
        header_line, batches = contents[0], [events_of(content) for content in contents[1:]]
    else:
        header_line, events = plain_events(data)
        starts = [0]
        for content in contents[1:]:
            starts.append(starts[-1] + len(events_of(content)))
        batches = [events[a:b] for a, b in zip(starts, [*starts[1:], len(events)], strict=True)]
    header = json.loads(header_line)
    written = render_log(header, batches, compress=compress)
    assert data.startswith(written) if session_id in TORN else data == written
    assert real.relative_to(REAL / real.parts[-4]) == log_path(".", header, compress=compress)


def test_a_session_writer_appends_one_frame_per_batch(tmp_path: Path) -> None:
    _, contents = real_frames("real-compacted")
    header = json.loads(contents[0])
    with SessionWriter(tmp_path, header, compress=True) as writer:
        for content in contents[1:]:
            writer.append(events_of(content))
        writer.append([])  # an empty append writes nothing
    assert writer.frames == len(contents)
    assert writer.plain_bytes == sum(map(len, contents))
    assert writer.path.read_bytes() == real_file("real-compacted", "zstd").read_bytes()
    assert writer.file_bytes == writer.path.stat().st_size


def chunk(seq: int, text: str, *, index: int = 0, step: int = 1) -> Record:
    data = {"turn": 1, "step": step, "chunk": {"type": "text-delta", "index": index, "text": text}}
    return {"type": "assistant/chunk", "seq": seq, "time": 10 * seq, "data": data}


def test_runs_of_three_pack_and_shorter_ones_stay() -> None:
    short = [chunk(0, "a"), chunk(1, "b")]
    assert pack_chunks(short) == short
    (row,) = pack_chunks([chunk(0, "a"), chunk(1, "b"), chunk(2, "")])
    assert row == {
        "type": "text-chunks",
        "seq0": 0,
        "time0": 0,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [10, 10], "texts": ["a", "b", ""]},
    }
    assert expand_row(row) == [chunk(0, "a"), chunk(1, "b"), chunk(2, "")]


def test_runs_break_where_the_block_changes() -> None:
    events = [chunk(0, "a"), chunk(1, "b"), chunk(2, "c", index=1), chunk(3, "d", step=2)]
    assert pack_chunks(events) == events
    extra = {**chunk(1, "b"), "ignorable": True}  # a shape a row cannot hold
    assert pack_chunks([chunk(0, "a"), extra, chunk(2, "c")]) == [
        chunk(0, "a"),
        extra,
        chunk(2, "c"),
    ]


def test_tool_call_runs_keep_the_presence_of_a_name() -> None:
    b = LogBuilder()
    named = b.tool_chunks("c1", ["{", "}", " "], index=2, name="bash")
    unnamed = b.tool_chunks("c1", ["a", "b", "c"], index=2)
    rows = pack_chunks(b.events)
    assert [row["data"].get("name") for row in rows] == ["bash", None]
    assert [row["seq0"] for row in rows] == [named[0], unnamed[0]]
    with pytest.raises(ValueError):
        chunk_row(b.events)  # a name on some members only is not one run


def test_lone_surrogates_are_written_as_javascript_escapes(tmp_path: Path) -> None:
    header = {"version": 0, "id": "\ud800", "createdAt": 1, "delegationDepth": 0}
    b = LogBuilder()
    b.user("a \udfff b")
    path = write_log(tmp_path, header, [b.events], compress=False)
    assert path.parent.name == "~D800"
    lines = path.read_bytes().split(b"\n")
    assert b'"id":"\\ud800"' in lines[0] and b'"a \\udfff b"' in lines[1]
    assert json.loads(lines[1])["data"]["content"][0]["text"] == "a \udfff b"


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ({"version": 0, "createdAt": 1}, "header id must be a string, not NoneType"),
        ({"id": 7, "createdAt": 1}, "header id must be a string, not int"),
        ("s", "header must be a mapping, not str"),
    ],
)
def test_a_header_without_a_string_id_is_invalid_config(
    tmp_path: Path, header: Any, message: str
) -> None:
    """A newcomer's trial: the id names the log's directory, and a header without one raised
    ``KeyError``, one of another type ``TypeError``, one not a mapping ``AttributeError``;
    each is now a coded error, and nothing is written."""
    with pytest.raises(SessionReferenceError) as raised:
        SessionWriter(tmp_path, header)
    assert (raised.value.code, raised.value.message) == (INVALID_CONFIG, message)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("cwd", [None, "", [], {"length": 3}])
def test_a_header_whose_cwd_names_no_directory_is_invalid_config(tmp_path: Path, cwd: Any) -> None:
    """A newcomer's trial: the writer filed a header with ``"cwd": null`` under ``_no-cwd/``,
    and the store then passed the log over (the harness's listing fails for the whole root on
    such a header, docs/format.md §Discovery). Nothing is written now."""
    header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0, "cwd": cwd}
    with pytest.raises(SessionReferenceError) as raised:
        SessionWriter(tmp_path, header)
    assert raised.value.code == INVALID_CONFIG
    assert "cannot name a storage path" in raised.value.message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("cwd", [5, True, {}, "/w"])
def test_what_the_writer_files_the_store_lists(tmp_path: Path, cwd: Any) -> None:
    """A cwd with no characters (a number, a boolean, an object) was filed under ``_no-cwd/``,
    where the harness looks for it under ``--root--/`` and the store called it misplaced:
    every header the writer takes, the store lists, with nothing passed over."""
    header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0, "cwd": cwd}
    with SessionWriter(tmp_path, header, compress=False) as writer:
        writer.append([{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}])
    store = DirectoryStore(tmp_path)
    assert [(found.id, found.cwd) for found in store.headers()] == [("s", cwd)]
    assert store.problems() == []
