"""The ``sessionref`` command (docs/api.md §Command line): the parser, the commands, ``main``.

Each command lives in its own module with ``add_arguments(parser)`` and ``run(args) -> int``;
:data:`COMMANDS` lists them. Only the module of the command being run is imported, so
``sessionref --help`` starts without loading the library.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Collection, Sequence
from typing import Any, Final, NamedTuple, NoReturn

import sessionref
from sessionref.cli.early import exit_on_signals
from sessionref.cli.process import (
    OutputError,
    abandon_output,
    collect_no_more,
    ended,
    finished,
    note,
    say_interrupted,
    stop_on_signals,
)
from sessionref.collector import collection_paused


class Command(NamedTuple):
    """A subcommand: its name, its module, and its line in the main help (``None``: hidden)."""

    name: str
    module: str
    summary: str | None


COMMANDS: Final = [
    Command("snapshot", "sessionref.cli.snapshot", "print the snapshot of up to 3 sessions"),
    Command("candidates", "sessionref.cli.candidates", "list the sessions a prompt could mention"),
    Command("batch", "sessionref.cli.batch", "snapshot every session of a store into a file"),
    Command("demo", "sessionref.cli.demo", "snapshot the sample store shipped with sessionref"),
    Command("index", "sessionref.cli.index", "build or refresh the index of a store"),
    Command("search", "sessionref.cli.search", "search what was said in past sessions"),
    Command("mcp", "sessionref.cli.mcp", "serve the sessions to an MCP client over stdio"),
    Command("export", "sessionref.cli.export", "write a session as Markdown, HTML or JSON"),
    Command("show", "sessionref.cli.show", "show what a snapshot of a session keeps"),
    Command("conform", "sessionref.cli.conform", None),
]
"""Every command, in the order of the help. Adding one is adding a line."""

DESCRIPTION: Final = (
    "Bounded, tag-safe snapshots of coding-agent sessions: DeepSeek Harness (DSH),\n"
    "Claude Code and Codex CLI."
)
EPILOG: Final = """\
exit status:
  0    done
  1    an error, printed as one line "CODE: message" on stderr
       (batch: also when some session failed; the file holds its error)
  2    wrong usage (a bare `sessionref` prints this help on stderr)
  130  interrupted by Ctrl-C (SIGINT); 143 by SIGTERM (batch keeps the sessions it
       finished: add --resume to go on)
  A closed stdout (`| head`) ends a command quietly, with status 0; a stream closed
  before it starts (`>&-`, `2>&-`) is as /dev/null.

