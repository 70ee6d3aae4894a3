"""The header line: what the harness's listing takes, and what loading a session requires.

The listing reads only line 1 and skips a session whose header is not well-formed there
(no ``delegationDepth``, a fractional ``createdAt``, …). Loading checks more: ``version`` 0
(another version is refused with an upgrade message), an absolute ``cwd``, typed optional
fields. Retired fields make the harness refuse the whole root (docs/format.md).
"""

from __future__ import annotations

import json
from typing import Any, Final

from sessionref.codecs.jsjson import js_json
from sessionref.errors import SessionLogError
from sessionref.log.jsvalue import UNDEFINED, is_safe_int, js_int, js_to_number
from sessionref.log.lines import parse_json_signed_zero
from sessionref.log.structs import SessionHeader

RETIRED_FIELDS: Final = ("sandboxMode", "approvalPolicy")


class RetiredHeader(SessionLogError):
    """A header with a retired policy field: the harness refuses the whole root for it."""


def parse_header_line(line: bytes) -> Any:
    """``JSON.parse`` of the header line (invalid UTF-8 replaced by U+FFFD, the literal ``-0``
    read as negative zero).

    >>> parse_header_line(b'{"id":"s"}'), parse_header_line(b'{"createdAt":-0}')
    ({'id': 's'}, {'createdAt': -0.0})
    >>> parse_header_line(b'\\xef\\xbb\\xbf{}')
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: header line is not valid JSON
    """
    try:
        return parse_json_signed_zero(line)
    except (ValueError, RecursionError):
        raise SessionLogError("header line is not valid JSON") from None


def _not_negative_zero(value: Any) -> bool:
    return not (type(value) is float and value == 0 and str(value).startswith("-"))


def listed_header(value: Any) -> SessionHeader | None:
    """The header the listing takes from a parsed line 1, or ``None`` when it skips it; raises
    :class:`SessionLogError` for one the harness refuses the whole root for (a retired field,
    a cwd that cannot name a project directory: :func:`unfiled_cwd`).

    >>> listed_header({"type": "session", "version": 0, "id": "s", "createdAt": 1.0,
    ...                "delegationDepth": 0}).created_at
    1
    >>> listed_header({"type": "session", "version": 0, "id": "s", "createdAt": 1}) is None
    True
    >>> listed_header({"type": "session", "version": 0, "id": "s", "createdAt": 1,
    ...                "cwd": None, "delegationDepth": 0})
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: header cwd null cannot name a storage path
    """
    if type(value) is not dict:
        return None
    created_at, depth = value.get("createdAt"), value.get("delegationDepth")
    if not (
        value.get("type") == "session"
        and type(value.get("version")) in (int, float)
        and type(value.get("id")) is str
        and is_safe_int(created_at, 0)
        and _not_negative_zero(created_at)
        and is_safe_int(depth, 0)
        and _not_negative_zero(depth)
        and value.get("origin", "subagent") == "subagent"
        and type(value.get("agentPreset", "")) is str
    ):
        return None
    if any(field in value for field in RETIRED_FIELDS):
        raise RetiredHeader("session header uses retired policy baseline fields")
    cwd = value.get("cwd", UNDEFINED)
    problem = None if cwd is UNDEFINED else unfiled_cwd_problem(cwd)
    if problem is not None:
        raise SessionLogError(problem)
    return SessionHeader(
        id=value["id"],
        created_at=js_int(created_at) or 0,
        version=value["version"],
        cwd=None if cwd is UNDEFINED else cwd,
        parent_session=value.get("parentSession"),
        delegation_depth=js_int(depth) or 0,
    )


def unfiled_cwd(cwd: Any) -> bool:
    """Whether the harness fails to name a project directory for a header's ``cwd``, which
    makes its listing throw for the whole root: ``null`` (it reads the length of null), the
    empty string, and a value that is no string whose ``length`` is ``0`` or compares above
    0 (it then reads characters that are not there): any array, an object such as
    ``{"length":3}``. Other values (numbers, booleans, objects without such a ``length``) have
    no characters, so it files them under ``--root--``.

    >>> unfiled_cwd(None), unfiled_cwd([]), unfiled_cwd(""), unfiled_cwd(5), unfiled_cwd("/w")
    (True, True, True, False, False)
    >>> [unfiled_cwd({"length": n}) for n in (3, "1", True, 0, -1, None, "x")]
    [True, True, True, True, False, False, False]
    """
    if cwd is None or type(cwd) is list or cwd == "":
        return True
    if type(cwd) is not dict or "length" not in cwd:
        return False
    length = cwd["length"]
    return (type(length) in (int, float) and length == 0) or js_to_number(length) > 0


def unfiled_cwd_problem(cwd: Any) -> str | None:
    """What is wrong with a header's ``cwd`` when the harness cannot name a project directory
    by it (:func:`unfiled_cwd`), if anything.

    >>> unfiled_cwd_problem(None), unfiled_cwd_problem("/w")
    ('header cwd null cannot name a storage path', None)
    """
    if not unfiled_cwd(cwd):
        return None
    return f"header cwd {js_json(cwd).decode('utf-8', 'surrogatepass')} cannot name a storage path"


def _upgrade_message(value: Any) -> str | None:
    """The harness's refusal of another format version, before any other check."""
    if type(value) is not dict:
        return None
    version = value.get("version")
    if type(version) not in (int, float) or version == 0:
        return None
    session_id = value.get("id")
    named = session_id if type(session_id) is str else json.dumps(session_id)
    return (
        f"session {js_json(named).decode('utf-8')} uses log format v{version}, but this "
        "harness reads v0; upgrade the harness to read it"
    )


def _field_problem(value: dict[str, Any]) -> str | None:
    """What loading refuses in a listed header (docs/format.md), if anything."""
    cwd = value.get("cwd", "/")  # none is fine
    if type(cwd) is not str:
        return "session header cwd must be a string"
    if not cwd.startswith("/"):
        return "session header cwd must be an absolute path"
    if "parentSession" in value and type(value["parentSession"]) is not str:
        return "session header parentSession must be a string"
    if "seedLength" in value and not is_safe_int(value["seedLength"], 0):
        return "session header seedLength must be a non-negative safe integer"
    return None


def loaded_header(value: Any, session_id: str) -> SessionHeader:
    """The header of a log being loaded as ``session_id``, checked as the harness checks it.

    >>> loaded_header({"type": "session", "version": 0, "id": "s", "createdAt": 1,
    ...                "cwd": "w", "delegationDepth": 0}, "s")
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: session header cwd must be an absolute path
    """
    upgrade = _upgrade_message(value)
    if upgrade is not None:
        raise SessionLogError(upgrade)
    header = listed_header(value)
    if header is None:
        raise SessionLogError("corrupt session log: first line is not a session header")
    if header.id != session_id:
        raise SessionLogError(
            f"stored session identity mismatch: requested {js_json(session_id).decode()}, "
            f"header contains {js_json(header.id).decode()}"
        )
    problem = _field_problem(value)
    if problem is not None:
        raise SessionLogError(problem)
    return header
