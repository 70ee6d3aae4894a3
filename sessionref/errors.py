"""The one exception type of sessionref, its codes (docs/api.md §Errors), the errors of a
store derived from it, and the checks every argument given to the package passes: a count is
a positive safe integer (as the published package counts); an argument of another kind is a
coded error naming it and the kind given (never a ``TypeError`` or an ``AttributeError`` from
deep inside)."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from typing import Any, Final, Protocol, TypeVar

import msgspec

T = TypeVar("T")

INVALID_REFERENCE: Final = "SESSION_REFERENCE_INVALID_REFERENCE"
SELF_REFERENCE: Final = "SESSION_REFERENCE_SELF_REFERENCE"
TOO_MANY: Final = "SESSION_REFERENCE_TOO_MANY"
READ_FAILED: Final = "SESSION_REFERENCE_READ_FAILED"
BUDGET_EXCEEDED: Final = "SESSION_REFERENCE_BUDGET_EXCEEDED"
CANCELLED: Final = "SESSION_REFERENCE_CANCELLED"
INVALID_CONFIG: Final = "SESSION_REFERENCE_INVALID_CONFIG"
MAX_SAFE_INTEGER: Final = 2**53 - 1
"""``Number.MAX_SAFE_INTEGER``: counts are JavaScript numbers in the package."""

ERROR_CODES: Final = frozenset(
    {
        INVALID_REFERENCE,
        SELF_REFERENCE,
        TOO_MANY,
        READ_FAILED,
        BUDGET_EXCEEDED,
        CANCELLED,
        INVALID_CONFIG,
    }
)


class ErrorInfo(msgspec.Struct, frozen=True):
    """The wire form of an error, ``{"code", "message"}``: in conformance answers and batch
    results alike."""

    code: str
    message: str


class SessionReferenceError(Exception):
    """A failure a caller can act on, with a stable ``code``.

    >>> err = SessionReferenceError("too many", TOO_MANY)
    >>> err.code, str(err)
    ('SESSION_REFERENCE_TOO_MANY', 'too many')
    """

    def __init__(self, message: str, code: str) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown session reference error code {code!r}")
        super().__init__(message)
        self.message = message
        self.code = code

    def __reduce__(self) -> tuple[type[SessionReferenceError], tuple[object, ...]]:
        """Made again from what it was made of (a process pool sends it back pickled); a
        subclass made of other arguments says which."""
        return (type(self), (self.message, self.code))

    @property
    def info(self) -> ErrorInfo:
        """The wire form, as a struct.

        >>> SessionReferenceError("x", CANCELLED).info
        ErrorInfo(code='SESSION_REFERENCE_CANCELLED', message='x')
        """
        return ErrorInfo(self.code, self.message)

    def to_dict(self) -> dict[str, str]:
        """The wire form ``{"code", "message"}`` as plain data.

        >>> SessionReferenceError("x", CANCELLED).to_dict()
        {'code': 'SESSION_REFERENCE_CANCELLED', 'message': 'x'}
        """
        wire: dict[str, str] = msgspec.to_builtins(self.info)
        return wire


def cancelled() -> SessionReferenceError:
    """The error of a call whose cancel token was set, worded as the package words it.

    >>> print(cancelled())
    session reference preparation was cancelled
    """
    return SessionReferenceError("session reference preparation was cancelled", CANCELLED)


class CancelToken(Protocol):
    """Anything with ``is_set()``; a :class:`threading.Event` works (docs/api.md
    §Cancellation, :mod:`sessionref.cancellation`)."""

    def is_set(self) -> bool:
        """Whether the caller asked to stop."""
        ...


def check_cancel(cancel: CancelToken | None) -> None:
    """Raise CANCELLED if ``cancel`` is set; INVALID_CONFIG if it is no token at all.

    >>> import threading
    >>> event = threading.Event()
    >>> check_cancel(event); check_cancel(None); event.set(); check_cancel(event)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: session reference preparation was cancelled
    """
    if cancel is None:
        return
    is_set = getattr(cancel, "is_set", None)
    if not callable(is_set):
        message = f"cancel must be a token with is_set(), such as a threading.Event, not {cancel!r}"
        raise SessionReferenceError(message, INVALID_CONFIG)
    if is_set():
        raise cancelled()


def describe(cause: BaseException) -> str:
    """What a failure says: its message, or its type when it has none or cannot say it.

    >>> describe(OSError(5, "Input/output error")), describe(KeyError("k")), describe(EOFError())
    ('[Errno 5] Input/output error', "'k'", 'EOFError')
    """
    try:
        text = str(cause)
    except Exception:  # a foreign exception whose __str__ fails still becomes a coded error
        text = ""
    return text or type(cause).__name__


def read_failed(cause: BaseException) -> SessionReferenceError:
    """READ_FAILED for whatever a store raised, ``cause`` kept as ``__cause__``.

    >>> read_failed(TimeoutError("mount hung")).message
    'failed to read referenced session: mount hung'
    """
    error = SessionReferenceError(
        f"failed to read referenced session: {describe(cause)}", READ_FAILED
    )
    error.__cause__ = cause
    return error


class SessionLogError(SessionReferenceError):
    """What a store raises for a session log it cannot give: one that breaks a rule of
    docs/format.md, cannot be read, or is not there (``SessionNotFound``). Its code is
    READ_FAILED; the message is the store's own, naming the log file where the store knows
    it. The resolver still wraps it (:func:`read_failed`), as it wraps any failure of a store.

    >>> err = SessionLogError("seq gap at line 3")
    >>> str(err), err.code
    ('seq gap at line 3', 'SESSION_REFERENCE_READ_FAILED')
    >>> err.to_dict()
    {'code': 'SESSION_REFERENCE_READ_FAILED', 'message': 'seq gap at line 3'}
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, READ_FAILED)

    def __reduce__(self) -> tuple[type[SessionLogError], tuple[object, ...]]:
        """Made again from its message, as it was made.

        >>> import pickle
        >>> pickle.loads(pickle.dumps(LogUnreadable("x: gone"))).to_dict()
        {'code': 'SESSION_REFERENCE_READ_FAILED', 'message': 'x: gone'}
        """
        return (type(self), (self.message,))


