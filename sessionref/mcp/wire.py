"""The stdio wire under the MCP server: what the SDK's stdio transport cannot read or write.

Its reader hands over a line that is no JSON-RPC message as an exception and answers nothing
(:func:`answer_unreadable` answers it); its writer encodes each message as UTF-8 and fails,
ending the server, on a string with a lone surrogate, which a session title cut inside an
emoji or an id from a file name that is no UTF-8 holds (:func:`send_writable` makes such
strings well formed first, and :func:`written` writes each message's text with no raw
``<``, control or bidi control); a client that closes the output ends the server as a closed
stdout ends any command (:func:`run_served`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import threading
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, Final, cast

import anyio
import mcp_types as types
import pydantic
import pydantic_core
from mcp.shared.message import SessionMessage

from sessionref.codecs.jsjson import js_numbers_written, parse_json
from sessionref.codecs.jsstring import well_formed
from sessionref.controls import shown_json

CLOSED_OUTPUT: Final = (BrokenPipeError, anyio.BrokenResourceError, anyio.ClosedResourceError)
"""What the server's tasks raise once the client has closed its output."""
_NOT_JSON: Final = object()
"""What :func:`_json` gives for a line that is not JSON."""


AHEAD: Final = 64
"""The most lines :func:`daemon_lines` reads ahead of the server."""


async def daemon_lines(lines: Iterable[str]) -> AsyncIterator[str]:
    """``lines`` (a blocking file's), read on a daemon thread of their own, at most
    :data:`AHEAD` ahead: a signal can end the server while that thread waits for input,
    which a worker thread of the event loop, joined as the process exits, would not let it.

    >>> async def read() -> list[str]:
    ...     return [line async for line in daemon_lines(["a\\n", "b\\n"])]
    >>> asyncio.run(read())
    ['a\\n', 'b\\n']
    """
    loop = asyncio.get_running_loop()
    arrived: asyncio.Queue[str | None] = asyncio.Queue()
    room = threading.Semaphore(AHEAD)

    def hand(line: str | None) -> bool:
        try:
            loop.call_soon_threadsafe(arrived.put_nowait, line)
        except RuntimeError:  # the loop is closed: the server has ended
            return False
        return True

    def pump() -> None:
        try:
            for line in lines:
                room.acquire()
                if not hand(line):
                    return
        finally:
            hand(None)

    threading.Thread(target=pump, name="mcp-input", daemon=True).start()
    while (line := await arrived.get()) is not None:
        room.release()
        yield line


class Lines:
    """The lines of the client's input as the SDK's stdio reader takes them (it reads
    ``lines``), each kept in :attr:`read` until :func:`answer_unreadable` takes it with what
    the reader made of it: the reader makes one item of each line, in order."""

    def __init__(self, lines: AsyncIterable[str]) -> None:
        self._lines = lines
        self.read: deque[str] = deque()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            self.read.append(line)
            yield line


def request_id(value: Any) -> types.RequestId | None:
    """The id to answer a JSON value that is no valid request with: its ``id`` when that is
    one MCP takes (a string or an integer) and the value is no response (JSON-RPC 2.0 answers
    null when the id cannot be known; an id of a response is the server's own).

    >>> request_id({"id": 3, "method": 7}), request_id({"id": "a", "params": [1]})
    (3, 'a')
    >>> [request_id(v) for v in ({"id": 1.5}, {"id": True}, {"id": 3, "result": 1}, [3])]
    [None, None, None, None]
    """
    if not isinstance(value, dict) or (
        "method" not in value and ("result" in value or "error" in value)
    ):
        return None
    found = value.get("id")
    valid = isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool))
    return found if valid else None


def _error(code: int, message: str, answered: types.RequestId | None = None) -> SessionMessage:
    error = types.ErrorData(code=code, message=message)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=answered, error=error))


