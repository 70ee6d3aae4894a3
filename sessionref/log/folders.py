"""The walk of a DSH root: its project folders and what lies in them (docs/format.md
§Discovery).

Only real directories are walked (links are not followed), as the harness's listing walks
them; what else a project folder holds is kept as the :class:`~sessionref.log.lookup.Spot`
the harness's lookup of an id would meet there (a link named as a session's folder is looked
through for its logs: the one place the walk follows a link).
"""

from __future__ import annotations

import os
import stat
from typing import NamedTuple

from sessionref.log.discovery import (
    LOG_NAMES,
    LogFile,
    StoreProblem,
    directory_entries,
    leads_to,
    not_a_log,
)
from sessionref.log.lookup import FLAT_SUFFIXES, Spot, linked_spot


class Walked(NamedTuple):
    """What a walk found: every log, every flat artifact, every entry named as a log that is
    no file (:func:`~sessionref.log.discovery.not_a_log`) and the spots by entry name."""

    files: list[LogFile]
    flat: list[str]
    strays: list[StoreProblem]
    spots: dict[str, list[Spot]]


def walk_root(root: str) -> Walked:
    """Every log two directory levels below ``root``, sorted by name, and what lies beside.

    >>> walk_root("/nonexistent")
    Walked(files=[], flat=[], strays=[], spots={})
    """
    walked = Walked([], [], [], {})
    for project in _directories(root, walked.strays):
        for entry in directory_entries(project.path, walked.strays):
            if leads_to(entry, False) and entry.name.endswith(FLAT_SUFFIXES):
                walked.flat.append(entry.path)
            if entry.is_dir(follow_symlinks=False):
                spot = _session_folder(walked, project.name, entry)
            else:
                spot = linked_spot(project.name, entry, LOG_NAMES)
            if spot is not None:
                walked.spots.setdefault(entry.name, []).append(spot)
    return walked


def _session_folder(walked: Walked, project: str, entry: os.DirEntry[str]) -> Spot | None:
    """Add the logs of the session folder ``entry`` to ``walked``; its spot, ``None`` when
    it holds no log and is not named as a flat artifact."""
    logs: dict[str, str | None] = {}
    for name in LOG_NAMES:
        path = os.path.join(entry.path, name)
        try:
            mode = os.stat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):  # no such log
            continue  # (a dangling link included)
        except OSError as exc:  # a link loop, a folder that cannot be searched
            walked.strays.append(StoreProblem(path, f"cannot be read: {exc.strerror}"))
            logs[name] = exc.strerror
            continue
        logs[name] = None
        if stat.S_ISREG(mode):
            walked.files.append(LogFile(project, entry.name, name, path))
        else:
            walked.strays.append(not_a_log(path, mode))
    if logs or entry.name.endswith(FLAT_SUFFIXES):
        return Spot(project, entry.path, None, None, logs)
    return None


def _directories(path: str, passed: list[StoreProblem]) -> list[os.DirEntry[str]]:
    """The real directories (not links) in ``path``, by name; none if it cannot be listed
    (which is a problem added to ``passed``: :func:`directory_entries`)."""
    entries = directory_entries(path, passed)
    return [entry for entry in entries if entry.is_dir(follow_symlinks=False)]
