"""Rollout references: a newer Codex moves a long thread's older history out of its live
rollout into frozen segments, ``<home>/rotated_rollout_segments/<thread id>/<segment id, or
"initial">/rollout-….jsonl``, and the live rollout refers to them with a ``rollout_reference``
item; a fork refers to its parent's rollout the same way, up to the message it forked at
(docs/harnesses.md §Codex §References).

The history is the rollout with each reference replaced by the lines of the rollout it names,
those expanded the same way, without their ``session_meta`` lines (openai/codex
``codex-rs/rollout/src/reference.rs``: ``materialize_rollout_lines``, ``expand_lines``,
``resolve_rollout_reference_path``, ``truncate_before_nth_user_message``). One that cannot be
found contributes nothing, as in Codex's listing (``codex-rs/rollout/src/list_reference.rs``).

A paginated thread's page is preceded the same way by the history it continues
(:mod:`sessionref.codex.pages`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, NamedTuple

from sessionref.codex.names import COMPRESSED_SUFFIX, UUID, plain_name, shown_names
from sessionref.codex.pages import (
    HistoryBase,
    RolloutLine,
    RolloutsById,
    decoded,
    history_base_of,
    prefix,
)
from sessionref.codex.rollouts import existing_rollout, rollout_head, rollout_lines, rollout_text
from sessionref.errors import LogUnreadable, SessionLogError
from sessionref.log.discovery import directory_entries

MAX_FORKS: Final = 256
"""How deep forks may nest (Codex's ``MAX_ROLLOUT_REFERENCE_DEPTH``): references to another
thread's rollout, or up to a user message."""
MAX_NESTING: Final = 512
"""How deep sessionref follows references of any kind (Codex follows a thread's own segments
without a bound; 512 is over four times the longest chain its source mentions)."""

APPROVED_ROOTS: Final = ("sessions", "archived_sessions", "rotated_rollout_segments")
"""The folders of the Codex home a reference may lead into."""
ROTATED_SEGMENTS: Final = APPROVED_ROOTS[2]
"""Where Codex keeps the frozen segments of a thread, below its home."""
INITIAL: Final = "initial"
"""The segment folder of a thread's rollout from before segments had ids."""


class Identity(NamedTuple):
    """What a reference names: a thread, and one of its segments (``None``: the thread's one
    rollout from before segments had ids, the ``initial`` one)."""

    thread: str
    segment: str | None

    def __str__(self) -> str:
        return f"{self.thread}/{self.segment or INITIAL}"


class Reference(NamedTuple):
    """A ``rollout_reference`` item: what it names, the path Codex wrote it at, the time in
    the rollout's name (to find it in ``sessions/`` or ``archived_sessions/``), and the user
    message a fork stops before."""

    identity: Identity
    path: str
    timestamp: str | None
    nth_user_message: int | None


def reference_of(line: bytes) -> Reference | None:
    """The reference a line holds; ``None`` for any other line, and for a reference without
    a path or a thread id, or whose ids are no UUIDs (one Codex refuses).

    >>> def item(thread): return (b'{"type":"rollout_reference","payload":{"rollout_path":'
    ...     b'"/r.jsonl","thread_id":"%s","segment_id":null}}' % thread)
    >>> reference_of(item(b"0197a000-0000-7000-8000-0000000000aa"))[:2]
    (Identity(thread='0197a000-0000-7000-8000-0000000000aa', segment=None), '/r.jsonl')
    >>> reference_of(item(b"../x")) is None
    True
    """
    if b"rollout_reference" not in line:
        return None
    found = decoded(line)
    item = found.payload
    if found.type != "rollout_reference" or item is None:
        return None
    if type(item.thread_id) is not str or type(item.rollout_path) is not str:
        return None
    segment = item.segment_id if type(item.segment_id) is str else None
    if not all(UUID.fullmatch(part) for part in (item.thread_id, segment) if part is not None):
        return None
    timestamp = item.rollout_timestamp if type(item.rollout_timestamp) is str else None
    nth = item.nth_user_message if type(item.nth_user_message) is int else None
    return Reference(Identity(item.thread_id, segment), item.rollout_path, timestamp, nth)


def identity_of(first_lines: list[bytes]) -> Identity | None:
    """The identity a rollout's first line gives it (a ``session_meta`` with an id).

    >>> identity_of([b'{"type":"session_meta","payload":{"id":"t","segment_id":"s"}}'])
    Identity(thread='t', segment='s')
    >>> identity_of([b'{"type":"event_msg","payload":{"id":"t"}}']), identity_of([])
    (None, None)
    """
    first = decoded(first_lines[0]) if first_lines else RolloutLine()
    meta = first.payload
    if first.type != "session_meta" or meta is None:
        return None
    if type(meta.id) is not str:
        return None
    return Identity(meta.id, meta.segment_id if type(meta.segment_id) is str else None)


def _is_meta(line: bytes) -> bool:
    """Whether a line is a ``session_meta`` (a referenced rollout's are not its history).

    >>> _is_meta(b'{"type":"session_meta","payload":{"id":"t"}}')
    True
    """
    return b"session_meta" in line and identity_of([line]) is not None


def before_nth_user_message(lines: list[bytes], nth: int) -> list[bytes]:
    """``lines`` up to the turn of their ``nth`` user message (counted from 0), as a fork
    inherits its parent's history: a turn starts at its ``task_started`` event when it has
    one; the user messages are the ``user_message`` events, or the user response items when
    there are none; a ``thread_rolled_back`` event takes back its turns.

    >>> def event(kind): return b'{"type":"event_msg","payload":{"type":"%s"}}' % kind
    >>> turn = [event(b"task_started"), event(b"user_message"), event(b"task_complete")]
    >>> len(before_nth_user_message(turn * 3, 1)), len(before_nth_user_message(turn, 1))
    (3, 3)
    """
    events: list[int] = []
    responses: list[int] = []
    started: int | None = None
    for index, line in enumerate(lines):
        found = decoded(line)
        payload = found.payload
        if payload is None:
            continue
        kind = payload.type
        turn = index if started is None else started
        if found.type == "response_item" and kind == "message" and payload.role == "user":
            responses.append(turn)
        elif found.type != "event_msg":
            continue
        elif kind in ("task_started", "turn_started"):
            started = index
        elif kind == "user_message":
            events.append(turn)
        elif kind in ("task_complete", "turn_complete", "turn_aborted"):
            started = None
        elif kind == "thread_rolled_back" and type(payload.num_turns) is int:
            for positions in (events, responses):
                del positions[max(0, len(positions) - payload.num_turns) :]
    positions = events or responses
    return lines[: positions[nth]] if 0 <= nth < len(positions) else lines


class _Depth(NamedTuple):
    """Where an expansion is: the thread of the rollout being expanded, and how many forks and
    references of any kind lead to it."""

    thread: str | None
    forks: int = 0
    references: int = 0


Opened = frozenset[Identity | str]
"""What is being expanded around a rollout, for a cycle: the identities references name, and
the rollout ids of the pages continued."""


def _below(path: Path, depth: _Depth, thread: str, fork: bool) -> _Depth:
    """The depth of a rollout of ``thread`` that the one at ``path``, at ``depth``, leads to;
    raises :class:`SessionLogError` when it is deeper than Codex (forks) or sessionref (any)
    follows.

    >>> _below(Path("r"), _Depth("t"), "u", True)
    _Depth(thread='u', forks=1, references=1)
    """
    if fork and depth.forks >= MAX_FORKS:
        raise SessionLogError(f"{path}: forks nest deeper than {MAX_FORKS}")
    if depth.references >= MAX_NESTING:
        raise SessionLogError(f"{path}: rollout references nest deeper than {MAX_NESTING}")
    return _Depth(thread, depth.forks + fork, depth.references + 1)


class Expansion:
    """The history of rollouts under the Codex home ``home``: each reference replaced by what
    it names, and a paginated page preceded by the history it continues. ``max_bytes`` bounds
    a rollout and all it refers to together, ``max_line_bytes`` each line."""

    def __init__(
        self, home: Path, max_bytes: int, max_line_bytes: int, pages: RolloutsById
    ) -> None:
        self.home, self.max_bytes, self.max_line_bytes = home.absolute(), max_bytes, max_line_bytes
        self.pages = pages
        """Where the rollouts a page continues are (the store's, kept across reads)."""
        self.spent = 0

    def lines(self, path: Path, read: list[bytes]) -> list[bytes]:
        """The history of the rollout at ``path``, whose lines are ``read``: its first line
        (its ``session_meta``), the history it continues, then its other lines, each
        reference expanded."""
        lines = self._spend(path, read)
        root = identity_of(lines)
        first = lines[:1] if root else []
        depth = _Depth(root.thread if root else None)
        rest = lines[len(first) :]
        return first + self._expand(path, rest, depth, frozenset(), history_base_of(lines))

    def _read(self, path: Path) -> list[bytes]:
        return self._spend(path, rollout_lines(path, self.max_bytes, self.max_line_bytes))

    def _spend(self, path: Path, lines: list[bytes]) -> list[bytes]:
        """``lines``, read from ``path``, counted against the limit of the whole history."""
        self.spent += sum(map(len, lines)) + len(lines)
        if self.spent > self.max_bytes:
            raise SessionLogError(
                f"{path}: the rollouts a thread refers to are over the limit of "
                f"{self.max_bytes} bytes together"
            )
        return lines

    def _expand(
        self,
        path: Path,
        lines: list[bytes],
        depth: _Depth,
        open_: Opened,
        base: HistoryBase | None,
    ) -> list[bytes]:
        """``lines`` of the rollout at ``path``, at ``depth``, after the history ``base`` names
        (the rollout's own), with each reference expanded; ``open_``: what is being expanded
        around it (a cycle)."""
        history = [] if base is None else self._continued(path, base, depth, open_)
        for line in lines:
            reference = reference_of(line)
            if reference is None:
                history.append(line)
                continue
            identity = reference.identity
            fork = reference.nth_user_message is not None or identity.thread != depth.thread
            below = _below(path, depth, identity.thread, fork)
            if identity in open_:
                raise SessionLogError(f"{path}: rollout reference cycle at {identity}")
            found = self.resolve(reference)
            if found is None:
                continue  # not on disk: the history before it is what is missing
            found_lines = self._read(found)
            referenced = [line for line in found_lines if not _is_meta(line)]
            opened = open_ | {identity}
            expanded = self._expand(found, referenced, below, opened, history_base_of(found_lines))
            if reference.nth_user_message is not None:
                expanded = before_nth_user_message(expanded, reference.nth_user_message)
            history += expanded
        return history

    def _continued(
        self, path: Path, base: HistoryBase, depth: _Depth, open_: Opened
    ) -> list[bytes]:
        """The history the page at ``path`` continues: the prefix ``base`` names, without its
        ``session_meta`` lines, itself expanded; nothing when that rollout is not on disk."""
        if base.rollout in open_:
            raise SessionLogError(f"{path}: history_base cycle at rollout {base.rollout}")
        found = self._approved(self.pages.find(base.rollout))
        if found is None:
            return []  # not on disk: the history before the page is what is missing
        thread, prefix = self._prefix(found, base)
        below = _below(found, depth, thread, thread != depth.thread)
        own = [line for line in prefix if not _is_meta(line)]
        return self._expand(found, own, below, open_ | {base.rollout}, history_base_of(prefix))

    def _prefix(self, path: Path, base: HistoryBase) -> tuple[str, list[bytes]]:
        """The thread of the rollout at ``path`` and its lines that ``base`` names
        (:func:`~sessionref.codex.pages.prefix`)."""
        thread, lines = prefix(rollout_text(path, self.max_bytes), base, path, self.max_line_bytes)
        return thread, self._spend(path, lines)

    def resolve(self, reference: Reference) -> Path | None:
        """The rollout a reference names, as Codex finds it: at its path when the rollout
        there is the one named (plain, else compressed); else the one rollout of that
        identity in its segment folder below ``rotated_rollout_segments/``, then below
        ``archived_sessions/``; else, by the time in its name, in ``sessions/YYYY/MM/DD/`` or
        ``archived_sessions/``. ``None`` when it is in none of them; two that match in one
        folder (or a legacy one in both) raise :class:`SessionLogError`."""
        identity = reference.identity
        given = Path(reference.path)
        if given.is_absolute():
            found = self._named(existing_rollout(given), identity)
            if found is not None:
                return found
        legacy = given.name.removesuffix(COMPRESSED_SUFFIX) if identity.segment is None else None
        found_in: list[Path] = []
        for root in (ROTATED_SEGMENTS, "archived_sessions"):
            found = self._in_folder(root, identity, legacy)
            if found is not None and legacy is None:
                return found
            found_in += [found] if found is not None else []
        if len(found_in) > 1:
            first, other = found_in
            raise SessionLogError(f"{first}: rollout reference {identity} is ambiguous: {other}")
        if found_in:
            return found_in[0]
        stamp = reference.timestamp
        if identity.segment is None or stamp is None or len(stamp) < 10:
            return None
        name = f"rollout-{stamp}-{identity.thread}.jsonl"
        day = self.home / "sessions" / stamp[0:4] / stamp[5:7] / stamp[8:10]
        for place in (day / name, self.home / "archived_sessions" / name):
            found = self._named(existing_rollout(place), identity)
            if found is not None:
                return found
        return None

    def _in_folder(self, root: str, identity: Identity, legacy: str | None) -> Path | None:
        """The one rollout of ``identity`` in its segment folder below ``root`` (named
        ``legacy`` when given); two raise :class:`SessionLogError`."""
        folder = self.home / root / identity.thread / (identity.segment or INITIAL)
        entries = directory_entries(folder, None)
        files = [entry.name for entry in entries if entry.is_file(follow_symlinks=False)]
        matching = [
            found
            for name in shown_names(files)
            if legacy is None or plain_name(name) == legacy
            for found in [self._named(folder / name, identity)]
            if found is not None
        ]
        if len(matching) > 1:
            raise SessionLogError(
                f"{folder}: rollout reference {identity} is ambiguous: "
                f"{len(matching)} matching files"
            )
        return matching[0] if matching else None

    def _named(self, path: Path | None, identity: Identity) -> Path | None:
        """``path``, as it really is, when the rollout there has ``identity`` (its first line
        says so) and lies in one of the :data:`APPROVED_ROOTS` of the home, as Codex requires
        (``approved_reference_root_path``): a reference never leads elsewhere on the disk."""
        path = self._approved(path)
        if path is None:
            return None
        try:
            first = rollout_head(path, self.max_bytes, self.max_line_bytes)
        except LogUnreadable:
            return None
        return path if identity_of(first) == identity else None

    def _approved(self, path: Path | None) -> Path | None:
        """The real path of ``path`` when it lies in a root of :data:`APPROVED_ROOTS` (itself
        no link) below the home, also once links are followed; else ``None``."""
        if path is None:
            return None
        for name in APPROVED_ROOTS:
            root = self.home / name
            inside = path.is_relative_to(root) and ".." not in path.relative_to(root).parts
            if inside and not root.is_symlink():
                real_root, real = root.resolve(), path.resolve()
                if real_root.is_relative_to(self.home.resolve()) and real.is_relative_to(real_root):
                    return real
        return None