`sessionref COMMAND --help` describes a command and gives examples.
"""


def help_width() -> int:
    """The width argparse gives help: the columns ``shutil.get_terminal_size()`` gives (the
    ``COLUMNS`` variable, else the terminal's, else 80), less 2; found as shutil finds them,
    without importing it: argparse imports shutil for every parser and option it builds, and
    shutil imports zlib, bz2 and lzma, some 5 ms of every start.

    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, COLUMNS="100"):
    ...     help_width()
    98
    """
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # no stdout, or not a terminal
            columns = 0
    return (columns or 80) - 2


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written; every option's default shown, except on/off flags' and
    those its help already gives in words; as wide as argparse makes help (:func:`help_width`)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = help_width() if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        help_text = action.help or ""
        shown = action.default not in (None, False, "", argparse.SUPPRESS)
        said = "%(default)" in help_text or "(default: " in help_text  # in its own words
        if shown and action.option_strings and not said:
            help_text += " (default: %(default)s)"
        return help_text


class Parser(argparse.ArgumentParser):
    """argparse's parser, its usage errors one line as every error of the command line is:
    ``PROG: error: MESSAGE`` in UTF-8 whatever the locale, and exit 2, without the usage
    block above it (``--help`` shows that). A command's parser is one too: ``PROG`` names
    the command.

    >>> Parser(prog="sessionref demo").parse_args(["extra"])
    Traceback (most recent call last):
    SystemExit: 2
    """

    def error(self, message: str) -> NoReturn:
        note(f"{self.prog}: error: {message}")
        raise SystemExit(2)


def build_parser(load: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command. The options of the commands named in ``load`` (all by
    default) are loaded; the modules of the others are not imported. When ``load`` names
    some, theirs are the only commands it has: running one needs no other's parser (the
    main help, which lists them all, comes from ``build_parser([])``), and building the
    nine others took some 7 ms of every command's start.

    >>> parser = build_parser()
    >>> parser.parse_args(["batch", "--root", "r", "--out", "o"]).engine
    'local'
    >>> build_parser(["demo"]).parse_args(["demo"]).command
    'demo'
    """
    parser = Parser(
        prog="sessionref",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {sessionref.__version__}")
    shown = ",".join(command.name for command in COMMANDS if command.summary is not None)
    commands = parser.add_subparsers(
        dest="command", metavar=f"{{{shown}}}", title="commands", required=True
    )
    for command in COMMANDS:
        if load and command.name not in load:
            continue
        options: dict[str, Any] = {"formatter_class": HelpFormatter}
        if command.summary is not None:
            options["help"] = command.summary
        sub = commands.add_parser(command.name, **options)
        if load is None or command.name in load:
            module = importlib.import_module(command.module)
            module.add_arguments(sub)
            sub.set_defaults(run=module.run, parser=sub)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The command an argument list runs: its first word not an option, if it is a command.

    >>> command_named(["--version"]), command_named(["batch", "--root", "r"])
    (None, 'batch')
    """
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in {command.name for command in COMMANDS} else None


OWN_OPTIONS: Final = ("-h", "--help", "--version")
"""The options of ``sessionref`` itself, given before a command; every other is a command's."""


def misplaced_option(argv: Sequence[str]) -> str | None:
    """What is wrong with an argument list that starts with an option of a command rather
    than of ``sessionref`` itself (``sessionref --root DIR candidates``, as ``git -C DIR``
    goes), and where it goes; ``None`` when it starts otherwise. argparse took the option's
    value for an unknown command, or said the command had no such option.

    >>> misplaced_option(["--root", "r", "candidates"])
    '--root is an option of the command: give it after the command (sessionref candidates --root …)'
    >>> misplaced_option(["--vers"]), misplaced_option(["demo", "--json"])
    (None, None)
    """
    option = argv[0].split("=", 1)[0] if argv else ""
    if not option.startswith("-") or option in ("-", "--", "-h"):
        return None
    if option.startswith("--") and any(own.startswith(option) for own in OWN_OPTIONS):
        return None  # one of them, or a prefix argparse takes for it
    names = {command.name for command in COMMANDS if command.summary is not None}
    named = next((word for word in argv if word in names), "COMMAND")
    return (
        f"{option} is an option of the command: give it after the command "
        f"(sessionref {named} {option} …)"
    )


def check_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """A usage error (exit 2) if the list starts with a command's option
    (:func:`misplaced_option`), or if the first word not an option is no command; the hidden
    ones are not offered."""
    misplaced = misplaced_option(argv)
    if misplaced is not None:
        parser.error(misplaced)
    first = next((word for word in argv if not word.startswith("-")), None)
    if first is not None and command_named(argv) is None:
        shown = ", ".join(repr(c.name) for c in COMMANDS if c.summary is not None)
        parser.error(f"argument command: invalid choice: {first!r} (choose from {shown})")


def run_command(argv: Sequence[str], *, signals: bool = False) -> int:
    """Parse ``argv`` and run its command: the status it exits with, its output flushed.
    With ``signals``, the command runs with :func:`stop_on_signals`, and once it has
    returned and its output is written a signal no longer interrupts it (:func:`finished`).
    """
    named = command_named(argv)
    with collection_paused():  # the command's modules: objects by the thousand, no cycles
        parser = build_parser([named] if named else [])
    if not argv:  # wrong usage, as argparse says it: the help (which lists the commands)
        parser.print_help(sys.stderr)
        return 2
    check_command(parser, argv)
    args, extra = parser.parse_known_args(argv)
    if extra:  # said by the command's parser, so its own usage is shown
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if signals:
        stop_on_signals()
    status: int = args.run(args)
    finished(status)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its errors are ``CODE: message`` lines and exit 1 (each command's
    ``run`` reports them: see ``cli.common.reporting_errors``).

    Ctrl-C (or SIGTERM) at any point after the interpreter has imported ``sessionref.cli``
    and before the command has finished is one line and exit 130 (143) (see ``cli.process``);
    once it has finished, a signal leaves its status as it is (``cli.process.ended``); an
    output error is one line and exit 1; a closed stdout is silent. Signal handlers are
    installed only for the process's own command line (``argv`` None), never for a caller's;
    so is the end of collection (``cli.process.collect_no_more``: the process ends next,
    without its teardown's full collections).
    """
    if argv is not None:
        return outcome(list(argv))
    exit_on_signals()
    try:
        status = outcome(sys.argv[1:], signals=True)
    except BaseException:  # a usage error's SystemExit, --help's (or a bug's traceback)
        exit_on_signals()
        collect_no_more()
        raise
    ended(status)
    collect_no_more()
    return status


def outcome(argv: Sequence[str], *, signals: bool = False) -> int:
    """The status of running the command ``argv`` (:func:`run_command`): an interruption is
    said in one line, a closed stdout is silent, an output error is one line."""
    try:
        return run_command(argv, signals=signals)
    except KeyboardInterrupt as exc:
        return say_interrupted("interrupted", exc)
    except BrokenPipeError:
        abandon_output()
        return 0
    except OutputError as exc:
        abandon_output()
        sys.stderr.write(f"cannot write output: {exc}\n")
        return 1
