"""Batch snapshots, the engine-independent core: one result per stored session
(docs/api.md §Command line).

Every session of a store is snapshotted as if a prompt written in a session outside the store
referenced it alone. Results come in listing order (newest ``createdAt`` first, ties by id) and
are identical whatever the engine: the context message id is derived from the session id.
"""

from __future__ import annotations

import functools
import json
import os
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

import msgspec

from sessionref.codecs.jsjson import exact_json
from sessionref.codecs.uri import Reference, encode_session_reference_uri
from sessionref.errors import (
    ErrorInfo,
    SessionLogError,
    SessionReferenceError,
)
from sessionref.listing import listing_order as listing_order  # the one order, for the engines
from sessionref.log.harness_store import HarnessStore
from sessionref.log.multi import MultiStore
from sessionref.log.protocol import Store, read_limits
from sessionref.log.records import DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_LINE_BYTES
from sessionref.log.store import DirectoryStore
from sessionref.resolver import (
    SessionReferenceResolver,
    distinct_references,
)
from sessionref.types import ContextMessage, Target

Label = Literal["title", "id"]
LABELS: Final[tuple[Label, ...]] = ("title", "id")
ENGINES: Final = ("local", "dask")
StoreFactory = Callable[[], Store]
_DECODE: Final = msgspec.json.Decoder(dict[str, Any]).decode


class Snapshotted(msgspec.Struct, frozen=True, rename="camel"):
    """A session that snapshotted: its label and its context message."""

    session_id: str
    label: Any
    """A string, or a title: any JSON value."""
    context: ContextMessage


class Failed(msgspec.Struct, frozen=True, rename="camel"):
    """A session that did not snapshot (unreadable log, budget exceeded…)."""

    session_id: str
    error: ErrorInfo


BatchResult = Snapshotted | Failed
"""One session's result; the class tells which. No msgspec ``tag`` field is written: the wire
form is ``{"sessionId", "label", "context"}`` or ``{"sessionId", "error"}``, as it always was."""


class ResultLine(msgspec.Struct, frozen=True, array_like=True):
    """A result encoded once, where it was made: its session, whether it failed, and its JSON
    line. Engines pass these between processes; the CLI writes ``line`` as it is.

    >>> line = ResultLine.of(Failed("s", ErrorInfo("CODE", "why")))
    >>> line.session_id, line.failed, line.line
    ('s', True, b'{"sessionId":"s","error":{"code":"CODE","message":"why"}}\\n')
    >>> line.decoded()
    {'sessionId': 's', 'error': {'code': 'CODE', 'message': 'why'}}
    """

    session_id: str
    failed: bool
    line: bytes

    @classmethod
    def of(cls, result: BatchResult) -> ResultLine:
        """The JSON line of ``result``, as ``JSON.stringify`` writes it, and a newline."""
        return cls(result.session_id, isinstance(result, Failed), exact_json(result) + b"\n")

    def decoded(self) -> dict[str, Any]:
        """The result's wire form as plain JSON values (lone surrogates kept as they were)."""
        value: dict[str, Any]
        try:
            value = _DECODE(self.line)
        except msgspec.DecodeError:  # a lone surrogate escape, which msgspec refuses
            value = json.loads(self.line)
        return value


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


class Snapshotter:
    """Builds the batch result of one session, referenced alone by ``target``.

    >>> from sessionref.log.store import MemoryStore
    >>> header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    >>> store = MemoryStore([{"header": header, "events": []}])
    >>> snap = Snapshotter(SessionReferenceResolver(store), Target("t"), "title")
    >>> snap.result("s").label, snap.result("nope").error.code
    ('s', 'SESSION_REFERENCE_READ_FAILED')
    >>> snap("nope").failed
    True
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

    def result(self, session_id: str) -> BatchResult:
        """The session's result; a failure becomes a :class:`Failed` result."""
        try:
            label, context = self.context(session_id)
        except SessionReferenceError as exc:
            return Failed(session_id, exc.info)
        return Snapshotted(session_id, label, context)

    def __call__(self, session_id: str) -> ResultLine:
        """The session's result, encoded once: what engines pass on."""
        return ResultLine.of(self.result(session_id))


class ListedStore(DirectoryStore):
    """A :class:`DirectoryStore` made again in a worker process, told where the logs of listed
    sessions are, so it reads them without scanning the whole root again; other ids are found
    as usual. Its root is not checked again (the store that listed it checked it): a root gone
    since lists as empty and a listed log gone since is a read failure naming it, as they are
    in the process that listed them.

    >>> store = ListedStore("/gone", listed={"s": "/gone/--p--/s/session.jsonl"})
    >>> store.path_of("s").as_posix(), store.headers()
    ('/gone/--p--/s/session.jsonl', [])
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        listed: Mapping[str, str],
        conflicts: Mapping[str, str] | None = None,
    ) -> None:
        self._open(Path(root), read_limits(max_bytes, max_line_bytes))  # the root unchecked
        self.listed = {session_id: Path(path) for session_id, path in listed.items()}
        self.conflicts = dict(conflicts or {})

    def path_of(self, session_id: str) -> Path:
        """Where the listing found the session's log; the header is checked when it is read."""
        path = self.listed.get(session_id)
        return super().path_of(session_id) if path is None else path

    def lookup_failure(self, session_id: str) -> str | None:
        """Why the harness's lookup fails the read of a listed session, as the listing found."""
        if session_id in self.listed:
            return self.conflicts.get(session_id)
        return super().lookup_failure(session_id)


