"""Legacy event shapes the harness still loads, migrated as it migrates them (docs/format.md).

The old ``turn/start {turn, trigger}``, ``turn/end`` reasons, ``steering/message`` (a user
message now), and the messages written before messages had ids: ``user/message {content,
source}``, ``assistant/message {turn, step, content, provenance}`` and ``tool/result {callId,
content, isError}``. A current-looking event is left alone, so validation sees it as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from sessionref.codecs.jsjson import js_json
from sessionref.errors import SessionLogError
from sessionref.log.jsvalue import UNDEFINED, has_exact_keys, is_record, is_safe_int, js_int

MessageIdOf = Callable[[Any], Any]
"""The message id of the event at a seq (``UNDEFINED`` when it has none)."""


def legacy_message_id(session_id: str, seq: int) -> str:
    """The id the harness gives a message stored before messages had ids.

    >>> legacy_message_id("s", 3)
    'legacy-message:s:3'
    """
    return f"legacy-message:{session_id}:{seq}"


def _malformed(kind: str, seq: int) -> SessionLogError:
    return SessionLogError(f"malformed pre-react-loop {kind} at seq {seq}")


def migrate_turn_start(data: Any, seq: int) -> Any:
    """``{turn, trigger}`` becomes ``{turn}``; a malformed old form is refused.

    >>> migrate_turn_start({"turn": 2, "trigger": {"kind": "user"}}, 0)
    {'turn': 2}
    """
    if not is_record(data) or "trigger" not in data:
        return data
    trigger = data["trigger"]
    if (
        not is_safe_int(data.get("turn"), 1)
        or not has_exact_keys(data, ("turn", "trigger"))
        or not is_record(trigger)
        or type(trigger.get("kind")) is not str
        or not trigger["kind"]
    ):
        raise _malformed("turn/start", seq)
    return {"turn": data["turn"]}


_PLAIN_REASONS: Final = ("completed", "blocked", "max-tokens", "interrupted")


def check_turn_end(data: Any, seq: int) -> None:
    """A ``turn/end`` must be ``{turn ≥ 1, reason}`` with a reason shaped as the harness writes
    it (the data a migration would produce is not needed: closers never read it).

    >>> check_turn_end({"turn": 1, "reason": {"kind": "completed", "note": 1}}, 5)
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: malformed pre-react-loop turn/end at seq 5
    """
    if not is_record(data):
        return
    reason = data.get("reason")
    if (
        not is_safe_int(data.get("turn"), 1)
        or not has_exact_keys(data, ("turn", "reason"))
        or not is_record(reason)
        or type(reason.get("kind")) is not str
    ):
        raise _malformed("turn/end", seq)
    kind = reason["kind"]
    if (
        kind in _PLAIN_REASONS
        or kind == "disposed"
        or (kind == "aborted" and "reason" not in reason)
    ):
        if not has_exact_keys(reason, ("kind",)):
            raise _malformed("turn/end", seq)
    elif kind == "error" and "error" not in reason and not _legacy_error(reason):
        raise _malformed("turn/end", seq)


def _legacy_error(reason: dict[str, Any]) -> bool:
    """An old ``{kind: "error", step, failure}`` or ``{kind: "error", step, message, code?}``."""
    if not is_safe_int(reason.get("step"), 0):
        return False
    failure: Any = reason.get("failure")
    if (
        is_record(failure)
        and has_exact_keys(reason, ("kind", "step", "failure"))
        and (
            has_exact_keys(
                failure, ("message", "code"), ("status", "providerRetryAfterMs", "requestId")
            )
            and type(failure["message"]) is str
            and type(failure["code"]) is str
            and type(failure.get("status", 0)) in (int, float)
            and type(failure.get("providerRetryAfterMs", 0)) in (int, float)
            and type(failure.get("requestId", "")) is str
        )
    ):
        return True
    code = reason.get("code", UNDEFINED)
    keys = ("kind", "step", "message") + (() if code is UNDEFINED else ("code",))
    return (
        has_exact_keys(reason, keys)
        and type(reason.get("message")) is str
        and (code is UNDEFINED or type(code) is str)
    )


def migrate_steering(data: Any, seq: int, session_id: str) -> Any:
    """A ``steering/message`` as the ``user/message`` data it becomes.

    >>> migrate_steering({"turn": 1, "content": [], "source": {"kind": "user"}}, 4, "s")
    {'content': [], 'source': {'kind': 'user'}, 'id': 'legacy-message:s:4', 'role': 'user'}
    """
    if not is_record(data):
        raise _malformed("steering/message", seq)
    wrapped = data.get("message")
    if (
        is_record(wrapped)
        and is_safe_int(data.get("turn"))
        and has_exact_keys(data, ("turn", "message"))
    ):
        return wrapped
    if not is_safe_int(data.get("turn")) or not has_exact_keys(data, ("turn", "content", "source")):
        raise _malformed("steering/message", seq)
    message = {key: value for key, value in data.items() if key != "turn"}
    return {**message, "id": legacy_message_id(session_id, seq), "role": "user"}


def migrate_message(
    kind: str, data: Any, seq: int, session_id: str, replaced_start: Any, id_at: MessageIdOf
) -> Any:
    """Data of a message event stored before messages had ids, in the current shape.

    >>> migrate_message("assistant/message", {"turn": 1, "step": 1, "content": [],
    ...     "provenance": {"provider": "p", "model": "m"}}, 3, "s", None, dict)["message"]
    ... # doctest: +NORMALIZE_WHITESPACE
    {'id': 'legacy-message:s:3', 'role': 'assistant', 'content': [],
     'source': {'provider': 'p', 'model': 'm', 'kind': 'model'}}
    """
    if not is_record(data):
        return data
    if kind == "user/message":
        if any(key in data for key in ("id", "role", "message")) or not (
            "content" in data and "source" in data
        ):
            return data
        return {**data, "id": legacy_message_id(session_id, seq), "role": "user"}
    if kind == "assistant/message":
        if "message" in data or "content" not in data or "provenance" not in data:
            return data
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        provenance = data["provenance"] if is_record(data["provenance"]) else {}
        source = {**provenance, "kind": "model"}
        message = {
            "id": legacy_message_id(session_id, seq),
            "role": "assistant",
            "content": data["content"],
            "source": source,
        }
        return {**rest, "message": message}
    if "message" in data or not all(key in data for key in ("callId", "content", "isError")):
        return data
    call_id = data["callId"]
    rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
    block = {
        "type": "tool-result",
        "toolCallId": call_id,
        "content": data["content"],
        "isError": data["isError"],
    }
    # the id is looked up by number, as in a Map: the start 4.0 names the event at seq 4
    message_id = (
        legacy_message_id(session_id, seq)
        if replaced_start is None
        else id_at(js_int(replaced_start))
    )
    message = {
        "id": message_id,
        "role": "user",
        "content": [block],
        "source": {"kind": "tool", "callId": call_id},
    }
    return {**rest, "message": message}


class Subject:
    """How an error names an event, worded only when an error needs it.

    >>> str(Subject("user/message", 3))
    'session event at seq 3 ("user/message")'
    """

    __slots__ = ("kind", "seq")

    def __init__(self, kind: str, seq: int) -> None:
        self.kind = kind
        self.seq = seq

    def __str__(self) -> str:
        return f"session event at seq {self.seq} ({js_json(self.kind).decode('utf-8')})"
