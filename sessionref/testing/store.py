"""Serialize session logs the way DSH writes them to disk (docs/format.md §Layout).

>>> log = {"header": {"version": 0, "id": "s-1", "createdAt": 1, "delegationDepth": 0},
...        "events": []}
>>> session_log_lines(log)
['{"type":"session","version":0,"id":"s-1","createdAt":1,"delegationDepth":0}']
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypedDict

import zstandard

from sessionref.log.layout import encode_project_directory as project_dir_name
from sessionref.log.layout import encode_session_directory as encode_session_id
from sessionref.testing._js import js_stringify

__all__ = [
    "SessionLog",
    "encode_session_id",
    "project_dir_name",
    "session_file_path",
    "session_log_lines",
    "write_session_store",
]


class SessionLog(TypedDict):
    """A session as in docs/api.md §Conformance:
    the header (without ``type``) and its storage records."""

    header: dict[str, Any]
    events: list[dict[str, Any]]


def session_file_path(
    root: str | os.PathLike[str], header: dict[str, Any], *, compress: bool = False
) -> Path:
    """Where DSH keeps the log of the session with this header.

    >>> session_file_path("/r", {"id": ".", "cwd": "/w"}).as_posix()
    '/r/--w--/~002E/session.jsonl'
    """
    cwd = header.get("cwd")
    name = "session.jsonl.zstd" if compress else "session.jsonl"
    return (
        Path(root)
        / project_dir_name(cwd if isinstance(cwd, str) else None)
        / encode_session_id(header["id"])
        / name
    )


def session_log_lines(log: SessionLog) -> list[str]:
    """The JSONL lines (without newlines) of a log, as JavaScript's ``JSON.stringify`` writes them.

    Line 1 is the header with ``"type":"session"`` first; lone surrogates appear as ``\\udxxx``.

    >>> log = {"header": {"version": 0, "id": "\\ud800", "createdAt": 5, "delegationDepth": 0},
    ...        "events": [{"type": "turn/start", "seq": 0, "time": 7, "data": {"turn": 1}}]}
    >>> for line in session_log_lines(log): print(line)
    {"type":"session","version":0,"id":"\\ud800","createdAt":5,"delegationDepth":0}
    {"type":"turn/start","seq":0,"time":7,"data":{"turn":1}}
    """
    header = {"type": "session", **{k: v for k, v in log["header"].items() if k != "type"}}
    return [js_stringify(header), *(js_stringify(record) for record in log["events"])]


def _file_bytes(lines: list[str], compress: bool) -> bytes:
    encoded = [f"{line}\n".encode() for line in lines]
    if not compress:
        return b"".join(encoded)
    compressor = zstandard.ZstdCompressor()
    return b"".join(compressor.compress(chunk) for chunk in encoded)


def write_session_store(
    root: str | os.PathLike[str], logs: Iterable[SessionLog], *, compress: bool = False
) -> list[Path]:
    """Write logs in the DSH on-disk layout under ``root`` and return the files written.

    Plain files hold one JSON line per record, each ending in ``\\n``; with ``compress=True`` the
    file is ``session.jsonl.zstd`` made of independent zstd frames, one per line (so the first
    frame is the header line). Two logs landing on the same path raise ``ValueError``.

    >>> import tempfile
    >>> log = {"header": {"version": 0, "id": "a b", "createdAt": 1, "delegationDepth": 0,
    ...                   "cwd": "/w"}, "events": []}
    >>> with tempfile.TemporaryDirectory() as root:
    ...     [p.relative_to(root).as_posix() for p in write_session_store(root, [log])]
    ['--w--/a~0020b/session.jsonl']
    """
    written: list[Path] = []
    for log in logs:
        path = session_file_path(root, log["header"], compress=compress)
        if path in written:
            raise ValueError(f"two logs share the path {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_file_bytes(session_log_lines(log), compress))
        written.append(path)
    return written
