"""Codex CLI's sessions on disk (docs/harnesses.md §Codex §Store):
``<root>/sessions/YYYY/MM/DD/rollout-*.jsonl``, the older flat ``<root>/sessions/rollout-*.jsonl``
and ``<root>/archived_sessions/rollout-*.jsonl``, each possibly compressed to ``.jsonl.zst``
(:mod:`sessionref.codex.rollouts`).

``root`` is the Codex home (``$CODEX_HOME`` or ``~/.codex``) or its ``sessions/`` directory.
A session is a thread: its id is the first ``session_meta``'s ``payload.id`` (a rollout whose
name says another thread is a problem, as Codex lists it as neither: :func:`mismatched_thread`),
and the segment files of one thread are read as one session, in the order of their names
(which start with their time). A file of the same name (compressed or not) in ``sessions/`` and in
``archived_sessions/`` is one rollout in two places, read once (:func:`one_rollout`). A
subagent's thread is not a session of its own. A paginated thread's older pages
(``sessions/rollout_segments/``) are read through the page that continues them
(:mod:`sessionref.codex.pages`), no segments of their own. Names come from
``session_index.jsonl`` (the latest line for an id).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import msgspec

from sessionref.codex.names import canonical_id, plain_name, rollout_ids
from sessionref.codex.pages import RolloutsById, history_base_of
from sessionref.codex.rollouts import PAGES, folders, rollout_files, rollout_head, rollout_lines
from sessionref.errors import SessionLogError
from sessionref.log.discovery import StoreProblem
from sessionref.log.harness_store import HarnessStore, Head
from sessionref.log.jsonl import built, decode_line, file_version, iso_millis, read_committed
from sessionref.transcript import Harness, Transcript

SESSION_INDEX = "session_index.jsonl"


class _IndexLine(msgspec.Struct, frozen=True, gc=False):
    id: object = None
    thread_name: object = None


_INDEX_LINE = msgspec.json.Decoder(_IndexLine)


def thread_names(lines: list[bytes]) -> dict[str, str]:
    """Each thread's latest name in the lines of ``session_index.jsonl``, by its id as Codex
    reads it (:func:`~sessionref.codex.names.canonical_id`).

    >>> thread_names([b'{"id":"a","thread_name":"x"}', b'oops', b'{"id":"a","thread_name":"y"}'])
    {'a': 'y'}
    >>> t = "0197a000-0000-7000-8000-0000000000aa"
    >>> thread_names([b'{"id":"%s","thread_name":"x"}' % t.upper().encode()]) == {t: "x"}
    True
    """
    names: dict[str, str] = {}
    for raw in lines:
        line = decode_line(_INDEX_LINE, _IndexLine, raw)
        if line is not None and type(line.id) is str and type(line.thread_name) is str:
            names[canonical_id(line.id) or line.id] = line.thread_name
    return names


def continued(rollouts: dict[str, list[bytes]]) -> set[str]:
    """The names of the ``rollouts`` (name → its lines, as read) that another of them
    continues (its ``history_base`` names their rollout id): what it continues of them is in
    its history already, so they are no segments of their own.

    >>> a, b = "0197a000-0000-7000-8000-0000000000aa", "0197c000-0000-7000-8000-000000000001"
    >>> base = ('{"type":"session_meta","payload":{"id":"%s","history_mode":"paginated",'
    ...     '"history_base":{"thread_id":"%s","end_ordinal_exclusive":1,"end_byte_offset":9}}}')
    >>> first = f"rollout-2025-06-01T10-00-00-{a}.jsonl"
    >>> then = f"rollout-2025-06-01T11-00-00-{a}_{b}.jsonl"
    >>> continued({first: [b"..."], then: [(base % (a, a)).encode()]}) == {first}
    True
    """
    bases = {base.rollout for lines in rollouts.values() if (base := history_base_of(lines[:1]))}
    return {name for name in rollouts if (ids := rollout_ids(name)) and ids[1] in bases}


def one_rollout(found_first: list[bytes], other: list[bytes]) -> list[bytes]:
    """The lines to read of two copies of one rollout (one file name, in ``sessions/`` and in
    ``archived_sessions/``): the longer when it begins with the other, which it holds whole;
    else the one found first, in ``sessions/``, which is the one Codex resumes (it looks a
    thread up there, and in ``archived_sessions/`` only to unarchive it).

    >>> one_rollout([b"a"], [b"a", b"b"]), one_rollout([b"a", b"b"], [b"a"])
    ([b'a', b'b'], [b'a', b'b'])
    >>> one_rollout([b"a", b"live"], [b"a", b"archived", b"more"])
    [b'a', b'live']
    """
    if len(other) > len(found_first) and other[: len(found_first)] == found_first:
        return other
    return found_first


def mismatched_thread(name: str, thread: str) -> str | None:
    """Why Codex does not list the rollout file ``name`` whose first ``session_meta`` is of
    ``thread`` (its id as :func:`~sessionref.codex.names.canonical_id` gives it): its name
    says another thread. ``None`` when it says that one, or none (a name Codex does not read
    is no rollout at all). Codex's listing takes a rollout by the thread its name says and
    drops one whose meta is of another (openai/codex ``codex-rs/rollout/src/list.rs``,
    ``build_bounded_candidate_summaries``).

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

    _names: tuple[object, dict[str, str]] = (None, {})
    """The version of ``session_index.jsonl`` last read, and the names it gave."""

    @functools.cached_property
    def home(self) -> Path:
        """The Codex home: the root, or its parent when the root is its ``sessions/``."""
        root = self.root
        return root.parent if root.name == "sessions" and not (root / "sessions").is_dir() else root

    def files(self, passed: list[StoreProblem]) -> Iterator[Path]:
        """Every rollout file below ``sessions/`` but its older pages (``rollout_segments/``,
        read through the pages that continue them), then in ``archived_sessions/`` (so the
        copy in ``sessions/`` of a rollout in both comes first: :meth:`joined`)."""
        for folder in folders(self.home / "sessions", passed, PAGES):  # says what it passed
            yield from rollout_files(folder)
        yield from rollout_files(self.home / "archived_sessions", passed)

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
        """A rollout's committed lines, plain or compressed, as read: which of a thread's
        rollouts count is decided on them (:meth:`joined`), and only those are expanded."""
        return rollout_lines(path, self.max_bytes, self.max_line_bytes)

    @functools.cached_property
    def _pages(self) -> RolloutsById:
        """Where the rollouts of the home are by rollout id, kept across reads."""
        return RolloutsById(self.home.absolute())

    @staticmethod
    def reading_name(path: Path) -> str:
        """A rollout's plain name: compressed, it is read where its plain self would be.

        >>> CodexStore.reading_name(Path("archived_sessions/rollout-1.jsonl.zst"))
        'rollout-1.jsonl'
        """
        return plain_name(path.name) or path.name

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

    @staticmethod
    def kept(files: list[tuple[Path, list[bytes]]]) -> list[tuple[Path, list[bytes]]]:
        """Which of a thread's files count, in reading order, with their lines as read: each
        rollout once (:func:`one_rollout` of its copies, compressed or not, which are
        neighbours), but one that another of them continues (:func:`continued`).

        >>> live = Path("sessions/rollout-1.jsonl")
        >>> archived = Path("archived_sessions/rollout-1.jsonl.zst")
        >>> later = Path("sessions/rollout-2.jsonl")
        >>> CodexStore.kept([(live, [b"m"]), (archived, [b"m", b"x"]), (later, [b"y"])])
        [(PosixPath('archived_sessions/rollout-1.jsonl.zst'), [b'm', b'x']), \
(PosixPath('sessions/rollout-2.jsonl'), [b'y'])]
        """
        rollouts: dict[str, tuple[Path, list[bytes]]] = {}
        for path, lines in files:
            name = CodexStore.reading_name(path)
            copy = rollouts.get(name)
            if copy is None or one_rollout(copy[1], lines) is lines:
                rollouts[name] = (path, lines)
        left_out = continued({name: lines for name, (_, lines) in rollouts.items()})
        return [file for name, file in rollouts.items() if name not in left_out]

    def joined(self, files: list[tuple[Path, list[bytes]]]) -> list[bytes]:
        """A thread's lines: those of the files that count (:meth:`kept`), one after another,
        each with its ``rollout_reference`` items expanded and preceded by the history it
        continues (:class:`~sessionref.codex.references.Expansion`)."""
        from sessionref.codex.references import Expansion  # as head()

        return [
            line
            for path, lines in self.kept(files)
            for line in Expansion(
                self.home, self.max_bytes, self.max_line_bytes, self._pages
            ).lines(path, lines)
        ]

    def head(self, path: Path, lines: list[bytes]) -> Head:
        """The thread of a rollout, from its first ``session_meta``: its id as Codex reads it
        (:func:`~sessionref.codex.names.canonical_id`), so every spelling of one UUID is one
        thread's. A rollout whose name says another thread is no thread's: Codex's listing
        drops it (:func:`mismatched_thread`), and it is a problem naming both ids."""
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
                raise SessionLogError(f"{path}: {wrong}")
            created = iso_millis(meta.timestamp) or iso_millis(item.timestamp)
            return Head(thread, created, meta.cwd if type(meta.cwd) is str else None)
        raise SessionLogError(f"{path}: no session_meta line with an id in its first lines")

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
        from sessionref.codex.reader import codex_transcript  # as head()

        return codex_transcript(session_id, lines, self.named(session_id), texts_only)
