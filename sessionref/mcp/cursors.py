"""The cursors of the MCP server's paginated lists (with :mod:`~sessionref.mcp.server` and
:mod:`~sessionref.mcp.wire`, the only modules that import the MCP SDK): ``resources/list``
gives the sessions a page at a time; the other lists come in one page.

A cursor names the session its page continues after, not a position: sessions added or
removed while a client pages through do not invalidate it (the MCP specification asks servers
for stable cursors). The sessions listed keep their order among themselves (the candidates
order depends only on each session's header), so a client that pages to the end sees every
session that was listed throughout, once; one added meanwhile before its cursor's session is
told by ``notifications/resources/list_changed``.
"""

from __future__ import annotations

import re
from typing import Final

import mcp_types as types
from mcp.shared.exceptions import MCPError

from sessionref.codecs.uri import SCHEME, decode_session_reference_uri, encode_session_reference_uri
from sessionref.errors import SessionReferenceError

CURSOR: Final = re.compile(r"([1-9][0-9]{0,5})\.([A-Za-z0-9_-]+)")
"""A ``resources/list`` cursor as this server gives it (:func:`cursor_of`): which listing of
the session it names (1 but for a session in two roots), a dot, and the base64url text of
that session's ``dsh-session:`` URI."""
GONE: Final = (
    "the session this cursor continues after is no longer listed: list them from the start"
)
"""Why a cursor whose session was removed is refused."""


def cursor_of(order: list[str], start: int) -> str:
    """The cursor of the ``resources/list`` page that starts at the ``start``-th session of
    ``order`` (the listed ids): it names the session before it, and which of that id's
    listings it is (an id in two roots is listed twice).

    >>> cursor_of(["s-alpha", "s-beta", "s-gamma"], 2), cursor_of(["s-a", "s-a", "s-b"], 2)
    ('1.InMtYmV0YSI', '2.InMtYSI')
    """
    last = order[start - 1]
    return f"{order[:start].count(last)}.{encode_session_reference_uri(last)[len(SCHEME) :]}"


def not_a_cursor(cursor: str) -> MCPError:
    """The invalid-params error for a cursor this server did not give (shown cut short).

    >>> not_a_cursor("9" * 50).error.message
    "not a cursor of this server: '9999999999999999999999999999999999999999'…"
    """
    shown = repr(cursor) if len(cursor) <= 40 else f"{cursor[:40]!r}…"
    return MCPError(types.INVALID_PARAMS, f"not a cursor of this server: {shown}")


def page_start(cursor: str | None, order: list[str]) -> int:
    """Where the page a ``resources/list`` cursor names starts in ``order`` (the listed ids):
    right after the session it names, wherever that now is. Only a cursor this server gives
    (:func:`cursor_of`) is taken; any other, and one whose session is no longer listed, is an
    invalid-params error.

    >>> order = ["s-new", "s-alpha", "s-beta", "s-gamma"]
    >>> page_start(None, order), page_start("1.InMtYmV0YSI", order)
    (0, 3)
    >>> for cursor in ("01.InMtYmV0YSI", "1.InMtYmV0YSJ", "9" * 5000, "2.InMtYmV0YSI", "1"):
    ...     try:
    ...         page_start(cursor, order)
    ...     except MCPError as exc:
    ...         print(exc.error.message)
    not a cursor of this server: '01.InMtYmV0YSI'
    not a cursor of this server: '1.InMtYmV0YSJ'
    not a cursor of this server: '9999999999999999999999999999999999999999'…
    the session this cursor continues after is no longer listed: list them from the start
    not a cursor of this server: '1'
    """
    if cursor is None:
        return 0
    given = CURSOR.fullmatch(cursor)
    try:
        last = None if given is None else decode_session_reference_uri(SCHEME + given[2])
    except SessionReferenceError:
        last = None
    if given is None or last is None or encode_session_reference_uri(last) != SCHEME + given[2]:
        raise not_a_cursor(cursor)
    at = -1
    for _ in range(int(given[1])):
        try:
            at = order.index(last, at + 1)
        except ValueError:
            raise MCPError(types.INVALID_PARAMS, GONE) from None
    return at + 1


def no_cursor(params: types.PaginatedRequestParams | None) -> None:
    """Refuse a cursor for a list this server gives in one page: it gives no cursor for it.

    >>> no_cursor(None); no_cursor(types.PaginatedRequestParams(cursor="1"))
    Traceback (most recent call last):
    ...
    mcp.shared.exceptions.MCPError: not a cursor of this server: '1'
    """
    if params is not None and params.cursor is not None:
        raise not_a_cursor(params.cursor)
