"""Walking a store: every entry its listing could look at, with a revision for each file.

A *revision* names one version of a file: ``device:inode:size:mtime_ns``. The *tree revision* is
a digest of every entry the store's two-level walk could look at (and the files inside each
session directory), so an unchanged digest means an unchanged listing.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Final, NamedTuple

WALK_DEPTH: Final = 3
"""Projects, session directories, then the files inside each session directory."""
ROOT: Final = b""
"""The entry of the root directory itself."""


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


class Tree:
    """What a walk saw: entry (path relative to the root) → state, and their digest.

    ``stamp`` is the digest, or a value no walk gives when an entry was modified too recently
    (so the next use looks again).
    """

    def __init__(self, root: bytes, entries: dict[bytes, str]) -> None:
        self.root = root
        self.entries = entries
        self.racy = any(state.endswith("~") for state in entries.values())

    @functools.cached_property
    def digest(self) -> str:
        """A digest of the root's real path and every entry with its state."""
        found = self.entries
        digest = hashlib.blake2b(self.root, digest_size=16)
        digest.update(b"\n".join(key + b"\0" + found[key].encode() for key in sorted(found)))
        return digest.hexdigest()

    @property
    def stamp(self) -> str:
        """What the index may record as the tree it matches."""
        return f"{self.digest}~{RACY}" if self.racy else self.digest

    def remembered_state(self, key: bytes) -> str:
        """The state of one entry as the index remembers it (:data:`RACY` when racy).

        >>> Tree(b"/", {b"a": "1~", b"b": "2"}).remembered_state(b"a")
        'racy'
        """
        state = self.entries[key]
        return RACY if state.endswith("~") else state

    def read_at_walk(self, key: bytes, revision: str | None) -> bool:
        """Whether a file read at ``revision`` was read as the walk saw it (and not racily).

        >>> Tree(b"/", {b"a": "33188:1:2:3:4"}).read_at_walk(b"a", "1:2:3:4")
        True
        """
        _, _, seen = self.entries[key].partition(":")
        return revision is not None and seen == revision

    def remembered(self) -> dict[bytes, str]:
        """The entries as the index remembers them (racy ones as :data:`RACY`)."""
        if not self.racy:
            return self.entries
        return {key: self.remembered_state(key) for key in self.entries}


def version_of(status: os.stat_result) -> str:
    """A file's mode and revision: a permission change makes a new version too.

    >>> version_of(os.stat("/")).count(":")
    4
    """
    return f"{status.st_mode}:{revision_of(status)}"


FileStat = tuple[int, int, int, int, int]
"""What a file's state says of it: mode, device, inode, size, mtime (ns)."""
FolderStat = tuple[int, int, int]
"""What a directory's state says of it: inode, mtime, ctime (ns)."""
FILE_STAT: Final = operator.attrgetter("st_mode", "st_dev", "st_ino", "st_size", "st_mtime_ns")
FOLDER_STAT: Final = operator.attrgetter("st_ino", "st_mtime_ns", "st_ctime_ns")


def stat_state(found: FileStat, racy_after: int) -> str:
    """A file's state from what :data:`FILE_STAT` takes of its status.

    >>> stat_state((33188, 1, 2, 3, 4), 5), stat_state((33188, 1, 2, 3, 4), 4)
    ('33188:1:2:3:4', '33188:1:2:3:4~')
    """
    return ":".join(map(str, found)) + ("~" if found[4] >= racy_after else "")


def _file_state(status: os.stat_result, racy_after: int) -> str:
    """A file's state: mode and revision (:func:`revision_of`), ``~`` when modified lately.

    >>> _file_state(os.stat("/"), 0).endswith("~"), _file_state(os.stat("/"), 1 << 62).count(":")
    (True, 4)
    >>> _file_state(os.stat("/"), 1 << 62) == version_of(os.stat("/"))
    True
    """
    return stat_state(FILE_STAT(status), racy_after)


def _folder_state(status: os.stat_result, racy_after: int) -> str:
    """A directory's state: while it holds, so do the names in it (creating, removing or
    renaming an entry changes the directory's mtime; setting it changes its ctime).

    >>> _folder_state(os.stat("/"), 0).startswith("d:") and _folder_state(os.stat("/"), 0)[-1]
    '~'
    """
    found = FOLDER_STAT(status)
    return "d:" + ":".join(map(str, found)) + ("~" if max(found[1:]) >= racy_after else "")


