"""Refreshing the index of a DSH store by listing it again: the header lines from the index's
cache, every log that changed read again (a build from nothing: the walk's logs, read by
children while this process lists)."""

from __future__ import annotations

import sqlite3

import sessionref.index.tables as tables
from sessionref.index.parallel import early_reads, kept_reads, log_paths, read_sessions
from sessionref.index.refresh import (
    CachedHeaderStore,
    Progress,
    RefreshReport,
    encode_header,
    limits_of,
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
        listing = [(header, encode_header(header)) for header in headers]
        read = (
            read_sessions(scanner, stale, workers)
            if early is None
            else kept_reads(early, expected, stale, scanner)
        )
        tables.write_as_read(db, listing, read, write[0], (len(stale), write[1]))
    problems = scanner.problems()
    removed = tables.finish(db, (listing, problems, scanner.seen), expected, scanner.learned, tree)
    return headers, problems, scanner, RefreshReport(len(headers), len(stale), removed)
