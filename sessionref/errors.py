"""The one exception type of sessionref and its codes (docs/api.md §Errors)."""

from __future__ import annotations

from typing import Final

INVALID_REFERENCE: Final = "SESSION_REFERENCE_INVALID_REFERENCE"
SELF_REFERENCE: Final = "SESSION_REFERENCE_SELF_REFERENCE"
TOO_MANY: Final = "SESSION_REFERENCE_TOO_MANY"
READ_FAILED: Final = "SESSION_REFERENCE_READ_FAILED"
BUDGET_EXCEEDED: Final = "SESSION_REFERENCE_BUDGET_EXCEEDED"
CANCELLED: Final = "SESSION_REFERENCE_CANCELLED"
INVALID_CONFIG: Final = "SESSION_REFERENCE_INVALID_CONFIG"

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

    def __reduce__(self) -> tuple[type[SessionReferenceError], tuple[str, str]]:
        return (type(self), (self.message, self.code))

    def to_dict(self) -> dict[str, str]:
        """The wire form ``{"code", "message"}``.

        >>> SessionReferenceError("x", CANCELLED).to_dict()
        {'code': 'SESSION_REFERENCE_CANCELLED', 'message': 'x'}
        """
        return {"code": self.code, "message": self.message}


class SessionLogError(Exception):
    """A session log that breaks a rule of docs/format.md; surfaces as READ_FAILED.

    >>> str(SessionLogError("seq gap at line 3"))
    'seq gap at line 3'
    """
