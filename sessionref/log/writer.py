"""Writing DSH session logs the way the harness's JSONL backend writes them
(docs/format.md §Layout).

The harness creates a session by writing its header line, then appends *batches* of events.
Before a batch is stored, each run of at least :data:`MIN_PACKED_RUN` consecutive delta chunks
of one content block is packed into one ``text-chunks`` / ``reasoning-chunks`` /
``tool-call-chunks`` row (:func:`pack_chunks`). A plain log (``session.jsonl``) is the lines one
after the other; a zstd log (``session.jsonl.zstd``) is one independent, checksummed zstd frame
per batch, the first frame holding exactly the header line. JSON is written as JavaScript's
``JSON.stringify`` writes it: lone surrogates stay, as ``\\udxxx`` escapes.

Everything here is data in, bytes out (:func:`render_log`, :func:`render_batch`), except
:class:`SessionWriter` and :func:`write_log`, which put those bytes in the right file of a store.
Events themselves are plain dicts; :class:`~sessionref.log.builder.LogBuilder` builds
well-formed ones.

>>> header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
>>> run = [{"type": "assistant/chunk", "seq": k, "time": 10 + k,
...         "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0,
...                                                   "text": t}}}
...        for k, t in enumerate(["a", "b", "c"])]
>>> print(render_log(header, [run], compress=False).decode(), end="")
{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}
{"type":"text-chunks","seq0":0,"time0":10,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final

import zstandard

from sessionref.codecs.jsjson import js_json
from sessionref.errors import INVALID_CONFIG, SessionReferenceError, mapping, string
from sessionref.log.header import unfiled_cwd_problem
from sessionref.log.layout import encode_project_directory, encode_session_directory
from sessionref.log.store import PLAIN_LOG, ZSTD_LOG

__all__ = [
    "MIN_PACKED_RUN",
    "ZSTD_LEVEL",
    "Record",
    "SessionWriter",
    "chunk_row",
    "log_path",
    "pack_chunks",
    "render_batch",
    "render_header",
    "render_log",
    "write_log",
    "zstd_frame",
]

Record = dict[str, Any]
"""A storage record: a session event verbatim, or a packed chunk row."""

MIN_PACKED_RUN: Final = 3
"""The shortest run of delta chunks the harness packs into one row."""
ZSTD_LEVEL: Final = 3
"""zstd compression level of every frame (the default of Node's zlib, which DSH uses)."""

_ROWS: Final = {
    "text-delta": ("text-chunks", "texts", "text"),
    "reasoning-delta": ("reasoning-chunks", "texts", "text"),
    "tool-call-delta": ("tool-call-chunks", "args", "argumentsDelta"),
}
_CHUNK_KEYS: Final = {
    "text-delta": ({"type", "index", "text"},),
    "reasoning-delta": ({"type", "index", "text"},),
    "tool-call-delta": (
        {"type", "index", "id", "argumentsDelta"},
        {"type", "index", "id", "name", "argumentsDelta"},
    ),
}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _packable_chunk(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The chunk of an ``assistant/chunk`` event of exactly the shape a row can hold, else None.

    >>> _packable_chunk({"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}})
    """
    if record.get("type") != "assistant/chunk" or set(record) != {"type", "seq", "time", "data"}:
        return None
    data = record["data"]
    if not isinstance(data, dict) or set(data) != {"turn", "step", "chunk"}:
        return None
    chunk = data["chunk"]
    if not (_is_int(record["seq"]) and _is_int(record["time"]) and isinstance(chunk, dict)):
        return None
    shapes = _CHUNK_KEYS.get(str(chunk.get("type")), ())
    if set(chunk) not in shapes or not _is_int(chunk.get("index")):
        return None
    fields = ("id", "name", "argumentsDelta", "text")
    if any(not isinstance(chunk[key], str) for key in fields if key in chunk):
        return None
    return chunk if _is_int(data["turn"]) and _is_int(data["step"]) else None


def _continues(previous: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    """Whether packable ``record`` extends a run ending in packable ``previous``."""
    before, after = previous["data"], record["data"]
    a, b = before["chunk"], after["chunk"]
    return (
        record["seq"] == previous["seq"] + 1
        and (before["turn"], before["step"]) == (after["turn"], after["step"])
        and (a["type"], a["index"], a.get("id"), "name" in a, a.get("name"))
        == (b["type"], b["index"], b.get("id"), "name" in b, b.get("name"))
    )


def chunk_row(run: Sequence[Mapping[str, Any]]) -> Record:
    """The packed row of a non-empty run of consecutive delta chunks of one block
    (docs/format.md §Packed rows).

    Unlike :func:`pack_chunks` it packs runs of any length, so a log may hold rows of one or two
    members too (the harness reads them; it only never writes them). Raises ``ValueError`` if
    the events are not such a run.

    >>> row = chunk_row([
    ...     {"type": "assistant/chunk", "seq": 4, "time": 9, "data": {"turn": 1, "step": 2,
    ...      "chunk": {"type": "tool-call-delta", "index": 1, "id": "c", "name": "ls",
    ...                "argumentsDelta": "{}"}}}])
    >>> row["type"], row["seq0"], row["time0"]
    ('tool-call-chunks', 4, 9)
    >>> row["data"]
    {'turn': 1, 'step': 2, 'index': 1, 'dt': [], 'id': 'c', 'name': 'ls', 'args': ['{}']}
    """
    if not run or any(_packable_chunk(record) is None for record in run):
        raise ValueError("a chunk row needs delta chunk events of the exact packable shape")
    if not all(_continues(a, b) for a, b in itertools.pairwise(run)):
        raise ValueError("a chunk row needs consecutive chunks of one content block")
    first = run[0]
    chunk = first["data"]["chunk"]
    row_type, payload, member = _ROWS[chunk["type"]]
    data: Record = {
        "turn": first["data"]["turn"],
        "step": first["data"]["step"],
        "index": chunk["index"],
        "dt": [b["time"] - a["time"] for a, b in itertools.pairwise(run)],
    }
    if "id" in chunk:
        data["id"] = chunk["id"]
    if "name" in chunk:
        data["name"] = chunk["name"]
    data[payload] = [record["data"]["chunk"][member] for record in run]
    return {"type": row_type, "seq0": first["seq"], "time0": first["time"], "data": data}


def pack_chunks(events: Iterable[Mapping[str, Any]], min_run: int = MIN_PACKED_RUN) -> list[Record]:
    """The storage records of one append batch: chunk runs of ``min_run`` or more packed.

    Every other record passes through unchanged and in order, rows already packed included.

    >>> chunk = lambda seq, text: {"type": "assistant/chunk", "seq": seq, "time": seq,
    ...     "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0,
    ...                                             "text": text}}}
    >>> [r["type"] for r in pack_chunks([chunk(0, "a"), chunk(1, "b"), chunk(2, "c")])]
    ['text-chunks']
    >>> [r["type"] for r in pack_chunks([chunk(0, "a"), chunk(1, "b")])]
    ['assistant/chunk', 'assistant/chunk']
    """
    out: list[Record] = []
    run: list[Mapping[str, Any]] = []

    def close_run() -> None:
        if len(run) >= min_run:
            out.append(chunk_row(run))
        else:
            out.extend(dict(record) for record in run)
        run.clear()

    for record in events:
        if _packable_chunk(record) is None:
            close_run()
            out.append(dict(record))
            continue
        if run and not _continues(run[-1], record):
            close_run()
        run.append(record)
    close_run()
    return out


def render_header(header: Mapping[str, Any]) -> bytes:
    """The header line with its newline; ``"type":"session"`` is put first when missing.

    >>> render_header({"version": 0, "id": "\\ud800", "createdAt": 5, "delegationDepth": 0})
    b'{"type":"session","version":0,"id":"\\\\ud800","createdAt":5,"delegationDepth":0}\\n'
    """
    line = {"type": "session", **{k: v for k, v in header.items() if k != "type"}}
    return js_json(line) + b"\n"


def render_batch(records: Iterable[Mapping[str, Any]], *, pack: bool = True) -> bytes:
    """The JSONL bytes of one append batch, each line ending in ``\\n``.

    With ``pack`` (the harness's default) delta chunk runs are packed first (:func:`pack_chunks`);
    without it the records are written exactly as given.

    >>> render_batch([{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}])
    b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\\n'
    """
    stored = pack_chunks(records) if pack else records
    return b"".join(js_json(record) + b"\n" for record in stored)


def zstd_frame(data: bytes) -> bytes:
    """One independent zstd frame holding ``data``, byte for byte as the harness writes it.

    Node's ``zstdCompress`` streams: level 3, a checksum, no content size in the frame header
    and the default window (not one shrunk to the input), which a size-less stream gives here.

    >>> zstandard.ZstdDecompressor().decompressobj().decompress(zstd_frame(b"{}\\n"))
    b'{}\\n'
    """
    stream = zstandard.ZstdCompressor(
        level=ZSTD_LEVEL, write_checksum=True, write_content_size=False
    ).compressobj(size=-1)
    return stream.compress(data) + stream.flush()


def render_log(
    header: Mapping[str, Any],
    batches: Iterable[Iterable[Mapping[str, Any]]],
    *,
    compress: bool,
    pack: bool = True,
) -> bytes:
    """The bytes of a whole log file: the header, then each batch (a zstd frame each).

    Empty batches write nothing, as the harness skips empty appends.

    >>> data = render_log({"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0},
    ...                   [[{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}]],
    ...                   compress=True)
    >>> reader = zstandard.ZstdDecompressor().decompressobj()
    >>> reader.decompress(data)  # the first frame alone: exactly the header line
    b'{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}\\n'
    """
    pieces = [render_header(header)]
    pieces += [render_batch(batch, pack=pack) for batch in batches]
    if compress:
        return b"".join(zstd_frame(piece) for piece in pieces if piece)
    return b"".join(pieces)


def log_path(root: str | os.PathLike[str], header: Mapping[str, Any], *, compress: bool) -> Path:
    """Where the harness keeps the log of the session with this header below ``root``.

    >>> log_path("/r", {"id": ".", "cwd": "/w"}, compress=True).as_posix()
    '/r/--w--/~002E/session.jsonl.zstd'
    >>> log_path("/r", {"id": "a b"}, compress=False).as_posix()
    '/r/_no-cwd/a~0020b/session.jsonl'

    The id names the log's directory, so it must be a string, and a cwd must be one the
    harness can name a directory by (INVALID_CONFIG otherwise: its listing would fail for the
    whole root). A cwd that is no string but has no characters, a number, is filed under
    ``--root--``, as the harness files it:

    >>> log_path("/r", {"createdAt": 1}, compress=False)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: header id must be a string, not NoneType
    >>> log_path("/r", {"id": "s", "cwd": None}, compress=False)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: header cwd null cannot name a storage path \
(leave cwd out for a session without one)
    >>> log_path("/r", {"id": "s", "cwd": 5}, compress=False).as_posix()
    '/r/--root--/s/session.jsonl'
    """
    session_id = string(mapping(header, "header").get("id"), "header id")
    cwd = header.get("cwd")
    problem = unfiled_cwd_problem(cwd) if "cwd" in header else None
    if problem is not None:
        why = f"{problem} (leave cwd out for a session without one)"
        raise SessionReferenceError(why, INVALID_CONFIG)
    project = encode_project_directory(cwd)
    name = ZSTD_LOG if compress else PLAIN_LOG
    return Path(root) / project / encode_session_directory(session_id) / name


class SessionWriter:
    """Writes one session's log into a store as the harness does: create, then append batches.

    Each :meth:`append` is one batch (one zstd frame in a compressed log). The file is created,
    with the header line, when the writer is; an existing file is replaced.

    >>> import tempfile
    >>> header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    >>> with tempfile.TemporaryDirectory() as root:
    ...     with SessionWriter(root, header, compress=True) as writer:
    ...         writer.append([{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}])
    ...     (writer.path.name, writer.frames, writer.plain_bytes)
    ('session.jsonl.zstd', 2, 131)
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        header: Mapping[str, Any],
        *,
        compress: bool = True,
        pack: bool = True,
    ) -> None:
        """Create the log file of ``header`` below ``root`` and write the header line."""
        self.path: Path = log_path(root, header, compress=compress)
        """The log file."""
        self.compress = compress
        self.pack = pack
        self.frames = 0
        """Batches written, the header's included (zstd frames in a compressed log)."""
        self.plain_bytes = 0
        """Bytes of JSONL written (before compression)."""
        self.file_bytes = 0
        """Bytes written to the file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("wb")
        self._write(render_header(header))

    def append(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Append one batch of events (packed unless the writer was made with ``pack=False``)."""
        data = render_batch(events, pack=self.pack)
        if data:
            self._write(data)

    def _write(self, data: bytes) -> None:
        stored = zstd_frame(data) if self.compress else data
        self._file.write(stored)
        self.frames += 1
        self.plain_bytes += len(data)
        self.file_bytes += len(stored)

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def write_log(
    root: str | os.PathLike[str],
    header: Mapping[str, Any],
    batches: Iterable[Iterable[Mapping[str, Any]]],
    *,
    compress: bool,
    pack: bool = True,
) -> Path:
    """Write a whole log (:func:`render_log`) where the harness keeps it; returns the path.

    >>> import tempfile
    >>> header = {"version": 0, "id": "s", "createdAt": 1, "cwd": "/w", "delegationDepth": 0}
    >>> with tempfile.TemporaryDirectory() as root:
    ...     write_log(root, header, [], compress=False).relative_to(root).as_posix()
    '--w--/s/session.jsonl'
    """
    path = log_path(root, header, compress=compress)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(render_log(header, batches, compress=compress, pack=pack))
    return path
