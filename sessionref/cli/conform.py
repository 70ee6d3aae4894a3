"""``sessionref conform``: the conformance protocol (docs/api.md §Conformance), for harnesses."""

from __future__ import annotations

import argparse
import sys

from sessionref import conform


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``sessionref conform`` takes no options."""
    parser.description = (
        "Answer conformance cases: one JSON case per line on stdin, one JSON answer per line "
        "on stdout (docs/api.md §Conformance). For harnesses comparing implementations."
    )


def run(args: argparse.Namespace) -> int:
    """Answer conformance cases, one JSON line each, from stdin."""
    out = sys.stdout.buffer
    for line in conform.run(sys.stdin.buffer):
        out.write(line)
        out.flush()
    return 0
