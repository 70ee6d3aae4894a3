"""``sessionref batch``: every stored session's snapshot into a JSON-lines file."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Generator
from typing import Final

import msgspec

from sessionref.batch.core import ENGINES, ResultLine, listing_order
from sessionref.batch.local import build_result_lines
from sessionref.cli.batch_output import Output, OutputFile, output_for
from sessionref.cli.common import (
    STDOUT,
    OpenStore,
    add_store_arguments,
    config_error,
    counted,
    note,
    output_path,
    positive_int,
    quoted,
    reporting_errors,
)
from sessionref.cli.output_target import write_failure
from sessionref.cli.process import finished, say_interrupted
from sessionref.cli.progress import progress_bar
from sessionref.cli.redaction import RedactionTally, add_redact_arguments, redaction_of_args
from sessionref.cli.snapshot import add_budget_argument, add_label_arguments
from sessionref.cli.store_logs import refuse_a_log
from sessionref.worker_deaths import WorkerDied

DESCRIPTION = """\
Snapshot every session of a store into a JSON-lines file, one line per session in listing
order (newest first): {"sessionId", "label", "context"} as `snapshot --json` prints it, or
{"sessionId", "error": {"code", "message"}}. A broken session does not stop the batch.

The file appears when the batch is done; an interrupted batch (Ctrl-C, SIGTERM) keeps the
lines it finished, and --resume continues it (also from what a killed batch left). A second
batch to the same file while one runs is refused. --resume
keeps the failed lines; --retry-failed runs those sessions again, each new line in place of
the failed one (every other line is kept byte for byte). --resume trusts that the other
options (--max-bytes, --label-from, the store limits) are those of the first run: the lines
do not record them. `--out -` writes the lines to stdout as they are done (no --resume), as
does an --out that is a FIFO or a device; a symbolic link is followed to the file it names,
and a replaced file keeps its permission bits.
The summary line goes to stderr: "N sessions: D already done, W written, F failed → FILE",
where written counts the sessions snapshotted, failed those whose line is an error; then
how many sessions were retried, and how many failed lines were kept.
"""
EPILOG = """\
examples:
  sessionref batch --root ~/.dsh/sessions --out snapshots.jsonl --workers 4
  sessionref batch --root ~/.dsh/sessions --out snapshots.jsonl --resume
  sessionref batch --root ~/.dsh/sessions --out snapshots.jsonl --resume --retry-failed
  sessionref batch --root DIR --out FILE --engine dask --scheduler tcp://10.0.0.5:8786
"""
NAMED_FAILURES: Final = 3
"""How many failed sessions the summary line names."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``sessionref batch``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    add_store_arguments(parser, "(and, with --redact, how many secrets it replaced)")
    parser.add_argument(
        "--out",
        required=True,
        type=output_path,
        metavar="FILE",
        help="the JSON-lines file to write (- for stdout)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="append to --out, skipping the sessions it already holds (a torn last line is "
        "dropped)",
    )
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="with --resume: snapshot again the sessions whose line is an error, each new "
        "line in place of the old one",
    )
    add_budget_argument(parser)
    add_label_arguments(parser, explicit=False)
    add_redact_arguments(parser)
    engine = parser.add_argument_group("engine")
    engine.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        metavar="N",
        help="worker processes: at most N, one per session and 2 per CPU",
    )
    engine.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help="a process pool here, or a dask bag (needs the dask extra)",
    )
    engine.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="the dask.distributed scheduler to run on (with --engine dask)",
    )


class Tally(msgspec.Struct):
    """What a batch run did, for its summary line: the sessions of the store, those already
    done (and not retried), the failed lines kept, the sessions retried."""

    sessions: int
    earlier: int
    earlier_failures: int
    retried: int = 0
    written: int = 0
    failed: list[str] = msgspec.field(default_factory=list)

    def count(self, result: ResultLine) -> None:
        """Count one result: written (snapshotted) or failed."""
        if result.failed:
            self.failed.append(result.session_id)
        else:
            self.written += 1

    @property
    def failures(self) -> int:
        """Failed sessions in the output file, this run's and earlier ones."""
        return self.earlier_failures + len(self.failed)

    def summary(self, out: str) -> str:
        """``N sessions: D already done, W written, F failed → FILE``, naming the first
        failures; then how many were retried, and how many failed lines were kept.

        >>> tally = Tally(5, 1, 0)
        >>> for result in (ResultLine("a", True, b""), ResultLine("b", False, b"")):
        ...     tally.count(result)
        >>> tally.summary("out.jsonl")
        '5 sessions: 1 already done, 1 written, 1 failed → out.jsonl (failed: "a")'
        >>> Tally(5, 5, 2).summary("o").split("; ")
        ['5 sessions: 5 already done, 0 written, 0 failed → o', \
'2 failed lines kept (--retry-failed retries them)']
        >>> Tally(5, 3, 0, retried=2).summary("o")
        '5 sessions: 3 already done, 2 retried, 0 written, 0 failed → o'
        """
        earlier = f"{self.earlier} already done, " if self.earlier else ""
        earlier += f"{self.retried} retried, " if self.retried else ""
        line = f"{counted(self.sessions, 'session')}: {earlier}{self.written} written, "
        line += f"{len(self.failed)} failed → {out}"
        if self.failed:
            named = ", ".join(quoted(session_id) for session_id in self.failed[:NAMED_FAILURES])
            more = len(self.failed) - NAMED_FAILURES
            line += f" (failed: {named}{f' and {more} more' if more > 0 else ''})"
        if self.earlier_failures:
            kept = counted(self.earlier_failures, "failed line")
            them = "it" if self.earlier_failures == 1 else "them"
            why = (
                "their sessions are in no root read"
                if self.retried
                else f"--retry-failed retries {them}"
            )
            line += f"; {kept} kept ({why})"
        return line

    def interrupted(self, output: Output | None, out: str, why: str = "interrupted") -> str:
        """The one line a run stopped early prints (``why``: by an interruption, else the
        error that stopped it), saying what ``output`` (to ``out``) holds.

        >>> from sessionref.cli.batch_output import StreamOutput
        >>> Tally(9, 0, 0).interrupted(StreamOutput(), "-")
        'interrupted: 0 of 9 sessions are in stdout'
        >>> Tally(9, 0, 0).interrupted(None, "/nonexistent", "CODE: it broke")
        'CODE: it broke before any session was done: /nonexistent is unchanged'

        A stop that came once every session was done does not ask for a ``--resume``.
        """
        if output is None or not output.kept:
            return f"{why} before any session was done: {out} is unchanged"
        line = f"{why}: {output.held()} of {self.sessions} sessions are in {output.where()}"
        left = self.sessions - self.earlier - self.written - len(self.failed)
        if isinstance(output, OutputFile) and left > 0:
            line += "; run the same command with --resume to do the rest"
        return line


