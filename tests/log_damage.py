"""Log files the writer deliberately never writes, for the reader's tests.

Every record is rendered by :mod:`sessionref.log.writer`; what this module adds is the damage:
raw lines spliced among the records (garbage, a seq gap, a torn record), and any bytes placed
where a session's log belongs, whatever header they hold.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from sessionref.log.writer import log_path, render_batch, render_header, zstd_frame
from tests.logs import Event, header

Item = Event | bytes
"""An event, or a raw line (with its newline) written as it is."""


def lines(items: Iterable[Item]) -> bytes:
    """The events rendered by the writer, raw lines as they are.

    >>> lines([{"type": "a", "seq": 0, "time": 1, "data": "\\ud800"}, b"garbage\\n"])
    b'{"type":"a","seq":0,"time":1,"data":"\\\\ud800"}\\ngarbage\\n'
    """
    return b"".join(
        item if isinstance(item, bytes) else render_batch([item], pack=False) for item in items
    )


def plain_log(items: Iterable[Item], head: Event | None = None) -> bytes:
    """A plain log: the header line, then ``items``."""
    return render_header(head or header()) + lines(items)


def zstd_log(batches: Iterable[Iterable[Item]], head: Event | None = None) -> bytes:
    """A zstd log: the header frame, then one frame per batch of ``items``."""
    frames = [render_header(head or header()), *(lines(batch) for batch in batches)]
    return b"".join(zstd_frame(frame) for frame in frames)


def place(
    root: Path, content: bytes, session_id: str = "s", cwd: str | None = "/w", *, compress: bool
) -> Path:
    """Write ``content`` where the log of ``session_id`` (in ``cwd``; without one when
    ``None``) belongs under ``root``."""
    where = {"id": session_id} if cwd is None else {"id": session_id, "cwd": cwd}
    path = log_path(root, where, compress=compress)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path
