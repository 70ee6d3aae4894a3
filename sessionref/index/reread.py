"""Refreshing the index of a DSH store when only log files changed and their header lines did
not: the listing stands, so only those logs are read again and only their rows rewritten (the
store of another harness: :func:`sessionref.index.harness.reread_files`)."""

from __future__ import annotations

import os
import sqlite3

import sessionref.index.tables as tables
from sessionref.index.refresh import (
    CachedHeaderStore,
    RefreshReport,
    decode_header,
    limits_of,
    read_session,
    same_line,
)
from sessionref.index.walk import RACY, Tree
from sessionref.log.store import DirectoryStore


def reread_logs(
    db: sqlite3.Connection,
    store: DirectoryStore,
    tree: Tree,
    stamped: tuple[str, dict[bytes, str]],
    racy_after: int,
) -> RefreshReport | None:
    """Read again the logs of ``store`` that changed between the walk the index stamped
    (``stamped``: its stamp and entries) and ``tree``, which has the same entries, touching
    only their rows. ``None`` when the store must list again: a header line changed, or
    another refresh changed the index meanwhile."""
    stamp, before = stamped
    changed = [key for key, state in tree.entries.items() if before[key] != state]
    root = os.fsencode(str(store.root))
    paths = {os.path.join(root, key): key for key in changed}
    known = tables.header_entries(db, list(paths))
    placed = tables.sessions_at(db, [os.fsdecode(path) for path in paths])
    where = {session_id: path for path, (session_id, _, _) in placed.items()}
    conflicts = tables.stored_conflicts(db)  # the listing stands, and so does its lookup
    scanner = CachedHeaderStore(store.root, limits_of(store), known, racy_after, where, conflicts)
    for path in paths:
        if path not in known or not same_line(scanner, os.fsdecode(path), known[path]):
            return None
    rows = [
        (decode_header(header_json), position, header_json, read_session(scanner, session_id))
        for session_id, position, header_json in placed.values()
    ]
    entries = {key: tree.remembered_state(key) for key in changed}
    for *_, data in rows:
        key = paths.get(os.fsencode(data.path))
        if key is not None and not tree.read_at_walk(key, data.revision):
            entries[key] = RACY  # read racily, changed since the walk or failed: again
    again = any(entries[key] == RACY for key in changed)
    stamps = (stamp, f"{tree.digest}~{RACY}" if again else tree.stamp)
    if not tables.replace_logs(db, rows, stamps, before, entries, scanner.learned):
        return None
    return RefreshReport(tables.session_count(db), len(rows), 0)