def engine_results(
    args: argparse.Namespace, opened: OpenStore, ids: list[str]
) -> Generator[ResultLine, None, None]:
    """The results of ``ids`` from the engine the command line asked for."""
    redaction = redaction_of_args(args)
    if args.engine == "local":
        return build_result_lines(
            opened.store,
            max_reference_bytes=args.max_bytes,
            label=args.label_from,
            workers=args.workers,
            session_ids=ids,
            redact=redaction or False,
        )
    try:
        # Only here: dask is an optional dependency, and heavy to import.
        from sessionref.batch import dask as dask_engine
    except ImportError as exc:
        raise config_error(f"--engine dask: {exc}") from None
    bag = dask_engine.result_lines_bag(
        opened.store,
        max_reference_bytes=args.max_bytes,
        label=args.label_from,
        session_ids=ids,
        redact=redaction or False,
    )
    roots = [os.path.abspath(root.path) for root in opened.roots]  # workers run elsewhere
    return dask_engine.iter_bag(bag, workers=args.workers, scheduler=args.scheduler, roots=roots)


def warn_strangers(strangers: frozenset[str], out: str, opened: OpenStore) -> None:
    """One line when ``--out`` holds sessions that are not in the stores being resumed.

    Said on stderr, e.g. ``warning: o.jsonl holds 1 session not in --root /r (such as "x"):
    was it written from another store?``
    """
    if strangers:
        example = quoted(min(strangers))
        note(
            f"warning: {out} holds {counted(len(strangers), 'session')} not in "
            f"{opened.named} (such as {example}): was it written from another store?"
        )


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Snapshot every session of a store into a JSON-lines file (exit 1 if any failed)."""
    if args.scheduler is not None and args.engine != "dask":
        args.parser.error("--scheduler needs --engine dask")
    if args.scheduler is not None and not args.scheduler.strip():
        args.parser.error("--scheduler needs an address")
    if args.scheduler is not None and args.scheduler.startswith("inproc://"):
        args.parser.error("--scheduler: an inproc:// address is not reachable from here")
    if args.out == STDOUT and args.resume:
        args.parser.error("--resume needs an --out file, not - (stdout)")
    if args.retry_failed and not args.resume:
        args.parser.error("--retry-failed needs --resume")
    redaction = redaction_of_args(args)
    redacted = RedactionTally() if args.verbose and redaction else None
    opened = OpenStore.of(args, redaction=redaction)
    refuse_a_log(args, opened, "--out")
    ids = listing_order(opened.listed)
    tally = Tally(len(ids), 0, 0)
    output: Output | None = None
    try:
        output = output_for(args.out, resume=args.resume)
        if output.adopted is not None:
            note(f"note: resuming from the lines a killed batch left ({output.adopted.name})")
        retried = output.retry(frozenset(ids)) if args.retry_failed else []
        with output:
            done = output.state.done
            todo = retried + [session_id for session_id in ids if session_id not in done]
            tally.earlier, tally.retried = len(ids) - len(todo), len(retried)
            tally.earlier_failures = output.state.failures - len(retried)
            warn_strangers(done - set(ids), args.out, opened)
            results = engine_results(args, opened, todo)
            try:
                with progress_bar(len(todo), sys.stderr) as bar:
                    for result in results:
                        output.write(result)
                        tally.count(result)
                        if redacted is not None:
                            redacted.count(result.line)
                        bar.update()
            finally:
                results.close()
    except KeyboardInterrupt as exc:
        return say_interrupted(tally.interrupted(output, args.out), exc)
    except WorkerDied as exc:  # its finished lines are kept, as an interruption's
        note(tally.interrupted(output, args.out, f"{exc.code}: {exc.message}"))
        return 1
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise write_failure("--out", args.out, exc) from None
    status = 1 if tally.failures else 0
    finished(status)  # the file is in place: a signal now leaves the batch as it finished
    note(tally.summary(output.where()))
    if redacted is not None:
        note(redacted.summary())
    if not args.verbose:
        opened.report_problems()
    return status