class LogUnreadable(SessionLogError):
    """The file system did not give a log's bytes (permissions, I/O, gone): not a fault of
    the log, and reading it again, or where a new listing places it, may succeed."""


def safe_count(value: object) -> int | None:
    """``value`` as a positive safe integer, or ``None``: ``Number.isSafeInteger(v) && v > 0``.

    Integral floats count (``2.0`` is ``2`` in JavaScript); a bool is not a number.

    >>> safe_count(2), safe_count(2.0), safe_count(True), safe_count(1.5), safe_count(2**53)
    (2, 2, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    count = int(value)
    return count if 0 < count <= MAX_SAFE_INTEGER else None


def positive_safe_integer(value: object, message: str, code: str = INVALID_CONFIG) -> int:
    """``value`` as a positive safe integer; anything else raises ``message`` with ``code``.

    >>> positive_safe_integer(4.0, "n must be a positive safe integer")
    4
    >>> positive_safe_integer("4", "n must be a positive safe integer")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: n must be a positive safe integer
    """
    count = safe_count(value)
    if count is None:
        raise SessionReferenceError(message, code)
    return count


def positive_count(value: object, name: str, default: int | None = None) -> int:
    """``value``, a positive safe integer, else INVALID_CONFIG naming it and what it was;
    ``None`` is ``default`` when there is one.

    >>> positive_count(3.0, "limit"), positive_count(None, "limit", 10)
    (3, 10)
    >>> positive_count(0, "limit")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: limit must be a positive safe integer, not 0
    """
    if value is None and default is not None:
        return default
    return positive_safe_integer(value, f"{name} must be a positive safe integer, not {value!r}")


def wrong_kind(
    name: str, wanted: str, value: object, code: str = INVALID_CONFIG
) -> SessionReferenceError:
    """The error of argument ``name``, which is not ``wanted``: it names the kind given.

    >>> print(wrong_kind("SessionIndex.search query", "a string", None))
    SessionIndex.search query must be a string, not NoneType
    """
    return SessionReferenceError(f"{name} must be {wanted}, not {type(value).__name__}", code)


def string(value: object, name: str, code: str = INVALID_CONFIG) -> str:
    """``value``, a string, else :func:`wrong_kind`.

    >>> string("auth", "query")
    'auth'
    >>> string(None, "query")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: query must be a string, not NoneType
    """
    if not isinstance(value, str):
        raise wrong_kind(name, "a string", value, code)
    return value


def message_id_arg(value: object, name: str = "snapshot message_id") -> str | None:
    """``value``, the id ``name`` asks a message to have, or ``None`` (no wish); else
    INVALID_CONFIG, for an empty id too (no message in a log the harness loads has one), so
    ``message_id_arg(value) or fresh_id`` never replaces an id given.

    >>> message_id_arg("m"), message_id_arg(None)
    ('m', None)
    >>> message_id_arg("")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: snapshot message_id must not be empty (a message's \
id is non-empty)
    """
    if not (value is None or isinstance(value, str)):
        raise wrong_kind(name, "a string or None", value)
    if value == "":
        message = f"{name} must not be empty (a message's id is non-empty)"
        raise SessionReferenceError(message, INVALID_CONFIG)
    return value


def session_id_of(store: object, method: str, session_id: object) -> str:
    """``session_id`` given to ``method`` of ``store`` (a store's ``read``, ``title`` or
    ``transcript``), when it is a string; else INVALID_CONFIG naming the method. Every read
    passes here: one ``isinstance``.

    >>> session_id_of([], "read", "s")
    's'
    >>> session_id_of([], "read", None)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: list.read session_id must be a string, not NoneType
    """
    if isinstance(session_id, str):
        return session_id
    raise wrong_kind(f"{type(store).__name__}.{method} session_id", "a string", session_id)


def instance(value: object, kind: type[T], name: str, wanted: str) -> T:
    """``value``, an instance of ``kind``, else :func:`wrong_kind` saying it wanted ``wanted``.

    >>> instance(3, int, "limit", "an int")
    3
    >>> instance("3", int, "limit", "an int")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: limit must be an int, not str
    """
    if not isinstance(value, kind):
        raise wrong_kind(name, wanted, value)
    return value


def optional_path(value: object, name: str, code: str = INVALID_CONFIG) -> str | None:
    """``value``, a path as text: a string, an ``os.PathLike`` (as ``os.fspath`` gives it) or
    ``None``, else :func:`wrong_kind` (a path of bytes has no text to compare).

    >>> from pathlib import PurePosixPath
    >>> optional_path(PurePosixPath("/home/dev/docs-site"), "cwd"), optional_path(None, "cwd")
    ('/home/dev/docs-site', None)
    >>> optional_path(b"/w", "cwd")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: cwd must be a string, an os.PathLike or None, not bytes
    """
    if value is None:
        return None
    return path_text(value, name, code, "a string, an os.PathLike or None")


def path_text(
    value: object, name: str, code: str = INVALID_CONFIG, wanted: str = "a string or an os.PathLike"
) -> str:
    """``value``, a path as text: a string or an ``os.PathLike`` (as ``os.fspath`` gives it),
    else :func:`wrong_kind` saying it wanted ``wanted``.

    >>> from pathlib import PurePosixPath
    >>> path_text(PurePosixPath("/r"), "root")
    '/r'
    >>> path_text(None, "root")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: root must be a string or an os.PathLike, not NoneType
    >>> path_text(b"/r", "root")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: root must be a string or an os.PathLike, not bytes
    """
    path = os.fspath(value) if isinstance(value, os.PathLike) else value
    if isinstance(path, str):
        return path
    if value is not path:  # an os.PathLike of bytes: say so, not just its class
        raise SessionReferenceError(
            f"{name} must be {wanted} of text, not {type(value).__name__} of bytes", code
        )
    raise wrong_kind(name, wanted, value, code)


def mapping(
    value: object, name: str, wanted: str = "a mapping", code: str = INVALID_CONFIG
) -> Mapping[str, Any]:
    """``value``, a mapping, else :func:`wrong_kind` saying it wanted ``wanted``.

    >>> mapping({"maxReferences": 2}, "config")
    {'maxReferences': 2}
    >>> mapping([], "config", "a mapping or None")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: config must be a mapping or None, not list
    """
    if not isinstance(value, Mapping):
        raise wrong_kind(name, wanted, value, code)
    return value


def listed(value: object, what: str, code: str = INVALID_CONFIG) -> list[Any]:
    """``value`` as a list when it is a collection of items (any iterable but a string, bytes
    or a mapping, each of which iterates as something else); else ``code`` saying what
    ``what`` must be.

    >>> listed((1, 2), "content")
    [1, 2]
    >>> listed("ab", "references", INVALID_REFERENCE)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: references must be a list, not str
    """
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise wrong_kind(what, "a list", value, code)
    return list(value)


def copied(value: list[Any], what: str) -> list[Any]:
    """A deep copy of ``value`` (content the caller gave, which an answer must not share);
    what cannot be copied (a lock, a generator: no JSON value) is INVALID_CONFIG naming
    ``what``.

    >>> copied([{"type": "text", "text": "hi"}], "content")
    [{'type': 'text', 'text': 'hi'}]
    >>> copied([(n for n in [])], "content")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: content cannot be copied: cannot pickle \
'generator' object
    """
    import copy  # with weakref: 1-2 ms of a command line's start, which never prepares

    try:
        return copy.deepcopy(value)
    except (TypeError, copy.Error, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise SessionReferenceError(f"{what} cannot be copied: {why}", INVALID_CONFIG) from None
