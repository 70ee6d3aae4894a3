"""``sessionref search``: full-text search over the conversations of a store's sessions."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from sessionref.cli.common import (
    add_store_arguments,
    config_error,
    note,
    note_passed_over,
    positive_int,
    printable,
    project_directory,
    quoted,
    redacted_problems,
    reporting_errors,
    roots_of,
    write_bytes,
    write_text,
)
from sessionref.cli.indexing import IndexingProgress
from sessionref.cli.redaction import add_redact_arguments, redaction_of_args
from sessionref.codecs.jsjson import exact_json
from sessionref.codecs.uri import label_text
from sessionref.index import IndexedStore, SearchHit, SessionIndex, is_indexed_store
from sessionref.index.schema import INDEX_ENV, names_a_file
from sessionref.index.search import DEFAULT_SEARCH_LIMIT, query_words
from sessionref.log.discovery import StoreProblem
from sessionref.roots import Root, open_store

DESCRIPTION = """\
Search what was said in past sessions: the user, assistant and checkpoint texts a snapshot
shows (never tool output, reasoning or injected context). Every word of QUERY must occur
somewhere in a session's conversation (not necessarily in one message), case-insensitively,
as a substring (so parts of words and CJK text match). Sessions rank by relevance (bm25),
ties newest first; each comes with the snippet of the message holding the most words,
matches marked «like this», and the mention to paste into a prompt. The store's index is
brought up to date first (see `sessionref index`), or with --no-index a throwaway one is
built in memory. Every root is searched, of any harness (DSH, Claude Code, Codex); with
several roots, the hits of each store's index are merged by score (each store ranks by its
own word counts).

--json prints an array of {sessionId, label, cwd, createdAt, score, snippet, mention}:
score is the session's bm25 rank, lower is better (negative; 0 for every hit when all
words are shorter than 3 characters, which the trigram index cannot rank). A title that
is not a string (a log may hold any JSON value there) is the label as it is in --json, and
its JSON text on a terminal and in the mention. --redact shows each hit's label with its
secrets redacted and leaves the snippet out (a snippet is a window of a message, which could
cut a secret short of what a detector recognises), and finds a session only by what its
redacted conversation says (a search must not confirm a secret).
"""
EPILOG = """\
examples:
  sessionref search --root ~/.dsh/sessions "token refresh"
  sessionref search --root ~/.dsh/sessions --cwd ~/src/app --limit 5 --json flaky
