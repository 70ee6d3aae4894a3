"""``sessionref index``: build or bring up to date the index of a store, explicitly."""

from __future__ import annotations

import argparse
import sys

from sessionref.cli.common import reporting_errors
from sessionref.cli.progress import progress_bar
from sessionref.cli.search import add_index_option, checked_root, default_root
from sessionref.index import SessionIndex
from sessionref.log.store import DirectoryStore

DESCRIPTION = """\
Build the index of a store, or bring it up to date: only logs added or changed since the
last run are read. Other commands (candidates, search) do the same implicitly; this one
shows a progress bar on a terminal and can read in several processes.

The index lives in --index PATH, else $SESSIONREF_INDEX, else the user cache directory (one
database per store root). It holds the conversation text of every session: keep it as
private as the store. Deleting it is always safe; it is rebuilt on the next use.
"""
EPILOG = """\
examples:
  sessionref index --root ~/.dsh/sessions --workers 2
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``sessionref index``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    parser.add_argument("--root", metavar="DIR", default=default_root(), help="the DSH store")
    parser.add_argument(
        "--workers", type=int, default=1, metavar="N", help="read changed logs in N processes"
    )
    add_index_option(parser)


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Build or refresh the index of ``--root``."""
    index = SessionIndex(
        DirectoryStore(checked_root(args.root)), args.index, workers=max(1, args.workers)
    )
    with progress_bar(0, sys.stderr, unit="log") as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        report = index.refresh(progress)
    where = "memory (bypassed)" if index.bypassed else str(index.path)
    sys.stdout.write(
        f"{report.sessions} sessions indexed ({report.read} logs read, {report.removed} removed)"
        f" in {where}, {index.size() / 1e6:.1f} MB\n"
    )
    index.close()
    return 0
