"""What the stores of other harnesses' files share (docs/harnesses.md §Stores): a walk that
finds session files, each listed from its first lines, one transcript per session read from
its file (or its files, in order), and the answers of the store protocol built on that.

A file that cannot be listed, and every file of a session id that two files claim where a
session has one file, is kept in :meth:`HarnessStore.problems` and the rest is served; a
session whose file cannot be read fails alone, naming the file.
"""

from __future__ import annotations

import copy
import functools
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple, TypeVar

from sessionref.controls import quoted
from sessionref.errors import (
    LogUnreadable,
    SessionLogError,
    session_id_of,
)
from sessionref.log.discovery import (
    EMPTY_FILE,
    StoreProblem,
    directory_entries,
    is_empty,
    leads_to,
    named_once,
    store_directory,
)
from sessionref.log.jsonl import committed_lines, file_version, open_regular, read_committed
from sessionref.log.protocol import read_limits
from sessionref.log.records import DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_LINE_BYTES
from sessionref.log.store import SessionNotFound
from sessionref.log.structs import SessionHeader, SessionLog
from sessionref.log.synthetic import surface_log
from sessionref.log.versioned import LastListing, VersionedCache
from sessionref.transcript import Harness, Transcript

_HEAD_BYTES = 1 << 16


class Head(NamedTuple):
    """What a file's first lines say: the session it belongs to (``None``: it is no session's
    file), that session's createdAt and cwd where they say it, and why the harness does not
    list it (``None``: it lists it). One it does not list is served by its id alone, and is a
    problem of the listing saying why (what ``--verbose`` lists)."""

    session_id: str | None
    created_at: int | None = None
    cwd: str | None = None
    hidden: str | None = None


HeadMemory = Callable[[Path, Callable[[], Head]], Head]
"""What a store asks for a file's head: given the file and how to read its head, the head (a
remembered one while the file is the same). Raises what reading it raises."""

S = TypeVar("S", bound="HarnessStore")


class _Listing(NamedTuple):
    headers: list[SessionHeader]
    files: dict[str, list[Path]]
    problems: list[StoreProblem]


def head_lines(path: Path, max_line_bytes: int) -> list[bytes]:
    """The committed lines of a file's first 64 KiB (more when its first line is longer).

    >>> head_lines(Path("/nonexistent"), 10)
    Traceback (most recent call last):
    sessionref.errors.LogUnreadable: cannot read /nonexistent: No such file or directory
    """
    try:
        with open_regular(str(path)) as file:
            pieces = iter(functools.partial(file.read, _HEAD_BYTES), b"")
            return first_lines(pieces, str(path), max_line_bytes)
    except OSError as exc:
        raise LogUnreadable(f"cannot read {path}: {exc.strerror or exc}") from None


def concatenated(files: list[tuple[Path, list[bytes]]]) -> list[bytes]:
    """The lines of ``files`` (each a path and its lines), one file's after another's.

    >>> concatenated([(Path("a"), [b"1"]), (Path("b"), [b"2"])])
    [b'1', b'2']
    """
    return [line for _, lines in files for line in lines]


def first_lines(chunks: Iterable[bytes], location: str, max_line_bytes: int) -> list[bytes]:
    """The committed lines of the first of a file's ``chunks``, and of as many more as its
    first line takes; a first line over ``max_line_bytes`` raises :class:`SessionLogError`.

    >>> first_lines([b"a\\nb", b"c\\n"], "f", 10), first_lines([b"ab", b"c\\nd"], "f", 10)
    ([b'a'], [b'abc'])
    >>> first_lines([b"ab", b"cd"], "f", 3)
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: f: line 1 is longer than 3 bytes
    """
    head = b""
    for chunk in chunks:
        head += chunk
        if b"\n" in head or len(head) > max_line_bytes:
            break
    if b"\n" not in head and len(head) > max_line_bytes:
        raise SessionLogError(f"{location}: line 1 is longer than {max_line_bytes} bytes")
    return committed_lines(head, max_line_bytes, location)


