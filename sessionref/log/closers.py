"""Closers: the events the harness appends in memory to a log that ends inside a turn.

One ``tool/result`` per tool call of the open turn that has no result (calls are registered
by the ``tool-call`` blocks of ``assistant/message`` and resolved by ``tool/result``; a call
whose ``tool/call`` was logged gets outcome-unknown, one without gets not-started), then
``step/end`` if a step is open, then ``turn/end`` (interrupted). They continue the seqs, so
``capturedThroughSeq`` is the last closer's seq. Being tool results and boundaries, they never
show in a snapshot.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from sessionref.codecs.jsjson import js_json
from sessionref.errors import SessionLogError
from sessionref.log.jsvalue import UNDEFINED, JsTypeError, js_get, js_to_number
from sessionref.log.structs import DecodedLogRecord, LogRecord, raw_data, record_span
from sessionref.transcript import cut_text

_RESETS = ("turn/start", "turn/end")
SHOWN_ID_CHARACTERS: Final = 80
"""The most characters of a call id's JSON a message shows (:func:`shown_call_id`)."""


def shown_call_id(call_id: Any) -> str:
    """A call id as a message names it: its JSON, cut past :data:`SHOWN_ID_CHARACTERS` as a
    title is (:func:`~sessionref.transcript.cut_text`: never inside a run a secret detector
    must see whole; its first character alone when it is one such run) with its length.

    >>> shown_call_id(7), shown_call_id({"k": "v" * 99}), shown_call_id(["a b"] * 30)[-34:]
    ('7', '{… (107 characters of JSON)', '"a b","a… (181 characters of JSON)')
    """
    text = js_json(call_id).decode()
    if len(text) <= SHOWN_ID_CHARACTERS:
        return text
    cut = cut_text(text, SHOWN_ID_CHARACTERS) or text[0] + "…"
    return f"{cut} ({len(text)} characters of JSON)"


def _map_key(value: Any) -> tuple[Any, ...]:
    """A key that tells values apart as a JavaScript ``Map`` does (objects by identity, a
    number as the double it reads as: 2**53 + 1 is 2**53, a huge integer Infinity).

    >>> a, b = {}, {}
    >>> _map_key(1) == _map_key(1.0), _map_key(1) == _map_key(True), _map_key(a) == _map_key(b)
    (True, False, False)
    >>> _map_key(2**53) == _map_key(2**53 + 1), _map_key(10**400) == _map_key(float("inf"))
    (True, True)
    """
    if type(value) in (dict, list):
        return ("object", id(value))
    if type(value) is bool:
        return ("boolean", value)
    if type(value) in (int, float):
        return ("number", js_to_number(value))
    return (type(value).__name__, value)


class _Call:
    def __init__(self, call_id: Any, step: Any) -> None:
        self.call_id = call_id
        self.step = step
        self.call_seq: int | None = None


def _open_turn(records: list[LogRecord]) -> int | None:
    """Index of the ``turn/start`` of a turn the log does not end, if any."""
    for index in range(len(records) - 1, -1, -1):
        kind = records[index].type
        if kind in _RESETS:
            return index if kind == "turn/start" else None
    return None


def interrupted_turn_closers(records: list[LogRecord]) -> list[LogRecord]:
    """The closers of ``records`` (validated, in seq order); none for a log that is balanced.

    >>> def ev(kind, seq, data):
    ...     return DecodedLogRecord(kind, seq=seq, time=seq, data=data)
    >>> log = [ev("turn/start", 0, {"turn": 1}), ev("step/start", 1, {"turn": 1, "step": 1})]
    >>> [(c.type, c.seq) for c in interrupted_turn_closers(log)]
    [('step/end', 2), ('turn/end', 3)]
    """
    start = _open_turn(records)
    if start is None:
        return []
    try:
        return _closers(records, start)
    except JsTypeError as exc:  # the harness fails the load the same way
        raise SessionLogError(f"cannot close the interrupted turn: {exc}") from None


def _closers(records: list[LogRecord], start: int) -> list[LogRecord]:
    turn = js_get(raw_data(records[start]), "turn")
    if turn is None:
        return []
    step: Any = None
    pending: dict[tuple[Any, ...], _Call] = {}
    for record in records[start + 1 :]:
        kind = record.type
        if kind == "step/start":
            step = js_get(raw_data(record), "step")
        elif kind == "step/end":
            pending.clear()
            step = None
        elif kind == "assistant/message":
            data = raw_data(record)
            for block in js_get(js_get(data, "message"), "content"):
                if js_get(block, "type") == "tool-call":
                    call_id = js_get(block, "id")
                    pending[_map_key(call_id)] = _Call(call_id, js_get(data, "step"))
        elif kind == "tool/call":
            call = pending.get(_map_key(js_get(raw_data(record), "callId")))
            if call is not None:
                call.call_seq = record.seq  # type: ignore[assignment]
        elif kind == "tool/result":
            source = js_get(js_get(raw_data(record), "message"), "source")
            pending.pop(_map_key(js_get(source, "callId")), None)
    first, count = record_span(records[-1])
    seq = first + count
    last = records[-1]
    time = last.time0 if last.time is msgspec.UNSET else last.time
    closers: list[LogRecord] = []
    for call in pending.values():
        closers.append(_tool_result(call, turn, seq, time))
        seq += 1
    if step is not None:
        closers.append(
            DecodedLogRecord("step/end", seq=seq, time=time, data={"turn": turn, "step": step})
        )
        seq += 1
    reason = {"kind": "interrupted"}
    closers.append(
        DecodedLogRecord("turn/end", seq=seq, time=time, data={"turn": turn, "reason": reason})
    )
    return closers


def _tool_result(call: _Call, turn: Any, seq: int, time: Any) -> LogRecord:
    """The synthetic error result of a call left without one. The harness validates it as any
    tool result: a call id that is not a non-empty string (a number, ``""``, a missing id)
    fails the load.

    >>> try:
    ...     _tool_result(_Call(7, 1), 1, 21, 0)
    ... except SessionLogError as exc:
    ...     print(str(exc)[:58])
    the closing tool result at seq 21 (for the pending tool ca
    """
    if type(call.call_id) is not str or not call.call_id:
        named = "with no id" if call.call_id is UNDEFINED else shown_call_id(call.call_id)
        raise SessionLogError(
            f"the closing tool result at seq {seq} (for the pending tool call {named}) must "
            "have tool source: a call id that is a non-empty string"
        )
    started = call.call_seq is not None
    message = {
        "id": f"interrupted-tool-result-{call.call_id}-{seq}",
        "role": "user",
        "source": {"kind": "tool", "callId": call.call_id},
        "content": [
            {
                "type": "tool-result",
                "toolCallId": call.call_id,
                "isError": True,
                "content": [{"type": "text", "text": "The tool call was interrupted."}],
            }
        ],
    }
    code = "TOOL_OUTCOME_UNKNOWN" if started else "TOOL_NOT_STARTED"
    data = {"turn": turn, "step": call.step, "message": message, "error": {"code": code}}
    return DecodedLogRecord(
        "tool/result",
        seq=seq,
        time=time,
        data=data,
        surface_op="append",
        source_event_seqs=[call.call_seq] if started else msgspec.UNSET,
    )
