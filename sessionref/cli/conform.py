"""``sessionref conform``: the conformance protocol (docs/api.md §Conformance), for harnesses."""

from __future__ import annotations

import argparse
import sys

from sessionref import conform
from sessionref.cli.common import flush_output, reporting_errors, write_bytes

EPILOG = """\
example:
  echo '{"op":"encode","id":"s"}' | sessionref conform     # {"ok":{"uri":"dsh-session:InMi"}}
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``sessionref conform`` takes no options."""
    parser.description = (
        "Answer conformance cases: one JSON case per line on stdin, one JSON answer per line\n"
        "on stdout (docs/api.md §Conformance). For harnesses comparing implementations."
    )
    parser.epilog = EPILOG


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Answer conformance cases, one JSON line each, from stdin."""
    for line in conform.run(sys.stdin.buffer):
        write_bytes(line)
        flush_output()
    return 0
