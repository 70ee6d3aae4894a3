"""Where session logs come from: a DSH directory on disk, or records held in memory."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

import msgspec
import zstandard

from sessionref.codecs.jsjson import js_json
from sessionref.codecs.layout import encode_session_directory
from sessionref.codecs.records import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    DecodedLogRecord,
    SessionHeader,
    SessionLog,
    decode_header,
    decompress_frames,
    parse_log,
)
from sessionref.errors import SessionLogError

PLAIN_LOG: Final = "session.jsonl"
ZSTD_LOG: Final = "session.jsonl.zstd"
_HEADER_PROBE: Final = 1 << 16


class SessionNotFound(SessionLogError):
    """No session with that id in the store.

    >>> str(SessionNotFound("a"))
    'session "a" not found'
    """

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {js_json(session_id).decode('utf-8')} not found")
        self.session_id = session_id


class SessionStore(Protocol):
    """What the resolver needs from a store."""

    def headers(self) -> list[SessionHeader]:
        """The header of every readable stored session (reads nothing else)."""
        ...

    def read(self, session_id: str) -> SessionLog:
        """The whole log; raises :class:`SessionNotFound` or :class:`SessionLogError`."""
        ...


def _read_header_line(path: Path) -> bytes:
    """The first line of a log file, decompressing only as much as it takes."""
    with path.open("rb") as raw:
        stream: io.BufferedIOBase | Any = raw
        if path.name == ZSTD_LOG:
            stream = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        line = b""
        while b"\n" not in line and len(line) < DEFAULT_MAX_DECOMPRESSED_BYTES:
            chunk = stream.read(_HEADER_PROBE)
            if not chunk:
                break
            line += chunk
    return line.split(b"\n", 1)[0]


class DirectoryStore:
    """Sessions in the DSH JSONL layout below ``root``, found by walking two levels.

    The header, not the path, says which session a file holds; directory names may start
    with ``.``. Links that lead out of ``root`` are not followed.

    >>> DirectoryStore("/nonexistent").headers()
    []
    """

    def __init__(
        self, root: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
    ) -> None:
        self.root = Path(root).expanduser()
        self.max_bytes = max_bytes
        self._paths: dict[str, Path] = {}
        self._lock = threading.Lock()

    def _log_files(self) -> Iterable[Path]:
        """Every ``session.jsonl[.zstd]`` two levels down, sorted, inside the root."""
        root = self.root.resolve()
        try:
            projects = sorted(os.scandir(root), key=lambda entry: entry.name)
        except OSError:
            return
        for project in projects:
            if not project.is_dir():
                continue
            try:
                sessions = sorted(os.scandir(project.path), key=lambda entry: entry.name)
            except OSError:
                continue
            for session in sessions:
                for name in (ZSTD_LOG, PLAIN_LOG):
                    path = Path(session.path, name)
                    if path.is_file() and path.resolve().is_relative_to(root):
                        yield path
                        break

    def _scan(self) -> list[SessionHeader]:
        headers: dict[str, SessionHeader] = {}
        paths: dict[str, Path] = {}
        for path in self._log_files():
            try:
                header = decode_header(_read_header_line(path))
            except (SessionLogError, OSError, zstandard.ZstdError):
                continue
            at_home = path.parent.name == encode_session_directory(header.id)
            if header.id not in headers or at_home:
                headers[header.id], paths[header.id] = header, path
        with self._lock:
            self._paths = paths
        return list(headers.values())

    def headers(self) -> list[SessionHeader]:
        """The header of every session whose header line reads."""
        return self._scan()

    def path_of(self, session_id: str) -> Path:
        """The log file of a session; raises :class:`SessionNotFound`."""
        with self._lock:
            path = self._paths.get(session_id)
        if path is None:
            self._scan()
            with self._lock:
                path = self._paths.get(session_id)
        if path is None:
            raise SessionNotFound(session_id)
        return path

    def read(self, session_id: str) -> SessionLog:
        """Read and decode one session's log."""
        path = self.path_of(session_id)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise SessionLogError(f"cannot read {path.name}: {exc.strerror}") from None
        if path.name == ZSTD_LOG:
            data = decompress_frames(data, self.max_bytes)
        elif len(data) > self.max_bytes:
            raise SessionLogError(f"log exceeds {self.max_bytes} bytes")
        log = parse_log(data)
        if log.header.id != session_id:
            raise SessionLogError(f"header of {path} no longer names {session_id!r}")
        return log


class MemoryStore:
    """Sessions given as ``{"header": {...}, "events": [storage records]}`` objects.

    >>> store = MemoryStore([{"header": {"id": "s", "createdAt": 1}, "events": []}])
    >>> [h.id for h in store.headers()], store.read("s").records
    (['s'], [])
    """

    def __init__(self, sessions: Iterable[Mapping[str, Any]]) -> None:
        self._sessions: dict[str, Mapping[str, Any]] = {}
        self._headers: list[SessionHeader] = []
        for session in sessions:
            header = msgspec.convert(session["header"], SessionHeader)
            self._sessions.setdefault(header.id, session)
            self._headers.append(header)

    def headers(self) -> list[SessionHeader]:
        """The headers, in the order given."""
        return list(self._headers)

    def read(self, session_id: str) -> SessionLog:
        """The session's records, checked the way a file's lines are."""
        session = self._sessions.get(session_id)
        if session is None:
            raise SessionNotFound(session_id)
        events: Sequence[Any] = session.get("events") or []
        try:
            records = msgspec.convert(list(events), list[DecodedLogRecord])
        except msgspec.ValidationError as exc:
            raise SessionLogError(f"bad record: {exc}") from None
        return SessionLog(msgspec.convert(session["header"], SessionHeader), list(records))
