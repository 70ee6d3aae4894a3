"""``sessionref batch``: every stored session's snapshot into a JSON-lines file."""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections.abc import Generator
from pathlib import Path
from types import TracebackType
from typing import IO, Final

import msgspec
from tqdm import tqdm

from sessionref.batch.core import ENGINES, ResultLine, listing_order
from sessionref.batch.local import build_result_lines
from sessionref.cli.common import (
    OpenStore,
    add_store_arguments,
    config_error,
    note,
    positive_int,
    quoted,
    reporting_errors,
)
from sessionref.cli.snapshot import add_budget_argument, add_label_arguments

DESCRIPTION = """\
Snapshot every session of a store into a JSON-lines file, one line per session in listing
order (newest first): {"sessionId", "label", "context"} as `snapshot --json` prints it, or
{"sessionId", "error": {"code", "message"}}. A broken session does not stop the batch.

The file appears when the batch is done; an interrupted batch (Ctrl-C) keeps the lines it
finished, and --resume continues it.
"""
EPILOG = """\
examples:
  sessionref batch --root ~/.dsh/sessions --out snapshots.jsonl --workers 4
  sessionref batch --root ~/.dsh/sessions --out snapshots.jsonl --resume
  sessionref batch --root DIR --out FILE --engine dask --scheduler tcp://10.0.0.5:8786
"""
NAMED_FAILURES: Final = 3
"""How many failed sessions the summary line names."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``sessionref batch``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    add_store_arguments(parser)
    parser.add_argument("--out", required=True, metavar="FILE", help="the JSON-lines file to write")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="append to --out, skipping the sessions it already holds (a torn last line is "
        "dropped)",
    )
    add_budget_argument(parser)
    add_label_arguments(parser, explicit=False)
    engine = parser.add_argument_group("engine")
    engine.add_argument(
        "--workers", type=positive_int, default=1, metavar="N", help="worker processes"
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


def _result_line(line: bytes, number: int, path: Path) -> tuple[str, bool]:
    """The session id of one complete output line and whether it is an error line."""
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        value = None
    if not isinstance(value, dict) or not isinstance(value.get("sessionId"), str):
        raise config_error(f"{path}: line {number} is not a batch result; cannot --resume")
    return value["sessionId"], "error" in value


class ResumeState(msgspec.Struct, frozen=True):
    """What an existing output file already holds."""

    done: frozenset[str]
    failures: int
    intact_bytes: int


def read_resume_state(path: Path) -> ResumeState:
    """Ids already in ``path`` and where its intact part ends: a torn last line is not counted.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = Path(d, "out.jsonl")
    ...     _ = out.write_bytes(b'{"sessionId":"a","context":{}}\\n{"sessionId":"b","err')
    ...     read_resume_state(out)
    ResumeState(done=frozenset({'a'}), failures=0, intact_bytes=31)
    """
    done: set[str] = set()
    failures = intact = 0
    if not path.exists():
        return ResumeState(frozenset(), 0, 0)
    with path.open("rb") as lines:
        for number, line in enumerate(lines, 1):
            if not line.endswith(b"\n"):
                break
            session_id, failed = _result_line(line, number, path)
            if session_id not in done:
                failures += failed
            done.add(session_id)
            intact += len(line)
    return ResumeState(frozenset(done), failures, intact)


class OutputFile:
    """Where batch lines go: a temporary file renamed over ``path`` at the end, or ``path``
    itself, appended to, when resuming.

    Nothing replaces ``path`` if the batch fails; an interrupted batch (``KeyboardInterrupt``)
    that finished some lines puts them in ``path``, for ``--resume`` to continue.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with OutputFile(Path(d, "out.jsonl"), resume=False) as out:
    ...         out.write(b"x\\n")
    ...         print(sorted(os.listdir(d)) != ["out.jsonl"])
    ...     print(sorted(os.listdir(d)), Path(d, "out.jsonl").read_bytes())
    True
    ['out.jsonl'] b'x\\n'
    """

    def __init__(self, path: Path, *, resume: bool) -> None:
        self.path = path
        self.resume = resume
        self.state = read_resume_state(path) if resume else ResumeState(frozenset(), 0, 0)
        self.lines = 0
        self.kept = False
        self._temporary: Path | None = None
        self._file: IO[bytes] | None = None

    def __enter__(self) -> OutputFile:
        if self.resume:
            self._file = self.path.open("ab")
            self._file.truncate(self.state.intact_bytes)
            return self
        self._temporary = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex[:12]}.tmp")
        descriptor = os.open(self._temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        self._file = os.fdopen(descriptor, "wb")
        return self

    def write(self, line: bytes) -> None:
        """Write one line; a resumed file is flushed per line so an interruption loses none."""
        assert self._file is not None, "OutputFile used outside its with block"
        self._file.write(line)
        self.lines += 1
        if self.resume:
            self._file.flush()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        assert self._file is not None
        keep = kind is None or (kind is KeyboardInterrupt and self.lines > 0)
        self.kept = keep or self.resume
        try:
            if keep and self._temporary is not None:
                self._file.flush()
                os.fsync(self._file.fileno())
        finally:
            self._file.close()
            if self._temporary is not None:
                try:
                    if keep:
                        os.replace(self._temporary, self.path)
                finally:
                    self._temporary.unlink(missing_ok=True)


class Tally(msgspec.Struct):
    """What a batch run did, for its summary line."""

    sessions: int
    earlier: int
    earlier_failures: int
    written: int = 0
    failed: list[str] = msgspec.field(default_factory=list)

    def count(self, result: ResultLine) -> None:
        """Count one result written."""
        self.written += 1
        if result.failed:
            self.failed.append(result.session_id)

    @property
    def failures(self) -> int:
        """Failed sessions in the output file, this run's and earlier ones."""
        return self.earlier_failures + len(self.failed)

    def summary(self, out: Path) -> str:
        """``N sessions: W written, F failed → FILE``, naming the first failures.

        >>> tally = Tally(5, 1, 0)
        >>> for result in (ResultLine("a", True, b""), ResultLine("b", False, b"")):
        ...     tally.count(result)
        >>> tally.summary(Path("out.jsonl"))
        '5 sessions: 1 already in the file, 2 written, 1 failed → out.jsonl (failed: "a")'
        """
        earlier = f"{self.earlier} already in the file, " if self.earlier else ""
        line = f"{self.sessions} sessions: {earlier}{self.written} written, "
        line += f"{len(self.failed)} failed → {out}"
        if self.failed:
            named = ", ".join(quoted(session_id) for session_id in self.failed[:NAMED_FAILURES])
            more = len(self.failed) - NAMED_FAILURES
            line += f" (failed: {named}{f' and {more} more' if more > 0 else ''})"
        if self.earlier_failures:
            line += f"; {self.earlier_failures} failed in an earlier run"
        return line

    def interrupted(self, out: Path, kept: bool) -> str:
        """The one line an interrupted run prints; ``kept``: whether ``out`` holds its lines.

        >>> Tally(9, 0, 0).interrupted(Path("/nonexistent"), False)
        'interrupted before any session was done: /nonexistent is unchanged'
        """
        if not kept:
            return f"interrupted before any session was done: {out} is unchanged"
        return (
            f"interrupted: {complete_lines(out)} of {self.sessions} sessions are in {out}; "
            "run the same command with --resume to do the rest"
        )


