"""Batch snapshots: one context message per stored session, each referenced alone (SPEC §10).

Every session of a store is snapshotted as if a prompt written in a session outside the store
referenced it alone. Results come in listing order (newest ``createdAt`` first, ties by id) and
are identical whatever the worker count: the context message id is derived from the session id.

>>> from sessionref.store import MemoryStore
>>> store = MemoryStore([{"header": {"id": "s", "createdAt": 1}, "events": []}])
>>> [result["sessionId"] for result in build_snapshots(store)]
['s']
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import os
import sys
import time
import uuid
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final, Literal, TypedDict, TypeVar

import msgspec

from sessionref.codecs.jsjson import js_json
from sessionref.codecs.uri import Reference, encode_session_reference_uri
from sessionref.errors import INVALID_CONFIG, SessionReferenceError
from sessionref.resolver import (
    DEFAULT_MAX_REFERENCE_BYTES,
    SessionReferenceResolver,
    check_config,
    distinct_references,
    is_count,
)
from sessionref.resolver import listing_order as ordered_headers
from sessionref.store import DirectoryStore, SessionStore
from sessionref.types import ContextMessage, Target

T = TypeVar("T")
R = TypeVar("R")
Label = Literal["title", "id"]
LABELS: Final[tuple[Label, ...]] = ("title", "id")
ENGINES: Final = ("local", "dask")
StoreFactory = Callable[[], SessionStore]


class ErrorInfo(TypedDict):
    """The wire form of a :class:`SessionReferenceError`."""

    code: str
    message: str


class ContextResult(TypedDict):
    """A session that snapshotted: its label and the context message's wire form."""

    sessionId: str
    label: str
    context: dict[str, Any]


class ErrorResult(TypedDict):
    """A session that did not snapshot (unreadable log, budget exceeded…)."""

    sessionId: str
    error: ErrorInfo


BatchResult = ContextResult | ErrorResult


def context_id(session_id: str) -> str:
    """The context message id of a session's batch snapshot: a uuid5 of its URI.

    >>> context_id("s-beta") == context_id("s-beta") != context_id("s-gamma")
    True
    >>> context_id("\\ud800")  # lone surrogates are fine: the URI is ASCII
    '5e3ed729-e039-565b-b9f8-c2da95243496'
    """
    return str(uuid.uuid5(uuid.NAMESPACE_URL, encode_session_reference_uri(session_id)))


def fresh_target(session_ids: Collection[str]) -> Target:
    """A target session outside the store: its id is none of ``session_ids``.

    >>> fresh_target({"a"}).id.startswith("sessionref-batch-")
    True
    """
    while (candidate := f"sessionref-batch-{uuid.uuid4()}") in session_ids:
        pass  # pragma: no cover - a uuid4 collision
    return Target(candidate)


def listing_order(store: SessionStore) -> list[str]:
    """Every stored session id in listing order: newest ``createdAt`` first, ties by id.

    >>> from sessionref.store import MemoryStore
    >>> listing_order(MemoryStore([
    ...     {"header": {"id": "b", "createdAt": 1, "cwd": "/w"}},
    ...     {"header": {"id": "a", "createdAt": 1}},
    ...     {"header": {"id": "c", "createdAt": 2, "cwd": "/x"}},
    ... ]))
    ['c', 'a', 'b']
    """
    return list(dict.fromkeys(header.id for header in ordered_headers(store.headers())))


def check_options(max_reference_bytes: int, label: str, workers: int) -> None:
    """Raise ``SESSION_REFERENCE_INVALID_CONFIG`` for options a batch cannot run with.

    >>> check_options(1, "title", 0)
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: workers must be a positive integer
    """
    check_config(max_reference_bytes=max_reference_bytes)
    if label not in LABELS:
        raise SessionReferenceError(f"label must be one of {', '.join(LABELS)}", INVALID_CONFIG)
    if not is_count(workers):
        raise SessionReferenceError("workers must be a positive integer", INVALID_CONFIG)


class Snapshotter:
    """Builds the batch result of one session, referenced alone by ``target``.

    >>> from sessionref.store import MemoryStore
    >>> store = MemoryStore([{"header": {"id": "s", "createdAt": 1}, "events": []}])
    >>> snap = Snapshotter(SessionReferenceResolver(store), Target("t"), "title")
    >>> snap("s")["label"], snap("nope")["error"]["code"]
    ('s', 'SESSION_REFERENCE_READ_FAILED')
    """

    def __init__(self, resolver: SessionReferenceResolver, target: Target, label: Label) -> None:
        self.resolver = resolver
        self.target = target
        self.label = label

    def context(self, session_id: str) -> tuple[str, ContextMessage]:
        """The label and context message of one session; raises :class:`SessionReferenceError`.

        The same pieces as :meth:`SessionReferenceResolver.snapshot`, with the title read
        from the log already in hand and a deterministic message id.
        """
        references = distinct_references(self.target, [Reference(session_id, session_id)], 1)
        sources = self.resolver.read_sources(references, label_from_title=self.label == "title")
        context = self.resolver.render_sources(sources, message_id=context_id(session_id))
        return context.source.references[0].label, context

    def __call__(self, session_id: str) -> BatchResult:
        """The session's result; a failure becomes an error result."""
        try:
            label, context = self.context(session_id)
        except SessionReferenceError as exc:
            return {"sessionId": session_id, "error": {"code": exc.code, "message": exc.message}}
        return {"sessionId": session_id, "label": label, "context": msgspec.to_builtins(context)}


