"""``--redact`` and ``--redact-pattern``: the options of every command that shows a
session's text (docs/redaction.md)."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import TYPE_CHECKING

from sessionref.cli.common import config_error, counted
from sessionref.codecs.uri import one_line_label
from sessionref.errors import SessionReferenceError
from sessionref.types import ContextMessage

if TYPE_CHECKING:  # the redact package is imported when an option asks for it
    from sessionref.redact import Redaction

HELP_PATTERN = (
    "also redact what this regular expression matches (its group named 'secret' if it has "
    "one), as [REDACTED:custom]; repeatable; implies --redact"
)


def pattern_argument(value: str) -> str:
    """A ``--redact-pattern``: one :func:`~sessionref.redact.scan.compile_patterns` refuses
    (it does not compile, or it is empty) is a usage error.

    >>> pattern_argument("sk-[0-9]+")
    'sk-[0-9]+'
    >>> pattern_argument("(")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: not a regular expression: missing ), unterminated subpattern \
at position 0
    """
    from sessionref.redact.scan import compile_patterns

    try:
        compile_patterns((value,))
    except SessionReferenceError as exc:
        raise argparse.ArgumentTypeError(
            exc.message.removeprefix(f"redact pattern {value!r} is ")
        ) from None
    return value


def add_redact_arguments(parser: argparse.ArgumentParser, where: str = "before the budget") -> None:
    """``--redact`` and ``--redact-pattern REGEX`` (repeatable); ``where``: when the command
    replaces them (a command without a budget says what it redacts instead)."""
    group = parser.add_argument_group("redaction (needs the redact extra: detect-secrets)")
    group.add_argument(
        "--redact",
        action="store_true",
        help="replace secrets (API keys, tokens, private keys, passwords in URLs, KEY=value "
        f"with a random value) by [REDACTED:<kind>] {where}",
    )
    group.add_argument(
        "--redact-pattern",
        action="append",
        type=pattern_argument,
        metavar="REGEX",
        help=HELP_PATTERN,
    )


def redaction_of_args(args: argparse.Namespace) -> Redaction | None:
    """The redaction the command line asks for, or ``None``; without detect-secrets, a
    one-line INVALID_CONFIG error saying how to install it."""
    if not (args.redact or args.redact_pattern):
        return None
    from sessionref.redact import MISSING, Redaction  # its detectors: some ms of a start

    try:
        return Redaction(tuple(args.redact_pattern or ())).check()
    except SessionReferenceError as exc:
        if exc.message == MISSING:
            option = "--redact" if args.redact else "--redact-pattern"
            install = "pip install 'sessionref[redact]'"
            raise config_error(f"{option} needs detect-secrets, not installed: {install}") from None
        raise


def kinds_text(counts: Counter[str] | dict[str, int]) -> str:
    """``N secrets (kind n, …)``, kinds in order of name.

    >>> kinds_text({"jwt": 1, "aws-access-key": 2}), kinds_text({})
    ('3 secrets (aws-access-key 2, jwt 1)', '0 secrets')
    """
    total = sum(counts.values())
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()))
    return counted(total, "secret") + (f" ({kinds})" if kinds else "")


class RedactionTally:
    """What a batch redacted, from its result lines: for ``batch --redact --verbose``.

    >>> tally = RedactionTally()
    >>> tally.count(b'{"context":{"source":{"references":[{"redacted":{"jwt":2}}]}}}')
    >>> tally.count(b'{"sessionId":"s","error":{"code":"C","message":"m"}}')
    >>> tally.summary()
    'redacted 2 secrets (jwt 2) in 1 of 2 sessions'
    """

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.sessions = 0
        self.with_secrets = 0

    def count(self, line: bytes) -> None:
        """Add one result line's redactions."""
        self.sessions += 1
        if b'"redacted":{"' in line:
            for stats in json.loads(line)["context"]["source"]["references"]:
                self.counts.update(stats["redacted"])
            self.with_secrets += 1

    def summary(self) -> str:
        """One line, kinds and counts only."""
        return (
            f"redacted {kinds_text(self.counts)} in {self.with_secrets} of {self.sessions} sessions"
        )


def redaction_lines(context: ContextMessage) -> list[str]:
    """What redaction replaced in each source, by kind: never the secrets themselves.

    >>> from sessionref.types import ReferenceSource, SourceStats, TextBlock
    >>> kinds = {"jwt": 1, "aws-access-key": 2}
    >>> stats = SourceStats("s", "S", 3, False, 2, 2, 0, 0, False, 0, kinds)
    >>> source = ReferenceSource(references=[stats])
    >>> context = ContextMessage(id="m", content=[TextBlock("")], source=source)
    >>> redaction_lines(context)
    ['S: redacted 3 secrets (aws-access-key 2, jwt 1)']
    """
    return [
        f"{one_line_label(stats.label)}: redacted {kinds_text(stats.redacted)}"
        for stats in context.source.references
        if stats.redacted is not None
    ]
