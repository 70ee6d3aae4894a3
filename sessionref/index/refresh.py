"""Bringing an index up to date with its store: stat everything, read only what changed.

When the walk of the store (:mod:`sessionref.index.walk`) differs from the one the index
recorded, the store itself lists again, through :class:`CachedHeaderStore`, which reads a
header line only for files whose revision is new; then exactly the served logs whose revision
changed are read.
"""

from __future__ import annotations

import array
import itertools
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple, Protocol, TypeGuard

import msgspec

from sessionref.errors import SessionLogError, describe
from sessionref.index.walk import file_revision, version_of
from sessionref.log.discovery import LogFile, NotALog
from sessionref.log.harness_store import HarnessStore
from sessionref.log.records import SessionHeader, SessionLog, latest_title
from sessionref.log.store import DirectoryStore, LogUnreadable

Progress = Callable[[int, int], None]
"""Called with (sessions read so far, sessions to read)."""


class RefreshReport(NamedTuple):
    """What a refresh did: sessions served, logs read again, sessions dropped."""

    sessions: int
    read: int
    removed: int


class HeaderEntry(NamedTuple):
    """What reading line 1 of a log gave at one version of the file (mode and revision): the
    line (``None``: the file has no complete line), or the error."""

    revision: str
    line: bytes | None
    error: str | None


class SessionData(NamedTuple):
    """What the index keeps of one served session, read at ``revision`` (``None``: read again):
    why its log does not load (``None`` when it does), its title and its conversation as
    :func:`session_text` joins it."""

    path: str
    revision: str | None
    failure: str | None
    title: Any
    text: str = ""
    bounds: bytes = b""


UNIT_SEPARATOR: Final = "\n"
"""Between two units of a session's text: whitespace, so no query word spans two units."""
_UNINDEXABLE: Final = re.compile("[\x00\ud800-\udfff]")


def indexable(text: str) -> str:
    """Text as SQLite indexes it: a lone surrogate (which UTF-8 cannot hold) and NUL (where
    SQLite's text functions stop) become U+FFFD, one for one (text with neither, nearly all,
    is found so by the fast encoder rather than a scan).

    >>> indexable("a\\ud800b\\x00c"), indexable("ok é")
    ('a\\ufffdb\\ufffdc', 'ok é')
    """
    if "\x00" not in text:
        try:
            text.encode()
        except UnicodeEncodeError:
            pass
        else:
            return text
    return _UNINDEXABLE.sub("\ufffd", text)


def session_text(units: Iterable[str]) -> tuple[str, bytes]:
    """A session's units as one indexable text, and where each unit ends in it (uint32s).

    >>> text, bounds = session_text(["ab", "c\\ud800"])
    >>> text, unit_texts(text, bounds)
    ('ab\\nc\\ufffd', ['ab', 'c\\ufffd'])
    """
    texts = list(units)
    step = len(UNIT_SEPARATOR)
    ends = array.array(
        "I", [end - step for end in itertools.accumulate(len(t) + step for t in texts)]
    )
    return indexable(UNIT_SEPARATOR.join(texts)), ends.tobytes()  # indexable: one for one


def unit_texts(text: str, bounds: bytes) -> list[str]:
    """The units :func:`session_text` joined.

    >>> unit_texts(*session_text(["x\\ny", "", "z"]))
    ['x\\ny', '', 'z']
    """
    units, start = [], 0
    for end in array.array("I", bounds):
        units.append(text[start:end])
        start = end + len(UNIT_SEPARATOR)
    return units


def encode_header(header: SessionHeader) -> str:
    r"""A header as ASCII JSON (lone surrogates escaped), which SQLite stores as text.

    >>> encode_header(SessionHeader("\ud800", 1))[:29]
    '{"id":"\\ud800","createdAt":1,'
    """
    return json.dumps(msgspec.to_builtins(header), ensure_ascii=True, separators=(",", ":"))


def decode_header(text: str) -> SessionHeader:
    """The header :func:`encode_header` wrote.

    >>> header = SessionHeader("s", 2, cwd="/w", parent_session={"id": "p"})
    >>> decode_header(encode_header(header)) == header
    True
    """
    return msgspec.convert(json.loads(text), SessionHeader)


def decode_headers(texts: list[str]) -> list[SessionHeader]:
    """Many headers at once (fast when none holds a lone surrogate).

    >>> [h.id for h in decode_headers([encode_header(SessionHeader("a", 1))])]
    ['a']
    """
    try:
        return msgspec.json.decode(f"[{','.join(texts)}]", type=list[SessionHeader])
    except msgspec.DecodeError:
        return [decode_header(text) for text in texts]


