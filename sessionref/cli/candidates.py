"""``sessionref candidates``: the sessions a prompt could mention, as a picker would list them."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import unicodedata
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Final

import msgspec

from sessionref import listing
from sessionref.cli.common import (
    OpenStore,
    add_store_arguments,
    note,
    positive_int,
    printable,
    project_directory,
    quoted,
    reporting_errors,
    session_id_argument,
    write_bytes,
    write_text,
)
from sessionref.cli.indexing import IndexingProgress
from sessionref.cli.redaction import add_redact_arguments, redaction_of_args
from sessionref.cli.search import add_index_option, index_roots
from sessionref.codecs.jsjson import exact_json
from sessionref.codecs.uri import label_text
from sessionref.index import SessionIndex, is_indexed_store
from sessionref.log.protocol import Store, harness_of
from sessionref.log.records import SessionHeader
from sessionref.rules import DEFAULT_CANDIDATE_LIMIT
from sessionref.types import Candidate, MentionCandidate, Target

if TYPE_CHECKING:  # the redact package is imported when an option asks for it
    from sessionref.redact import Redaction

DESCRIPTION = """\
List the sessions a prompt could mention, as a mention picker would.

Order: sessions of the project given by --cwd (by default the current directory) first,
then sessions without a cwd, then those of other projects; within each group newest first
(equal times by id). --cwd is compared with each session's recorded cwd as text, made
absolute and normalized first (no trailing slash, symlinks kept). --query
keeps the sessions whose id, cwd or title contains it (case-insensitive), in that order.
Labels are titles (the id when a session has none); a title that is not a string (a log may
hold any JSON value there) is shown as its JSON text (--json gives it as it is). --json gives
each session's harness (dsh, claude-code, codex) too. The candidates of each store come
from its index (built on first use; --no-index reads the store instead). --redact shows
labels with their secrets redacted (a Claude Code or Codex title is often the first prompt),
and --query then looks in the labels as shown.
"""
EPILOG = """\
examples:
  sessionref candidates --root ~/.dsh/sessions --cwd ~/src/app
  sessionref candidates --root ~/.dsh/sessions --query auth --limit 5 --json
  sessionref candidates --root ~/.dsh/sessions --root ~/.claude --root ~/.codex
