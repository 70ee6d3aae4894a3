"""``sessionref mcp``: serve the sessions of a store to an MCP client over stdio (docs/mcp.md).

The MCP SDK is the ``mcp`` extra; it is imported only when this command runs.
"""

from __future__ import annotations

import argparse
import os

from sessionref.cli.common import (
    OpenStore,
    add_store_arguments,
    config_error,
    project_directory,
    reporting_errors,
)
from sessionref.cli.process import note
from sessionref.cli.redaction import add_redact_arguments, redaction_of_args
from sessionref.cli.search import add_index_option, index_roots
from sessionref.cli.snapshot import add_budget_argument

DESCRIPTION = """\
Serve the sessions of the roots to an MCP client (Claude Code, Codex, any client of the Model
Context Protocol) over standard input and output, read-only, until the input ends.

Every session is a resource (its dsh-session: URI, named by its title): reading one gives the
prompt `sessionref snapshot --label-from title SESSION` prints, cut to --max-bytes. A template
(sessionref:session/{id}) finds a session by id, completed from part of its title or id, the
sessions of the current directory first. The client is told when sessions are added or change.
With --tools the model may also call list_sessions, search_sessions and reference_sessions
itself. Roots as for every command: DSH stores, Claude Code and Codex homes, served together,
each through its index. Needs the MCP SDK: pip install "sessionref[mcp]". See docs/mcp.md.
"""
EPILOG = """\
examples:
  claude mcp add sessionref -- sessionref mcp --root ~/.dsh/sessions
  sessionref mcp --root ~/.dsh/sessions --tools --max-bytes 16384
  sessionref mcp --root ~/.dsh/sessions --root ~/.claude --root ~/.codex
"""
MISSING_SDK = 'sessionref mcp needs the MCP SDK: pip install "sessionref[mcp]"'
BY_HAND = (
    "sessionref mcp: waiting for an MCP client on standard input: a client starts this "
    "command itself (docs/mcp.md §Set-up); Ctrl-D ends it"
)
"""Said on stderr when the input is a terminal: typed at a prompt, the server would wait
without a word, as if hung; a client, which starts it on a pipe, never sees the line."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``sessionref mcp``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    add_store_arguments(parser)
    add_budget_argument(parser)
    parser.add_argument(
        "--tools",
        action="store_true",
        help="also offer the tools list_sessions, search_sessions and reference_sessions, "
        "which the model calls by itself",
    )
    add_index_option(parser, optional=False)
    add_redact_arguments(parser)


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Serve the roots' sessions until standard input ends."""
    redaction = redaction_of_args(args)
    try:
        from sessionref.mcp.server import serve_stdio
    except ModuleNotFoundError as exc:  # the SDK, or one it needs (anyio first), is missing
        if (exc.name or "sessionref").partition(".")[0] == "sessionref":
            raise
        raise config_error(MISSING_SDK) from None
    from sessionref.mcp.catalog import Catalog, index_at

    lister = index_at(args.index)
    roots = index_roots(args)
    with OpenStore.of(args, lister, live=True, roots=roots, redaction=redaction) as opened:
        if not args.verbose:
            opened.report_problems()
        cwd = project_directory(os.getcwd())
        catalog = Catalog(opened, cwd=cwd, max_bytes=args.max_bytes, redaction=redaction)
        if os.isatty(0):
            note(BY_HAND)
        serve_stdio(catalog, tools=args.tools)
    return 0
