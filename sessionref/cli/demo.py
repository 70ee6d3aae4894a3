"""``sessionref demo``: the sample store shipped inside the package, listed and snapshotted."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import Final

import msgspec

from sessionref import listing
from sessionref.cli.candidates import harness_candidates, table
from sessionref.cli.common import OpenStore, reporting_errors, write_bytes, write_text
from sessionref.cli.snapshot import add_budget_argument, context_for, cut_lines, print_context
from sessionref.codecs.jsjson import exact_json
from sessionref.codecs.uri import Reference
from sessionref.rules import DEFAULT_CANDIDATE_LIMIT
from sessionref.types import Target

SAMPLE_TARGET: Final = "sample-new-session"
SAMPLE_CWD: Final = "/home/dev/payments-api"
DEMO_MAX_BYTES: Final = 2048
EPILOG = """\
examples:
  sessionref demo
  sessionref demo --max-bytes 600 --json
"""


def sample_root() -> Path:
    """The sample store shipped inside the package."""
    return Path(str(resources.files("sessionref") / "sample"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``sessionref demo``."""
    parser.description = (
        "Snapshot the sample store shipped inside the package, as a host would for a new\n"
        f"prompt in {SAMPLE_CWD} that mentions its two first candidates."
    )
    parser.epilog = EPILOG
    add_budget_argument(parser)
    parser.set_defaults(max_bytes=DEMO_MAX_BYTES)
    parser.add_argument(
        "--json",
        action="store_true",
        help='print one JSON object: {"candidates": [...], "context": {...}}',
    )


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Snapshot the sample store's sessions, as a host would for a new prompt."""
    opened = OpenStore(sample_root())
    target = Target(SAMPLE_TARGET, SAMPLE_CWD)
    shown = listing.shown_candidates(opened.listed, target, "", DEFAULT_CANDIDATE_LIMIT, None)
    found = harness_candidates(opened.listed, shown)  # as `candidates --json` has them
    references = [Reference(c.session_id, c.label) for c in found[:2]]
    context = context_for(opened, references, max_bytes=args.max_bytes, label_from_title=False)
    if args.json:
        document = {"candidates": msgspec.to_builtins(found), "context": context}
        write_bytes(exact_json(document) + b"\n")
        return 0
    write_text(f"Sessions in the sample store, newest first, those of {SAMPLE_CWD} first:\n\n")
    write_text(table(found))
    write_text(f"\nSnapshot of the first two, within {args.max_bytes} bytes each:\n\n")
    print_context(context, as_json=False)
    cut = cut_lines(context) if context is not None else []
    write_text("".join(f"\n{line}" for line in cut) + "\n")
    program = invocation(sys.argv[0], sys.executable, shutil.which("sessionref"))
    write_text(next_steps(program, sample_root(), references[0].session_id))
    return 0


def invocation(argv0: str, executable: str, found: str | None) -> str:
    """How a shell here runs this program: ``sessionref`` when that name finds it (``found``,
    what ``shutil.which`` gave), else the path it was started by, as typed (after the quick
    start it is ``.venv/bin/sessionref``, not on ``PATH``), or ``python -m sessionref``.

    >>> invocation("-c", "/usr/bin/python3", None)  # python -c: started from no file
    'sessionref'
    >>> invocation("/x/sessionref/__main__.py", "/usr/bin/python3", None)
    '/usr/bin/python3 -m sessionref'
    """
    if os.path.basename(argv0) == "__main__.py":
        return f"{shlex.quote(executable)} -m sessionref"
    if not os.path.isfile(argv0) or (found is not None and os.path.samefile(found, argv0)):
        return "sessionref"  # started from no file (``python -c``), or found by its name
    return shlex.quote(argv0)


def next_steps(program: str, root: Path, session_id: str) -> str:
    """Where the sample store is, and commands to try on it, run as ``program`` (a newcomer
    has no store yet).

    >>> print(next_steps("sessionref", Path("/site/sessionref/sample"), "s-1"), end="")
    <BLANKLINE>
    The sample store is /site/sessionref/sample; every command reads it with --root:
      sessionref candidates --root /site/sessionref/sample --query auth
      sessionref show --root /site/sessionref/sample s-1 --max-bytes 512
      sessionref export --root /site/sessionref/sample s-1
    """
    where, session = shlex.quote(str(root)), shlex.quote(session_id)
    commands = (
        f"candidates --root {where} --query auth",
        f"show --root {where} {session} --max-bytes 512",
        f"export --root {where} {session}",
    )
    lines = [f"\nThe sample store is {where}; every command reads it with --root:"]
    return "\n".join([*lines, *(f"  {program} {command}" for command in commands)]) + "\n"
