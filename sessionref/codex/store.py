"""Codex CLI's sessions on disk (docs/harnesses.md §Codex §Store):
``<root>/sessions/YYYY/MM/DD/rollout-*.jsonl``, the older flat ``<root>/sessions/rollout-*.jsonl``
and ``<root>/archived_sessions/rollout-*.jsonl``, each possibly compressed to ``.jsonl.zst``
(:mod:`sessionref.codex.rollouts`).

``root`` is the Codex home (``$CODEX_HOME`` or ``~/.codex``) or its ``sessions/`` directory.
A session is a thread, and a thread is one rollout, as Codex resolves a thread id: of the
rollouts whose names say the thread, the newest (:func:`newest_rollouts`), its
``rollout_reference`` items expanded and preceded by the history it continues; ``sessions/``
and ``archived_sessions/`` each give their newest, and the archived one is the thread only when
that of ``sessions/`` does not list. A rollout is listed when its first ``session_meta`` is of
that thread; one of another thread is a problem (:func:`mismatched_thread`), and its thread is
listed only by its archived rollout, if any. A subagent's thread is not a session of its
own. A paginated thread's older pages (``sessions/rollout_segments/``) are read through the
page that continues them (:mod:`sessionref.codex.pages`). Names come from
``session_index.jsonl`` (the latest line for an id).
"""

from __future__ import annotations

import functools
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from sessionref.codex.names import canonical_id, rollout_ids, rollout_order
from sessionref.codex.pages import RolloutsById
from sessionref.codex.rollouts import (
    PAGES,
    folders,
    rollout_files,
    rollout_head,
    rollout_lines,
    rollout_stream,
)
from sessionref.codex.thread_names import SESSION_INDEX, thread_names
from sessionref.errors import SessionLogError
from sessionref.log.discovery import StoreProblem
from sessionref.log.harness_store import HarnessStore, Head
from sessionref.log.jsonl import built, file_version, iso_millis, read_committed
from sessionref.log.records import DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_LINE_BYTES
from sessionref.transcript import Harness, Transcript

if TYPE_CHECKING:
    from sessionref.codex.reference_lines import Reference


def newest_rollouts(paths: Iterable[Path]) -> dict[str, Path]:
    """The rollout each thread resolves to among ``paths`` (those of one folder Codex lists,
    in walk order), by thread: of the rollouts whose names say the thread, the newest
    (:func:`~sessionref.codex.names.rollout_order`; of two equal, the first walked). Codex
    looks a thread up by the names alone and lists a thread by its newest rollout
    (openai/codex ``codex-rs/rollout/src/list.rs``: ``find_thread_path_by_id_from_filenames``,
    ``select_thread_candidates``). Which thread a rollout's lines are of is not asked here.

    >>> t = "0197a000-0000-7000-8000-0000000000aa"
    >>> old, new = (Path(f"rollout-2025-06-0{d}T10-00-00-{t}.jsonl") for d in (1, 2))
    >>> newest_rollouts([new, old, Path("rollout-x.jsonl")]) == {t: new}
    True
    """
    found: dict[str, tuple[tuple[str, str], Path]] = {}
    for path in paths:
        ids, order = rollout_ids(path.name), rollout_order(path.name)
        if ids is None or order is None:
            continue
        best = found.get(ids[0])
        if best is None or order > best[0]:
            found[ids[0]] = (order, path)
    return {thread: path for thread, (_, path) in found.items()}


class MismatchedRollout(SessionLogError):
    """A rollout whose name says another thread than its first ``session_meta``
    (:func:`mismatched_thread`): no thread's."""


