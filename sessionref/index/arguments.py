"""What a caller passes to :class:`~sessionref.index.SessionIndex`, checked before anything is
read or written: a value of another kind is a ``SESSION_REFERENCE_INVALID_CONFIG`` error that
names the argument, never a ``TypeError`` from deep inside (strings, paths and counts are
checked as every API checks them: :func:`~sessionref.errors.string`,
:func:`~sessionref.errors.optional_path`, :func:`~sessionref.errors.positive_count`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from sessionref.errors import wrong_kind
from sessionref.index.refresh import IndexedStore, is_indexed_store
from sessionref.types import Target, as_target

if TYPE_CHECKING:
    from sessionref.redact import Redaction

T = TypeVar("T")


def flag(value: object, name: str) -> bool:
    """``value``, ``True`` or ``False`` (a string such as ``"no"`` would read as true).

    >>> flag(False, "SessionIndex once")
    False
    >>> flag("no", "SessionIndex once")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: SessionIndex once must be True or False, not str
    """
    if not isinstance(value, bool):
        raise wrong_kind(name, "True or False", value)
    return value


def function(value: T, name: str, optional: bool = False) -> T:
    """``value``, something to call (or ``None`` when ``optional``).

    >>> function(print, "SessionIndex warn") is print
    True
    >>> function(5, "SessionIndex warn")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: SessionIndex warn must be a function, not int
    """
    if not callable(value) and not (optional and value is None):
        raise wrong_kind(name, "a function or None" if optional else "a function", value)
    return value


def target(value: object, name: str) -> Target:
    """``value``, a :class:`~sessionref.types.Target`, checked as every target is
    (:func:`~sessionref.types.as_target`: a cwd may be given as an ``os.PathLike``).

    >>> from pathlib import PurePosixPath
    >>> target(Target("t", PurePosixPath("/w")), "SessionIndex.candidates target")
    Target(id='t', cwd='/w')
    """
    if not isinstance(value, Target):
        raise wrong_kind(name, "a Target", value)
    return as_target(value)


def indexed_store(value: object) -> IndexedStore:
    """``value``, a store an index reads (:func:`~sessionref.index.refresh.is_indexed_store`).

    >>> from sessionref.log.store import MemoryStore
    >>> from sessionref.errors import SessionReferenceError
    >>> try:
    ...     indexed_store(MemoryStore([]))
    ... except SessionReferenceError as exc:
    ...     print(exc)
    SessionIndex store must be a DirectoryStore or a HarnessStore, not MemoryStore
    """
    if not is_indexed_store(value):
        raise wrong_kind("SessionIndex store", "a DirectoryStore or a HarnessStore", value)
    return value


def redaction(value: object, name: str) -> Redaction | None:
    """``value``, a :class:`~sessionref.redact.Redaction` or ``None``.

    >>> redaction(None, "SessionIndex.search redaction") is None
    True
    >>> redaction(True, "SessionIndex.search redaction")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: SessionIndex.search redaction must be a Redaction \
or None, not bool
    """
    if value is None:
        return None
    from sessionref.redact import Redaction  # imported when a search asks for redaction

    if not isinstance(value, Redaction):
        raise wrong_kind(name, "a Redaction or None", value)
    return value