class DirectoryRecipe(msgspec.Struct, frozen=True):
    """How another process opens the same :class:`DirectoryStore`: its root and limits.

    Picklable and hashable, so a worker can keep one store per recipe.

    >>> recipe = DirectoryRecipe.of(DirectoryStore("/data", max_line_bytes=99))
    >>> recipe().root.as_posix(), recipe().max_line_bytes, recipe == DirectoryRecipe.of(recipe())
    ('/data', 99, True)
    """

    root: str
    max_bytes: int
    max_line_bytes: int

    @classmethod
    def of(cls, store: DirectoryStore) -> DirectoryRecipe:
        """The recipe of ``store``, its root made absolute."""
        return cls(os.path.abspath(store.root), store.max_bytes, store.max_line_bytes)

    def __call__(self) -> DirectoryStore:
        """A store like the one this recipe was taken from."""
        return DirectoryStore(
            self.root, max_bytes=self.max_bytes, max_line_bytes=self.max_line_bytes
        )


def _itself(store: SessionStore) -> SessionStore:
    return store


def portable_store(store: SessionStore) -> StoreFactory:
    """A picklable recipe that rebuilds ``store`` in a worker process.

    A :class:`DirectoryStore` is rebuilt from its root and limits; any other store must
    pickle.

    >>> portable_store(DirectoryStore("/data"))().root.as_posix()
    '/data'
    """
    if isinstance(store, DirectoryStore):
        return DirectoryRecipe.of(store)
    return functools.partial(_itself, store)


def process_context() -> multiprocessing.context.BaseContext:
    """The start method of worker pools: ``forkserver`` where there is one, else ``spawn``.

    Neither forks a multi-threaded parent (a thread pool, a dask client) mid-flight.
    """
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


_worker: Snapshotter | None = None


def _start_worker(factory: StoreFactory, max_bytes: int, target: Target, label: Label) -> None:
    """Pool initializer: one store and resolver per worker process."""
    global _worker
    resolver = SessionReferenceResolver(factory(), max_reference_bytes=max_bytes)
    _worker = Snapshotter(resolver, target, label)


def _run_in_worker(session_id: str) -> BatchResult:
    assert _worker is not None, "worker used without _start_worker"
    return _worker(session_id)


def ordered_window(
    submit: Callable[[T], Future[R]], items: Iterable[T], window: int
) -> Iterator[R]:
    """Results of ``submit(item)`` in input order, with at most ``window`` futures pending.

    Items are submitted lazily, one as each result is taken, so memory stays bounded.

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:
    ...     list(ordered_window(lambda x: pool.submit(pow, x, 2), range(5), 2))
    [0, 1, 4, 9, 16]
    """
    pending: deque[Future[R]] = deque()
    try:
        for item in items:
            if len(pending) >= window:
                yield pending.popleft().result()
            pending.append(submit(item))
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()


def _pooled(
    factory: StoreFactory, session_ids: list[str], max_bytes: int, label: Label, workers: int
) -> Iterator[BatchResult]:
    """Results from a process pool of ``workers``, at most ``workers`` sessions in flight."""
    target = fresh_target(session_ids)
    pool = ProcessPoolExecutor(
        workers,
        mp_context=process_context(),
        initializer=_start_worker,
        initargs=(factory, max_bytes, target, label),
    )

    def submit(session_id: str) -> Future[BatchResult]:
        return pool.submit(_run_in_worker, session_id)

    try:
        yield from ordered_window(submit, session_ids, workers)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _sequential(
    store: SessionStore, session_ids: list[str], max_bytes: int, label: Label
) -> Iterator[BatchResult]:
    resolver = SessionReferenceResolver(store, max_reference_bytes=max_bytes)
    return map(Snapshotter(resolver, fresh_target(session_ids), label), session_ids)


def _results(
    store: SessionStore,
    session_ids: Iterable[str] | None,
    max_bytes: int,
    label: Label,
    workers: int,
) -> Iterator[BatchResult]:
    ids = listing_order(store) if session_ids is None else list(session_ids)
    if workers == 1 or len(ids) <= 1:
        yield from _sequential(store, ids, max_bytes, label)
    else:
        yield from _pooled(portable_store(store), ids, max_bytes, label, min(workers, len(ids)))


def build_snapshots(
    store: SessionStore,
    *,
    max_reference_bytes: int = DEFAULT_MAX_REFERENCE_BYTES,
    label: Label = "title",
    workers: int = 1,
    session_ids: Iterable[str] | None = None,
) -> Iterator[BatchResult]:
    """A lazy iterator of every stored session's batch result, in listing order.

    Each result is ``{"sessionId", "label", "context"}`` or ``{"sessionId", "error": {"code",
    "message"}}``; a bad session never stops the batch. ``label="title"`` labels a session by
    its latest title (its id when it has none), ``"id"`` by its id. ``workers > 1`` runs a
    process pool with at most ``workers`` sessions in flight (the store must pickle, or be a
    :class:`DirectoryStore`). ``session_ids`` replaces the listing (ids taken in that order).
    Options are checked at once; the store is listed on the first ``next()``.

    >>> from sessionref.store import MemoryStore
    >>> store = MemoryStore([{"header": {"id": "s", "createdAt": 1}, "events": [
    ...     {"type": "session/title", "seq": 0, "data": {"title": "Hello"}}]}])
    >>> [(r["sessionId"], r["label"]) for r in build_snapshots(store)]
    [('s', 'Hello')]
    """
    check_options(max_reference_bytes, label, workers)
    return _results(store, session_ids, max_reference_bytes, label, workers)


# --- command line -----------------------------------------------------------------------------


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
        from sessionref import dask as dask_engine
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