class LineMemory(Protocol):
    """What :func:`remembered_line` remembers with: the lines known (by path), those learned,
    and when "lately" starts (ns)."""

    known: Mapping[bytes, HeaderEntry]
    learned: dict[bytes, HeaderEntry]
    racy_after: int


def remembered_line(
    memory: LineMemory,
    path: str | os.PathLike[str],
    read: Callable[[], bytes | None],
    status: os.stat_result | None = None,
) -> bytes | None:
    """What ``read`` gives for the file at ``path`` (whose ``status`` the caller may have
    taken): remembered while the file (its mode included: a permission change may make it
    unreadable) is unchanged and settled; a racy file's answer is read and not remembered. An
    error of ``read`` (:class:`SessionLogError`) is remembered as the answer; one of
    ``os.stat`` is raised, never remembered (it may pass without the file changing), and so is
    a :class:`~sessionref.log.discovery.NotALog`: the file ``status`` saw was a regular one,
    so what was opened was put in its place meanwhile (and may be gone again at the same
    version: remembered, its message, which names the path, would be named again).

    >>> class Memory:
    ...     known, learned, racy_after = {}, {}, 1 << 62
    >>> memory = Memory()
    >>> remembered_line(memory, "/", lambda: b"line"), list(memory.learned.values())[0].line
    (b'line', b'line')
    >>> memory.known = memory.learned
    >>> remembered_line(memory, "/", lambda: b"not read")
    b'line'
    """
    key = os.fsencode(path)
    status = status or os.stat(path)
    version = version_of(status)
    entry = memory.known.get(key)
    settled = status.st_mtime_ns < memory.racy_after
    if settled and entry is not None and entry.revision == version:
        if entry.error is not None:
            raise SessionLogError(entry.error)
        return entry.line
    try:
        line = read()
    except NotALog:
        raise
    except SessionLogError as exc:
        if settled:
            memory.learned[key] = HeaderEntry(version, None, str(exc))
        raise
    if settled:
        memory.learned[key] = HeaderEntry(version, line, None)
    return line


class CachedHeaderStore(DirectoryStore):
    """A :class:`DirectoryStore` that reads line 1 of a log only when its file's revision is new.

    ``known`` maps a path (bytes) to what its header gave; new answers collect in ``learned``.
    An :class:`OSError` is never remembered: it may pass without the file changing. ``placed``
    says where sessions are when the listing is known to be unchanged, and ``conflicts`` why
    that listing found the harness's lookup fails the read of some of them.
    """

    def __init__(
        self,
        root: Path,
        limits: tuple[int, int],
        known: Mapping[bytes, HeaderEntry],
        racy_after: int,
        placed: Mapping[str, str] | None = None,
        conflicts: Mapping[str, str] | None = None,
    ) -> None:
        self._open(root, limits)  # the root its store checked, which may since be gone
        self.known = known
        self.racy_after = racy_after
        self.placed = placed or {}
        self.conflicts = conflicts or {}
        self.learned: dict[bytes, HeaderEntry] = {}
        self.seen: set[bytes] = set()

    @property
    def limits(self) -> tuple[int, int]:
        """``(max_bytes, max_line_bytes)``, to build the same store elsewhere."""
        return (self.max_bytes, self.max_line_bytes)

    def path_of(self, session_id: str) -> Path:
        """Where the index last saw the session (the store's own answer for others)."""
        placed = self.placed.get(session_id)
        return Path(placed) if placed is not None else super().path_of(session_id)

    def lookup_failure(self, session_id: str) -> str | None:
        """Why the lookup fails the session's read, as the listing that placed it found."""
        if session_id in self.placed:
            return self.conflicts.get(session_id)
        return super().lookup_failure(session_id)

    def place(self, session_id: str) -> tuple[Path, str | None]:
        """The session's log and its revision (:func:`file_revision`); raises
        :class:`SessionLogError` or :class:`OSError`."""
        path = self.path_of(session_id)
        return path, file_revision(path, self.racy_after)

    def first_line(self, file: LogFile) -> bytes | None:
        """Line 1 of a log, from the cache while the file is the same
        (:func:`remembered_line`)."""
        self.seen.add(os.fsencode(file.location))
        read = super().first_line
        return remembered_line(self, file.location, lambda: read(file))


IndexedStore = DirectoryStore | HarnessStore
"""The stores an index reads: a DSH root's, or another harness's."""


