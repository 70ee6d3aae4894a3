"""What the harness's lookup of a session meets, decided from the listing's walk.

Before it reads a session, the harness looks its id up again in every project folder of the
root (the real directories the listing walks), opening for each, in this order, the legacy
flat artifacts ``<project>/<id>.jsonl.zstd`` and ``<project>/<id>.jsonl``, the log of the
other encoding ``<project>/<id>/session.<other>`` and the log ``<project>/<id>/session.<own>``
(``<id>`` encoded). Whatever opens counts (a directory, a link's target too), any error but
"no such file" fails the read, and so does the log found in two project folders. sessionref
decides all that once per listing (docs/format.md §Discovery): the walk keeps a
:class:`Spot` for each entry of a project folder that the lookup could meet, and
:func:`lookup_conflict` finds what fails a listed session's read.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, NamedTuple

from sessionref.codecs.jsjson import js_json
from sessionref.log.layout import encode_session_directory

FLAT_SUFFIXES: Final = (".jsonl.zstd", ".jsonl")
NOT_A_DIRECTORY: Final = os.strerror(errno.ENOTDIR)


class Spot(NamedTuple):
    """An entry ``path`` of the project folder ``project`` as the lookup meets it: ``opened``
    is the error opening the entry gives (``None``: it opens), ``inside`` the error opening a
    name below it gives (``None``: it is a directory), ``logs`` the log names below it that
    exist, each with the error opening it gives (``None``: it opens)."""

    project: str
    path: str
    opened: str | None
    inside: str | None
    logs: Mapping[str, str | None]


Spots = Mapping[str, Sequence[Spot]]
"""Entry name → the spots of that name, in walk order."""


class Conflict(NamedTuple):
    """What fails a listed session's read: the entry the lookup met, the read's message, and
    what the entry is to the lookup (for the problem that names it)."""

    path: str
    message: str
    why: str


def linked_spot(project: str, entry: os.DirEntry[str], names: Iterable[str]) -> Spot | None:
    """The spot of an entry the walk does not go into (a link, a file, a FIFO…), looking
    through a link as the harness's ``open`` does, into a directory for the log ``names``;
    ``None`` for a link that leads nowhere (no such file: the lookup passes it by).

    >>> [linked_spot("p", e, ()).inside for e in os.scandir("/proc") if e.name == "self"]
    [None]
    """
    if not entry.is_symlink():
        return Spot(project, entry.path, None, NOT_A_DIRECTORY, {})
    try:
        mode = os.stat(entry.path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:  # a link loop, a target it may not look at
        return Spot(project, entry.path, exc.strerror, exc.strerror, {})
    if not stat.S_ISDIR(mode):
        return Spot(project, entry.path, None, NOT_A_DIRECTORY, {})
    return Spot(project, entry.path, None, None, logs_below(entry.path, names))


def logs_below(folder: str, names: Iterable[str]) -> dict[str, str | None]:
    """The log ``names`` that exist in ``folder``, each with the error opening it gives
    (``None``: it opens as a file or a directory).

    >>> logs_below("/", ["tmp", "nonexistent"])
    {'tmp': None}
    """
    found: dict[str, str | None] = {}
    for name in names:
        try:
            os.stat(os.path.join(folder, name))
        except FileNotFoundError:
            continue
        except OSError as exc:
            found[name] = exc.strerror
            continue
        found[name] = None
    return found


def _quoted(text: str) -> str:
    """``text`` as a JSON string, as the harness quotes paths and ids in its messages."""
    return js_json(text).decode("utf-8", "surrogatepass")


def _flat(spots: Spots, session: str) -> Conflict | None:
    """A flat artifact ``<session>.jsonl.zstd`` or ``<session>.jsonl`` in any project folder."""
    for suffix in FLAT_SUFFIXES:
        for spot in spots.get(session + suffix, ()):
            layout = f"session artifact {_quoted(spot.path)} uses the unsupported flat-file layout"
            if spot.opened is not None:
                layout = f"cannot read {spot.path}: {spot.opened}"
            return Conflict(spot.path, layout, "named as its flat-file artifact")
    return None


def lookup_conflict(
    spots: Spots, session_id: str, logs: tuple[str, str], listed: str
) -> Conflict | None:
    """What fails the read of the session ``session_id``, listed at ``listed``, in a root
    whose logs are named ``logs[0]`` (and ``logs[1]`` in the other encoding): a flat
    artifact, an entry named as its folder that is none or that holds a log of the other
    encoding, or its log found in another project folder (``None``: it reads).

    >>> spot = Spot("p", "r/p/s", None, None, {"session.jsonl": None})
    >>> lookup_conflict({"s": [spot]}, "s", ("session.jsonl", "x"), "r/p/s/session.jsonl")
    >>> twice = {"s": [spot, spot._replace(project="q", path="r/q/s")]}
    >>> lookup_conflict(twice, "s", ("session.jsonl", "x"), "r/p/s/session.jsonl").path
    'r/q/s/session.jsonl'
    """
    session = encode_session_directory(session_id)
    flat = _flat(spots, session)
    if flat is not None:
        return flat
    own, other = logs
    found = []
    for spot in spots.get(session, ()):
        if spot.inside is not None:
            below = os.path.join(spot.path, other)
            why = f"named as its folder: {spot.inside}"
            return Conflict(spot.path, f"cannot read {below}: {spot.inside}", why)
        for name in (other, own):
            if name not in spot.logs:
                continue
            path, error = os.path.join(spot.path, name), spot.logs[name]
            if error is not None:
                return Conflict(path, f"cannot read {path}: {error}", f"cannot be read: {error}")
            if name == other:
                uses = f"session artifact {_quoted(path)} uses {other}, not {own}"
                return Conflict(path, uses, "its log in the other encoding")
            found.append(path)
    if len(found) == 1:
        return None
    named = _quoted(session_id)
    if not found:
        missing = f"session {named} is not found where the harness looks for it"
        return Conflict(listed, missing, "its log, not where the harness looks for it")
    again = next((path for path in found if path != listed), found[0])
    duplicate = f"duplicate JSONL session id {named} appears in multiple project directories"
    return Conflict(again, duplicate, "its log again, in another project folder")