class HarnessStore(ABC):
    """The store protocol over a harness's files; a subclass says where the files are
    (:meth:`files`), what their first lines say (:meth:`head`), and how a session's lines
    become a transcript (:meth:`transcript_of`)."""

    harness: Harness
    one_file_per_session = True
    """Whether two files of one session id are a conflict (else: segments, read in order)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        heads: HeadMemory | None = None,
    ) -> None:
        opened = store_directory(root, f"{self.harness} store root")
        self._open(opened, read_limits(max_bytes, max_line_bytes), heads or _heads_in_memory())

    def _open(self, root: Path, limits: tuple[int, int], heads: HeadMemory) -> None:
        """Serve ``root`` under ``limits`` (checked) with heads from ``heads`` and nothing else
        remembered. Only the constructor checks the root: a store opened again over it
        (:meth:`remembering`) lists a root gone since as empty, as the harness does."""
        self.root = root
        self.max_bytes, self.max_line_bytes = limits
        self._heads = heads
        self._titles: VersionedCache[str, str | None] = VersionedCache()
        self._listing = LastListing(_Listing([], {}, []))

    @classmethod
    def reopened(cls: type[S], root: str, max_bytes: int, max_line_bytes: int) -> S:
        """A store of ``root`` made again elsewhere (a batch worker) after the constructor
        checked it: the root is not checked again, so one gone since lists as empty, as it
        does for the store that listed it."""
        store = cls.__new__(cls)
        store._open(Path(root), read_limits(max_bytes, max_line_bytes), _heads_in_memory())
        return store

    def remembering(self: S, heads: HeadMemory) -> S:
        """A store of the same root and limits whose heads come from ``heads`` (an index's
        memory of them); the root is not checked again (it may be gone since)."""
        store = copy.copy(self)
        store._open(self.root, (self.max_bytes, self.max_line_bytes), heads)
        return store

    @abstractmethod
    def files(self, passed: list[StoreProblem]) -> Iterator[Path]:
        """Every file that may hold a session, in walk order; each directory the walk passes
        over (one it cannot list, a link) is added to ``passed`` as the walk comes to it."""

    @abstractmethod
    def watched(self) -> list[Path]:
        """What the listing depends on besides the files of :meth:`files`: every directory
        whose names it reads, and every other file it reads; the parent of each that may
        come or go is there too."""

    @abstractmethod
    def head(self, path: Path, lines: list[bytes]) -> Head:
        """What a file's first committed lines say."""

    @staticmethod
    @abstractmethod
    def named_by(path: Path) -> str | None:
        """The session a file's name says it holds, whatever its lines say (``None``: the
        name says none): when the listing passes such a file over and serves no such
        session, reading it fails with the reason, rather than finding no session."""

    @abstractmethod
    def transcript_of(
        self, session_id: str, lines: list[bytes], texts_only: bool = False
    ) -> Transcript:
        """The transcript of a session's committed lines (with ``texts_only``, only the
        entries a snapshot shows)."""

    def head_of(self, path: Path) -> Head:
        """What the first lines of the file at ``path`` say, through the store's memory of
        heads; raises :class:`SessionLogError` when they cannot be read."""
        return self._heads(path, lambda: self.head(path, self.start_of(path)))

    def start_of(self, path: Path) -> list[bytes]:
        """The committed lines of a file's start (:func:`head_lines`), which :meth:`head`
        reads (a harness whose files may be compressed says how to read them)."""
        return head_lines(path, self.max_line_bytes)

    def lines_of(self, path: Path) -> list[bytes]:
        """The committed lines a file gives its session, under the store's limits (a harness
        whose files may be compressed, or refer to others, says how to read them)."""
        return read_committed(path, self.max_bytes, self.max_line_bytes)

    @staticmethod
    def reading_name(path: Path) -> str:
        """The name by which a session's files are put in reading order (a harness that
        keeps a file under more than one name gives the one they share).

        >>> HarnessStore.reading_name(Path("a/b.jsonl"))
        'b.jsonl'
        """
        return path.name

    def known_places(self, files: Mapping[str, list[Path]]) -> None:
        """Take ``files`` (session id → its files) as where the last listing found those
        sessions: they are read without listing the store (the caller knows the store has
        not changed but for these files' content)."""
        self._listing.remember(_Listing([], dict(files), []))

    def _scan(self) -> _Listing:
        found: dict[str, list[tuple[Path, Head]]] = {}
        problems: list[StoreProblem] = []
        for path in self.files(problems):
            try:
                head = self.head_of(path)
            except SessionLogError as exc:  # the problem names the file: the reason need not
                why = EMPTY_FILE if is_empty(path) else named_once(str(exc), str(path))
                problems.append(StoreProblem(str(path), why))
                continue
            if head.session_id is not None:
                found.setdefault(head.session_id, []).append((path, head))
        headers: list[SessionHeader] = []
        files: dict[str, list[Path]] = {}
        for session_id, places in found.items():
            if self.one_file_per_session and len(places) > 1:
                paths, named = [str(path) for path, _ in places], quoted(session_id)
                problems.extend(
                    StoreProblem(path, f"session {named} is also in {_others(paths, path)}")
                    for path in paths
                )
                continue
            places.sort(key=lambda place: self.reading_name(place[0]))
            files[session_id] = [path for path, _ in places]
            first = places[0][1]
            if first.hidden is not None:
                problems.append(StoreProblem(str(places[0][0]), first.hidden))
                continue
            created = first.created_at
            if created is None:
                version = file_version(places[0][0])
                created = 0 if version is None else version[2] // 1_000_000
            headers.append(SessionHeader(session_id, created, cwd=first.cwd))
        return self._listing.remember(_Listing(headers, files, problems))

    def headers(self) -> list[SessionHeader]:
        """The header of every session listed (one the harness does not list is still read
        by its id)."""
        return list(self._scan().headers)

    def problems(self) -> list[StoreProblem]:
        """The files the last listing did not serve, and why."""
        return list(self._listing.last().problems)

    def paths_of(self, session_id: str) -> list[Path]:
        """The files of a session, in reading order. A session the listing does not serve
        raises :class:`SessionLogError` naming why when a file passed over bears its name (a
        first line too long to read, the id in two files, a file of 0 bytes:
        :meth:`empty_file`), else :class:`SessionNotFound`."""
        paths = self._listing.find(lambda listing: listing.files.get(session_id), self._scan)
        if paths is not None:
            return paths
        for problem in self._listing.last().problems:  # each names its file once (_scan)
            if self.named_by(Path(problem.path)) == session_id:
                raise SessionLogError(f"{problem.path}: {problem.message}")
        empty = self.empty_file(session_id)
        if empty is not None:
            raise SessionLogError(f"{empty}: {EMPTY_FILE}")
        raise SessionNotFound(session_id)

    def empty_file(self, session_id: str) -> Path | None:
        """The file of 0 bytes whose name says it holds ``session_id``, where the harness
        lists no session from such a file and it is no problem (``None`` here: a harness
        that does so says where to look): reading the session says the file is empty."""
        return None

    def joined(self, files: list[tuple[Path, list[bytes]]]) -> list[bytes]:
        """A session's lines from the lines of each of its files as :meth:`lines_of` read
        them, in reading order: one file's after another's (:func:`concatenated`; a harness
        whose files may be copies of one another, or refer to others, says which to read)."""
        return concatenated(files)

    def _lines(self, session_id: str) -> list[bytes]:
        return self.joined([(path, self.lines_of(path)) for path in self.paths_of(session_id)])

    def transcript(self, session_id: str) -> Transcript:
        """The whole session as a person reads it."""
        lines = self._lines(session_id_of(self, "transcript", session_id))
        return self.transcript_of(session_id, lines)

    def read(self, session_id: str) -> SessionLog:
        """The DSH-shaped log a snapshot reads; its ``capturedThroughSeq`` is the index of the
        session's last committed line (docs/harnesses.md §capturedThroughSeq)."""
        lines = self._lines(session_id_of(self, "read", session_id))
        transcript = self.transcript_of(session_id, lines, texts_only=True)
        return surface_log(transcript, len(lines) - 1 if lines else None)

    def named(self, session_id: str) -> str | None:
        """The name the harness keeps for a session outside its files (``None`` here; Codex
        keeps them in ``session_index.jsonl``): its title depends on it too."""
        return None

    def version(self, session_id: str) -> tuple[object, ...]:
        """What the session's answers depend on: its files' versions and its name (raises
        :class:`SessionNotFound`)."""
        paths = self.paths_of(session_id)
        return (*(file_version(path) for path in paths), self.named(session_id))

    def title(self, session_id: str) -> str | None:
        """The session's title, remembered while its files and its name do not change;
        ``None`` when it has none or cannot be read."""
        session_id_of(self, "title", session_id)
        try:
            version = self.version(session_id)
        except SessionLogError:
            return None
        return self._titles.get(session_id, version, lambda: self._read_title(session_id))

    def _read_title(self, session_id: str) -> str | None:
        try:
            lines = self._lines(session_id)
            return self.transcript_of(session_id, lines, texts_only=True).title
        except (SessionLogError, RecursionError):
            return None


