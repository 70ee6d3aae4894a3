"""The conformance case protocol (docs/api.md §Conformance):
one JSON case in, one JSON result out."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final

import msgspec

from sessionref.codecs.jsjson import exact_json
from sessionref.codecs.uri import (
    decode_session_reference_uri,
    encode_session_reference_uri,
    format_session_reference_mention,
    parse_session_reference_text,
)
from sessionref.errors import ErrorInfo, SessionReferenceError, describe
from sessionref.log.store import MemoryStore
from sessionref.resolver import SessionReferenceResolver

Case = Mapping[str, Any]


def _resolver(case: Case) -> SessionReferenceResolver:
    """The case's store and config, checked as the package checks its config."""
    return SessionReferenceResolver.from_config(
        MemoryStore(case.get("sessions") or []), case.get("config")
    )


def _without_id(message: object) -> Any:
    """A message's wire form without its random ``id``."""
    wire = msgspec.to_builtins(message)
    if isinstance(wire, dict) and wire.get("source", {}).get("kind") == "session-reference":
        wire.pop("id", None)
    return wire


def _encode(case: Case) -> Any:
    return {"uri": encode_session_reference_uri(case["id"])}


def _decode(case: Case) -> Any:
    return {"id": decode_session_reference_uri(case["uri"])}


def _format(case: Case) -> Any:
    """The package formats a reference unchecked: a missing or null label is the id."""
    reference = case["ref"]
    return {
        "mention": format_session_reference_mention(reference["sessionId"], reference.get("label"))
    }


def _parse(case: Case) -> Any:
    return msgspec.to_builtins(parse_session_reference_text(case["text"]))


def _prepare(case: Case) -> Any:
    prepared = _resolver(case).prepare(case["target"], case["content"], case["references"])
    wire = {"content": prepared.content}
    if prepared.additional_context is not None:
        wire["additionalContext"] = _without_id(prepared.additional_context)
    return wire


def _direct(case: Case) -> Any:
    messages = _resolver(case).prepare_direct_messages(
        case["target"], case["messages"], case.get("placement") or "before"
    )
    return {"messages": [_without_id(message) for message in messages]}


def _candidates(case: Case) -> Any:
    resolver = _resolver(case)
    found = resolver.list_candidates(case["target"], case.get("query") or "", case.get("limit"))
    return {"candidates": msgspec.to_builtins(found)}


OPS: Final[dict[str, Callable[[Case], Any]]] = {
    "encode": _encode,
    "decode": _decode,
    "format": _format,
    "parse": _parse,
    "prepare": _prepare,
    "direct": _direct,
    "candidates": _candidates,
}


def _error(info: ErrorInfo) -> dict[str, Any]:
    return {"error": msgspec.to_builtins(info)}


def answer(case: Case) -> dict[str, Any]:
    """The result of one case: ``{"ok": …}`` or ``{"error": {"code", "message"}}``.

    >>> answer({"op": "encode", "id": "s-beta"})
    {'ok': {'uri': 'dsh-session:InMtYmV0YSI'}}
    >>> answer({"op": "nope"})["error"]["code"]
    'UNSUPPORTED'
    """
    op = OPS.get(case.get("op", ""))
    if op is None:
        return _error(ErrorInfo("UNSUPPORTED", f"unknown op {case.get('op')!r}"))
    try:
        return {"ok": op(case)}
    except SessionReferenceError as exc:
        return _error(exc.info)
    except (KeyError, TypeError, AttributeError) as exc:
        return _error(ErrorInfo("BAD_CASE", f"malformed case: {exc!r}"))


def run(lines: Iterable[bytes]) -> Iterator[bytes]:
    """Answer each non-blank JSON line with one JSON line."""
    for line in lines:
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
            result = _error(ErrorInfo("BAD_CASE", describe(exc)))
        else:
            result = answer(case) if isinstance(case, dict) else answer({})
        yield exact_json(result) + b"\n"
