"""Events of the benchmark sessions, cut into append batches as the harness flushes them.

Seqs are assigned here and events gathered into batches of :data:`BATCH_WINDOW_MS`; each batch
is handed to :class:`sessionref.log.writer.SessionWriter`, which packs its delta runs into chunk
rows and stores it (one zstd frame per batch, or plain JSONL), exactly as the harness does.
A model of the current surface keeps every replace valid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

from sessionref.log.writer import Record, SessionWriter

BATCH_WINDOW_MS = 200


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

    def chunk_data(self, member: str) -> dict[str, Any]:
        """The data of the ``assistant/chunk`` event carrying delta ``member``."""
        chunk: dict[str, Any] = {"type": f"{self.kind}-delta", "index": self.index}
        if self.call_id is not None:
            chunk["id"] = self.call_id
            if self.name is not None:
                chunk["name"] = self.name
        chunk["argumentsDelta" if self.kind == "tool-call" else "text"] = member
        return {"turn": self.turn, "step": self.step, "chunk": chunk}


class LogWriter:
    """Assigns seqs and batches events by time into the given session writers."""

    def __init__(self, writers: Sequence[SessionWriter], batch_ms: int = BATCH_WINDOW_MS) -> None:
        """Append to every one of ``writers``, closing a batch ``batch_ms`` after it opened."""
        self._writers = list(writers)
        self._batch_ms = batch_ms
        self._batch: list[Record] = []
        self._deadline: int | None = None
        self.seq = 0

    def event(
        self,
        type_: str,
        time: int,
        data: Any,
        *,
        surface_op: Any = None,
        sources: list[int] | None = None,
    ) -> int:
        """Append one event and return its seq."""
        self._admit(time)
        ev: Record = {"type": type_, "seq": self.seq, "time": time, "data": data}
        if surface_op is not None:
            ev["surfaceOp"] = surface_op
        if sources is not None:
            ev["sourceEventSeqs"] = sources
        self._batch.append(ev)
        self.seq += 1
        return self.seq - 1

    def stream(self, key: StreamKey, times: Sequence[int], members: Sequence[str]) -> list[int]:
        """Append one delta stream (``members[k]`` at ``times[k]``) and return its seqs.

        A batch window may close inside the stream; the writer packs each batch's part.
        """
        return [
            self.event("assistant/chunk", t, key.chunk_data(member))
            for t, member in zip(times, members, strict=True)
        ]

    def close(self) -> None:
        """Flush the pending batch."""
        self._flush()

    def _admit(self, time: int) -> None:
        """Close the current batch if ``time`` is past its window; open one if needed."""
        if self._deadline is not None and time >= self._deadline:
            self._flush()
        if self._deadline is None:
            self._deadline = time + self._batch_ms

    def _flush(self) -> None:
        """Hand the pending batch to every writer."""
        if self._batch:
            for writer in self._writers:
                writer.append(self._batch)
            self._batch = []
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
