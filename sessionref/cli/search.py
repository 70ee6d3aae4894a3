"""``sessionref search``: full-text search over the conversations of a store's sessions."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from sessionref.cli.common import check_root, positive_int, project_directory, reporting_errors
from sessionref.codecs.jsjson import js_json
from sessionref.codecs.uri import label_text
from sessionref.index import SearchHit, SessionIndex
from sessionref.log.store import DirectoryStore

DESCRIPTION = """\
Search what was said in past sessions: the user, assistant and checkpoint texts a snapshot
shows (never tool output, reasoning or injected context). Every word of QUERY must occur
somewhere in a session's conversation (not necessarily in one message), case-insensitively,
as a substring (so parts of words and CJK text match). Sessions rank by relevance (bm25),
ties newest first; each comes with the snippet of the message holding the most words,
matches marked «like this», and the mention to paste into a prompt. The store's index is
brought up to date first (see `sessionref index`).

--json prints an array of {sessionId, label, cwd, createdAt, score, snippet, mention}:
score is the session's bm25 rank, lower is better (negative; 0.0 for every hit when all
words are shorter than 3 characters, which the trigram index cannot rank). A title that
is not a string (a log may hold any JSON value there) is the label as it is in --json, and
its JSON text on a terminal and in the mention.
"""
EPILOG = """\
examples:
  sessionref search --root ~/.dsh/sessions "token refresh"
  sessionref search --root ~/.dsh/sessions --cwd "$PWD" --limit 5 --json flaky
"""


def add_index_option(parser: argparse.ArgumentParser) -> None:
    """``--index PATH``: where the index database is (or a directory of them)."""
    parser.add_argument(
        "--index",
        metavar="PATH",
        help="the index database (default: $SESSIONREF_INDEX, else the user cache directory)",
    )


def default_root() -> str:
    """The store a command reads when ``--root`` is not given: ``~/.dsh/sessions``.

    >>> default_root().endswith("sessions")
    True
    """
    return os.path.expanduser(os.path.join("~", ".dsh", "sessions"))


def checked_root(root: str) -> Path:
    """``--root`` as a path, checked to be a directory (else a one-line error)."""
    path = Path(root).expanduser()
    check_root(path)
    return path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``sessionref search``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    parser.add_argument("query", metavar="QUERY", help="words to find")
    parser.add_argument("--root", metavar="DIR", default=default_root(), help="the DSH store")
    parser.add_argument(
        "--limit", type=positive_int, default=10, metavar="N", help="at most N sessions"
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


def printable(text: str) -> str:
    """``text`` on one line: unprintable characters become spaces.

    >>> printable("a\\tb")
    'a b'
    """
    return "".join(c if c.isprintable() else " " for c in text)


def hit_lines(hit: SearchHit) -> str:
    """A hit as three lines: label and cwd, the snippet, the mention.

    >>> print(hit_lines(SearchHit("s", "Fix CI", "/w", 0, -1.0, "the «CI» run", "@[Fix CI](x)")))
    Fix CI  (/w)
      the «CI» run
      @[Fix CI](x)
    <BLANKLINE>
    """
    cwd = "-" if hit.cwd is None else label_text(hit.cwd)
    return (
        f"{printable(label_text(hit.label))}  ({printable(cwd)})\n"
        f"  {printable(hit.snippet)}\n  {printable(hit.mention)}\n"
    )


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Print the sessions whose conversation matches QUERY, best first."""
    index = SessionIndex(DirectoryStore(checked_root(args.root)), args.index)
    hits = index.search(args.query, args.limit, cwd=args.cwd)
    out = sys.stdout.buffer
    if args.json:
        out.write(js_json(hits) + b"\n")
    else:
        out.write("\n".join(hit_lines(hit) for hit in hits).encode("utf-8", "replace"))
    if not hits:
        sys.stderr.write("(no sessions match)\n")
    index.close()
    return 0