def mismatched_thread(name: str, thread: str) -> str | None:
    """Why Codex does not list the rollout file ``name`` whose first ``session_meta`` is of
    ``thread`` (its id as :func:`~sessionref.codex.names.canonical_id` gives it): its name
    says another thread. ``None`` when it says that one, or none (a name Codex does not read
    is no rollout at all). Codex's listing takes a thread's newest rollout by the thread its
    name says and drops it when its meta is of another (openai/codex
    ``codex-rs/rollout/src/list.rs``, ``build_bounded_candidate_summaries``: the thread is then
    not listed, whatever its older rollouts hold).

    >>> a, b = "0197a000-0000-7000-8000-0000000000aa", "0197a000-0000-7000-8000-0000000000bb"
    >>> mismatched_thread(f"rollout-2025-06-01T10-00-00-{a.upper()}.jsonl", a) is None
    True
    >>> print(mismatched_thread(f"rollout-2025-06-01T10-00-00-{a}.jsonl", b))
    its name says thread 0197a000-0000-7000-8000-0000000000aa but its session_meta says \
thread 0197a000-0000-7000-8000-0000000000bb (Codex does not list it)
    """
    ids = rollout_ids(name)
    if ids is None or ids[0] == thread:
        return None
    return (
        f"its name says thread {ids[0]} but its session_meta says thread {thread} "
        "(Codex does not list it)"
    )


def thread_head(path: Path, lines: list[bytes]) -> Head:
    """The thread of the rollout at ``path`` whose first committed ``lines`` are given, from
    its first ``session_meta``: its id as Codex reads it
    (:func:`~sessionref.codex.names.canonical_id`), so every spelling of one UUID is one
    thread's; ``Head(None)`` for a subagent's. A rollout whose name says another thread is no
    thread's: it raises :class:`MismatchedRollout` naming both ids (:func:`mismatched_thread`).

    >>> t = "0197a000-0000-7000-8000-0000000000aa"
    >>> line = b'{"type":"session_meta","payload":{"id":"%s","cwd":"/w"}}' % t.upper().encode()
    >>> thread_head(Path(f"rollout-2025-06-01T10-00-00-{t}.jsonl"), [line]) == Head(t, None, "/w")
    True
    >>> thread_head(Path("rollout-2025-06-01T10-00-00-" + t[:-1] + "b.jsonl"), [line])
    Traceback (most recent call last):
    sessionref.codex.store.MismatchedRollout: rollout-2025-06-01T10-00-00-0197a000-0000-7000-\
8000-0000000000ab.jsonl: its name says thread 0197a000-0000-7000-8000-0000000000ab but its \
session_meta says thread 0197a000-0000-7000-8000-0000000000aa (Codex does not list it)
    """
    from sessionref.codex.records import decode  # read only when a file changed

    for item in map(decode, lines):
        if item is None or item.kind != "session_meta":
            continue
        meta = item.payload
        if type(meta.id) is not str:
            break
        source = built(meta.source)
        if type(source) is dict and "subagent" in source:
            return Head(None)
        thread = canonical_id(meta.id) or meta.id
        wrong = mismatched_thread(path.name, thread)
        if wrong is not None:
            raise MismatchedRollout(f"{path}: {wrong}")
        created = iso_millis(meta.timestamp) or iso_millis(item.timestamp)
        return Head(thread, created, meta.cwd if type(meta.cwd) is str else None)
    raise SessionLogError(f"{path}: no session_meta line with an id in its first lines")


class _MetaId(msgspec.Struct, frozen=True, gc=False):
    id: object = None


class _FirstLine(msgspec.Struct, frozen=True, gc=False):
    type: object = None
    payload: _MetaId | None = None


_FIRST_LINE: Final = msgspec.json.Decoder(_FirstLine)