"""

NO_INDEXED_STORE = "no store among the roots is indexed"


def add_index_option(parser: argparse.ArgumentParser, *, optional: bool = True) -> None:
    """``--index PATH``: where the index database is (or a directory of them); with
    ``optional``, ``--no-index`` too, one or the other."""
    either = parser.add_mutually_exclusive_group() if optional else parser
    either.add_argument(
        "--index",
        metavar="PATH",
        help="the index database (default: $SESSIONREF_INDEX, else the user cache directory)",
    )
    if optional:
        either.add_argument(
            "--no-index",
            action="store_true",
            help="answer from the stores directly: no index is read, built or saved",
        )


def index_roots(args: argparse.Namespace) -> list[Root]:
    """The roots a command reads (:func:`roots_of`), each through its own index: a database
    file named as the index (``--index FILE``, else ``$SESSIONREF_INDEX``) holds the index of
    one root, so with several roots it is an ``INVALID_CONFIG`` error (a directory holds one
    database per root). Under ``--no-index`` no index is used, and none is checked."""
    roots = roots_of(args)
    if len(roots) > 1 and not getattr(args, "no_index", False) and names_a_file(args.index):
        named = f"--index {args.index}" if args.index else f"${INDEX_ENV} {os.environ[INDEX_ENV]}"
        listed = ", ".join(root.named for root in roots)
        raise config_error(
            f"{named}: one database file holds the index of one root, not of {len(roots)} "
            f"({listed}); name a directory instead (it holds one per root), or give one --root"
        )
    return roots


def indexed_stores(args: argparse.Namespace) -> list[IndexedStore]:
    """The store of each root the options name (:func:`index_roots`), as the index reads it."""
    stores = []
    for root in index_roots(args):
        store = open_store(root, max_bytes=args.max_log_bytes, max_line_bytes=args.max_line_bytes)
        assert is_indexed_store(store)
        stores.append(store)
    return stores


@contextmanager
def session_index(
    store: IndexedStore, args: argparse.Namespace, *, once: bool = False
) -> Iterator[SessionIndex]:
    """The index a command reads of ``store`` (``--index``; with ``--no-index``, nothing
    saved), telling on stderr how a build goes (:class:`IndexingProgress`); closed after."""
    with (
        IndexingProgress(str(store.root), sys.stderr) as progress,
        SessionIndex(
            store, args.index, once=once, persist=not args.no_index, progress=progress
        ) as index,
    ):
        progress.follow(index)
        yield index


def passed_over_by(index: SessionIndex) -> list[StoreProblem]:
    """The logs the last refresh of ``index`` passed over: those its listing passed over,
    then those it could not read, whose sessions no search finds."""
    return [*index.problems(), *index.unread()]


def query_argument(value: str) -> str:
    """An argparse type: a query with at least one word (a blank one would match nothing).

    >>> query_argument("token refresh")
    'token refresh'
    >>> query_argument("  ")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: holds no word to find
    """
    if not query_words(value):
        raise argparse.ArgumentTypeError("holds no word to find")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``sessionref search``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    parser.add_argument("query", metavar="QUERY", type=query_argument, help="words to find")
    add_store_arguments(parser)
    parser.add_argument(
        "--limit",
        type=positive_int,
        default=DEFAULT_SEARCH_LIMIT,
        metavar="N",
        help="at most N sessions",
    )
    parser.add_argument(
        "--cwd",
        type=project_directory,
        metavar="DIR",
        help="only sessions of this working directory (made absolute and normalized, as "
        "sessions record it)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON array")
    add_index_option(parser)
    add_redact_arguments(parser, "in the labels it lists, and leave snippets out")


def hit_lines(hit: SearchHit) -> str:
    """A hit as three lines: label and cwd, the snippet, the mention (two lines when there is
    no snippet, as with ``--redact``).

    >>> print(hit_lines(SearchHit("s", "Fix CI", "/w", 0, -1.0, "the «CI» run", "@[Fix CI](x)")))
    Fix CI  (/w)
      the «CI» run
      @[Fix CI](x)
    <BLANKLINE>
    >>> print(hit_lines(SearchHit("s", "Fix CI", None, 0, -1.0, "", "@[Fix CI](x)")))
    Fix CI  (-)
      @[Fix CI](x)
    <BLANKLINE>
    """
    cwd = "-" if hit.cwd is None else label_text(hit.cwd)
    snippet = f"  {printable(hit.snippet)}\n" if hit.snippet else ""
    return (
        f"{printable(label_text(hit.label))}  ({printable(cwd)})\n"
        f"{snippet}  {printable(hit.mention)}\n"
    )


def best_hits(found: list[list[SearchHit]], limit: int) -> list[SearchHit]:
    """The hits of several stores' searches as one list: best score first, ties newest
    first, the first ``limit``.

    >>> def hit(sid, score, at):
    ...     return SearchHit(sid, sid, None, at, score, "", "")
    >>> found = [[hit("a", -2.0, 1)], [hit("b", -3.0, 1), hit("c", -2.0, 5)]]
    >>> [h.session_id for h in best_hits(found, 2)]
    ['b', 'c']
    """
    hits = [hit for hits in found for hit in hits]
    return sorted(hits, key=lambda hit: (hit.score, -hit.created_at))[:limit]


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Print the sessions whose conversation matches QUERY, best first."""
    redaction = redaction_of_args(args)
    with ExitStack() as opened:
        stores = indexed_stores(args)
        indexes = [opened.enter_context(session_index(store, args)) for store in stores]
        for index in indexes[1:]:  # statted by children while the first is refreshed
            index.look_ahead()
        found = [index.search(args.query, args.limit, args.cwd, redaction) for index in indexes]
        passed_over = [problem for index in indexes for problem in passed_over_by(index)]
    hits = best_hits(found, args.limit)
    if args.json:
        write_bytes(exact_json(hits) + b"\n")
    else:
        write_text("\n".join(hit_lines(hit) for hit in hits))
    if not hits:  # --cwd keeps one project's sessions: others may match
        within = "" if args.cwd is None else f" of {args.cwd}"
        note(f"(no sessions{within} match {quoted(args.query)})")
    note_passed_over(redacted_problems(passed_over, redaction), verbose=args.verbose)
    return 0