def entry_state(status: os.stat_result, racy_after: int) -> str:
    """The state a walk records for an entry: a directory's or a file's.

    >>> entry_state(os.stat("/"), 1 << 62) == _folder_state(os.stat("/"), 1 << 62)
    True
    """
    if stat.S_ISDIR(status.st_mode):
        return _folder_state(status, racy_after)
    return _file_state(status, racy_after)


Remembered = dict[bytes, list[tuple[bytes, str]]]
"""Session directory → (entry, file name) of each file it held at the last walk."""


class _Walk(NamedTuple):
    """One walk: what it found, when "lately" starts, and the last walk: its states, and the
    files remembered per session directory that held only files."""

    found: dict[bytes, str]
    racy_after: int
    before: Mapping[bytes, str]
    files_in: Remembered


def _restat(walk: _Walk, folder: str, files: list[tuple[bytes, str]]) -> bool:
    """Stat the files a session directory held last time, as its walk would record them;
    False when one is not a plain file now (the directory is walked instead)."""
    states = {}
    racy_after = walk.racy_after
    for key, name in files:
        try:
            status = os.stat(f"{folder}/{name}")
        except OSError:
            return False
        if stat.S_ISDIR(status.st_mode):
            return False
        states[key] = _file_state(status, racy_after)
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
                    if depth == 1:  # a link as a project folder: never listed nor looked in
                        continue
                elif depth < WALK_DEPTH:
                    state = _folder_state(entry.stat(), walk.racy_after)
                    walk.found[key] = state
                    files = walk.files_in.get(key)
                    if (
                        files is not None
                        and walk.before.get(key) == state
                        and _restat(walk, entry.path, files)
                    ):
                        continue
                else:
                    walk.found[key] = "d"
                if depth < WALK_DEPTH:
                    _walk(walk, entry.path, key + b"/", depth + 1)
                continue
            walk.found[key] = _file_state(entry.stat(), walk.racy_after)
        except OSError as exc:
            walk.found[key] = f"!{exc.errno}"


def files_by_folder(before: Mapping[bytes, str]) -> Remembered:
    """The files three levels down, by their session directory; a directory that held
    anything else (a directory, an entry that failed) is left out: it is walked.

    >>> files_by_folder({b"p/s/a": "1:x", b"p/s/b": "racy", b"p/t/c": "d", b"p/s": "d:1"})
    {b'p/s': [(b'p/s/a', 'a'), (b'p/s/b', 'b')]}
    """
    found: Remembered = {}
    walked = set()
    for key, state in before.items():
        if key.count(b"/") == WALK_DEPTH - 1:
            folder, _, name = key.rpartition(b"/")
            if state[:1].isdigit() or state == RACY:
                found.setdefault(folder, []).append((key, os.fsdecode(name)))
            else:
                walked.add(folder)
    for folder in walked:
        found.pop(folder, None)
    return found


def walk_tree(root: Path, racy_after: int, before: Mapping[bytes, str] | None = None) -> Tree:
    """Every entry three levels below ``root`` (names, kinds and revisions).

    ``before`` is the last walk as remembered: a session directory whose state is unchanged
    is not listed again, its remembered files are statted.

    >>> walk_tree(Path("/nonexistent"), 0).digest == walk_tree(Path("/nonexistent"), 0).digest
    True
    """
    before = before or {}
    walk = _Walk({}, racy_after, before, files_by_folder(before))
    try:
        walk.found[ROOT] = _folder_state(os.stat(root), racy_after)
    except OSError as exc:
        walk.found[ROOT] = f"!{exc.errno}"
    _walk(walk, str(root), b"", 1)
    return tree_of(root, walk.found)


def tree_of(root: Path, entries: dict[bytes, str]) -> Tree:
    """The tree of ``root`` whose walk saw ``entries``.

    >>> tree_of(Path("/"), {}).root
    b'/'
    """
    return Tree(os.fsencode(os.path.realpath(root)), entries)
