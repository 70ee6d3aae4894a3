"""Whether a store changed since the stamped walk, cheaply: thousands of entries statted and
compared as numbers (:class:`WalkStats`), with no string made for each, while nothing changed.

The index keeps, beside the stamped walk's entries, their :class:`WalkStats` (bound to the
stamp): a use that finds every directory and file as remembered reads nothing else.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import msgspec

from sessionref.collector import collection_paused
from sessionref.index.walk import (
    FILE_STAT,
    FOLDER_STAT,
    FileStat,
    FolderStat,
    stat_state,
)

Changed = dict[bytes, str] | None
"""The files whose state is not the stamped walk's, with their state now (``None``: the store
must be walked): what :func:`restat_tree` finds."""


class WalkStats(msgspec.Struct, array_like=True, frozen=True):
    """A stamped walk as a use compares it with the store: the state of each file and directory
    as numbers (what :data:`FILE_STAT` and :data:`FOLDER_STAT` take of a status), so that
    thousands of entries are statted and compared without a string made for each.

    ``stamp`` is the tree it was made for; ``files`` and ``folders`` the entries, joined by
    NUL (the root as ``.``); a file remembered racy has ``None`` (it never matches); ``newest``
    the latest time among them (ns).
    """

    stamp: str
    files: bytes
    file_stats: list[FileStat | None]
    folders: bytes
    folder_stats: list[FolderStat]
    newest: int


_STATS_DECODER: Final = msgspec.msgpack.Decoder(WalkStats)
_STATS_ENCODER: Final = msgspec.msgpack.Encoder()


def _numbers(state: str) -> tuple[int, ...]:
    """The numbers of a state, in order.

    >>> _numbers("d:1:2:3"), _numbers("33188:1:2:3:4")
    ((1, 2, 3), (33188, 1, 2, 3, 4))
    """
    return tuple(map(int, state.removeprefix("d:").split(":")))


def walk_stats(stamp: str, entries: Mapping[bytes, str]) -> bytes | None:
    """The :class:`WalkStats` of the walk ``entries`` stamped ``stamp``, encoded; ``None`` when
    an entry is neither a file nor a settled directory (a use of that walk lists again).

    >>> from sessionref.index.walk import RACY
    >>> found = read_walk_stats(walk_stats("t", {b"": "d:1:2:3", b"a": "33188:1:2:3:9~"}), "t")
    >>> found.folders, found.folder_stats, found.files, found.file_stats, found.newest
    (b'.', [(1, 2, 3)], b'a', [None], 3)
    >>> walk_stats("t", {b"": "d:1:2:3", b"a": RACY}) is None
    True
    """
    files, file_stats, folders, folder_stats = [], [], [], []
    for key, state in entries.items():
        if state[:1].isdigit():
            files.append(key)
            file_stats.append(None if state.endswith("~") else _numbers(state))
        elif state.startswith("d:") and not state.endswith("~"):
            folders.append(key or b".")
            folder_stats.append(_numbers(state))
        else:
            return None
    times = [found[4] for found in file_stats if found is not None]
    newest = max(times + [max(found[1:]) for found in folder_stats], default=0)
    remembered = (stamp, b"\0".join(files), file_stats, b"\0".join(folders), folder_stats, newest)
    return _STATS_ENCODER.encode(remembered)


def read_walk_stats(encoded: bytes, stamp: str) -> WalkStats | None:
    """The :class:`WalkStats` :func:`walk_stats` encoded, if it was made for ``stamp``."""
    try:
        found = _STATS_DECODER.decode(encoded)
    except msgspec.DecodeError:
        return None
    return found if found.stamp == stamp else None


def _names(joined: bytes) -> list[bytes]:
    r"""Entries joined by NUL, apart.

    >>> _names(b""), _names(b"a\0b/c")
    ([], [b'a', b'b/c'])
    """
    return joined.split(b"\0") if joined else []


def restat_tree(root: Path, racy_after: int, remembered: WalkStats) -> Changed:
    """What :func:`walk_tree` would see differently from the walk ``remembered``, when no
    directory changed: every remembered entry statted, nothing listed; the files whose state is
    not the remembered one, with their state now (``{}``: the walk would be the remembered one
    itself), a file remembered racy always among them. ``None`` when a directory changed (its
    names may have) or an entry cannot be statted.

    >>> from sessionref.index.walk import ROOT, walk_tree
    >>> tree = walk_tree(Path("/"), 1 << 62)
    >>> stats = read_walk_stats(walk_stats("t", {b"": tree.entries[ROOT]}), "t")
    >>> restat_tree(Path("/"), 1 << 62, stats), restat_tree(Path("/nonexistent"), 0, stats)
    ({}, None)
    """
    try:
        folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    files = _names(remembered.files)
    at = functools.partial(os.stat, dir_fd=folder)
    try:
        with collection_paused():  # thousands of tuples, none in a cycle
            folders_now = list(map(FOLDER_STAT, map(at, _names(remembered.folders))))
            files_now: list[FileStat] = list(map(FILE_STAT, map(at, files)))
    except OSError:
        return None
    finally:
        os.close(folder)
    settled = remembered.newest < racy_after
    if folders_now != remembered.folder_stats:
        return None
    if not settled and any(max(now[1:]) >= racy_after for now in folders_now):
        return None
    if settled and files_now == remembered.file_stats:
        return {}
    return {
        key: stat_state(now, racy_after)
        for key, now, then in zip(files, files_now, remembered.file_stats, strict=True)
        if now != then or now[4] >= racy_after
    }