def complete_lines(path: Path) -> int:
    """How many lines of ``path`` end in a newline (a torn last one does not count).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as file:
    ...     _ = file.write(b"a\\nb\\nc")
    ...     file.flush()
    ...     complete_lines(Path(file.name))
    2
    """
    with path.open("rb") as file:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: file.read(1 << 20), b""))


def progress_bar(total: int, stream: IO[str]) -> tqdm[None]:
    """A progress bar on ``stream`` when it is a terminal; silent otherwise.

    >>> import io
    >>> with progress_bar(2, io.StringIO()) as bar:
    ...     bar.update()
    ...     bar.disable
    True
    """
    return tqdm(
        total=total,
        file=stream,
        disable=not stream.isatty(),
        unit="session",
        dynamic_ncols=True,
        smoothing=0.1,
    )


def engine_results(
    args: argparse.Namespace, opened: OpenStore, ids: list[str]
) -> Generator[ResultLine, None, None]:
    """The results of ``ids`` from the engine the command line asked for."""
    if args.engine == "local":
        return build_result_lines(
            opened.store,
            max_reference_bytes=args.max_bytes,
            label=args.label_from,
            workers=args.workers,
            session_ids=ids,
        )
    try:
        # Only here: dask is an optional dependency, and heavy to import.
        from sessionref.batch import dask as dask_engine
    except ImportError as exc:
        raise config_error(f"--engine dask: {exc}") from None
    bag = dask_engine.result_lines_bag(
        opened.store, max_reference_bytes=args.max_bytes, label=args.label_from, session_ids=ids
    )
    return dask_engine.iter_bag(bag, workers=args.workers, scheduler=args.scheduler)


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Snapshot every session of a store into a JSON-lines file (exit 1 if any failed)."""
    if args.scheduler is not None and args.engine != "dask":
        args.parser.error("--scheduler needs --engine dask")
    if args.scheduler is not None and args.scheduler.startswith("inproc://"):
        args.parser.error("--scheduler: an inproc:// address is not reachable from here")
    opened = OpenStore.of(args)
    ids = listing_order(opened.listed)
    out = Path(args.out)
    tally = Tally(len(ids), 0, 0)
    output: OutputFile | None = None
    try:
        output = OutputFile(out, resume=args.resume)
        with output:
            done = output.state.done
            todo = [session_id for session_id in ids if session_id not in done]
            tally.earlier, tally.earlier_failures = len(ids) - len(todo), output.state.failures
            results = engine_results(args, opened, todo)
            try:
                with progress_bar(len(todo), sys.stderr) as bar:
                    for result in results:
                        output.write(result.line)
                        tally.count(result)
                        bar.update()
            finally:
                results.close()
    except KeyboardInterrupt:
        note(tally.interrupted(out, output is not None and output.kept))
        return 130
    except OSError as exc:
        raise config_error(f"--out {out}: {exc.strerror or exc}") from None
    note(tally.summary(out))
    if not args.verbose:
        opened.report_problems()
    return 1 if tally.failures else 0
