"""The cursors of the MCP server's paginated lists (with :mod:`~sessionref.mcp.server` and
:mod:`~sessionref.mcp.wire`, the only modules that import the MCP SDK): ``resources/list``
gives the sessions a page at a time; the other lists come in one page.
"""

from __future__ import annotations

import re
from typing import Final

import mcp_types as types
from mcp.shared.exceptions import MCPError

CURSOR: Final = re.compile(r"([1-9][0-9]{0,14})\.([0-9a-f]{16})")
"""A ``resources/list`` cursor as this server gives it: where its page starts, a dot, and
the version of the listing (:func:`cursor_of`)."""


def cursor_of(start: int, version: str) -> str:
    """The cursor of the ``resources/list`` page that starts at the ``start``-th session of
    the listing whose version is ``version``
    (:func:`~sessionref.mcp.catalog.listing_version`).

    >>> cursor_of(500, "8975bee788858117")
    '500.8975bee788858117'
    """
    return f"{start}.{version}"


def not_a_cursor(cursor: str) -> MCPError:
    """The invalid-params error for a cursor this server did not give (shown cut short).

    >>> not_a_cursor("9" * 50).error.message
    "not a cursor of this server: '9999999999999999999999999999999999999999'…"
    """
    shown = repr(cursor) if len(cursor) <= 40 else f"{cursor[:40]!r}…"
    return MCPError(types.INVALID_PARAMS, f"not a cursor of this server: {shown}")


def page_start(cursor: str | None, version: str, total: int, page: int) -> int:
    """Where the page a ``resources/list`` cursor names starts in the listing of ``total``
    sessions whose version is ``version``, ``page`` to a page: only a cursor this server gives
    for that listing (:func:`cursor_of`) is taken; any other, and one given before the
    listing's order changed, is an invalid-params error.

    >>> page_start(None, "8975bee788858117", 1200, 500)
    0
    >>> page_start("1000.8975bee788858117", "8975bee788858117", 1200, 500)
    1000
    >>> for cursor in ("0500.8975bee788858117", "1500.8975bee788858117", "9" * 5000, "x",
    ...                "500.0000000000000000"):
    ...     try:
    ...         page_start(cursor, "8975bee788858117", 1200, 500)
    ...     except MCPError as exc:
    ...         print(exc.error.message)
    not a cursor of this server: '0500.8975bee788858117'
    not a cursor of this server: '1500.8975bee788858117'
    not a cursor of this server: '9999999999999999999999999999999999999999'…
    not a cursor of this server: 'x'
    the sessions listed changed since this cursor was given: list them from the start
    """
    if cursor is None:
        return 0
    given = CURSOR.fullmatch(cursor)
    start = 0 if given is None else int(given[1])
    if given is None or start % page:
        raise not_a_cursor(cursor)
    if given[2] != version:
        raise MCPError(
            types.INVALID_PARAMS,
            "the sessions listed changed since this cursor was given: list them from the start",
        )
    if start >= total:
        raise not_a_cursor(cursor)
    return start


def no_cursor(params: types.PaginatedRequestParams | None) -> None:
    """Refuse a cursor for a list this server gives in one page: it gives no cursor for it.

    >>> no_cursor(None); no_cursor(types.PaginatedRequestParams(cursor="1"))
    Traceback (most recent call last):
    ...
    mcp.shared.exceptions.MCPError: not a cursor of this server: '1'
    """
    if params is not None and params.cursor is not None:
        raise not_a_cursor(params.cursor)