def opens_its_thread(line: bytes, thread: str) -> bool:
    """Whether ``line`` is a ``session_meta`` of ``thread`` (written as
    :func:`~sessionref.codex.names.canonical_id` writes it), in its envelope: the first line
    of almost every rollout. When a rollout's first line is so, :func:`thread_head` takes it
    for its thread's (or a subagent's), and it is read without the rollout reader.

    >>> t = "0197a000-0000-7000-8000-0000000000aa"
    >>> opens_its_thread(b'{"type":"session_meta","payload":{"id":"%s"}}' % t.encode(), t)
    True
    >>> opens_its_thread(b'{"id":"%s"}' % t.encode(), t), opens_its_thread(b"{", t)
    (False, False)
    """
    try:
        first = _FIRST_LINE.decode(line)
    except (msgspec.DecodeError, RecursionError):  # nested too deep: no JSON to Codex either
        return False
    meta = first.payload
    return (
        first.type == "session_meta"
        and meta is not None
        and type(meta.id) is str
        and canonical_id(meta.id) == thread
    )


def mismatch(path: Path) -> str | None:
    """Why the rollout at ``path`` is no thread's when its name says another thread than its
    first ``session_meta`` (the file and both ids: :func:`thread_head`, its start read under
    the default limits); ``None`` when it is not so (its first line opens its thread:
    :func:`opens_its_thread`), or cannot be read (what is wrong then is a problem of its
    store).

    >>> mismatch(Path("/nonexistent/rollout-1.jsonl")) is None
    True
    """
    try:
        lines = rollout_head(path, DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_LINE_BYTES)
        named = rollout_ids(path.name)
        if lines and named is not None and opens_its_thread(lines[0], named[0]):
            return None
        thread_head(path, lines)
    except MismatchedRollout as exc:
        return exc.message
    except SessionLogError:
        return None
    return None


