"""Batch snapshots, the engine-independent core: one result per stored session
(docs/api.md §Command line).

Every session of a store is snapshotted as if a prompt written in a session outside the store
referenced it alone. Results come in listing order (newest ``createdAt`` first, ties by id) and
are identical whatever the engine: the context message id is derived from the session id.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import uuid
from collections.abc import Callable, Collection
from typing import Any, Final, Literal, TypedDict

import msgspec

from sessionref.codecs.uri import Reference, encode_session_reference_uri
from sessionref.errors import INVALID_CONFIG, SessionReferenceError
from sessionref.log.store import DirectoryStore, SessionStore
from sessionref.resolver import (
    SessionReferenceResolver,
    check_config,
    distinct_references,
)
from sessionref.resolver import listing_order as listing_order  # the one order, for the engines
from sessionref.rules import positive_safe_integer
from sessionref.types import ContextMessage, Target

Label = Literal["title", "id"]
LABELS: Final[tuple[Label, ...]] = ("title", "id")
ENGINES: Final = ("local", "dask")
StoreFactory = Callable[[], SessionStore]


class ContextResult(TypedDict):
    """A session that snapshotted: its label and the context message's wire form."""

    sessionId: str
    label: str
    context: dict[str, Any]


class ErrorResult(TypedDict):
    """A session that did not snapshot (unreadable log, budget exceeded…)."""

    sessionId: str
    error: dict[str, str]


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


def check_options(max_reference_bytes: int, label: str, workers: int) -> int:
    """Raise ``SESSION_REFERENCE_INVALID_CONFIG`` for options a batch cannot run with.

    Counts follow the resolver's rule (:func:`~sessionref.rules.positive_safe_integer`);
    the number of workers is returned as an ``int``.

    >>> check_options(1, "title", 0)
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: workers must be a positive safe integer
    """
    check_config(max_reference_bytes=max_reference_bytes)
    if label not in LABELS:
        raise SessionReferenceError(f"label must be one of {', '.join(LABELS)}", INVALID_CONFIG)
    return positive_safe_integer(workers, "workers must be a positive safe integer")


class Snapshotter:
    """Builds the batch result of one session, referenced alone by ``target``.

    >>> from sessionref.log.store import MemoryStore
    >>> header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    >>> store = MemoryStore([{"header": header, "events": []}])
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
            return {"sessionId": session_id, "error": exc.to_dict()}
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
