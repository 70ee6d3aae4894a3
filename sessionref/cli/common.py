"""What the commands share: option types, the store check, output, errors in command-line terms."""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from sessionref.cli.listed import listed_once
from sessionref.cli.process import flush_output as flush_output
from sessionref.cli.process import note as note
from sessionref.cli.process import note_line as note_line
from sessionref.cli.process import write_bytes as write_bytes
from sessionref.cli.process import write_text as write_text
from sessionref.codecs.jsstring import well_formed
from sessionref.codecs.uri import SCHEME, decode_session_reference_uri
from sessionref.controls import one_line
from sessionref.controls import quoted as quoted
from sessionref.errors import (
    INVALID_CONFIG,
    INVALID_REFERENCE,
    MAX_SAFE_INTEGER,
    SessionLogError,
    SessionReferenceError,
)
from sessionref.log.discovery import named_once
from sessionref.log.layout import encode_session_directory
from sessionref.log.multi import MultiStore
from sessionref.log.protocol import Store
from sessionref.log.records import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    DEFAULT_MAX_LINE_BYTES,
)
from sessionref.log.store import StoreProblem
from sessionref.roots import HARNESSES, ROOT_ENV, Root, check_root, chosen_roots, open_stores

if TYPE_CHECKING:  # the redact package is imported when an option asks for it
    from sessionref.redact import Redaction

LABEL_SOURCES: Final = ("title", "id")
"""How sessions may be labelled: the batch engines' ``LABELS``, without importing them."""
STDOUT: Final = "-"
"""The ``--out`` that means standard output."""


def positive_int(value: str) -> int:
    """An argparse type: a positive integer the library takes (at most 2**53-1), written in
    ASCII digits alone, said in those words when it is not one. ``int()`` would also take
    spaces around it, underscores between digits and the digits of other scripts.

    >>> positive_int("3")
    3
    >>> positive_int("1_000")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '1_000' is not a positive integer
    >>> positive_int("9007199254740992")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '9007199254740992' is too large (at most 9007199254740991)
    """
    if not (value.isascii() and value.isdigit()):
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive integer")
    try:
        number = int(value)
    except ValueError:  # more digits than int() takes
        number = MAX_SAFE_INTEGER + 1
    if number > MAX_SAFE_INTEGER:
        raise argparse.ArgumentTypeError(f"{value!r} is too large (at most {MAX_SAFE_INTEGER})")
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive integer")
    return number


def output_path(value: str) -> str:
    """An argparse type: a file to write, or ``-`` for stdout.

    >>> output_path("out.jsonl"), output_path("-")
    ('out.jsonl', '-')
    >>> output_path("")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '' is not a file name
    """
    if value != STDOUT and Path(value).name in ("", ".", ".."):
        raise argparse.ArgumentTypeError(f"{value!r} is not a file name")
    return value


def project_directory(value: str) -> str:
    """An argparse type: a project directory as sessions record it: absolute, normalized,
    without a trailing slash (``~`` expanded; symlinks are kept, as a shell's ``$PWD`` keeps
    them).

    >>> project_directory("/home/dev/docs-site/"), project_directory("/a/./b/../c")
    ('/home/dev/docs-site', '/a/c')
    """
    return os.path.normpath(os.path.abspath(os.path.expanduser(value)))


def counted(count: int, noun: str, plural: str = "") -> str:
    """``count noun``, the noun in the plural (``plural``, else ``noun`` with an s) unless the
    count is 1.

    >>> counted(1, "session"), counted(0, "log"), counted(2, "index", "indexes")
    ('1 session', '0 logs', '2 indexes')
    """
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def printable(text: str) -> str:
    """``text`` on one line of a table: a lone surrogate is U+FFFD, as the views write it;
    control and other unprintable characters become spaces.

    >>> printable("a\\tb\\nc"), printable("lone \\ud800 end") == "lone \\ufffd end"
    ('a b c', True)
    """
    return "".join(c if c.isprintable() else " " for c in well_formed(text))


def session_id_argument(value: str) -> str:
    """A session named by its id or by its ``dsh-session:`` URI; a text holding the scheme
    after anything else is refused, not looked up as an id (such an id is named by its URI).

    >>> session_id_argument("dsh-session:InMtYmV0YSI"), session_id_argument("plain")
    ('s-beta', 'plain')
    >>> session_id_argument("see dsh-session:InMtYmV0YSI")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: not one URI: "see dsh-session:InMtYmV0YSI"
    """
    if value.startswith(SCHEME):
        return decode_session_reference_uri(value)
    if SCHEME in value:
        raise SessionReferenceError(f"not one URI: {quoted(value)}", INVALID_REFERENCE)
    return value


