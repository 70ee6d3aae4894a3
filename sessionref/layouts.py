"""Each harness's root recognized from its layout: where a DSH store, a Claude Code
directory and a Codex home keep their sessions (docs/roots.md §Which harness), and what a root
near one of them, but none, holds (a Claude Code project folder, misnamed rollouts), for the
root rule's errors (:mod:`sessionref.roots`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from sessionref.codex.names import plain_name, rollout_ids
from sessionref.log.discovery import LOG_NAMES, leads_to


def _directories(path: Path) -> Iterator[Path]:
    """The real directories (not links) in ``path``, by name; none if it cannot be listed."""
    try:
        with os.scandir(path) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield Path(entry.path)


def _has_file(path: Path, wanted: Callable[[str], bool]) -> bool:
    """Whether ``path`` holds a file whose name is ``wanted``."""
    try:
        with os.scandir(path) as scan:
            return any(leads_to(entry, False) and wanted(entry.name) for entry in scan)
    except OSError:
        return False


def dsh_home(root: Path) -> Path | None:
    """``root`` when it holds DSH sessions (``<project>/<session>/session.jsonl[.zstd]``).

    >>> dsh_home(Path("/nonexistent")) is None
    True
    """
    for project in _directories(root):
        for session in _directories(project):
            if any(os.path.isfile(session / name) for name in LOG_NAMES):  # not a listing:
                return root  # a Claude Code project directory holds thousands of files
    return None


def _claude_session(name: str) -> bool:
    return name.endswith(".jsonl") and not name.startswith("agent-")


def claude_code_home(root: Path) -> Path | None:
    """The Claude Code directory (``~/.claude``) of ``root``: ``root`` itself when its
    ``projects/<project>/`` hold ``<session>.jsonl`` files, its parent when ``root`` is that
    ``projects`` directory; ``None`` otherwise."""
    for home, projects in ((root, root / "projects"), (root.parent, root)):
        if projects.name == "projects" and any(
            _has_file(project, _claude_session) for project in _directories(projects)
        ):
            return home
    return None


def _files_below(directory: Path, depth: int, wanted: Callable[[str], bool]) -> Iterator[Path]:
    """The files in ``directory`` whose names are ``wanted`` (by name), then those of its
    subdirectories, ``depth`` levels down (by name).

    >>> list(_files_below(Path("/nonexistent"), 3, lambda name: True))
    []
    """
    try:
        with os.scandir(directory) as scan:
            names = [e.name for e in scan if leads_to(e, False) and wanted(e.name)]
    except OSError:
        names = []
    yield from (directory / name for name in sorted(names))
    for sub in _directories(directory) if depth > 0 else ():
        yield from _files_below(sub, depth - 1, wanted)


CODEX_FOLDERS: Final = ("sessions", "archived_sessions")


def claude_code_project(root: Path) -> str | None:
    """Why ``root``, which is no Claude Code directory (:func:`claude_code_home`), still
    looks like one: it is a folder of ``projects/`` holding session files, one project's,
    and the directory to give is the one holding ``projects/``; ``None`` otherwise.

    >>> claude_code_project(Path("/nonexistent/projects/-w")) is None
    True
    """
    if root.parent.name != "projects" or not _has_file(root, _claude_session):
        return None
    return f"{root} is a Claude Code project folder: give {root.parent.parent} (or {root.parent})"


def _codex_folders(root: Path) -> list[tuple[Path, Path]]:
    """The Codex homes ``root`` may be, each with its folder of rollouts to look in: ``root``
    with its ``sessions/`` or ``archived_sessions/``, or its parent when ``root`` is one.

    >>> _codex_folders(Path("/h/sessions"))[-1]
    (PosixPath('/h'), PosixPath('/h/sessions'))
    """
    places = [(root, root / name) for name in CODEX_FOLDERS] + [(root.parent, root)]
    return [(home, folder) for home, folder in places if folder.name in CODEX_FOLDERS]


def _is_rollout(name: str) -> bool:
    """Whether Codex lists a file of this name (plain or compressed), as it reads names
    (:func:`~sessionref.codex.names.rollout_ids`)."""
    return rollout_ids(name) is not None


def _rollouts(folder: Path) -> Iterator[Path]:
    """The rollouts Codex lists in a folder of a Codex home and below (``YYYY/MM/DD/``)."""
    return _files_below(folder, 3, _is_rollout)


def _mismatch(path: Path) -> str | None:
    """Why a rollout is no thread's (:func:`sessionref.codex.store.mismatch`, imported only
    when a root is looked at as a Codex home)."""
    from sessionref.codex.store import mismatch

    return mismatch(path)


def codex_home(root: Path) -> Path | None:
    """The Codex directory (``~/.codex``) of ``root``: ``root`` itself when its ``sessions/``
    (``YYYY/MM/DD/`` or flat) or ``archived_sessions/`` hold rollouts Codex lists (named
    ``rollout-<time>-<thread>.jsonl``, maybe compressed, as Codex's ``RolloutFileName::parse``
    reads a name: :func:`~sessionref.codex.names.rollout_ids`), its parent when ``root`` is
    one of those; ``None`` otherwise: a folder of files Codex does not list holds no thread,
    and nor does one whose rollouts are each of another thread than their names say
    (:func:`_mismatch`), which Codex lists as no thread."""
    for home, folder in _codex_folders(root):
        if any(_mismatch(path) is None for path in _rollouts(folder)):
            return home
    return None


def misnamed_rollout(root: Path) -> str | None:
    """Why ``root``, which is no Codex home (:func:`codex_home`), still looks like one: its
    first rollout and the other thread its ``session_meta`` says, when all its rollouts are
    so; else, when it holds ``rollout-*.jsonl`` files Codex does not list, the first of them
    and what Codex takes for a rollout's name; ``None`` when it holds none.

    >>> misnamed_rollout(Path("/nonexistent")) is None
    True
    """
    folders = [folder for _, folder in _codex_folders(root)]
    for folder in folders:
        for path in _rollouts(folder):
            why = _mismatch(path)
            if why is not None:
                return why
    for folder in folders:
        found = next(_files_below(folder, 3, lambda name: plain_name(name) is not None), None)
        if found is not None:
            return (
                f"{found} is no rollout: Codex lists only "
                "rollout-<YYYY-MM-DDThh-mm-ss>-<thread UUID>.jsonl (maybe .zst), of a real time"
            )
    return None


def codex_subfolder(root: Path) -> str | None:
    """Why ``root``, which is no Codex home (:func:`codex_home`), still looks like part of
    one: it is a folder below a home's ``sessions/`` (a day's ``YYYY/MM/DD/``, up to three
    levels down) or ``archived_sessions/``, and the directory to give is that home; ``None``
    otherwise.

    >>> codex_subfolder(Path("/nonexistent/sessions/2026/11/30")) is None
    True
    """
    for folder in list(root.parents)[:3]:
        if folder.name in CODEX_FOLDERS and codex_home(folder) is not None:
            return (
                f"{root} is a folder inside a Codex home's {folder.name}/: give "
                f"{folder.parent} (or {folder})"
            )
    return None


def codex_near_miss(root: Path) -> str | None:
    """Why ``root``, which is no Codex home, still looks like one or part of one
    (:func:`codex_subfolder`, then :func:`misnamed_rollout`); ``None`` when nothing does.

    >>> codex_near_miss(Path("/nonexistent")) is None
    True
    """
    return codex_subfolder(root) or misnamed_rollout(root)


def nothing_near(root: Path) -> str | None:
    """No layout of the harness is near ``root``'s (what a harness without near misses says)."""
    return None
