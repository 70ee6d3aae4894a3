"""``sessionref export``: a session as a person reads it, as Markdown, HTML or JSON."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Final, TypeVar

from sessionref.cli.common import (
    OpenStore,
    add_session_arguments,
    note,
    output_path,
    reporting_errors,
    session_id_argument,
)
from sessionref.cli.failures import read_failure
from sessionref.cli.output_file import write_pieces
from sessionref.cli.redaction import add_redact_arguments, kinds_text, redaction_of_args
from sessionref.cli.store_logs import refuse_a_log
from sessionref.codecs.uri import one_line_label
from sessionref.errors import SessionLogError, read_failed
from sessionref.transcript import Transcript
from sessionref.views.entries import ViewOptions

if TYPE_CHECKING:  # the redact package is imported when an option asks for it
    from sessionref.redact import Redaction

DESCRIPTION = """\
Write SESSION as a person reads it: the user's and the assistant's turns in order with their
times, compaction checkpoints marked, tool calls collapsed by name, for every harness
sessionref reads.

  md    Markdown that renders as written (session text cannot become Markdown structure;
        fenced code stays code)
  html  one self-contained page: inline CSS, no script, nothing loaded from anywhere,
        light and dark, readable on a phone and in print
  json  the transcript object with the entries shown

--out writes the file whole or not at all (never half of it, even on Ctrl-C), keeping its
permission bits; a symbolic link is followed to the file it names, a FIFO or a device is
written into as the page comes.
"""
EPILOG = """\
examples:
  sessionref export --root ~/.dsh/sessions 7f3c1e2a-auth-refactor --format md
  sessionref export --root ~/.dsh/sessions 7f3c1e2a-auth-refactor --format html --out auth.html
  sessionref export --root DIR SESSION --format json --tools --reasoning
"""
FORMATS: Final = ("md", "html", "json")
T = TypeVar("T")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``sessionref export``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    add_session_arguments(parser)
    parser.add_argument("--format", choices=FORMATS, default="md", help="what to write")
    parser.add_argument(
        "--out", type=output_path, metavar="FILE", help="write to FILE instead of stdout"
    )
    parser.add_argument("--tools", action="store_true", help="show tool calls' output too")
    parser.add_argument(
        "--reasoning", action="store_true", help="show the model's reasoning (thinking) too"
    )
    add_redact_arguments(parser, "in what it shows")


def read_session(
    opened: OpenStore,
    session_id: str,
    read: Callable[[str], T],
    redaction: Redaction | None = None,
) -> T:
    """``read(session_id)`` on the opened store, a failure worded for the command line (with
    ``redaction``, the log text its message may quote redacted: :meth:`Redaction.failure`,
    and raised outside the handler of what failed, which it does not keep as its context)."""
    failed: BaseException
    try:
        return read(session_id)
    except (SessionLogError, OSError, RecursionError) as exc:
        failed = exc if redaction is None else redaction.failure(exc)
    raise read_failure(read_failed(failed), session_id, opened) from None


def pieces(transcript: Transcript, form: str, options: ViewOptions) -> Iterable[str | bytes]:
    """The pieces of ``transcript`` in format ``form`` (a view module is loaded only here)."""
    if form == "html":
        from sessionref.views.html import export_html_chunks

        return export_html_chunks(transcript, options)
    if form == "json":
        from sessionref.views.transcript_json import json_chunks

        return json_chunks(transcript, options)
    from sessionref.views.markdown import markdown_chunks

    return markdown_chunks(transcript, options)


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Export one session."""
    session = session_id_argument(args.session)
    redaction = redaction_of_args(args)
    opened = OpenStore.of(args, redaction=redaction)
    refuse_a_log(args, opened, "--out")
    transcript = read_session(opened, session, opened.listed.transcript, redaction)
    if redaction is not None:  # before any view sees it
        transcript, counts = redaction.transcript(transcript)
        if args.verbose:
            note(f"note: {one_line_label(session)}: redacted {kinds_text(counts)}")
    options = ViewOptions(tools=args.tools, reasoning=args.reasoning)
    write_pieces(pieces(transcript, args.format, options), args.out, "--out")
    if not args.verbose:
        opened.report_problems()
    return 0
