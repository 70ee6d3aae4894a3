"""``sessionref batch``: every stored session's snapshot into a JSON-lines file."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import IO

import msgspec

from sessionref.batch.core import ENGINES, LABELS, BatchResult, check_options, listing_order
from sessionref.batch.local import build_snapshots
from sessionref.codecs.jsjson import js_json
from sessionref.errors import INVALID_CONFIG, SessionReferenceError
from sessionref.log.store import DirectoryStore
from sessionref.resolver import DEFAULT_MAX_REFERENCE_BYTES


def positive_int(value: str) -> int:
    """An argparse type: a positive integer.

    >>> positive_int("3")
    3
    """
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return number


def _config_error(message: str) -> SessionReferenceError:
    return SessionReferenceError(message, INVALID_CONFIG)


class ResumeState(msgspec.Struct, frozen=True):
    """What an existing output file already holds."""

    done: frozenset[str]
    failures: int
    intact_bytes: int


def _result_line(line: bytes, number: int, path: Path) -> tuple[str, bool]:
    """The session id of one complete output line and whether it is an error line."""
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        value = None
    if not isinstance(value, dict) or not isinstance(value.get("sessionId"), str):
        raise _config_error(f"{path}: line {number} is not a batch result; cannot resume")
    return value["sessionId"], "error" in value


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
    itself, appended to, when resuming. Nothing is renamed unless the batch completes.

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
        if self.resume:
            self._file.flush()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        assert self._file is not None
        try:
            if kind is None and self._temporary is not None:
                self._file.flush()
                os.fsync(self._file.fileno())
        finally:
            self._file.close()
            if self._temporary is not None:
                try:
                    if kind is None:
                        os.replace(self._temporary, self.path)
                finally:
                    self._temporary.unlink(missing_ok=True)


class Progress:
    """A ``done/total`` bar with the rate, redrawn on a terminal at most 10 times a second.

    >>> import io
    >>> class Tty(io.StringIO):
    ...     def isatty(self) -> bool: return True
    >>> stream = Tty()
    >>> with Progress(2, stream, width=4) as bar:
    ...     bar.advance(); bar.advance()
    >>> stream.getvalue().split("\\r")[-1].split("  ")[:2]
    ['[####]', '2/2']
    >>> with Progress(2, io.StringIO()) as bar:  # not a terminal: silent
    ...     bar.advance()
    """

    def __init__(self, total: int, stream: IO[str], *, width: int = 30) -> None:
        self.total = total
        self.done = 0
        self.width = width
        self.stream = stream if stream.isatty() else None
        self.started = self.drawn = time.monotonic()
        self.shown = -1

    def __enter__(self) -> Progress:
        self._draw()
        return self

    def advance(self) -> None:
        """Count one finished session."""
        self.done += 1
        if self.done == self.total or time.monotonic() - self.drawn >= 0.1:
            self._draw()

    def _draw(self) -> None:
        if self.stream is None:
            return
        self.drawn, self.shown = time.monotonic(), self.done
        rate = self.done / max(self.drawn - self.started, 1e-9)
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r[{bar}]  {self.done}/{self.total}  {rate:.1f} sessions/s")
        self.stream.flush()

    def __exit__(self, *exc_info: object) -> None:
        if self.stream is not None:
            if self.shown != self.done:
                self._draw()
            self.stream.write("\n")
            self.stream.flush()


def _engine_results(
    args: argparse.Namespace, store: DirectoryStore, ids: list[str]
) -> Iterator[BatchResult]:
    """The results of ``ids`` from the engine the command line asked for."""
    if args.engine == "local":
        return build_snapshots(
            store,
            max_reference_bytes=args.max_bytes,
            label=args.label,
            workers=args.workers,
            session_ids=ids,
        )
    try:
        from sessionref.batch import dask as dask_engine
    except ImportError as exc:
        raise _config_error(str(exc)) from None
    bag = dask_engine.snapshots_bag(
        store, max_reference_bytes=args.max_bytes, label=args.label, session_ids=ids
    )
    return dask_engine.iter_bag(bag, workers=args.workers, scheduler=args.scheduler)


def run_batch(args: argparse.Namespace) -> int:
    """Snapshot every stored session into a JSON-lines file (exit 1 if any failed)."""
    if args.scheduler is not None and args.engine == "local":
        args.parser.error("--scheduler needs --engine dask")
    args.engine = args.engine or ("dask" if args.scheduler else "local")
    check_options(args.max_bytes, args.label, args.workers)
    root = Path(args.root)
    if not root.is_dir():
        raise _config_error(f"session store {str(root)!r} is not a directory")
    store = DirectoryStore(root)
    ids = listing_order(store)  # also where the store finds each log: it is not scanned again
    out = Path(args.out)
    try:
        with OutputFile(out, resume=args.resume) as output:
            todo = [session_id for session_id in ids if session_id not in output.state.done]
            failures = output.state.failures
            with Progress(len(todo), sys.stderr) as progress:
                for result in _engine_results(args, store, todo):
                    output.write(js_json(result) + b"\n")
                    failures += "error" in result
                    progress.advance()
    except OSError as exc:
        raise _config_error(f"cannot write {out}: {exc.strerror or exc}") from None
    return 1 if failures else 0


def add_batch_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``sessionref batch`` on the subcommands of the ``sessionref`` parser.

    >>> parser = argparse.ArgumentParser(prog="sessionref")
    >>> add_batch_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["batch", "--root", "r", "--out", "o", "--workers", "2"])
    >>> args.workers, args.engine, args.label, args.resume
    (2, None, 'title', False)
    """
    batch = commands.add_parser("batch", help=(run_batch.__doc__ or "").strip())
    batch.set_defaults(run=run_batch, parser=batch)
    batch.add_argument("--root", required=True, help="the DSH session store directory")
    batch.add_argument("--out", required=True, help="the JSON-lines file to write")
    batch.add_argument(
        "--max-bytes",
        type=positive_int,
        default=DEFAULT_MAX_REFERENCE_BYTES,
        metavar="N",
        help="budget of each snapshot",
    )
    batch.add_argument(
        "--workers", type=positive_int, default=1, metavar="N", help="worker processes (default 1)"
    )
    batch.add_argument("--engine", choices=ENGINES, help="local (default) or dask")
    batch.add_argument(
        "--scheduler", metavar="ADDRESS", help="a dask.distributed scheduler (dask engine)"
    )
    batch.add_argument("--resume", action="store_true", help="append, skipping ids in --out")
    batch.add_argument("--label", choices=LABELS, default="title", help="title (default) or id")
