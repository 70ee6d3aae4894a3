"""Where session logs come from: a DSH directory on disk, or sessions held in memory.

Both list sessions by :mod:`sessionref.log.discovery` and load them with the one reader of
:mod:`sessionref.log.reader`: a :class:`MemoryStore` renders its sessions as the bytes of a
plain-JSONL store and reads those, so it answers exactly as that store on disk would.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any

import zstandard

from sessionref.codecs.jsjson import js_json, js_numbers
from sessionref.errors import (
    LogUnreadable,
    SessionLogError,
    listed,
    mapping,
    session_id_of,
)
from sessionref.log.discovery import (
    PLAIN_LOG,
    ZSTD_LOG,
    Listing,
    LogFile,
    StoreProblem,
    check_lookup,
    list_sessions,
    store_directory,
)
from sessionref.log.folders import Walked, walk_root
from sessionref.log.framefile import find_frames
from sessionref.log.frames import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    check_header_frame,
)
from sessionref.log.inflate import decompress_frame
from sessionref.log.jsonl import open_regular
from sessionref.log.layout import (
    FLAT_PROBE_SUFFIX,
    encode_project_directory,
    encode_session_directory,
    flat_probe_too_long,
)
from sessionref.log.protocol import DSH, SessionStore, Store, read_limits
from sessionref.log.records import latest_title
from sessionref.log.structs import SessionHeader, SessionLog
from sessionref.log.surface import current_surface
from sessionref.log.transcript import log_transcript
from sessionref.log.versioned import LastListing, VersionedCache
from sessionref.transcript import Transcript

__all__ = [
    "PLAIN_LOG",
    "ZSTD_LOG",
    "DirectoryStore",
    "LogUnreadable",
    "MemoryStore",
    "SessionNotFound",
    "SessionStore",
    "Store",
    "StoreProblem",
    "read_title",
    "render_session",
    "zstd_first_line",
]

_PROBE = 1 << 16


class SessionNotFound(SessionLogError):
    """No session with that id in the store; worded as the harness words it (the id as it is,
    not escaped), then ``where`` (the command line says where it looked). Its code is
    READ_FAILED, as the package answers a missing session.

    >>> missing = SessionNotFound('a"b')
    >>> str(missing), missing.code
    ('session "a"b" not found', 'SESSION_REFERENCE_READ_FAILED')
    >>> str(SessionNotFound("x", " in --root DIR"))
    'session "x" not found in --root DIR'
    """

    def __init__(self, session_id: str, where: str = "") -> None:
        super().__init__(f'session "{session_id}" not found{where}')
        self.session_id = session_id
        self.where = where

    def __reduce__(self) -> tuple[type[SessionNotFound], tuple[str, str]]:
        """Made again as it was made (a process pool sends it back pickled)."""
        return (type(self), (self.session_id, self.where))


def read_title(store: Store, session_id: str) -> Any:
    """The title of a session of ``store``: ``None`` when it has none or cannot be loaded
    (its surface fold included, as the harness loads it before folding the title).

    >>> read_title(MemoryStore([]), "missing") is None
    True
    """
    try:
        log = store.read(session_id)
        current_surface(log.records)
    except (SessionLogError, OSError, RecursionError):
        return None
    return latest_title(log)


def _plain_first_line(location: str, limit: int) -> bytes | None:
    """Line 1 of a plain log, ``None`` when the file has no newline (in ``limit`` bytes)."""
    head = bytearray()  # grown in place, each chunk searched once: linear in the line
    with open_regular(location) as file:
        while chunk := file.read(_PROBE):
            end = chunk.find(b"\n")
            head += chunk if end < 0 else chunk[:end]
            if len(head) > limit:
                raise SessionLogError(f"header line is longer than {limit} bytes")
            if end >= 0:
                return bytes(head)
    return None


def zstd_first_line(read: Callable[[int], bytes], limit: int) -> bytes | None:
    """Line 1 of a zstd log from its first frame, read ``_PROBE`` bytes at a time by ``read``
    as far as that frame (:func:`~sessionref.log.framefile.find_frames`); ``None`` when the
    file holds no complete first frame; more than ``limit`` bytes read without one raises.

    >>> import io, zstandard
    >>> frame = zstandard.ZstdCompressor().compress
    >>> zstd_first_line(io.BytesIO(frame(b"h\\n") + b"not read").read, 9)
    b'h'
    """
    held: list[bytes] = []
    found = find_frames(_probe_pieces(read, limit, held), first_only=True)
    if found.first is None:
        return None
    plaintext = decompress_frame(b"".join(held)[: found.first[1]], limit)
    check_header_frame(plaintext)
    return plaintext[:-1]


def _probe_pieces(read: Callable[[int], bytes], limit: int, held: list[bytes]) -> Iterator[bytes]:
    """``read(_PROBE)`` until it gives nothing, kept in ``held``; raises past ``limit``."""
    size = 0
    while piece := read(_PROBE):
        held.append(piece)
        size += len(piece)
        yield piece
        if size > limit:
            raise SessionLogError(f"header frame is longer than {limit} bytes")


class DirectoryStore:
    """Sessions in the DSH JSONL layout below ``root``, listed as the harness lists them.

    Only real directories are walked (links are not followed); the header, checked against
    its directory, says which session a file holds. A log bigger than ``max_bytes`` once
    decompressed, or with a line longer than ``max_line_bytes``, is a read failure rather
    than a memory hazard. What the harness would refuse the whole root for is kept in
    :meth:`problems`, and the rest is served. A root that is not a directory is an error:

    >>> DirectoryStore("/nonexistent")
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: DSH store root /nonexistent: no such directory
    """

    harness = DSH

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        opened = store_directory(root, "DSH store root")
        self._open(opened, read_limits(max_bytes, max_line_bytes))

    def _open(self, root: Path, limits: tuple[int, int]) -> None:
        """Serve ``root`` under ``limits`` (``(max_bytes, max_line_bytes)``, checked) with
        nothing remembered. The root is checked only by the constructor: a store opened again
        over it (as an index does at each refresh) lists a root gone since as empty, as the
        harness lists a root that does not exist."""
        self.root = root
        self.max_bytes, self.max_line_bytes = limits
        self._listing = LastListing(Listing([], {}, [], {}))
        self._titles: VersionedCache[str, Any] = VersionedCache()

    def first_line(self, file: LogFile) -> bytes | None:
        """Line 1 of a log file (``None`` without a newline); raises what an unreadable one
        raises. Listing reads every header through this method, so a subclass may answer it
        from a cache keyed by the file's version (as :mod:`sessionref.index` does)."""
        if file.name == PLAIN_LOG:
            return _plain_first_line(file.location, self.max_line_bytes)
        with open_regular(file.location) as raw:
            try:
                return zstd_first_line(raw.read, self.max_line_bytes)
            except zstandard.ZstdError as exc:
                raise SessionLogError(f"corrupt zstd header frame: {exc}") from None

    def _walk(self) -> Walked:
        """Every log two directory levels down and what lies beside them
        (:func:`~sessionref.log.folders.walk_root`)."""
        return walk_root(str(self.root))

    def _scan(self) -> Listing:
        files, flat, strays, spots = self._walk()
        return self._listing.remember(list_sessions(files, flat, self.first_line, strays, spots))

    def headers(self) -> list[SessionHeader]:
        """The header of every session served."""
        return list(self._scan().headers)

    def problems(self) -> list[StoreProblem]:
        """What the last listing did not serve although the harness would look at it."""
        return list(self._listing.last().problems)

    def path_of(self, session_id: str) -> Path:
        """The log file of a session; raises :class:`SessionNotFound`."""
        file = self._listing.find(lambda listing: listing.files.get(session_id), self._scan)
        if file is None:
            raise SessionNotFound(session_id)
        return Path(file.location)

    def read(self, session_id: str) -> SessionLog:
        """Load one session's log as the harness does."""
        from sessionref.log.reader import read_plain_file, read_zstd  # not to list: imported here

        path = self.path_of(session_id_of(self, "read", session_id))
        check_flat_probe(path.parent)
        check_lookup(self.lookup_failure(session_id))
        try:
            with open_regular(str(path)) as file:
                if path.name != ZSTD_LOG:
                    return read_plain_file(
                        file, session_id, str(path), self.max_bytes, self.max_line_bytes
                    )
                return read_zstd(file, session_id, str(path), self.max_bytes, self.max_line_bytes)
        except OSError as exc:
            raise LogUnreadable(f"{path}: {exc.strerror}") from None

    def lookup_failure(self, session_id: str) -> str | None:
        """Why the harness's lookup of a listed session fails its read, if it does
        (:func:`~sessionref.log.lookup.lookup_conflict`, decided when the store was listed).

        >>> import json, tempfile
        >>> header = {"type": "session", "version": 0, "id": "s", "createdAt": 1,
        ...           "delegationDepth": 0, "cwd": "/w"}
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     for place in ("--w--/s/session.jsonl", "--v--/s.jsonl"):  # a flat file s
        ...         Path(folder, place).parent.mkdir(parents=True, exist_ok=True)
        ...         _ = Path(folder, place).write_text(json.dumps(header) + "\\n")
        ...     store = DirectoryStore(folder)
        ...     [h.id for h in store.headers()], store.lookup_failure("s") is not None
        (['s'], True)
        """
        return self._listing.last().conflicts.get(session_id)

    def title(self, session_id: str) -> Any:
        """The title, remembered per file version (path, size, modification time): listing
        candidates with a query asks every session for it, and only logs that changed since
        are read again."""
        session_id_of(self, "title", session_id)
        try:
            path = self.path_of(session_id)
            stat = path.stat()
        except (SessionLogError, OSError):
            return None
        version = (str(path), stat.st_size, stat.st_mtime_ns)
        return self._titles.get(session_id, version, lambda: read_title(self, session_id))

    def transcript(self, session_id: str) -> Transcript:
        """The session as a person reads it (:func:`~sessionref.log.transcript.log_transcript`)."""
        return log_transcript(self.read(session_id_of(self, "transcript", session_id)))


