"""Walking a store: every entry its listing could look at, with a revision for each file.

A *revision* names one version of a file: ``device:inode:size:mtime_ns``. The *tree revision* is
a digest of every entry the store's two-level walk could look at (and the files inside each
session directory), so an unchanged digest means an unchanged listing.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final, NamedTuple

WALK_DEPTH: Final = 3
"""Projects, session directories, then the files inside each session directory."""


def revision_of(status: os.stat_result) -> str:
    """The revision of a file from its status.

    >>> revision_of(os.stat("/")).count(":")
    3
    """
    return f"{status.st_dev}:{status.st_ino}:{status.st_size}:{status.st_mtime_ns}"


RACY_NS: Final = 2_000_000_000
"""A file modified this recently may change again within its timestamp's granularity without
its revision changing: it is read, but not remembered (as git treats "racily clean" files)."""


def file_revision(path: str | os.PathLike[str], racy_after: int) -> str | None:
    """The revision of the file at ``path`` (following links); ``None`` when it was modified
    at or after ``racy_after`` (ns), so that it is read again next time. Raises
    :class:`OSError`.

    >>> file_revision("/", 0) is None, file_revision("/", 1 << 62).count(":")
    (True, 3)
    """
    status = os.stat(path)
    return None if status.st_mtime_ns >= racy_after else revision_of(status)


RACY: Final = "racy"
"""The state remembered for an entry modified too recently to trust: it never matches a walk."""


class Tree(NamedTuple):
    """What a walk saw: entry (path relative to the root) → state, and their digest.

    ``stamp`` is the digest, or a value no walk gives when an entry was modified too recently
    (so the next use looks again).
    """

    digest: str
    entries: dict[bytes, str]
    racy: bool

    @property
    def stamp(self) -> str:
        """What the index may record as the tree it matches."""
        return f"{self.digest}~{RACY}" if self.racy else self.digest

    def remembered_state(self, key: bytes) -> str:
        """The state of one entry as the index remembers it (:data:`RACY` when racy).

        >>> Tree("d", {b"a": "1~", b"b": "2"}, True).remembered_state(b"a")
        'racy'
        """
        state = self.entries[key]
        return RACY if state.endswith("~") else state

    def read_at_walk(self, key: bytes, revision: str | None) -> bool:
        """Whether a file read at ``revision`` was read as the walk saw it (and not racily).

        >>> Tree("d", {b"a": "33188:1:2:3:4"}, False).read_at_walk(b"a", "1:2:3:4")
        True
        """
        _, _, seen = self.entries[key].partition(":")
        return revision is not None and seen == revision

    def remembered(self) -> dict[bytes, str]:
        """The entries as the index remembers them (racy ones as :data:`RACY`)."""
        return (
            self.entries
            if not self.racy
            else {
                key: RACY if state.endswith("~") else state for key, state in self.entries.items()
            }
        )


def _file_state(status: os.stat_result, racy_after: int) -> str:
    """A file's state: mode and revision, ``~`` when modified lately."""
    racy = "~" if status.st_mtime_ns >= racy_after else ""
    return f"{status.st_mode}:{revision_of(status)}{racy}"


def _folder_state(status: os.stat_result, racy_after: int) -> str:
    """A session directory's state: while it holds, so do the names in it (creating, removing
    or renaming an entry changes the directory's mtime; setting it changes its ctime).

    >>> _folder_state(os.stat("/"), 0).startswith("d:") and _folder_state(os.stat("/"), 0)[-1]
    '~'
    """
    racy = "~" if max(status.st_mtime_ns, status.st_ctime_ns) >= racy_after else ""
    return f"d:{status.st_ino}:{status.st_mtime_ns}:{status.st_ctime_ns}{racy}"


class _Walk(NamedTuple):
    """One walk: what it found, when "lately" starts, and the files remembered per unchanged
    session directory (from the last walk)."""

    found: dict[bytes, str]
    racy_after: int
    before: Mapping[bytes, str]
    files_in: Mapping[bytes, list[bytes]]


def _restat(walk: _Walk, folder: str, key: bytes) -> bool:
    """Stat the files a session directory held last time, as its walk would record them;
    False when one is not a plain file now (the directory is walked instead)."""
    states = {}
    for name in walk.files_in.get(key, ()):
        remembered = walk.before[key + b"/" + name]
        if not (remembered[:1].isdigit() or remembered == RACY):
            return False
        try:
            status = os.stat(os.path.join(folder, os.fsdecode(name)))
        except OSError:
            return False
        if stat.S_ISDIR(status.st_mode):
            return False
        states[key + b"/" + name] = _file_state(status, walk.racy_after)
    walk.found.update(states)
    return True


def _walk(walk: _Walk, folder: str, prefix: bytes, depth: int) -> None:
    """Record every entry below ``folder``: directories by kind (their content is walked, or
    restatted when a session directory's state is the remembered one), files by revision, a
    state ending in ``~`` when modified lately."""
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:
        walk.found[prefix + b"/"] = f"!{exc.errno}"
        return
    for entry in entries:
        key = prefix + os.fsencode(entry.name)
        try:
            if entry.is_dir():
                if entry.is_symlink():
                    walk.found[key] = f"l{entry.stat().st_ino}"
                elif depth == WALK_DEPTH - 1:
                    state = _folder_state(entry.stat(), walk.racy_after)
                    walk.found[key] = state
                    if walk.before.get(key) == state and _restat(walk, entry.path, key):
                        continue
                else:
                    walk.found[key] = "d"
                if depth < WALK_DEPTH:
                    _walk(walk, entry.path, key + b"/", depth + 1)
                continue
            walk.found[key] = _file_state(entry.stat(), walk.racy_after)
        except OSError as exc:
            walk.found[key] = f"!{exc.errno}"


def files_by_folder(entries: Iterable[bytes]) -> dict[bytes, list[bytes]]:
    """The names of the entries three levels down, by their session directory.

    >>> files_by_folder([b"p", b"p/s", b"p/s/a", b"p/s/b"])
    {b'p/s': [b'a', b'b']}
    """
    found: dict[bytes, list[bytes]] = {}
    for key in entries:
        if key.count(b"/") == WALK_DEPTH - 1:
            folder, _, name = key.rpartition(b"/")
            found.setdefault(folder, []).append(name)
    return found


def walk_tree(root: Path, racy_after: int, before: Mapping[bytes, str] | None = None) -> Tree:
    """Every entry three levels below ``root`` (names, kinds and revisions), digested.

    ``before`` is the last walk as remembered: a session directory whose state is unchanged
    is not listed again, its remembered files are statted.

    >>> walk_tree(Path("/nonexistent"), 0).digest == walk_tree(Path("/nonexistent"), 0).digest
    True
    """
    before = before or {}
    walk = _Walk({}, racy_after, before, files_by_folder(before))
    _walk(walk, str(root), b"", 1)
    found = walk.found
    digest = hashlib.blake2b(os.fsencode(os.path.realpath(root)), digest_size=16)
    digest.update(b"\n".join(key + b"\0" + found[key].encode() for key in sorted(found)))
    racy = any(state.endswith("~") for state in found.values())
    return Tree(digest.hexdigest(), found, racy)