class CodexStore(HarnessStore):
    """The threads of a Codex home.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     store = CodexStore(home)
    ...     store.harness, store.headers(), store.problems()
    ('codex', [], [])
    """

    harness: Harness = "codex"
    one_file_per_session = False
    """A thread is one rollout (:meth:`files`), but which one is decided by every name in its
    folders, and reading it reads the rollouts it continues: the index lists again when any
    file changed (:func:`~sessionref.index.harness.reread_files`)."""

    _names: tuple[object, dict[str, str]] = (None, {})
    """The version of ``session_index.jsonl`` last read, and the names it gave."""

    @functools.cached_property
    def home(self) -> Path:
        """The Codex home: the root, or its parent when the root is its ``sessions/``."""
        root = self.root
        return root.parent if root.name == "sessions" and not (root / "sessions").is_dir() else root

    def files(self, passed: list[StoreProblem]) -> Iterator[Path]:
        """The rollout each thread resolves to (:func:`newest_rollouts`) below ``sessions/``
        but its older pages (``rollout_segments/``, read through the pages that continue them),
        then that of each thread in ``archived_sessions/`` that the first does not list (none
        there, or one whose first lines are of another thread or cannot be read). Codex lists
        the two folders apart, so a thread whose rollout in ``sessions/`` it drops is still
        listed by its archived one (``get_threads``, ``ThreadListLayout::Flat``), and its
        archive leaves such a rollout behind in ``sessions/`` (``archive_thread_with_paths``
        moves only the rollouts whose meta is the thread's) while its state database points
        the thread at the archived one, which it reads (``thread_rollout_resolver::resolve``)."""
        live = newest_rollouts(
            path
            for folder in folders(self.home / "sessions", passed, PAGES)  # says what it passed
            for path in rollout_files(folder)
        )
        archived = newest_rollouts(rollout_files(self.home / "archived_sessions", passed))
        yield from live.values()
        for thread, path in archived.items():
            if thread not in live or not self._lists(live[thread]):
                yield path

    def _lists(self, path: Path) -> bool:
        """Whether the rollout at ``path`` is the thread's: its head can be read and says no
        other thread than its name (:meth:`head_of`, remembered for the listing that reads
        it). One that Codex's listing hides is the thread all the same (Codex reads it by the
        thread's id), and the thread is not listed (:mod:`sessionref.codex.listed`)."""
        try:
            self.head_of(path)
        except SessionLogError:
            return False
        return True

    def watched(self) -> list[Path]:
        """The home, every directory below ``sessions/`` that :meth:`files` reads,
        ``archived_sessions/`` and ``session_index.jsonl``."""
        home = self.home
        return [
            home,
            *folders(home / "sessions", skipped=PAGES),
            home / "archived_sessions",
            home / SESSION_INDEX,
        ]

    def start_of(self, path: Path) -> list[bytes]:
        """The committed lines of a rollout's start, plain or compressed."""
        return rollout_head(path, self.max_bytes, self.max_line_bytes)

    def lines_of(self, path: Path) -> list[bytes]:
        """A rollout's committed lines, plain or compressed, as read (:meth:`joined` expands
        them)."""
        return rollout_lines(path, self.max_bytes, self.max_line_bytes)

    @functools.cached_property
    def _pages(self) -> RolloutsById:
        """Where the rollouts of the home are by rollout id, kept across reads."""
        return RolloutsById(self.home.absolute())

    @staticmethod
    def named_by(path: Path) -> str | None:
        """The thread a rollout's name says (``rollout-<time>-<thread id>.jsonl``, maybe with
        ``_<rollout id>`` after the thread's), as Codex reads it (:func:`rollout_ids`).

        >>> name = "rollout-2025-06-01T10-00-00-0197A000-0000-7000-8000-0000000000AA.jsonl"
        >>> CodexStore.named_by(Path(name))
        '0197a000-0000-7000-8000-0000000000aa'
        """
        ids = rollout_ids(path.name)
        return ids[0] if ids else None

    def joined(self, files: list[tuple[Path, list[bytes]]]) -> list[bytes]:
        """A thread's lines: those of its rollout (:meth:`files` gives one a thread), with its
        ``rollout_reference`` items expanded and preceded by the history it continues
        (:class:`~sessionref.codex.references.Expansion`)."""
        from sessionref.codex.references import Expansion  # as thread_head()

        return [
            line
            for path, lines in files
            for line in Expansion(
                self.home, self.max_bytes, self.max_line_bytes, self._pages
            ).lines(path, lines)
        ]

    def head(self, path: Path, lines: list[bytes]) -> Head:
        """The thread of a rollout (:func:`thread_head`), and why it is not listed, if it is
        not (:func:`~sessionref.codex.listed.hidden_rollout`)."""
        head = thread_head(path, lines)
        if head.session_id is None:
            return head
        from sessionref.codex.listed import hidden_rollout  # as thread_head()

        hidden = hidden_rollout(path, lines, self.max_bytes, self.max_line_bytes, self._follow)
        return head._replace(hidden=hidden)

    def _follow(self, reference: Reference) -> Generator[bytes, None, None] | None:
        """The lines of the rollout a reference names, as far as they are taken (``None``
        when it is found nowhere or cannot be read)."""
        from sessionref.codex.references import Expansion  # as thread_head()

        try:
            found = Expansion(self.home, self.max_bytes, self.max_line_bytes, self._pages).resolve(
                reference
            )
        except SessionLogError:
            return None
        return None if found is None else rollout_stream(found, self.max_bytes, self.max_line_bytes)

    def names(self) -> dict[str, str]:
        """The thread names of ``session_index.jsonl`` (none when it cannot be read)."""
        path = self.home / SESSION_INDEX
        version = file_version(path)
        if version is None:
            return {}
        if self._names[0] != version:
            try:
                names = thread_names(read_committed(path, self.max_bytes, self.max_line_bytes))
            except SessionLogError:
                names = {}
            self._names = (version, names)
        return self._names[1]

    def named(self, session_id: str) -> str | None:
        """The thread's latest name in ``session_index.jsonl``."""
        return self.names().get(session_id)

    def transcript_of(
        self, session_id: str, lines: list[bytes], texts_only: bool = False
    ) -> Transcript:
        """The transcript of a thread's lines, titled by its name if it has one."""
        from sessionref.codex.reader import codex_transcript  # as thread_head()

        return codex_transcript(session_id, lines, self.named(session_id), texts_only)