def _others(paths: list[str], path: str) -> str:
    """The paths but ``path``, for a message.

    >>> _others(["a", "b", "c"], "b")
    'a, c'
    """
    return ", ".join(other for other in paths if other != path)


def _heads_in_memory() -> HeadMemory:
    """Heads remembered in this process, while a file's path, size and mtime stay."""
    cache: VersionedCache[Path, Head] = VersionedCache()
    return lambda path, read: cache.get(path, file_version(path), read)


def real_directories(path: Path, passed: list[StoreProblem] | None = None) -> list[Path]:
    """The real directories in ``path``, by name. A link to a directory is not followed (as
    the DSH listing does not follow one); with ``passed``, it is a problem added there, and so
    is a directory that cannot be listed (:func:`~sessionref.log.discovery.directory_entries`).

    >>> real_directories(Path("/nonexistent"))
    []
    """
    found = []
    for entry in directory_entries(path, passed):
        if entry.is_dir(follow_symlinks=False):
            found.append(Path(entry.path))
        elif passed is not None and entry.is_symlink() and leads_to(entry, True):
            passed.append(StoreProblem(entry.path, "a link to a directory, not followed"))
    return found


def jsonl_files(path: Path, passed: list[StoreProblem] | None = None) -> list[Path]:
    """The ``*.jsonl`` entries of ``path``, by name: files, and whatever else bears such a
    name (reading it says what is wrong); a directory that cannot be listed is a problem added
    to ``passed`` (:func:`~sessionref.log.discovery.directory_entries`).

    >>> jsonl_files(Path("/nonexistent"))
    []
    """
    return [
        Path(entry.path)
        for entry in directory_entries(path, passed)
        if entry.name.endswith(".jsonl")
    ]
