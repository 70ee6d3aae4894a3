"""A session the command line could not read, worded for it: which session, from which log,
and what went wrong there."""

from __future__ import annotations

from typing import Final

from sessionref.cli.common import OpenStore, quoted
from sessionref.errors import READ_FAILED, SessionReferenceError
from sessionref.log.discovery import named_once
from sessionref.log.multi import AmbiguousSession
from sessionref.log.store import SessionNotFound

_READ_FAILED_PREFIX: Final = "failed to read referenced session: "


def read_failure(
    error: SessionReferenceError, session_id: str, store: OpenStore | None
) -> SessionReferenceError:
    """A ``READ_FAILED`` error of one session, worded for the command line: the session,
    its log file, and what went wrong there (with the line or byte the reader names); a
    :class:`SessionNotFound` saying where it looked when no root holds the session.

    >>> read = SessionReferenceError(
    ...     "failed to read referenced session: seq gap: expected 2, found 3", READ_FAILED)
    >>> print(read_failure(read, "x", None))
    cannot read session "x": seq gap: expected 2, found 3

    The store's reader names the log file in front of what went wrong; the file is named once.
    """
    cause = error.__cause__
    reason = str(cause) if cause is not None else error.message.removeprefix(_READ_FAILED_PREFIX)
    if isinstance(cause, SessionNotFound) and store is not None:
        where = f"{cause.where} in {store.named}" + store.not_found_hint(session_id)
        return SessionNotFound(cause.session_id, where)
    where = store.where(session_id) if store is not None else ""
    message = f"cannot read session {quoted(session_id)}" + (f" from {where}" if where else "")
    message += f": {named_once(reason, where)}"
    if isinstance(cause, AmbiguousSession):
        message += " (give that --root alone)"
    return SessionReferenceError(message, READ_FAILED)
