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
from sessionref.errors import SessionLogError
from sessionref.log.layout import encode_session_directory
from sessionref.log.records import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    DecodedLogRecord,
    SessionHeader,
    SessionLog,
    decode_header,
    latest_title,
    parse_chunks,
    plain_chunks,
    zstd_chunks,
)

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

    def title(self, session_id: str) -> str | None:
        """The latest title; ``None`` when there is none or the log cannot be read."""
        ...


def read_title(store: SessionStore, session_id: str) -> str | None:
    """The latest title of a session read from ``store``, or ``None`` (see ``title``).

    >>> read_title(MemoryStore([]), "missing") is None
    True
    """
    try:
        return latest_title(store.read(session_id))
    except (SessionLogError, OSError, RecursionError):
        return None


class StoreProblem(msgspec.Struct, frozen=True):
    """A log file the store passed over or could not place, and why."""

    path: str
    message: str


def _read_header_line(path: Path, limit: int) -> bytes:
    """The first line of a log file; of a zstd log only the first frame is decompressed."""
    with path.open("rb") as raw:
        stream: io.BufferedIOBase | Any = raw
        if path.name == ZSTD_LOG:
            stream = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=False)
        line = b""
        while b"\n" not in line:
            chunk = stream.read(_HEADER_PROBE)
            if not chunk:
                break
            line += chunk
            if len(line) > limit and b"\n" not in line[: limit + 1]:
                raise SessionLogError(f"header line is longer than {limit} bytes")
    return line.split(b"\n", 1)[0]


class DirectoryStore:
    """Sessions in the DSH JSONL layout below ``root``, found by walking two levels.

    The header, not the path, says which session a file holds; directory names may start
    with ``.``. Links that lead out of ``root`` are not followed. A log bigger than
    ``max_bytes`` once decompressed, or with a line longer than ``max_line_bytes``, is a read
    failure rather than a memory hazard. What a listing passes over is kept in
    :meth:`problems`.

    >>> DirectoryStore("/nonexistent").headers()
    []
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.root = Path(root).expanduser()
        self.max_bytes = max_bytes
        self.max_line_bytes = max_line_bytes
        self._paths: dict[str, Path] = {}
        self._problems: list[StoreProblem] = []
        self._titles: dict[str, tuple[tuple[Path, int, int], str | None]] = {}
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
        """Read every header; an id found twice is served from the directory its name gives."""
        headers: dict[str, SessionHeader] = {}
        paths: dict[str, Path] = {}
        problems: list[StoreProblem] = []
        for path in self._log_files():
            try:
                header = decode_header(_read_header_line(path, self.max_line_bytes))
            except (SessionLogError, OSError, zstandard.ZstdError) as exc:
                problems.append(StoreProblem(str(path), f"unreadable header: {exc}"))
                continue
            at_home = path.parent.name == encode_session_directory(header.id)
            if not at_home:
                named = js_json(header.id).decode("utf-8")
                problems.append(StoreProblem(str(path), f"header names session {named}"))
            first = header.id not in headers
            if first or (at_home and paths[header.id].parent.name != path.parent.name):
                headers[header.id], paths[header.id] = header, path
            if not first:
                problems.append(StoreProblem(str(path), "a second log of the same session"))
        with self._lock:
            self._paths, self._problems = paths, problems
        return list(headers.values())

    def headers(self) -> list[SessionHeader]:
        """The header of every session whose header line reads."""
        return self._scan()

    def problems(self) -> list[StoreProblem]:
        """What the last listing passed over: unreadable headers, misplaced or twice-stored logs."""
        with self._lock:
            return list(self._problems)

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
        chunks = zstd_chunks if path.name == ZSTD_LOG else plain_chunks
        try:
            with path.open("rb") as file:
                log = parse_chunks(chunks(file, self.max_bytes), self.max_line_bytes)
        except OSError as exc:
            raise SessionLogError(f"cannot read {path.name}: {exc.strerror}") from None
        if log.header.id != session_id:
            raise SessionLogError(f"header of {path} no longer names {session_id!r}")
        return log

    def title(self, session_id: str) -> str | None:
        """The latest title, remembered per file version (path, size, modification time).

        Listing candidates with a query asks every session for its title: only logs that
        changed since the last time are read again.
        """
        try:
            path = self.path_of(session_id)
            stat = path.stat()
        except (SessionLogError, OSError):
            return None
        version = (path, stat.st_size, stat.st_mtime_ns)
        with self._lock:
            known = self._titles.get(session_id)
        if known is not None and known[0] == version:
            return known[1]
        title = read_title(self, session_id)
        with self._lock:
            self._titles[session_id] = (version, title)
        return title


class MemoryStore:
    """Sessions given as ``{"header": {...}, "events": [storage records]}`` objects.

    >>> store = MemoryStore([{"header": {"id": "s", "createdAt": 1}, "events": []}])
    >>> [h.id for h in store.headers()], store.read("s").records
    (['s'], [])
    """

    def __init__(self, sessions: Iterable[Mapping[str, Any]]) -> None:
        self._sessions: dict[str, tuple[SessionHeader, Sequence[Any]]] = {}
        self._headers: list[SessionHeader] = []
        for session in sessions:
            try:
                header = msgspec.convert(session["header"], SessionHeader)
            except (KeyError, TypeError, msgspec.ValidationError):
                continue  # like a file whose header does not read: not listed, not found
            self._sessions.setdefault(header.id, (header, session.get("events") or []))
            self._headers.append(header)

    def headers(self) -> list[SessionHeader]:
        """The headers, in the order given."""
        return list(self._headers)

    def read(self, session_id: str) -> SessionLog:
        """The session's records, checked the way a file's lines are."""
        found = self._sessions.get(session_id)
        if found is None:
            raise SessionNotFound(session_id)
        header, events = found
        try:
            records = msgspec.convert(list(events), list[DecodedLogRecord])
        except msgspec.ValidationError as exc:
            raise SessionLogError(f"bad record: {exc}") from None
        except RecursionError:
            raise SessionLogError("a record nests too deeply") from None
        return SessionLog(header, list(records))

    def title(self, session_id: str) -> str | None:
        """The latest title, read from the records each time."""
        return read_title(self, session_id)
