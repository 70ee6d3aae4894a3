"""Refreshing the index of a DSH store by listing it again: the header lines from the index's
cache, every log that changed read again (a build from nothing: the walk's logs, read by
children while this process lists)."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Mapping

import sessionref.index.tables as tables
from sessionref.index.parallel import early_reads, kept_reads, log_paths, read_sessions
from sessionref.index.refresh import (
    CachedHeaderStore,
    Progress,
    RefreshReport,
    encode_header,
    limits_of,
    read_session,
    revision_or_none,
    stale_sessions,
)
from sessionref.index.walk import Tree
from sessionref.log.records import SessionHeader
from sessionref.log.store import DirectoryStore, StoreProblem

Relisted = tuple[list[SessionHeader], list[StoreProblem], CachedHeaderStore, RefreshReport]
"""The headers listed, the problems passed over, the store that listed them (which reads
each session where it placed it) and what the refresh did."""


def relist(
    db: sqlite3.Connection,
    store: DirectoryStore,
    walked: tuple[Tree, int],
    workers: int,
    write: tuple[int, Progress | None],
) -> Relisted:
    """List ``store`` again and bring the index to what it lists: ``walked`` is the tree the
    refresh walked and the time (ns) after which a file is racy; ``workers``, how many
    processes read logs; ``write``, how many sessions to write at once and whom to tell."""
    tree, racy_after = walked
    known = tables.header_cache(db)
    scanner = CachedHeaderStore(store.root, limits_of(store), known, racy_after)
    indexed = tables.indexed_revisions(db)
    paths = [] if indexed else log_paths(store.root, tree.entries)
    with early_reads(scanner, paths, workers) as early:
        headers = scanner.headers()
        expected = {
            h.id: (str(path), revision_or_none(path, racy_after))
            for h in headers
            for path in (scanner.path_of(h.id),)
        }
        stale = stale_sessions(
            ((key, path, revision) for key, (path, revision) in expected.items()), indexed
        )
        conflicts = {h.id: c for h in headers if (c := scanner.lookup_failure(h.id)) is not None}
        kept = {key: c for key, c in tables.stored_conflicts(db).items() if key in expected}
        stale, unread = turned(stale, conflicts, kept)
        listing = [(header, encode_header(header)) for header in headers]
        read = (
            read_sessions(scanner, stale, workers)
            if early is None
            else kept_reads(early, expected, stale, scanner)
        )
        failed = ((session_id, read_session(scanner, session_id)) for session_id in unread)
        reads = itertools.chain(failed, read)
        tables.write_as_read(db, listing, reads, write[0], (len(stale) + len(unread), write[1]))
    problems = scanner.problems()
    seen = (listing, problems, scanner.seen, conflicts)
    removed = tables.finish(db, seen, expected, scanner.learned, tree)
    return headers, problems, scanner, RefreshReport(len(headers), len(stale + unread), removed)


def turned(
    stale: list[str], conflicts: Mapping[str, str], kept: Mapping[str, str]
) -> tuple[list[str], list[str]]:
    """The ``stale`` sessions to read (in other processes too), and those to read here: the
    sessions whose read the harness's lookup fails (``conflicts``: they fail at once, and a
    read elsewhere would not know it), and every session served whose conflict is not the one
    the index kept (``kept``), whatever the revision of its log.

    >>> turned(["a", "b"], {"b": "dup", "c": "dup"}, {"d": "dup"})
    (['a'], ['b', 'c', 'd'])
    """
    keys = sorted(conflicts.keys() | kept.keys())
    changed = [key for key in keys if conflicts.get(key) != kept.get(key) and key not in stale]
    unread = [key for key in stale if key in conflicts] + changed
    return [key for key in stale if key not in conflicts], unread
