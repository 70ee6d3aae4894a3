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

A reference names its rollout by a thread, a segment and maybe a rollout id
(:mod:`sessionref.codex.reference_lines`), and records where it was
(:meth:`Expansion.resolve`): a path, the time in its name. A path counts only inside
the home, and a relative one only by its name, which carries a thread and a rollout id
(``codex-rs/rollout/src/reference.rs``: ``reference_identity``, ``validated_candidate``,
``approved_reference_root_path``; ``find_rollout_path_by_rollout_id`` in
``codex-rs/rollout/src/list.rs``; ``thread_id_from_path`` and ``rollout_id_from_path`` in
``codex-rs/rollout/src/metadata.rs``).

A paginated thread's page is preceded the same way by the history it continues
(:mod:`sessionref.codex.pages`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, NamedTuple

from sessionref.codex.meta import refuse_unknown_mode
from sessionref.codex.names import COMPRESSED_SUFFIX, plain_name, shown_names
from sessionref.codex.pages import HistoryBase, RolloutsById, history_base_of, prefix
from sessionref.codex.reference_lines import (
    INITIAL,
    Identity,
    Reference,
    before_nth_user_message,
    identity_of,
    ids_named,
    is_meta,
    references_in,
)
from sessionref.codex.resume import resumed
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
        reference expanded. A rollout Codex refuses to resume is refused, for its history
        mode (:func:`~sessionref.codex.meta.refuse_unknown_mode`) or its lines, and the lines
        Codex's resume skips are passed over (:func:`~sessionref.codex.resume.resumed`)."""
        refuse_unknown_mode(path, read)
        lines = self._spend(path, resumed(path, read))
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
        start = 0  # the first line not yet in the history
        for index, reference in references_in(lines):
            history += lines[start:index]
            start = index + 1
            identity = reference.identity
            below = _below(path, depth, identity.thread, reference.is_fork(depth.thread))
            if identity in open_:
                raise SessionLogError(f"{path}: rollout reference cycle at {identity}")
            found = self.resolve(reference)
            if found is None:
                continue  # not on disk: the history before it is what is missing
            found_lines = self._read(found)
            referenced = [line for line in found_lines if not is_meta(line)]
            opened = open_ | {identity}
            expanded = self._expand(found, referenced, below, opened, history_base_of(found_lines))
            if reference.nth_user_message is not None:
                expanded = before_nth_user_message(expanded, reference.nth_user_message)
            history += expanded
        return history + lines[start:]

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
        own = [line for line in prefix if not is_meta(line)]
        return self._expand(found, own, below, open_ | {base.rollout}, history_base_of(prefix))

    def _prefix(self, path: Path, base: HistoryBase) -> tuple[str, list[bytes]]:
        """The thread of the rollout at ``path`` and its lines that ``base`` names
        (:func:`~sessionref.codex.pages.prefix`)."""
        thread, lines = prefix(rollout_text(path, self.max_bytes), base, path, self.max_line_bytes)
        return thread, self._spend(path, lines)

    def resolve(self, reference: Reference) -> Path | None:
        """The rollout a reference names, as Codex finds it (``resolve_rollout_reference_path``),
        each place taken only when the rollout there is the one named (:meth:`Identity.is_of`)
        and lies in the home (:meth:`_approved`):

        1. at its path (the plain file, else the compressed one), when that is absolute: a
           relative one is never opened, relative to the home or to anything else, and only
           its name counts in the steps below;
        2. as the one rollout of that identity in its segment folder below
           ``rotated_rollout_segments/``, then below ``archived_sessions/`` (for ``initial``,
           of the name its path has, and in one of the two only);
        3. as the rollout whose name carries the rollout id the reference names, else the one
           the name of its path carries: the first of that id below ``sessions/``, then below
           ``archived_sessions/`` (Codex's ``find_rollout_path_by_rollout_id``);
        4. for a segment whose reference records the time in the rollout's name, at
           ``sessions/YYYY/MM/DD/`` then in ``archived_sessions/``, under the name of that
           time, thread and rollout id.

        ``None`` when it is in none of them; two that match in one folder (or an ``initial``
        one in both) raise :class:`SessionLogError`."""
        identity, given = reference.identity, Path(reference.path)
        found = self._named(existing_rollout(given), identity) if given.is_absolute() else None
        found = found or self._in_segment_folders(identity, given.name)
        rollout = identity.rollout or ids_named(given)[1]
        if found is None and rollout is not None:
            found = self._named(self.pages.find(rollout), identity)
        return found or self._by_time(reference)

    def _by_time(self, reference: Reference) -> Path | None:
        """The segment a reference names where the time it records, its thread and its
        rollout id name it (``rollout-<time>-<thread>[_<rollout>].jsonl``, plain or
        compressed): in ``sessions/YYYY/MM/DD/`` of that time, else in ``archived_sessions/``.

        >>> import json, shutil, tempfile
        >>> t, seg = "0197a000-0000-7000-8000-0000000000aa", "0197a000-0000-7000-8000-0000000000bb"
        >>> home = Path(tempfile.mkdtemp())
        >>> day = home / "sessions" / "2025" / "06" / "01"
        >>> day.mkdir(parents=True)
        >>> meta = {"type": "session_meta", "payload": {"id": t, "segment_id": seg}}
        >>> name = f"rollout-2025-06-01T10-00-00-{t}.jsonl"
        >>> _ = (day / name).write_text(json.dumps(meta) + "\\n")
        >>> expansion = Expansion(home, 1 << 20, 1 << 20, RolloutsById(home))
        >>> at = Reference(Identity(t, seg), "gone.jsonl", "2025-06-01T10-00-00", None, t)
        >>> expansion._by_time(at).relative_to(home.resolve()).parts[:4]
        ('sessions', '2025', '06', '01')
        >>> expansion._by_time(at._replace(timestamp="2025-06-02T10-00-00")) is None
        True
        >>> shutil.rmtree(home)
        """
        identity, stamp = reference.identity, reference.timestamp
        if identity.segment is None or stamp is None:
            return None
        ids = identity.thread
        if identity.rollout not in (None, identity.thread):
            ids = f"{ids}_{identity.rollout}"
        name = f"rollout-{stamp}-{ids}.jsonl"
        places = [self.home / "archived_sessions" / name]
        if len(stamp) >= 10:  # else Codex has no day folder to look in, only the archive
            places.insert(0, self.home / "sessions" / stamp[0:4] / stamp[5:7] / stamp[8:10] / name)
        for place in places:
            found = self._named(existing_rollout(place), identity)
            if found is not None:
                return found
        return None

    def _in_segment_folders(self, identity: Identity, name: str) -> Path | None:
        """The one rollout of ``identity`` in its segment folder below
        ``rotated_rollout_segments/``, else below ``archived_sessions/``; for an ``initial``
        one, the one named ``name`` (plain) in either, and two of them raise
        :class:`SessionLogError`.

        >>> import json, shutil, tempfile
        >>> t, seg = "0197a000-0000-7000-8000-0000000000aa", "0197a000-0000-7000-8000-0000000000bb"
        >>> home = Path(tempfile.mkdtemp())
        >>> folder = home / ROTATED_SEGMENTS / t / seg
        >>> folder.mkdir(parents=True)
        >>> meta = {"type": "session_meta", "payload": {"id": t, "segment_id": seg}}
        >>> name = f"rollout-2025-06-01T10-00-00-{t}.jsonl"
        >>> _ = (folder / name).write_text(json.dumps(meta) + "\\n")
        >>> expansion = Expansion(home, 1 << 20, 1 << 20, RolloutsById(home))
        >>> expansion._in_segment_folders(Identity(t, seg), "any.jsonl").parent.name == seg
        True
        >>> expansion._in_segment_folders(Identity(t, None), "any.jsonl") is None
        True
        >>> shutil.rmtree(home)
        """
        legacy = name.removesuffix(COMPRESSED_SUFFIX) if identity.segment is None else None
        found_in: list[Path] = []
        for root in (ROTATED_SEGMENTS, "archived_sessions"):
            found = self._in_folder(root, identity, legacy)
            if found is not None and legacy is None:
                return found
            found_in += [found] if found is not None else []
        if len(found_in) > 1:
            first, other = found_in
            raise SessionLogError(f"{first}: rollout reference {identity} is ambiguous: {other}")
        return found_in[0] if found_in else None

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
        return path if identity.is_of(path, first) else None

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