class DirectoryRecipe(msgspec.Struct, frozen=True):
    """How another process opens the same :class:`DirectoryStore`: its root and limits, and
    where the listing found the logs of the sessions it will read.

    Picklable and hashable, so a worker can keep one store per recipe.

    >>> recipe = DirectoryRecipe.of(DirectoryStore("/", max_line_bytes=99))
    >>> recipe().root.as_posix(), recipe().max_line_bytes, recipe == DirectoryRecipe.of(recipe())
    ('/', 99, True)
    """

    root: str
    max_bytes: int
    max_line_bytes: int
    listed: tuple[tuple[str, str], ...] = ()
    conflicts: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, store: DirectoryStore, session_ids: Iterable[str] = ()) -> DirectoryRecipe:
        """The recipe of ``store``, its root made absolute, with the (absolute) paths of
        ``session_ids`` that it knows, and why the lookup fails the reads of those it does."""
        listed = tuple(_located(lambda sid: os.path.abspath(store.path_of(sid)), session_ids))
        failing = ((sid, store.lookup_failure(sid)) for sid, _ in listed)
        conflicts = tuple((sid, why) for sid, why in failing if why is not None)
        limits = (store.max_bytes, store.max_line_bytes)
        return cls(os.path.abspath(store.root), *limits, listed, conflicts)

    def __call__(self) -> DirectoryStore:
        """A store like the one this recipe was taken from (a :class:`ListedStore`: its root,
        which may be gone since, is not checked again)."""
        limits = {"max_bytes": self.max_bytes, "max_line_bytes": self.max_line_bytes}
        return ListedStore(
            self.root, **limits, listed=dict(self.listed), conflicts=dict(self.conflicts)
        )


class HarnessRecipe(msgspec.Struct, frozen=True):
    """How another process opens the same store of another harness's files: its class, root
    and limits, and where the listing found the files of the sessions it will read (so those
    are read as in the process that listed them, even when they or the root are gone since).

    >>> from sessionref.claude_code.store import ClaudeCodeStore
    >>> recipe = HarnessRecipe.of(ClaudeCodeStore("/", max_line_bytes=99))
    >>> recipe().root.as_posix(), recipe().max_line_bytes, recipe == HarnessRecipe.of(recipe())
    ('/', 99, True)
    """

    kind: type[HarnessStore]
    root: str
    max_bytes: int
    max_line_bytes: int
    placed: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def of(cls, store: HarnessStore, session_ids: Iterable[str] = ()) -> HarnessRecipe:
        """The recipe of ``store``, its root made absolute, with the (absolute) paths of the
        files of ``session_ids`` that it knows."""
        placed = tuple(
            _located(lambda sid: tuple(map(os.path.abspath, store.paths_of(sid))), session_ids)
        )
        root = os.path.abspath(store.root)
        return cls(type(store), root, store.max_bytes, store.max_line_bytes, placed)

    def __call__(self) -> HarnessStore:
        """A store like the one this recipe was taken from, its root not checked again."""
        store = self.kind.reopened(self.root, self.max_bytes, self.max_line_bytes)
        store.known_places({sid: [Path(path) for path in paths] for sid, paths in self.placed})
        return store


P = TypeVar("P")


def _located(place: Callable[[str], P], session_ids: Iterable[str]) -> Iterator[tuple[str, P]]:
    """``(id, place(id))`` for each of ``session_ids`` that ``place`` (where a store finds
    its log, as an absolute path: a worker may run in another directory) finds; one it does
    not find is left to the worker, which looks again.

    >>> list(_located(str.upper, ["a", "b"]))
    [('a', 'A'), ('b', 'B')]
    """
    for session_id in session_ids:
        try:
            yield session_id, place(session_id)
        except SessionLogError:
            continue


class MultiRecipe(msgspec.Struct, frozen=True):
    """How another process opens the same :class:`MultiStore`: the recipe of each of its
    stores, and which store holds each of the sessions it will read (so it lists no root)."""

    parts: tuple[tuple[str, Any], ...]
    homes: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def of(cls, store: MultiStore, session_ids: Iterable[str] = ()) -> MultiRecipe:
        """The recipe of ``store``, each of its stores told where its of ``session_ids`` are."""
        homes = store.homes_of(session_ids)
        parts = tuple(
            (name, portable_store(part, [sid for sid, at in homes.items() if name in at]))
            for name, part in store.stores.items()
        )
        return cls(parts, tuple((sid, tuple(at)) for sid, at in homes.items()))

    def __call__(self) -> MultiStore:
        """A store like the one this recipe was taken from."""
        homes = {session_id: list(names) for session_id, names in self.homes}
        return MultiStore({name: make() for name, make in self.parts}, homes)


def _itself(store: Store) -> Store:
    return store


def portable_store(store: Store, session_ids: Iterable[str] = ()) -> StoreFactory:
    """A picklable recipe that rebuilds ``store`` in a worker process.

    A :class:`DirectoryStore` is rebuilt from its root and limits, told where the logs of
    ``session_ids`` are (so the worker does not scan the root again); a :class:`MultiStore`
    from the recipes of its stores; another harness's store from its class, root and limits,
    told where the files of ``session_ids`` are. A root is not checked again in the worker:
    one gone during a batch lists as empty and a log gone is a read failure naming it, as
    with one process;
    a :class:`~sessionref.index.SessionIndex` as the store it indexes (a worker reads logs,
    which the index reads from its store; its database stays with the process that lists);
    any other store must pickle.

    >>> portable_store(DirectoryStore("/"))().root.as_posix()
    '/'
    """
    from sessionref.index.store import SessionIndex  # sqlite: imported when there is a store

    if isinstance(store, SessionIndex):
        store = store.store
    if isinstance(store, DirectoryStore):
        return DirectoryRecipe.of(store, session_ids)
    if isinstance(store, MultiStore):
        return MultiRecipe.of(store, list(session_ids))
    if isinstance(store, HarnessStore):
        return HarnessRecipe.of(store, session_ids)
    return functools.partial(_itself, store)
