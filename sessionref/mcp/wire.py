"""The stdio wire under the MCP server: what the SDK's stdio transport cannot read or write.

Its reader hands over a line that is no JSON-RPC message as an exception and answers nothing
(:func:`answer_unreadable` answers it); its writer encodes each message as UTF-8 and fails,
ending the server, on a string with a lone surrogate, which a session title cut inside an
emoji or an id from a file name that is no UTF-8 holds (:func:`send_writable` makes such
strings well formed first).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import mcp_types as types
import pydantic
import pydantic_core
from mcp.shared.message import SessionMessage

from sessionref.codecs.jsstring import well_formed
from sessionref.log.lines import parse_json


def unreadable_answer(error: Exception) -> SessionMessage:
    """The answer to a line the transport could not read as a JSON-RPC message: a parse
    error for text that is not JSON, an invalid request for JSON that is no message; its
    ``id`` null, as JSON-RPC 2.0 says when the request's cannot be known.

    >>> import pydantic
    >>> try:
    ...     types.jsonrpc_message_adapter.validate_json("[1]")
    ... except pydantic.ValidationError as exc:
    ...     unreadable_answer(exc).message.error.code == types.INVALID_REQUEST
    True
    """
    kinds = {item.get("type") for item in _errors(error)}
    if "json_invalid" in kinds or not kinds:
        code, message = types.PARSE_ERROR, "Parse error"
    else:
        code, message = types.INVALID_REQUEST, "Invalid Request"
    answer = types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)
    )
    return SessionMessage(answer)


def read_again(error: Exception) -> SessionMessage | None:
    """The message of a line the transport refused as JSON that ``JSON.parse`` reads: one
    holding a lone surrogate escape (``"\\ud83d"``), which pydantic's parser refuses and
    Python's takes; ``None`` for any other failure.

    >>> import pydantic
    >>> line = '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"q":"\\\\ud83d"}}'
    >>> try:
    ...     types.jsonrpc_message_adapter.validate_json(line)
    ... except pydantic.ValidationError as exc:
    ...     read_again(exc).message.params
    {'q': '\\ud83d'}
    """
    found = _errors(error)
    if len(found) != 1 or found[0].get("type") != "json_invalid":
        return None
    given = found[0].get("input", "")
    line = given if isinstance(given, bytes) else str(given).encode("utf-8", "surrogatepass")
    try:
        value = parse_json(line)  # JSON.parse's reading, lone surrogate escapes and all
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(value, by_name=False))
    except (ValueError, RecursionError, pydantic.ValidationError):  # not JSON, or no message
        return None


def _errors(error: Exception) -> list[dict[str, Any]]:
    """What a pydantic validation error lists (nothing for another exception).

    >>> _errors(ValueError("x"))
    []
    """
    errors = getattr(error, "errors", None)
    return list(errors()) if callable(errors) else []


async def answer_unreadable(incoming: Any, forward: Any, outgoing: Any) -> None:
    """Pass the client's messages on to the server, with those the MCP SDK's stdio transport
    could not parse but ``JSON.parse`` reads (:func:`read_again`); answer each line that was
    no message (the transport hands over its failure and answers nothing)."""
    async with forward:
        async for item in incoming:
            if isinstance(item, Exception):
                again = read_again(item)
                if again is None:
                    await outgoing.send(unreadable_answer(item))
                else:
                    await forward.send(again)
            else:
                await forward.send(item)


def writable(item: SessionMessage) -> SessionMessage:
    """``item`` as the stdio transport can write it: when a string in it has a lone
    surrogate, which UTF-8 cannot encode, the message with every string well formed (each
    lone surrogate U+FFFD, as the views show them); else ``item`` itself. A resource's URI
    names its session in ASCII (``dsh-session:`` and base64url), so it still reads it.

    >>> note = types.JSONRPCNotification(jsonrpc="2.0", method="x", params={"t": "a\\ud83d"})
    >>> writable(SessionMessage(note)).message.params
    {'t': 'a\\ufffd'}
    >>> item = SessionMessage(types.JSONRPCNotification(jsonrpc="2.0", method="x"))
    >>> writable(item) is item
    True
    """
    message = item.message
    try:
        message.model_dump_json(by_alias=True, exclude_unset=True)  # what the transport does
    except pydantic_core.PydanticSerializationError:
        values = _well_formed_values(message.model_dump(by_alias=True, exclude_unset=True))
        return dataclasses.replace(item, message=type(message).model_validate(values))
    return item


def _well_formed_values(value: Any) -> Any:
    """``value`` (strings, lists and dicts of them) with every string well formed.

    >>> _well_formed_values({"a\\udc00": ["\\ud800", 1]})
    {'a\\ufffd': ['\\ufffd', 1]}
    """
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, list):
        return [_well_formed_values(item) for item in value]
    if isinstance(value, dict):
        return {well_formed(key): _well_formed_values(item) for key, item in value.items()}
    return value


async def send_writable(messages: Any, outgoing: Any) -> None:
    """Pass the server's messages on to the transport, each :func:`writable`; close the
    transport's stream after the last, as the server closed its own."""
    async with outgoing, messages:
        async for item in messages:
            await outgoing.send(writable(item))