def is_indexed_store(store: object) -> TypeGuard[IndexedStore]:
    """Whether ``store`` is one a :class:`SessionIndex` reads (:data:`IndexedStore`): a store
    over a root on disk, of any harness.

    >>> import tempfile
    >>> from sessionref.log.store import MemoryStore
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     is_indexed_store(DirectoryStore(folder)), is_indexed_store(MemoryStore([]))
    (True, False)
    """
    return isinstance(store, (DirectoryStore, HarnessStore))


def limits_of(store: IndexedStore) -> tuple[int, int]:
    """``(max_bytes, max_line_bytes)`` of a store, to build another like it."""
    return (store.max_bytes, store.max_line_bytes)


def revision_or_none(path: Path, racy_after: int) -> str | None:
    """:func:`~sessionref.index.walk.file_revision`, ``None`` when the file cannot be statted."""
    try:
        return file_revision(path, racy_after)
    except OSError:
        return None


def same_line(scanner: CachedHeaderStore, path: str, remembered: HeaderEntry) -> bool:
    """Whether line 1 of the log at ``path`` still gives what the listing used."""
    file = LogFile("", "", os.path.basename(path), path)
    now: tuple[bytes | None, str | None]
    try:
        now = (scanner.first_line(file), None)
    except SessionLogError as exc:
        now = (None, str(exc))
    except OSError:
        return False
    return now == (remembered.line, remembered.error)


class PlacedStore(Protocol):
    """A store the index reads sessions from: it says where each is and at what revision
    (``None``: unknown, read it again next time), and reads it."""

    def place(self, session_id: str) -> tuple[Path, str | None]:
        """The session's (first) file and its revision; raises :class:`SessionLogError` or
        :class:`OSError`."""
        ...

    def read(self, session_id: str) -> SessionLog:
        """The session's log."""
        ...


def failure_of(error: BaseException, path: object = "") -> str:
    """Why the log at ``path`` was not read (:attr:`SessionData.failure`), as a note that
    names the log says it (without the path a store's message starts with).

    >>> failure_of(SessionLogError("/s/x.jsonl: seq gap at line 3"), Path("/s/x.jsonl"))
    'seq gap at line 3'
    >>> failure_of(PermissionError(13, "Permission denied")), failure_of(RecursionError())
    ('cannot read it: Permission denied', 'nested too deeply to read')
    """
    if isinstance(error, OSError):
        return f"cannot read it: {error.strerror or describe(error)}"
    if isinstance(error, RecursionError):
        return "nested too deeply to read"
    if isinstance(error, MemoryError):
        return "too large to read in memory"
    return describe(error).removeprefix(f"{path}: ")


def read_session(store: PlacedStore, session_id: str) -> SessionData:
    """Read one served session: whether it loads, its title and the units a snapshot shows
    (their text; the fold of the surface decides whether the log loads, as for the harness).

        The revision is taken before the read, so a file changed meanwhile is read again later;
        a failure of the file system (not of the log) leaves the revision unknown for the same
        reason.
    """
    try:
        path, revision = store.place(session_id)
    except (SessionLogError, OSError) as exc:
        return SessionData("", None, failure_of(exc), None)
    try:
        log = store.read(session_id)
    except (OSError, LogUnreadable) as exc:  # not the log's fault: read it again next time
        return SessionData(str(path), None, failure_of(exc, path), None)
    except (SessionLogError, RecursionError, MemoryError) as exc:
        return SessionData(str(path), revision, failure_of(exc, path), None)
    try:
        from sessionref.snapshot import project_units  # only a refresh that reads loads it

        text, bounds = session_text(unit.shown_text() for unit in project_units(log.records))
    except (SessionLogError, RecursionError) as exc:
        return SessionData(str(path), revision, failure_of(exc, path), None)
    return SessionData(str(path), revision, None, latest_title(log), text, bounds)


def stale_sessions(
    served: Iterable[tuple[str, str, str | None]], indexed: Mapping[str, tuple[str, str | None]]
) -> list[str]:
    """Ids whose indexed ``(path, revision)`` is not the served one (or unknown, or missing).

    >>> stale_sessions([("a", "p", "1"), ("b", "q", "2"), ("c", "r", None)],
    ...                {"a": ("p", "1"), "b": ("q", "1"), "c": ("r", None)})
    ['b', 'c']
    """
    return [
        session_id
        for session_id, path, revision in served
        if revision is None or indexed.get(session_id) != (path, revision)
    ]