def check_flat_probe(session_directory: PurePath) -> None:
    """Raise the harness's read failure for a listed session whose flat-artifact probe
    ``<project>/<directory>.jsonl.zstd`` is a name too long to open (see
    :func:`~sessionref.log.layout.flat_probe_too_long`).

    >>> try:
    ...     check_flat_probe(PurePath("--w--", "x" * 245))
    ... except SessionLogError as exc:
    ...     print(str(exc)[-47:])
    xxxxxx.jsonl.zstd: name too long (ENAMETOOLONG)
    """
    if flat_probe_too_long(session_directory.name):
        probe = f"{session_directory}{FLAT_PROBE_SUFFIX}"
        raise SessionLogError(f"cannot read {probe}: name too long (ENAMETOOLONG)")


def _js_string(value: object) -> str:
    """``String(value)`` for the values a header id may be."""
    return value if isinstance(value, str) else js_json(value).decode("utf-8", "surrogatepass")


def render_session(session: Mapping[str, Any]) -> tuple[str, str, bytes]:
    """Where a conformance session (docs/api.md §Conformance) lies in a plain-JSONL store, and
    its file's bytes: the header line ``{"type":"session",…header}`` (the header as it is when
    it already has a ``type``), one line per entry of ``events``, a final newline.

    >>> render_session({"header": {"id": "s", "createdAt": 1}, "events": [5]})
    ('_no-cwd', 's', b'{"type":"session","id":"s","createdAt":1}\\n5\\n')
    """
    header = session.get("header")
    line = (
        {"type": "session", **header}
        if isinstance(header, dict) and "type" not in header
        else header
    )
    cwd = header.get("cwd") if isinstance(header, dict) else None
    session_id = header.get("id") if isinstance(header, dict) else None
    project = (
        encode_project_directory(cwd) if isinstance(cwd, str) else encode_project_directory(None)
    )
    lines = [line, *(session.get("events") or [])]
    return (
        project,
        encode_session_directory(_js_string(session_id)),
        b"".join(js_json(js_numbers(value)) + b"\n" for value in lines),  # numbers as JS writes
    )