def config_error(message: str) -> SessionReferenceError:
    """A ``SESSION_REFERENCE_INVALID_CONFIG`` error: the command line asked for the impossible."""
    return SessionReferenceError(message, INVALID_CONFIG)


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    """The one ``SESSION`` a command reads (its id or ``dsh-session:`` URI, decoded by the
    command with :func:`session_id_argument`, so that a bad URI is one ``CODE: message`` line
    as ``snapshot`` says it) and the options of the store it is read from
    (:func:`add_store_arguments`): what ``export`` and ``show`` take.

    >>> parser = argparse.ArgumentParser()
    >>> add_session_arguments(parser)
    >>> session_id_argument(parser.parse_args(["dsh-session:InMtYmV0YSI"]).session)
    's-beta'
    """
    parser.add_argument("session", metavar="SESSION", help="a session id, or its dsh-session: URI")
    add_store_arguments(parser)


def add_store_arguments(parser: argparse.ArgumentParser, verbose_also: str = "") -> None:
    """``--root``, ``--harness`` and the options every command reading a store takes;
    ``verbose_also``: what the command's ``-v`` says besides the logs passed over.

    >>> parser = argparse.ArgumentParser()
    >>> add_store_arguments(parser, "(and more)")
    >>> "and why (and more)" in " ".join(parser.format_help().split())
    True
    """
    store = parser.add_argument_group("session store")
    store.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="a session store: a DSH store, ~/.claude (or its projects/), ~/.codex (or its "
        f"sessions/); repeat for several (default: ${ROOT_ENV}, else every harness's default "
        "location that holds sessions)",
    )
    store.add_argument(
        "--harness",
        choices=tuple(HARNESSES),
        help="the harness of every --root, instead of recognizing it from the layout",
    )
    store.add_argument(
        "--max-log-bytes",
        type=positive_int,
        default=DEFAULT_MAX_DECOMPRESSED_BYTES,
        metavar="N",
        help="a log larger than this (decompressed) is a read failure",
    )
    store.add_argument(
        "--max-line-bytes",
        type=positive_int,
        default=DEFAULT_MAX_LINE_BYTES,
        metavar="N",
        help="a log with a longer line is a read failure",
    )
    store.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help=" ".join(("list every log the store passed over, and why", verbose_also)).strip(),
    )


def roots_of(args: argparse.Namespace) -> list[Root]:
    """The roots a command reads (the root rule of :mod:`sessionref.roots`, the one every
    command follows)."""
    return chosen_roots(args.root, args.harness, warn=note)


def problems_hint(problems: list[StoreProblem], *, listed: bool = False) -> str:
    """How many logs were passed over, for a one-line message ('' when none): pointing to
    ``--verbose`` unless they were ``listed`` already (the command runs with it).

    >>> problems_hint([StoreProblem("a", "x"), StoreProblem("b", "y")])
    '2 logs passed over (--verbose lists them)'
    >>> problems_hint([StoreProblem("a", "x")], listed=True)
    '1 log passed over'
    """
    if not problems:
        return ""
    hint = "" if listed else " (--verbose lists them)"
    return f"{counted(len(problems), 'log')} passed over{hint}"


def passed_over_line(problem: StoreProblem) -> str:
    """The line ``--verbose`` prints for a log passed over: the log, then why (named once).

    >>> passed_over_line(StoreProblem("/c/r.jsonl", "/c/r.jsonl: no session_meta line"))
    'passed over /c/r.jsonl: no session_meta line'
    """
    return f"passed over {problem.path}: {named_once(problem.message, problem.path)}"


def redacted_problems(
    problems: list[StoreProblem], redaction: Redaction | None
) -> list[StoreProblem]:
    """``problems`` with the secrets their reasons quote redacted (why a log was passed over
    may quote it: an unknown event type); as they are without a redaction.

    >>> from sessionref.redact import Redaction
    >>> problem = StoreProblem("/s/a.jsonl", "event type 'ticket-7' is unknown")
    >>> redacted_problems([problem], Redaction(("ticket-[0-9]+",)))[0].message
    "event type '[REDACTED:custom]' is unknown"
    """
    if redaction is None:
        return problems
    return [StoreProblem(p.path, redaction.redact(p.message)[0]) for p in problems]


def note_passed_over(problems: list[StoreProblem], *, verbose: bool) -> None:
    """On stderr: with ``verbose``, each log passed over and why; else how many, if any."""
    if verbose:
        for problem in problems:
            note(passed_over_line(problem))
    elif problems:
        note(f"note: {problems_hint(problems)}")


