"""Writing DSH session logs in the JSONL backend layout (docs/format.md).

Paths (``encoded-id`` / ``project-key`` escapes), JavaScript-compatible JSON
lines, zstd framing of append batches, seq assignment with per-batch packing of
assistant delta runs into chunk rows, and a model of the current surface.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

from sessionref.codecs.jsjson import js_json
from sessionref.log.layout import encode_project_directory, encode_session_directory

BATCH_WINDOW_MS = 200
MIN_PACKED_RUN = 3
ZSTD_LEVEL = 3

# --------------------------------------------------------------------------- paths


def session_path(root: Path, session_id: str, cwd: str | None, *, compressed: bool = True) -> Path:
    """Return the log path of a session inside a store root."""
    name = "session.jsonl.zstd" if compressed else "session.jsonl"
    return root / encode_project_directory(cwd) / encode_session_directory(session_id) / name


# --------------------------------------------------------------------------- output


def to_json_line(value: Any) -> str:
    """Serialize like JavaScript ``JSON.stringify`` (lone surrogates as ``\\udxxx``)."""
    return js_json(value).decode("utf-8")


class FrameSink:
    """Writes append batches as independent zstd frames (and optionally plain JSONL)."""

    def __init__(self, path: Path, plain_path: Path | None = None) -> None:
        """Open ``path`` (zstd) and, if given, ``plain_path`` (plain JSONL) for writing."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self._out = path.open("wb")
        self._plain = None
        if plain_path is not None:
            plain_path.parent.mkdir(parents=True, exist_ok=True)
            self._plain = plain_path.open("wb")
        self._cctx = zstandard.ZstdCompressor(
            level=ZSTD_LEVEL, write_checksum=True, write_content_size=True
        )
        self.frames = 0
        self.plain_bytes = 0
        self.zstd_bytes = 0

    def write(self, lines: Sequence[str]) -> None:
        """Write one frame holding ``lines`` (each terminated by a newline)."""
        data = ("\n".join(lines) + "\n").encode("utf-8")
        frame = self._cctx.compress(data)
        self._out.write(frame)
        if self._plain is not None:
            self._plain.write(data)
        self.frames += 1
        self.plain_bytes += len(data)
        self.zstd_bytes += len(frame)

    def close(self) -> None:
        """Flush and close the output files."""
        self._out.close()
        if self._plain is not None:
            self._plain.close()


_STREAMS = {
    "text": ("text-chunks", "text-delta", "texts", "text"),
    "reasoning": ("reasoning-chunks", "reasoning-delta", "texts", "text"),
    "tool-call": ("tool-call-chunks", "tool-call-delta", "args", "argumentsDelta"),
}


@dataclass(frozen=True)
class StreamKey:
    """Identity of one delta stream: kind, step, block index and tool-call identity.

    ``kind`` is ``text``, ``reasoning`` or ``tool-call``; ``call_id`` is required
    for tool calls, and ``name`` (optional) is repeated on every delta.
    """

    kind: str
    turn: int
    step: int
    index: int
    call_id: str | None = None
    name: str | None = None

    def row(self, seq0: int, times: Sequence[int], members: Sequence[str]) -> dict[str, Any]:
        """Return the packed chunk row of a run (docs/format.md §Packed rows)."""
        row_type, _, payload_key, _ = _STREAMS[self.kind]
        data: dict[str, Any] = {
            "turn": self.turn,
            "step": self.step,
            "index": self.index,
            "dt": [b - a for a, b in itertools.pairwise(times)],
        }
        if self.call_id is not None:
            data["id"] = self.call_id
            if self.name is not None:
                data["name"] = self.name
        data[payload_key] = list(members)
        return {"type": row_type, "seq0": seq0, "time0": times[0], "data": data}

    def event(self, seq: int, time: int, member: str) -> dict[str, Any]:
        """Return one verbatim ``assistant/chunk`` event of this stream."""
        _, delta_type, _, field_name = _STREAMS[self.kind]
        chunk: dict[str, Any] = {"type": delta_type, "index": self.index}
        if self.call_id is not None:
            chunk["id"] = self.call_id
            if self.name is not None:
                chunk["name"] = self.name
        chunk[field_name] = member
        data = {"turn": self.turn, "step": self.step, "chunk": chunk}
        return {"type": "assistant/chunk", "seq": seq, "time": time, "data": data}


