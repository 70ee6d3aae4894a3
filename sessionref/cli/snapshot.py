"""``sessionref snapshot``: the context message a prompt mentioning some sessions would get."""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sessionref.cli.common import (
    LABEL_SOURCES,
    OpenStore,
    add_store_arguments,
    counted,
    note,
    positive_int,
    quoted,
    reporting_errors,
    session_id_argument,
    write_bytes,
    write_text,
)
from sessionref.cli.failures import read_failure
from sessionref.cli.redaction import add_redact_arguments, redaction_lines, redaction_of_args
from sessionref.codecs.jsjson import exact_json
from sessionref.codecs.uri import Reference, one_line_label
from sessionref.errors import BUDGET_EXCEEDED, READ_FAILED, SELF_REFERENCE, SessionReferenceError
from sessionref.resolver import (
    DEFAULT_MAX_REFERENCE_BYTES,
    MAX_REFERENCES_LIMIT,
    CancelToken,
    FittedSource,
    SessionReferenceResolver,
    distinct_references,
)
from sessionref.types import ContextMessage, Target

if TYPE_CHECKING:
    from sessionref.redact import Redaction

DESCRIPTION = f"""\
Print the prompt a model gets for a message that mentions SESSION (up to {MAX_REFERENCES_LIMIT}):
each session's conversation, cut to --max-bytes, in one tag-safe <referenced-sessions> block.
Sessions are labelled by their id unless --label or --label-from title says otherwise.
"""
EPILOG = """\
examples:
  sessionref snapshot --root ~/.dsh/sessions 7f3c1e2a-auth-refactor
  sessionref snapshot --root ~/.dsh/sessions --max-bytes 8192 --json a-session another
  sessionref snapshot --root DIR --label "the auth work" 'dsh-session:Ijdm...'
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``sessionref snapshot``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    parser.add_argument(
        "sessions",
        nargs="+",
        metavar="SESSION",
        help="a session id, or its dsh-session: URI (for ids a shell cannot pass)",
    )
    add_store_arguments(parser, "(and, on stderr, what each snapshot cut or redacted)")
    add_budget_argument(parser)
    add_label_arguments(parser)
    parser.add_argument(
        "--target", metavar="ID", help="the session the prompt is written in (never referenced)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the whole context message as JSON"
    )
    add_redact_arguments(parser)


def add_budget_argument(parser: argparse.ArgumentParser) -> None:
    """``--max-bytes``: the budget of each session's snapshot."""
    parser.add_argument(
        "--max-bytes",
        type=positive_int,
        default=DEFAULT_MAX_REFERENCE_BYTES,
        metavar="N",
        help="the most bytes of JSON each session's snapshot may take",
    )


def add_label_arguments(parser: argparse.ArgumentParser, *, explicit: bool = True) -> None:
    """``--label-from`` (how sessions are labelled) and, with ``explicit``, ``--label``."""
    parser.add_argument(
        "--label-from",
        choices=LABEL_SOURCES,
        default="id",
        help="label each session by its id, or by its latest title (its id when it has none)",
    )
    if explicit:
        parser.add_argument(
            "--label",
            action="append",
            metavar="TEXT",
            help="the label of each SESSION, in order: once per session, or not at all "
            "(an empty label is kept as given)",
        )


def references_of(args: argparse.Namespace) -> list[Reference]:
    """The sessions named on the command line, each labelled by ``--label`` or its id."""
    ids = [session_id_argument(value) for value in args.sessions]
    labels = args.label or ids
    if len(labels) != len(ids):
        given = f"{counted(len(labels), 'time')} for {counted(len(ids), 'session')}"
        args.parser.error(f"--label is given {given}")
    return [Reference(session_id, label) for session_id, label in zip(ids, labels, strict=True)]