class MemoryStore:
    """Sessions given as a list of conformance ``{"header": {...}, "events": [storage
    records]}`` objects, read exactly as if they lay in a plain-JSONL store (a later session
    written to the same directory replaces an earlier one, as a file would). A ``sessions``
    that is not a list of mappings is INVALID_CONFIG (what a header or an event holds is the
    log's business: a header the harness would not list is passed over, as on disk).

    >>> store = MemoryStore([{"header": {"version": 0, "id": "s", "createdAt": 1,
    ...                                  "delegationDepth": 0}, "events": []}])
    >>> [h.id for h in store.headers()], store.read("s").records
    (['s'], [])
    """

    harness = DSH

    def __init__(self, sessions: Iterable[Mapping[str, Any]]) -> None:
        self._files: dict[tuple[str, str], bytes] = {}
        for index, session in enumerate(listed(sessions, "MemoryStore sessions")):
            mapping(session, f"MemoryStore sessions[{index}]", 'a {"header", "events"} mapping')
            project, directory, content = render_session(session)
            self._files[project, directory] = content
        files = [
            LogFile(project, directory, PLAIN_LOG, f"{project}/{directory}/{PLAIN_LOG}")
            for project, directory in self._files
        ]
        self._listing = list_sessions(files, [], self._first_line)

    def _first_line(self, file: LogFile) -> bytes | None:
        content = self._files[file.project, file.session]
        end = content.find(b"\n")
        return None if end < 0 else content[:end]

    def headers(self) -> list[SessionHeader]:
        """The headers of the sessions served, in the order given."""
        return list(self._listing.headers)

    def problems(self) -> list[StoreProblem]:
        """What is not served although the harness would look at it."""
        return list(self._listing.problems)

    def read(self, session_id: str) -> SessionLog:
        """The session, read from its rendered bytes by the one reader."""
        from sessionref.log.reader import read_plain  # as DirectoryStore.read

        file = self._listing.files.get(session_id_of(self, "read", session_id))
        if file is None:
            raise SessionNotFound(session_id)
        check_flat_probe(PurePath(file.project, file.session))
        check_lookup(self._listing.conflicts.get(session_id))
        content = self._files[file.project, file.session]
        return read_plain([content], session_id, file.location)

    def title(self, session_id: str) -> Any:
        """The title, read from the records each time."""
        return read_title(self, session_id_of(self, "title", session_id))

    def transcript(self, session_id: str) -> Transcript:
        """The session as a person reads it (:func:`~sessionref.log.transcript.log_transcript`)."""
        return log_transcript(self.read(session_id_of(self, "transcript", session_id)))