class LogWriter:
    """Assigns seqs, batches storage records by time and packs chunk runs per batch."""

    def __init__(self, sink: FrameSink, batch_ms: int = BATCH_WINDOW_MS) -> None:
        """Write through ``sink``, closing a batch ``batch_ms`` after it opened."""
        self._sink = sink
        self._batch_ms = batch_ms
        self._lines: list[str] = []
        self._deadline: int | None = None
        self.seq = 0

    def header(self, header: dict[str, Any]) -> None:
        """Write the header line as its own first frame."""
        self._sink.write([to_json_line(header)])

    def event(
        self,
        type_: str,
        time: int,
        data: Any,
        *,
        surface_op: Any = None,
        sources: list[int] | None = None,
    ) -> int:
        """Append one verbatim event and return its seq."""
        self._admit(time)
        ev: dict[str, Any] = {"type": type_, "seq": self.seq, "time": time, "data": data}
        if surface_op is not None:
            ev["surfaceOp"] = surface_op
        if sources is not None:
            ev["sourceEventSeqs"] = sources
        self._lines.append(to_json_line(ev))
        self.seq += 1
        return self.seq - 1

    def stream(self, key: StreamKey, times: Sequence[int], members: Sequence[str]) -> list[int]:
        """Append one delta stream (packed per batch) and return its seqs.

        ``members[k]`` is delta ``k`` and ``times[k]`` its timestamp; the stream
        is cut wherever a batch window closes, each piece packed on its own.
        """
        seqs: list[int] = []
        piece: list[int] = []
        for k, t in enumerate(times):
            if self._deadline is not None and t >= self._deadline:
                seqs += self._emit_run(key, times, members, piece)
                piece = []
                self._flush()
            if self._deadline is None:
                self._deadline = t + self._batch_ms
            piece.append(k)
        seqs += self._emit_run(key, times, members, piece)
        return seqs

    def close(self) -> None:
        """Flush the pending batch."""
        self._flush()

    def _emit_run(
        self, key: StreamKey, times: Sequence[int], members: Sequence[str], ks: list[int]
    ) -> list[int]:
        """Write members ``ks`` of a stream as one packed row or as verbatim chunk events."""
        if not ks:
            return []
        seq0 = self.seq
        if len(ks) >= MIN_PACKED_RUN:
            self._lines.append(
                to_json_line(key.row(seq0, [times[k] for k in ks], [members[k] for k in ks]))
            )
        else:
            for offset, k in enumerate(ks):
                self._lines.append(to_json_line(key.event(seq0 + offset, times[k], members[k])))
        self.seq += len(ks)
        return list(range(seq0, self.seq))

    def _admit(self, time: int) -> None:
        """Close the current batch if ``time`` is past its window; open one if needed."""
        if self._deadline is not None and time >= self._deadline:
            self._flush()
        if self._deadline is None:
            self._deadline = time + self._batch_ms

    def _flush(self) -> None:
        """Write the pending batch as one frame."""
        if self._lines:
            self._sink.write(self._lines)
            self._lines = []
        self._deadline = None


# --------------------------------------------------------------------------- surface


class SurfaceModel:
    """The current surface (docs/snapshot.md §Surface) plus the prunable tool results on it."""

    def __init__(self) -> None:
        """Start with an empty surface."""
        self.nodes: list[int] = []
        self.tool_results: dict[int, dict[str, Any]] = {}

    def append(self, seq: int, tool_data: dict[str, Any] | None = None) -> None:
        """Push ``seq``; remember ``tool_data`` if it is an unpruned tool result."""
        self.nodes.append(seq)
        if tool_data is not None:
            self.tool_results[seq] = tool_data

    def replace(self, start: int, end: int, seq: int) -> list[int]:
        """Replace nodes ``start``..``end`` (seqs) by ``seq``; return the replaced seqs."""
        i = self.nodes.index(start)
        j = self.nodes.index(end)
        if i > j:
            raise ValueError(f"replace start {start} after end {end}")
        replaced = self.nodes[i : j + 1]
        self.nodes[i : j + 1] = [seq]
        for old in replaced:
            self.tool_results.pop(old, None)
        return replaced


def make_header(
    session_id: str,
    created_at: int,
    cwd: str | None,
    *,
    parent: str | None = None,
    depth: int = 0,
) -> dict[str, Any]:
    """Return a session header line value in the harness's key order."""
    header: dict[str, Any] = {
        "type": "session",
        "version": 0,
        "id": session_id,
        "createdAt": created_at,
    }
    if cwd is not None:
        header["cwd"] = cwd
    if parent is not None:
        header["parentSession"] = parent
        header["origin"] = "subagent"
    header["delegationDepth"] = depth
    return header


# --------------------------------------------------------------------------- reading


def read_plain_bytes(path: Path | str) -> bytes:
    """Return the decompressed JSONL bytes of a session log (zstd or plain).

    This is the "floor" input: what any reader must at least decompress.
    """
    path = Path(path)
    raw = path.read_bytes()
    if path.suffix != ".zstd":
        return raw
    dctx = zstandard.ZstdDecompressor()
    parts = []
    reader = dctx.stream_reader(raw, read_across_frames=True)
    while chunk := reader.read(1 << 20):
        parts.append(chunk)
    return b"".join(parts)


def write_plain_copy(path: Path | str, out: Path | str) -> Path:
    """Decompress session log ``path`` into plain JSONL file ``out``; return ``out``."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(read_plain_bytes(path))
    return out