def _json(line: str) -> Any:
    """``JSON.parse`` of a line (:func:`~sessionref.log.lines.parse_json`), or
    :data:`_NOT_JSON`."""
    try:
        return parse_json(line.encode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python goes
        return _NOT_JSON


def _checked(item: SessionMessage, value: Any) -> tuple[SessionMessage, bool]:
    """``item`` to pass on, unless it is a notification whose line (read as ``value``) holds
    an ``id``: the SDK reads such a line as a notification (it ignores an id that is not a
    string or an integer), and so would answer nothing; it is an invalid request.

    >>> note = SessionMessage(types.JSONRPCNotification(jsonrpc="2.0", method="ping"))
    >>> _checked(note, {"jsonrpc": "2.0", "method": "ping"}) == (note, False)
    True
    >>> answer, answered = _checked(note, {"jsonrpc": "2.0", "id": 1.5, "method": "ping"})
    >>> answered, answer.message.id, answer.message.error.code
    (True, None, -32600)
    """
    notification = isinstance(item.message, types.JSONRPCNotification)
    if notification and isinstance(value, dict) and "id" in value:
        return _error(types.INVALID_REQUEST, "Invalid Request", request_id(value)), True
    return item, False


def read_item(item: SessionMessage | Exception, line: str | None) -> tuple[SessionMessage, bool]:
    """What one line of the client's input comes to, given what the SDK's stdio reader made
    of it (``item``) and the line itself when known: ``(message, False)`` to pass on to the
    server, or ``(answer, True)`` to send back. A line that is not JSON is a parse error, one
    that is JSON but no message (or a notification with an ``id``) an invalid request, its id
    echoed when it has one MCP takes (:func:`request_id`), else null. A line the SDK's parser
    refused that ``JSON.parse`` reads (one holding a lone surrogate escape, ``"\\ud83d"``) is
    read from that reading. Only a notification whose text may hold an ``id`` is read twice.

    >>> import pydantic
    >>> def read(line):
    ...     try:
    ...         item = SessionMessage(types.jsonrpc_message_adapter.validate_json(line))
    ...     except pydantic.ValidationError as exc:
    ...         item = exc
    ...     message, answered = read_item(item, line)
    ...     return message.message.model_dump(exclude_unset=True), answered
    >>> read('{"jsonrpc":"2.0","id":4,"method":"ping","params":"x"}')
    ({'jsonrpc': '2.0', 'id': 4, 'error': {'code': -32600, 'message': 'Invalid Request'}}, True)
    >>> read('{"jsonrpc":"2.0","id":null,"method":"ping"}')[0]["id"], read("x")[0]["error"]
    (None, {'code': -32700, 'message': 'Parse error'})
    >>> read('{"jsonrpc":"2.0","id":7,"method":"ping","params":{"q":"\\\\ud83d"}}')
    ({'jsonrpc': '2.0', 'id': 7, 'method': 'ping', 'params': {'q': '\\ud83d'}}, False)
    """
    if isinstance(item, SessionMessage):
        notification = isinstance(item.message, types.JSONRPCNotification)
        if not notification or line is None or ('"id"' not in line and "\\" not in line):
            return item, False  # a request, or no key "id" (unless escaped) in the line
        return _checked(item, _json(line))
    found = _errors(item)
    refused_json = [
        error.get("input", "") for error in found if error.get("type") == "json_invalid"
    ]
    text = line if line is not None else (str(refused_json[0]) if refused_json else None)
    if text is None:  # no line to read: what the reader's error says
        if found:
            return _error(types.INVALID_REQUEST, "Invalid Request"), True
        return _error(types.PARSE_ERROR, "Parse error"), True
    value = _json(text)
    if value is _NOT_JSON:
        return _error(types.PARSE_ERROR, "Parse error"), True
    if refused_json:  # what pydantic's parser refuses and JSON.parse reads
        try:
            message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
        except pydantic.ValidationError:
            pass
        else:
            return _checked(SessionMessage(message), value)
    return _error(types.INVALID_REQUEST, "Invalid Request", request_id(value)), True


def _errors(error: Exception) -> list[dict[str, Any]]:
    """What a pydantic validation error lists (nothing for another exception).

    >>> _errors(ValueError("x"))
    []
    """
    errors = getattr(error, "errors", None)
    return list(errors()) if callable(errors) else []


async def answer_unreadable(
    incoming: Any,
    forward: Any,
    outgoing: Any,
    lines: Lines | None,
    prepare: Callable[[SessionMessage], SessionMessage],
) -> None:
    """Pass the client's messages on to the server, and answer each line that is no valid
    message (the SDK's transport hands over its failure and answers nothing, and takes a
    notification for a request with an id MCP does not take): :func:`read_item`, with each
    line from ``lines`` when the input is read through them (else ``None``), each answer made
    writable by ``prepare`` as the server's own are (:func:`send_writable`): the id it echoes is the
    client's, which may hold a lone surrogate, a ``<`` or a control."""
    async with forward:
        async for item in incoming:
            line = lines.read.popleft() if lines is not None and lines.read else None
            message, answered = read_item(item, line)
            if answered:
                await outgoing.send(prepare(message))
            else:
                await forward.send(message)


def _dumped(message: types.JSONRPCMessage) -> str:
    """``message``'s JSON text exactly as the SDK's stdio transport writes it."""
    return message.model_dump_json(by_alias=True, exclude_unset=True)


def _well_formed(message: types.JSONRPCMessage) -> types.JSONRPCMessage:
    """``message`` with every string well formed (each lone surrogate U+FFFD)."""
    values = _well_formed_values(message.model_dump(by_alias=True, exclude_unset=True))
    return type(message).model_validate(values)


def writable(item: SessionMessage) -> SessionMessage:
    """``item`` as a transport can write it: when a string in it has a lone surrogate, which
    UTF-8 cannot encode, the message with every string well formed (each lone surrogate
    U+FFFD, as the views show them); else ``item`` itself. A resource's URI names its session
    in ASCII (``dsh-session:`` and base64url), so it still reads it. For a client in this
    process (:func:`~sessionref.mcp.server.in_memory`); over stdio, :func:`written`.

    >>> note = types.JSONRPCNotification(jsonrpc="2.0", method="x", params={"t": "a\\ud83d"})
    >>> writable(SessionMessage(note)).message.params
    {'t': 'a\\ufffd'}
    >>> item = SessionMessage(types.JSONRPCNotification(jsonrpc="2.0", method="x"))
    >>> writable(item) is item
    True
    """
    try:
        _dumped(item.message)
    except pydantic_core.PydanticSerializationError:
        return dataclasses.replace(item, message=_well_formed(item.message))
    return item


class Written:
    """A message as the JSON text the SDK's stdio transport writes, made once
    (:func:`written`): all the transport asks of a message is that text."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def model_dump_json(self, *, by_alias: bool, exclude_unset: bool) -> str:
        """The text (the transport asks for it by alias, unset fields left out)."""
        return self.text


def written(item: SessionMessage) -> SessionMessage:
    """``item`` for the SDK's stdio transport, serialized once here: its JSON text, every
    string well formed when one has a lone surrogate (as :func:`writable` makes it), every
    number as JavaScript writes it, as the command line's JSON has it (pydantic writes a
    score or a title of ``0.000001`` as ``1e-6``), and every ``<``, control character, bidi
    control and line separator a title or an id holds as its escape
    (:func:`~sessionref.controls.shown_json`: the same JSON value, and no tag or escape
    sequence for a model or a terminal to take), which the transport then writes as it is.

    >>> def sent(params):  # the text the transport writes
    ...     note = types.JSONRPCNotification(jsonrpc="2.0", method="x", params=params)
    ...     print(written(SessionMessage(note)).message.text)
    >>> sent({"t": "a\\ud83d"})
    {"jsonrpc":"2.0","method":"x","params":{"t":"a\ufffd"}}
    >>> sent({"n": [1e-6, 2.0]})
    {"jsonrpc":"2.0","method":"x","params":{"n":[0.000001,2]}}
    >>> sent({"t": "</x> \x9b \u202e"})
    {"jsonrpc":"2.0","method":"x","params":{"t":"\\u003c/x> \\u009b \\u202e"}}
    """
    try:
        text = _dumped(item.message)
    except pydantic_core.PydanticSerializationError:
        text = _dumped(_well_formed(item.message))
    text = shown_json(js_numbers_written(text.encode("utf-8")).decode("utf-8"))
    # the transport only calls model_dump_json on what it is given
    return dataclasses.replace(item, message=cast("types.JSONRPCMessage", Written(text)))


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


async def send_writable(
    messages: Any, outgoing: Any, prepare: Callable[[SessionMessage], SessionMessage] = writable
) -> None:
    """Pass the server's messages on to the transport, each made writable by ``prepare``
    (:func:`writable`, or :func:`written` for the stdio transport); close the transport's
    stream after the last, as the server closed its own."""
    async with outgoing, messages:
        async for item in messages:
            await outgoing.send(prepare(item))


def _leaves(error: BaseException) -> list[BaseException]:
    """The exceptions an exception group holds, its groups' too; a lone exception itself.

    >>> def group(*inner):  # as an ExceptionGroup (Python 3.11) holds them
    ...     error = Exception("group")
    ...     error.exceptions = inner
    ...     return error
    >>> _leaves(ValueError()), len(_leaves(group(ValueError(), group(KeyError(), OSError()))))
    ([ValueError()], 3)
    """
    inner = getattr(error, "exceptions", None)
    if not isinstance(inner, tuple):
        return [error]
    return [leaf for member in inner for leaf in _leaves(member)]


def closed_output(error: BaseException) -> bool:
    """Whether ``error`` (an exception group from the server's tasks) is the client closing the
    server's output and nothing else: a broken pipe, and the tasks that then found their
    streams broken or closed.

    >>> def group(*inner):  # as an ExceptionGroup (Python 3.11) holds them
    ...     error = Exception("group")
    ...     error.exceptions = inner
    ...     return error
    >>> closed_output(group(BrokenPipeError(), anyio.BrokenResourceError()))
    True
    >>> closed_output(group(BrokenPipeError(), ValueError()))
    False
    >>> closed_output(group(anyio.ClosedResourceError())), closed_output(BrokenPipeError())
    (False, True)
    """
    leaves = _leaves(error)
    return any(isinstance(leaf, BrokenPipeError) for leaf in leaves) and all(
        isinstance(leaf, CLOSED_OUTPUT) for leaf in leaves
    )


def interruption(error: BaseException) -> KeyboardInterrupt | None:
    """The first Ctrl-C or SIGTERM (:class:`KeyboardInterrupt`) among the exceptions of
    ``error``, a group the server's tasks raise, if any.

    >>> group = BaseException("tasks")  # as a BaseExceptionGroup (Python 3.11) holds them
    >>> group.exceptions = (ValueError(), KeyboardInterrupt("c"))
    >>> interruption(group), interruption(ValueError())
    (KeyboardInterrupt('c'), None)
    """
    return next((leaf for leaf in _leaves(error) if isinstance(leaf, KeyboardInterrupt)), None)


def run_served(main: Callable[[], Awaitable[None]]) -> None:
    """Run the server's ``main`` (``anyio.run``); the client closing the server's output ends
    it as a closed stdout ends any command: a :class:`BrokenPipeError`, not the exception
    group the server's tasks raise then (:func:`closed_output`). A signal that a task group
    gathered into its exception group ends it as a signal ends any command: the
    :class:`KeyboardInterrupt` itself (:func:`interruption`), not a traceback and status 1."""
    try:
        anyio.run(main)
    except Exception as exc:
        if closed_output(exc):
            raise BrokenPipeError(errno.EPIPE, "the client closed the output") from None
        raise
    except BaseException as error:  # a signal itself, or a group holding one
        stopped = interruption(error)
        if stopped is None or stopped is error:
            raise
        raise stopped from None
