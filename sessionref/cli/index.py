"""``sessionref index``: build or bring up to date the index of each store, explicitly; say
what an index holds (``--stats``); drop those of stores that are gone (``--prune``)."""

from __future__ import annotations

import argparse
import sqlite3
import sys

from sessionref.cli.common import (
    add_store_arguments,
    config_error,
    counted,
    note_passed_over,
    positive_int,
    reporting_errors,
    write_text,
)
from sessionref.cli.progress import progress_bar
from sessionref.cli.search import add_index_option, indexed_stores, passed_over_by
from sessionref.controls import one_line
from sessionref.index import IndexedStore, RefreshReport, SessionIndex
from sessionref.index.upkeep import IndexStats, database_size, index_stats, prune_indexes
from sessionref.log.discovery import StoreProblem

DESCRIPTION = """\
Build the index of each store, or bring it up to date: only logs added or changed since the
last run are read. Other commands (candidates, search) do the same implicitly; this one
shows a progress bar on a terminal and can read in several processes (DSH stores; another
harness's sessions are read in this one). Each root has its own index, whatever its harness.

The index lives in --index PATH, else $SESSIONREF_INDEX, else the user cache directory (one
database per store root; a PATH that names a file, not a directory, serves one root only).
It holds the conversation text of every session: keep it as private as the store. Deleting
it is always safe; it is rebuilt on the next use.

--stats prints, for each store, where its index is, how many sessions it holds, its size,
when a refresh last changed it and the read limits it was built under (--max-log-bytes,
--max-line-bytes: other limits rebuild it), nothing refreshed; or why it cannot be read.
It exits 1 when an index could not be saved (its warning says why).
--prune deletes every index database (in the --index folder, else the user cache) whose
store root no longer exists.
"""
EPILOG = """\
examples:
  sessionref index --root ~/.dsh/sessions --workers 2
  sessionref index --stats
  sessionref index --prune
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``sessionref index``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    add_store_arguments(parser)
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        metavar="N",
        help="read changed logs in N processes (at most 2 per CPU)",
    )
    upkeep = parser.add_mutually_exclusive_group()
    upkeep.add_argument(
        "--stats", action="store_true", help="say what each store's index holds (no refresh)"
    )
    upkeep.add_argument(
        "--prune", action="store_true", help="delete the indexes of stores that are gone"
    )
    add_index_option(parser, optional=False)


def summary(report: RefreshReport, index: SessionIndex) -> str:
    """What a refresh did and where the index is: its path and size (once it is closed), or
    that it was not written (unusable); or, for one that cannot be written where it is, that
    a copy of it in memory was brought up to date and the file left as it was. Nothing was
    saved in either case, and the warning said why.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from sessionref.log.store import DirectoryStore
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     with SessionIndex(DirectoryStore(folder), Path(folder, "i.sqlite")) as index:
    ...         report = index.refresh()
    ...     print(summary(report, index).replace(folder, "F"))
    0 sessions indexed (0 logs read, 0 removed) in F/i.sqlite, 0.2 MB
    """
    sessions = counted(report.sessions, "session")
    done = f"({counted(report.read, 'log')} read, {report.removed} removed)"
    if index.copied:
        return (
            f"{sessions} indexed {done} in a copy in memory, none saved: {index.path} "
            "cannot be written where it is and was left as it was"
        )
    if index.bypassed:
        return f"{sessions} read {done}, none saved: {index.path} was not written"
    megabytes = database_size(index.path) / 1e6
    return f"{sessions} indexed {done} in {index.path}, {megabytes:.1f} MB"


def stats_line(stats: IndexStats) -> str:
    """What ``--stats`` says of one store's index.

    >>> from datetime import datetime
    >>> from pathlib import Path
    >>> print(stats_line(IndexStats(Path("/i.sqlite"), "/r", None, None, None)))
    /r: no index yet (it would be /i.sqlite)
    >>> print(stats_line(IndexStats(Path("/i.sqlite"), "/r", None, None, None, "is damaged")))
    /r: /i.sqlite is damaged
    >>> when = datetime(2025, 6, 1)
    >>> print(stats_line(IndexStats(Path("/i.sqlite"), "/r", 1, 300_000, when)))
    /r: 1 session in /i.sqlite, 0.3 MB, last updated 2025-06-01 00:00:00 UTC
    >>> print(stats_line(IndexStats(Path("/i.sqlite"), "/r", 2, 0, when, limits=(900, 90))))
    ... # doctest: +NORMALIZE_WHITESPACE
    /r: 2 sessions in /i.sqlite, 0.0 MB, last updated 2025-06-01 00:00:00 UTC,
    read limits --max-log-bytes 900 --max-line-bytes 90
    """
    if stats.unusable is not None:
        return f"{stats.root}: {stats.path} {stats.unusable}"
    if stats.sessions is None or stats.size is None or stats.updated is None:
        return f"{stats.root}: no index yet (it would be {stats.path})"
    line = (
        f"{stats.root}: {counted(stats.sessions, 'session')} in {stats.path}, "
        f"{stats.size / 1e6:.1f} MB, last updated {stats.updated:%Y-%m-%d %H:%M:%S} UTC"
    )
    if stats.limits is None:
        return line
    limits = f"--max-log-bytes {stats.limits[0]} --max-line-bytes {stats.limits[1]}"
    return f"{line}, read limits {limits}"


def refreshed(
    store: IndexedStore, args: argparse.Namespace
) -> tuple[str, list[StoreProblem], bool]:
    """Refresh the index of ``store`` (a bar on a terminal): the summary line, the logs
    passed over, and whether the index was saved (not when it could not be used)."""
    with SessionIndex(store, args.index, workers=args.workers) as index:
        with progress_bar(0, sys.stderr, unit="log") as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            report = index.refresh(progress)
        passed_over = passed_over_by(index)
    # closed first (its write-ahead log folded in): the size said is the one --stats says
    return summary(report, index), passed_over, not index.bypassed


def pruned(args: argparse.Namespace) -> str:
    """Delete the indexes of stores that are gone: one line for each (its paths as
    :func:`~sessionref.controls.one_line` writes them), and a count."""
    gone = prune_indexes(args.index)
    lines = [one_line(f"removed {path} (its store {root} is gone)") + "\n" for path, root in gone]
    return "".join(lines) + f"{counted(len(gone), 'index', 'indexes')} pruned\n"


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Build or refresh the index of each store (exit 1 if one could not be saved, as its
    building is all the command is for); or ``--stats``; or ``--prune``."""
    if args.prune:
        write_text(pruned(args))
        return 0
    passed_over: list[StoreProblem] = []
    unsaved = 0
    for store in indexed_stores(args):
        if args.stats:
            try:
                line = stats_line(index_stats(store.root, args.index))
            except sqlite3.Error as exc:  # locked by another process past the busy timeout
                raise config_error(f"{store.root}'s index cannot be read: {exc}") from None
        else:
            line, problems, saved = refreshed(store, args)
            passed_over.extend(problems)
            unsaved += not saved
        write_text(one_line(line) + "\n")  # a root's name may hold a line feed, an override
    note_passed_over(passed_over, verbose=args.verbose)
    return 1 if unsaved else 0
