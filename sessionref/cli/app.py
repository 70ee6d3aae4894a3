"""The ``sessionref`` command (docs/api.md §Command line).

Errors print ``CODE: message`` and exit 1."""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import BinaryIO, Final

from sessionref import conform
from sessionref.cli.batch import add_batch_command, positive_int
from sessionref.codecs.jsjson import js_json
from sessionref.codecs.uri import SCHEME, Reference, decode_session_reference_uri
from sessionref.errors import SessionReferenceError
from sessionref.log.store import DirectoryStore
from sessionref.resolver import (
    DEFAULT_CANDIDATE_LIMIT,
    DEFAULT_MAX_REFERENCE_BYTES,
    SessionReferenceResolver,
)
from sessionref.types import Candidate, ContextMessage, MentionCandidate, Target

SAMPLE_TARGET = "sample-new-session"
SAMPLE_CWD = "/home/dev/payments-api"


def _out() -> BinaryIO:
    return sys.stdout.buffer


def _write_text(text: str) -> None:
    """Write UTF-8 whatever the locale; a lone surrogate shows as U+FFFD."""
    _out().write(text.encode("utf-8", "replace"))


def session_id_argument(value: str) -> str:
    """A session named by its id or by its ``dsh-session:`` URI.

    >>> session_id_argument("dsh-session:InMtYmV0YSI"), session_id_argument("plain")
    ('s-beta', 'plain')
    """
    return decode_session_reference_uri(value) if value.startswith(SCHEME) else value


def _references(sessions: Sequence[str], labels: Sequence[str]) -> list[Reference]:
    ids = [session_id_argument(value) for value in sessions]
    return [
        Reference(session_id, labels[i] if i < len(labels) else session_id)
        for i, session_id in enumerate(ids)
    ]


def _resolver(args: argparse.Namespace, root: str | Path) -> SessionReferenceResolver:
    return SessionReferenceResolver(
        DirectoryStore(root),
        max_reference_bytes=getattr(args, "max_bytes", DEFAULT_MAX_REFERENCE_BYTES),
        candidate_limit=getattr(args, "limit", None) or DEFAULT_CANDIDATE_LIMIT,
    )


def _snapshot(
    args: argparse.Namespace, resolver: SessionReferenceResolver, target: Target
) -> ContextMessage | None:
    """Print the context for ``args.sessions`` (the prompt, or with ``--json`` the message)."""
    context = resolver.snapshot(target, _references(args.sessions, args.label or []))
    if context is not None and args.json:
        _out().write(js_json(context) + b"\n")
    elif context is not None:
        _write_text(context.prompt + "\n")
    return context


def _target(args: argparse.Namespace) -> Target:
    """``--target`` (and ``--cwd``), or a session outside any store when there is none."""
    session_id = session_id_argument(args.target) if args.target else f"cli-{uuid.uuid4()}"
    return Target(session_id, getattr(args, "cwd", None))


def cmd_snapshot(args: argparse.Namespace) -> int:
    """Print the prompt of a context message for the named sessions."""
    _snapshot(args, _resolver(args, args.root), _target(args))
    return 0


def _candidate_line(candidate: Candidate) -> str:
    created = datetime.fromtimestamp(candidate.created_at / 1000, tz=timezone.utc)
    label = "".join(c if c.isprintable() else " " for c in candidate.label)
    mention = candidate.mention if isinstance(candidate, MentionCandidate) else ""
    return f"{created:%Y-%m-%d %H:%M}  {label}  {candidate.cwd or '-'}  {mention}\n"


def cmd_candidates(args: argparse.Namespace) -> int:
    """List the sessions a prompt could reference."""
    found = _resolver(args, args.root).mention_candidates(_target(args), args.query, args.limit)
    if args.json:
        _out().write(js_json(found) + b"\n")
    else:
        for candidate in found:
            _write_text(_candidate_line(candidate))
    return 0


def sample_root() -> Path:
    """The sample store shipped inside the package."""
    return Path(str(resources.files("sessionref") / "sample"))


def cmd_demo(args: argparse.Namespace) -> int:
    """Snapshot the sample store's sessions, as a host would for a new prompt."""
    root = sample_root()
    resolver = _resolver(args, root)
    target = Target(SAMPLE_TARGET, SAMPLE_CWD)
    found = resolver.mention_candidates(target)
    _write_text("Sessions in the sample store (newest first, this project first):\n")
    for candidate in found:
        _write_text("  " + _candidate_line(candidate))
    args.sessions = [candidate.session_id for candidate in found[:2]]
    args.label = [candidate.label for candidate in found[:2]]
    _write_text(f"\nSnapshot of the first two, within {args.max_bytes} bytes each:\n\n")
    context = _snapshot(args, resolver, target)
    for stats in context.source.references if context is not None else []:
        _write_text(
            f"\n{stats.label}: kept {stats.retained_messages} of {stats.original_messages} "
            f"messages, omitted {stats.omitted_bytes} bytes"
            f"{', compacted' if stats.compacted else ''}"
        )
    _write_text("\n")
    return 0


def cmd_conform(args: argparse.Namespace) -> int:
    """Answer conformance cases, one JSON line each, from stdin."""
    out = _out()
    for line in conform.run(sys.stdin.buffer):
        out.write(line)
        out.flush()
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="sessionref",
        description="Bounded, tag-safe snapshots of DeepSeek Harness sessions.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, run: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=(run.__doc__ or "").strip())
        sub.set_defaults(run=run)
        return sub

    snapshot = command("snapshot", cmd_snapshot)
    snapshot.add_argument("--root", required=True, help="the DSH session store directory")
    snapshot.add_argument("--max-bytes", type=positive_int, default=DEFAULT_MAX_REFERENCE_BYTES)
    snapshot.add_argument("--label", action="append", help="label of each session, in order")
    snapshot.add_argument("--target", help="the session the prompt is written in")
    snapshot.add_argument("--json", action="store_true", help="print the whole message")
    snapshot.add_argument("sessions", nargs="+", metavar="SESSION", help="id or dsh-session: URI")

    candidates = command("candidates", cmd_candidates)
    candidates.add_argument("--root", required=True)
    candidates.add_argument("--target")
    candidates.add_argument("--cwd")
    candidates.add_argument("--query", default="")
    candidates.add_argument("--limit", type=positive_int)
    candidates.add_argument("--json", action="store_true")

    demo = command("demo", cmd_demo)
    demo.add_argument("--max-bytes", type=positive_int, default=2048)
    demo.add_argument("--json", action="store_true")

    command("conform", cmd_conform)
    add_batch_command(commands)
    return parser


_LINE_BREAKS: Final = {
    ord(c): f"\\u{ord(c):04x}" for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
}


def error_line(error: SessionReferenceError) -> str:
    """``CODE: message`` as exactly one line, whatever the message quotes from a log.

    >>> error_line(SessionReferenceError("a\\nb", "SESSION_REFERENCE_READ_FAILED"))
    'SESSION_REFERENCE_READ_FAILED: a\\\\u000ab\\n'
    """
    return f"{error.code}: {error.message.translate(_LINE_BREAKS)}\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a :class:`SessionReferenceError` becomes ``CODE: message``."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except SessionReferenceError as exc:
        sys.stderr.buffer.write(error_line(exc).encode("utf-8", "replace"))
        return 1
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    return status


if __name__ == "__main__":
    sys.exit(main())
