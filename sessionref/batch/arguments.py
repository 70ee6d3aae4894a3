"""A batch's arguments, checked as either engine is called (docs/api.md §Batch): the store,
the sessions, the options and the redaction, each error naming the function given them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from sessionref.batch.core import LABELS, Label
from sessionref.errors import (
    INVALID_CONFIG,
    SessionReferenceError,
    listed,
    path_text,
    positive_count,
    string,
)
from sessionref.log.protocol import A_STORE, Store, checked_store
from sessionref.redact import Redaction
from sessionref.resolver import redaction_of
from sessionref.roots import check_root, open_store
from sessionref.rules import one_of


def batch_store(store: object) -> Store:
    """The store a batch reads, given as a store (as the resolver takes one:
    :func:`~sessionref.log.protocol.checked_store`) or as a root path, read by the root rule
    of the command line (:func:`~sessionref.roots.check_root`: its harness recognized from
    its layout, the default limits); else INVALID_CONFIG. Both engines take it the same way.

    >>> batch_store("/nonexistent")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: store /nonexistent: no such directory
    >>> batch_store(None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: store must be ... or a root path, not NoneType
    """
    if isinstance(store, (str, os.PathLike)):
        return open_store(check_root(path_text(store, "store"), option="store"))
    return checked_store(store, "store", f"{A_STORE} or a root path")


def batch_ids(session_ids: object) -> list[str] | None:
    """The sessions a batch snapshots in place of the listing (``None``: the listing): a list
    of ids, any iterable but a string (which would be one session per character).

    >>> batch_ids(("a", "b")), batch_ids(None)
    (['a', 'b'], None)
    >>> batch_ids("abc")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: session_ids must be a list, not str
    """
    if session_ids is None:
        return None
    ids = listed(session_ids, "session_ids")
    return [string(session_id, f"session_ids[{n}]") for n, session_id in enumerate(ids)]


def check_options(
    max_reference_bytes: object,
    label: object,
    workers: object,
    count_name: str = "workers",
) -> tuple[int, Label, int]:
    """Raise ``SESSION_REFERENCE_INVALID_CONFIG`` for options a batch cannot run with, naming
    the option and the value given.

    Counts are positive safe integers (:func:`~sessionref.errors.positive_count`); the
    options are returned checked, the counts as ``int``. ``workers`` is the engine's count,
    named ``count_name`` (the Dask engine's is ``partition_size``).

    >>> check_options(1024.0, "title", 2)
    (1024, 'title', 2)
    >>> check_options(1, "title", 0)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: workers must be a positive safe integer, not 0
    >>> check_options(1, "cwd", 1)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: label must be one of title, id, not 'cwd'
    """
    max_bytes = positive_count(max_reference_bytes, "max_reference_bytes")
    return max_bytes, one_of(label, LABELS, "label"), positive_count(workers, count_name)


class BatchArguments(NamedTuple):
    """A batch's arguments, checked: what an engine runs with."""

    store: Store
    session_ids: list[str] | None
    """The sessions in place of the listing; ``None``: the listing."""
    max_bytes: int
    label: Label
    engine_count: int
    """The engine's count: ``workers``, or the Dask engine's ``partition_size``."""
    redaction: Redaction | None


@contextlib.contextmanager
def _naming(caller: str) -> Iterator[None]:
    """Every argument error (INVALID_CONFIG) raised inside names ``caller`` in front; any
    other error passes as it is.

    >>> with _naming("build_snapshots"):
    ...     batch_ids("abc")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: build_snapshots session_ids must be a list, not str
    """
    try:
        yield
    except SessionReferenceError as exc:
        if exc.code != INVALID_CONFIG:
            raise
        raise SessionReferenceError(f"{caller} {exc.message}", INVALID_CONFIG) from None


def batch_arguments(
    caller: str,
    store: object,
    options: tuple[object, object, object, str],
    session_ids: object,
    redact: bool | Redaction,
    redact_patterns: Sequence[str],
) -> BatchArguments:
    """The arguments ``caller`` was given, checked, each error naming ``caller``; ``options``
    are its ``max_reference_bytes``, ``label``, count and the count's name.

    >>> from sessionref.log.store import MemoryStore
    >>> batch_arguments("f", MemoryStore([]), (1.0, "id", 2, "workers"), ["s"], False, ())[1:]
    (['s'], 1, 'id', 2, None)
    >>> batch_arguments("f", MemoryStore([]), (1, "id", 2, "workers"), None, 2, ())
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: f redact must be a bool or a Redaction, not int
    """
    with _naming(caller):
        max_bytes, label, count = check_options(*options)
        redaction = redaction_of(redact, redact_patterns)
        checked = batch_store(store)
        ids = batch_ids(session_ids)
    return BatchArguments(checked, ids, max_bytes, label, count, redaction)
