"""The files a store reads, so that a command never writes its output over one of them: an
output file (``--out``, ``--html``) that is a log of the store being read would replace the
session it holds."""

from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from sessionref.cli.common import STDOUT, OpenStore, quoted
from sessionref.errors import SessionLogError
from sessionref.log.multi import MultiStore
from sessionref.log.protocol import Store


def files_of(store: Store, session_id: str) -> list[Path]:
    """The log files of a session as ``store`` places them (none when it does not say, as a
    store in memory does not).

    >>> from sessionref.log.store import MemoryStore
    >>> files_of(MemoryStore([]), "s")
    []
    """
    try:
        paths_of = getattr(store, "paths_of", None)
        if callable(paths_of):
            return list(paths_of(session_id))
        path_of = getattr(store, "path_of", None)
        return [path_of(session_id)] if callable(path_of) else []
    except SessionLogError:
        return []


def store_files(listed: Store) -> Iterator[tuple[str | None, str]]:
    """Every file a store (as :class:`~sessionref.cli.common.OpenStore` lists it) reads or
    passed over: the session of each log, and ``None`` with each file passed over. Each
    store is asked where its sessions are from its listing: nothing is listed again.

    >>> import tempfile
    >>> from sessionref.testing.store import write_session_store
    >>> log = {"header": {"version": 0, "id": "a", "createdAt": 1, "delegationDepth": 0,
    ...                   "cwd": "/w"}, "events": []}
    >>> with tempfile.TemporaryDirectory() as root:
    ...     _ = write_session_store(root, [log])
    ...     [(s, os.path.relpath(p, root)) for s, p in store_files(OpenStore(root).listed)]
    [('a', '--w--/a/session.jsonl')]
    """
    parts = listed.stores.values() if isinstance(listed, MultiStore) else [listed]
    for part in parts:
        store = getattr(part, "store", part)  # behind the listing taken once, if it is one
        for header in part.headers():
            for path in files_of(store, header.id):
                yield header.id, str(path)
    for problem in listed.problems():
        yield None, problem.path


def log_named(opened: OpenStore, given: str) -> str | None:
    """What the existing file ``given`` names is to the store, if it is one of its files
    (:func:`store_files`; the same file, however it is reached: by a link, another name,
    another path): ``the log of session "x"``, or ``a log the store passed over``.

    >>> import tempfile
    >>> from sessionref.testing.store import write_session_store
    >>> log = {"header": {"version": 0, "id": "a", "createdAt": 1, "delegationDepth": 0,
    ...                   "cwd": "/w"}, "events": []}
    >>> with tempfile.TemporaryDirectory() as root:
    ...     [path] = write_session_store(root, [log])
    ...     os.link(path, os.path.join(root, "other name"))
    ...     opened = OpenStore(root)
    ...     log_named(opened, os.path.join(root, "other name")), log_named(opened, root)
    ('the log of session "a"', None)
    """
    try:
        wanted = os.stat(given)
    except OSError:  # none yet: nothing of the store's is there
        return None
    if not stat.S_ISREG(wanted.st_mode):
        return None
    for session_id, path in store_files(opened.listed):
        try:
            found = os.stat(path)
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == (wanted.st_dev, wanted.st_ino):
            if session_id is None:
                return "a log the store passed over"
            return f"the log of session {quoted(session_id)}"
    return None


def refuse_a_log(args: argparse.Namespace, opened: OpenStore, option: str) -> None:
    """A usage error when the file ``option`` names (``--out``, ``--html``) is a log of the
    store the command reads: writing there would replace it. Said before anything is written.
    """
    given = getattr(args, option.removeprefix("--"))
    what = log_named(opened, given) if given not in (None, STDOUT) else None
    if what is not None:
        args.parser.error(f"{option} {given} is {what} in {opened.named}: write elsewhere")