def checked_references(target: Target, references: list[Reference]) -> list[Reference]:
    """The distinct sessions to snapshot; too many, or the target among them, is an error
    worded for the command line.

    >>> checked_references(Target("a"), [Reference("a", "a")])
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: --target "a" is also given as a SESSION
    """
    try:
        return distinct_references(target, references, MAX_REFERENCES_LIMIT)
    except SessionReferenceError as exc:
        if exc.code == SELF_REFERENCE:
            message = f"--target {quoted(target.id)} is also given as a SESSION"
        else:
            count = len({reference.session_id for reference in references})
            message = f"{count} sessions given; at most {MAX_REFERENCES_LIMIT} at once"
        raise SessionReferenceError(message, exc.code) from None


def context_for(
    opened: OpenStore,
    distinct: Sequence[Reference],
    *,
    max_bytes: int,
    label_from_title: bool,
    cancel: CancelToken | None = None,
    redaction: Redaction | None = None,
    budget: str = "--max-bytes",
) -> ContextMessage | None:
    """The context message for references checked by ``distinct_references``, with errors
    worded for the command line; ``budget`` is what a budget failure calls the option that
    set ``max_bytes`` (an MCP tool names its own argument).

    Sessions are read one by one in order, from the store as it was listed (an index reads
    each log where its listing found it), so a read failure names its session and file; as in
    the library, every read failure comes before any budget failure. Setting ``cancel`` stops
    the call with ``SESSION_REFERENCE_CANCELLED``, even while a read hangs.
    """
    if not distinct:
        return None
    resolver = SessionReferenceResolver(
        opened.listed, max_reference_bytes=max_bytes, redact=redaction or False
    )
    sources: list[FittedSource] = []
    for reference in distinct:
        try:
            sources += resolver.read_sources([reference], cancel, label_from_title=label_from_title)
        except SessionReferenceError as exc:
            if exc.code != READ_FAILED:
                raise
            raise read_failure(exc, reference.session_id, opened) from None
    for reference, source in zip(distinct, sources, strict=True):
        if isinstance(source, SessionReferenceError) and source.code == BUDGET_EXCEEDED:
            raise SessionReferenceError(
                f"{budget} {max_bytes} is too small for session "
                f"{quoted(reference.session_id)}: even cut short, its snapshot needs more",
                BUDGET_EXCEEDED,
            )
    return resolver.render_sources(sources, cancel)


def cut_lines(context: ContextMessage, *, only_cut: bool = False) -> list[str]:
    """What each snapshot kept of its session, one line per session (``only_cut``: only
    those cut short).

    >>> from sessionref.resolver import SessionReferenceResolver
    >>> from sessionref.log.store import MemoryStore
    >>> head = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    >>> store = MemoryStore([{"header": head, "events": []}])
    >>> context = SessionReferenceResolver(store).snapshot(Target("t"), [Reference("s", "S")])
    >>> cut_lines(context), cut_lines(context, only_cut=True)
    (['S: kept 0 of 0 messages, omitted 0 bytes'], [])
    """
    return [
        f"{one_line_label(stats.label)}: kept {stats.retained_messages} of "
        f"{stats.original_messages} messages, omitted {stats.omitted_bytes} bytes"
        f"{', compacted' if stats.compacted else ''}"
        for stats in context.source.references
        if not only_cut or stats.omitted_bytes or stats.retained_messages < stats.original_messages
    ]


def print_context(context: ContextMessage | None, as_json: bool) -> None:
    """The prompt, or with ``as_json`` the whole message, on stdout."""
    if context is not None and as_json:
        write_bytes(exact_json(context) + b"\n")
    elif context is not None:
        write_text(context.prompt + "\n")


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Print the snapshot of the named sessions."""
    target_id = session_id_argument(args.target) if args.target else f"cli-{uuid.uuid4()}"
    references = checked_references(Target(target_id), references_of(args))
    redaction = redaction_of_args(args)
    opened = OpenStore.of(args, redaction=redaction)
    context = context_for(
        opened,
        references,
        max_bytes=args.max_bytes,
        label_from_title=not args.label and args.label_from == "title",
        redaction=redaction,
    )
    print_context(context, args.json)
    if args.verbose and context is not None:
        for line in cut_lines(context, only_cut=True) + redaction_lines(context):
            note(f"note: {line}")
    if not args.verbose:
        opened.report_problems()
    return 0
