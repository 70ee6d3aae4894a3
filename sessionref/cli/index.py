"""``sessionref index``: build or bring up to date the index of a store, explicitly."""

from __future__ import annotations

import argparse
import sys

from sessionref.cli.common import positive_int, reporting_errors
from sessionref.cli.progress import progress_bar
from sessionref.cli.search import add_index_option, checked_root, default_root
from sessionref.index import RefreshReport, SessionIndex
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
        "--workers",
        type=positive_int,
        default=1,
        metavar="N",
        help="read changed logs in N processes",
    )
    add_index_option(parser)


def summary(report: RefreshReport, index: SessionIndex) -> str:
    """What a refresh did and where the index is: its path and size, or that it could not be
    used (then nothing was saved; the warning said why).

    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     index = SessionIndex(DirectoryStore(folder), Path(folder, "i.sqlite"))
    ...     print(summary(index.refresh(), index).replace(folder, "F"))
    0 sessions indexed (0 logs read, 0 removed) in F/i.sqlite, 0.3 MB
    """
    done = f"({report.read} logs read, {report.removed} removed)"
    if index.bypassed:
        return f"{report.sessions} sessions read {done}, none saved: {index.path} was not used"
    return f"{report.sessions} sessions indexed {done} in {index.path}, {index.size() / 1e6:.1f} MB"


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Build or refresh the index of ``--root``."""
    index = SessionIndex(DirectoryStore(checked_root(args.root)), args.index, workers=args.workers)
    with progress_bar(0, sys.stderr, unit="log") as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        report = index.refresh(progress)
    sys.stdout.write(summary(report, index) + "\n")
    index.close()
    return 0