class OpenStore:
    """The stores a command reads, checked (see :func:`roots_of`; a path is one root whose
    harness its layout says): ``store`` reads them (a :class:`MultiStore` over several roots),
    ``listed`` serves a listing taken once, here.

    ``lister`` may put each store behind another (an index over it), every store before any
    is listed; a store that counts (:class:`CountingStore`) is only counted. With ``live``,
    ``listed`` lists the roots again whenever asked (each store caches what did not change):
    for a server, which sees sessions come and change. The stores it put behind that hold
    something open (an index's database) are closed by :meth:`close`, or at the end of a
    ``with`` block, or at once if the listing fails. With ``redaction``, why each log was
    passed over is told with its secrets redacted (:func:`redacted_problems`).
    """

    def __init__(
        self,
        roots: list[Root] | str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        verbose: bool = False,
        lister: Callable[[Store], Store] | None = None,
        live: bool = False,
        redaction: Redaction | None = None,
    ) -> None:
        if isinstance(roots, (str, os.PathLike)):
            roots = [check_root(os.fspath(roots))]
        self.roots = roots
        self.verbose = verbose
        self.store = open_stores(roots, max_bytes=max_bytes, max_line_bytes=max_line_bytes)
        parts = self.store.stores if isinstance(self.store, MultiStore) else {"": self.store}
        with contextlib.ExitStack() as opened:  # closed here only if the listing fails
            shown = {name: lister(part) if lister else part for name, part in parts.items()}
            for part in shown.values():
                if isinstance(part, contextlib.AbstractContextManager):
                    opened.enter_context(part)
            listed = {name: listed_once(part, live=live) for name, part in shown.items()}
            self.listed = listed[""] if "" in listed else MultiStore(listed)
            self.problems = redacted_problems(self.listed.problems(), redaction)
            self._opened = opened.pop_all()
        if verbose:
            note_passed_over(self.problems, verbose=True)

    def close(self) -> None:
        """Close the stores the lister put behind that hold something open (the next use
        of one opens it again)."""
        self._opened.close()

    def __enter__(self) -> OpenStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @classmethod
    def of(
        cls,
        args: argparse.Namespace,
        lister: Callable[[Store], Store] | None = None,
        *,
        live: bool = False,
        roots: list[Root] | None = None,
        redaction: Redaction | None = None,
    ) -> OpenStore:
        """The stores the options of :func:`add_store_arguments` name (``roots`` when the
        caller chose and checked them already), each listed by ``lister`` (e.g. an index over
        it) when given; ``live`` and ``redaction`` as for the class."""
        return cls(
            roots_of(args) if roots is None else roots,
            max_bytes=args.max_log_bytes,
            max_line_bytes=args.max_line_bytes,
            verbose=args.verbose,
            lister=lister,
            live=live,
            redaction=redaction,
        )

    @property
    def named(self) -> str:
        """The roots as a message names them, each by what named it (:meth:`Root.all_named`)."""
        return Root.all_named(self.roots)

    def report_problems(self) -> None:
        """Without ``--verbose``, one line saying how many logs were passed over, if any."""
        note_passed_over(self.problems, verbose=False)

    def not_found_hint(self, session_id: str) -> str:
        """Why a session may be missing: the log passed over in its directory, or how many
        logs were passed over ('' when none; with ``verbose``, which listed them, without
        pointing to ``--verbose``)."""
        home = encode_session_directory(session_id)
        for problem in self.problems:
            if Path(problem.path).parent.name == home:
                why = named_once(problem.message, problem.path)
                return f"; its log {problem.path} was passed over: {why}"
        hint = problems_hint(self.problems, listed=self.verbose)
        return f"; {hint}" if hint else ""

    def where(self, session_id: str) -> str:
        """The log file of a session, for a message ('' when no one store places it)."""
        store = self.store
        try:
            if isinstance(store, MultiStore):
                store = store.store_of(session_id)
            path_of = getattr(store, "path_of", None)
            return str(path_of(session_id)) if callable(path_of) else ""
        except SessionLogError:
            return ""


def reporting_errors(
    run: Callable[[argparse.Namespace], int],
) -> Callable[[argparse.Namespace], int]:
    """``run`` with a :class:`SessionReferenceError` printed as one ``CODE: message`` line on
    stderr, and exit status 1."""

    @functools.wraps(run)
    def reporting(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except SessionReferenceError as exc:
            note_line(error_line(exc).removesuffix("\n"))
            return 1

    return reporting


def error_line(error: SessionReferenceError) -> str:
    """``CODE: message`` as exactly one line, whatever the message quotes from a log or a
    file name: its control characters as escapes (:func:`~sessionref.controls.one_line`).

    >>> error_line(SessionReferenceError("a\\nb\\x1b", "SESSION_REFERENCE_READ_FAILED"))
    'SESSION_REFERENCE_READ_FAILED: a\\\\u000ab\\\\u001b\\n'
    """
    return f"{error.code}: {one_line(error.message)}\n"