"""
COLUMNS = ("CREATED (UTC)", "ID", "CWD", "LABEL")
_GREGORIAN_CYCLE_MS: Final = 146_097 * 86_400_000
"""400 years of the Gregorian calendar in ms, after which its dates repeat."""
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=timezone.utc)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``sessionref candidates``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    add_store_arguments(parser)
    parser.add_argument(
        "--cwd",
        type=project_directory,
        metavar="DIR",
        help="the project the prompt is written in: listed first (default: the current directory)",
    )
    parser.add_argument(
        "--query", metavar="Q", default="", help="keep sessions whose id, cwd or title has Q"
    )
    parser.add_argument(
        "--limit",
        type=positive_int,
        default=DEFAULT_CANDIDATE_LIMIT,
        metavar="N",
        help="list at most N sessions",
    )
    parser.add_argument(
        "--target", metavar="ID", help="the session the prompt is written in (not listed)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print a JSON array, each with its mention"
    )
    add_index_option(parser)
    add_redact_arguments(parser, "in the labels it lists")


def display_width(text: str) -> int:
    """How many terminal columns ``text`` takes: wide and fullwidth characters take two.

    >>> display_width("abc"), display_width("中文"), display_width("ｱ")
    (3, 4, 1)
    """
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def padded(text: str, width: int) -> str:
    """``text`` and spaces up to ``width`` columns.

    >>> padded("中", 4) + "|"
    '中  |'
    """
    return text + " " * (width - display_width(text))


def with_mention(header: SessionHeader, label: Any) -> MentionCandidate:
    """:func:`sessionref.listing.mention_candidate`, with a label that is not a string written
    as its JSON text in the mention (:func:`label_text`; the package has no mention for it)
    and kept as it is in the candidate.

    >>> found = with_mention(SessionHeader("s", 0), 7)
    >>> found.label, found.mention
    (7, '@[7](dsh-session:InMi)')
    """
    found = listing.mention_candidate(header, label_text(label))
    return msgspec.structs.replace(found, label=label)


def created_minute(milliseconds: float) -> str:
    """A session's creation time (ms since 1970) in UTC to the minute, as the table and an
    MCP resource's description show it. A log may say any safe integer, past the year 9999
    where Python's dates end: the calendar repeats every 400 years, so the time is found in
    the cycle it falls in and its year counted on.

    >>> created_minute(1_764_513_900_000), created_minute(2**53 - 1)
    ('2025-11-30 14:45', '287396-10-12 08:59')
    """
    cycles, within = divmod(milliseconds, _GREGORIAN_CYCLE_MS)
    moment = _EPOCH + timedelta(milliseconds=within)
    return f"{moment.year + 400 * int(cycles):04d}-{moment:%m-%d %H:%M}"


def table(candidates: Sequence[Candidate]) -> str:
    """Candidates as aligned columns under a header line.

    >>> found = [Candidate(session_id="s-1", label="Fix CI", cwd="/w", created_at=0)]
    >>> print(table(found), end="")
    CREATED (UTC)     ID   CWD  LABEL
    1970-01-01 00:00  s-1  /w   Fix CI
    """
    rows = [COLUMNS] + [
        (
            created_minute(c.created_at),
            printable(c.session_id),
            printable("-" if c.cwd is None else label_text(c.cwd)),
            printable(label_text(c.label)),
        )
        for c in candidates
    ]
    widths = [max(display_width(row[i]) for row in rows) for i in range(len(COLUMNS))]
    widths[-1] = 0  # the last column is not padded
    return "".join(
        "  ".join(padded(cell, width) for cell, width in zip(row, widths, strict=True)) + "\n"
        for row in rows
    )


class HarnessCandidate(MentionCandidate, frozen=True, kw_only=True):
    """A candidate as ``--json`` gives it: with the harness its session comes from."""

    harness: str


def harness_candidates(
    store: Store, found: Sequence[tuple[SessionHeader, Any]]
) -> list[HarnessCandidate]:
    """The candidates ``found`` in ``store`` as ``--json`` gives them: each with its mention
    (:func:`with_mention`) and the harness its session comes from.

    >>> from sessionref.log.store import MemoryStore
    >>> [row.harness for row in harness_candidates(MemoryStore([]), [(SessionHeader("s", 0), 7)])]
    ['dsh']
    """
    return [
        HarnessCandidate(
            **msgspec.structs.asdict(with_mention(header, label)),
            harness=harness_of(store, header.id),
        )
        for header, label in found
    ]


def opened_stores(
    args: argparse.Namespace, progress: contextlib.ExitStack, redaction: Redaction | None = None
) -> OpenStore:
    """The stores the options name, each behind its index (unless ``--no-index``), whose
    first build ``progress`` shows until it is closed. Every index but the first is statted
    by a child process (:meth:`SessionIndex.look_ahead`) while this one refreshes
    the others: a warm command is mostly those stats, and a machine has two cores or more.
    Closing the stores closes their indexes; ``redaction`` as :class:`OpenStore` takes it."""
    indexes: list[SessionIndex] = []

    def indexed(store: Store) -> Store:
        if not is_indexed_store(store):
            return store
        shown = progress.enter_context(IndexingProgress(str(store.root), sys.stderr))
        index = SessionIndex(store, args.index, once=True, progress=shown)
        shown.follow(index)
        if indexes:
            index.look_ahead()
        indexes.append(index)
        return index

    lister = None if args.no_index else indexed
    return OpenStore.of(args, lister, roots=index_roots(args), redaction=redaction)


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """List the sessions a prompt could mention."""
    target_id = session_id_argument(args.target) if args.target else f"cli-{os.urandom(16).hex()}"
    redaction = redaction_of_args(args)
    with contextlib.ExitStack() as indexes:
        with contextlib.ExitStack() as progress:  # the bars end before anything is printed
            opened = indexes.enter_context(opened_stores(args, progress, redaction))
        cwd = args.cwd if args.cwd is not None else project_directory(os.getcwd())
        target = Target(target_id, cwd)
        listed = listing.shown_candidates(opened.listed, target, args.query, args.limit, redaction)
        found = [with_mention(header, label) for header, label in listed]
        if args.json:
            write_bytes(exact_json(harness_candidates(opened.listed, listed)) + b"\n")
        elif found:
            write_text(table(found))
    if not found:
        note(f"(no sessions match {quoted(args.query)})" if args.query else "(no sessions)")
    if not args.verbose:
        opened.report_problems()
    return 0
