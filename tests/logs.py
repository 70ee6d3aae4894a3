"""Small builders of DSH log events for tests that need one exact shape at one exact seq.

The messages have the shapes the harness requires (an ``id``, the role of their event, an
assistant source naming ``provider`` and ``model``, a tool result whose call id matches its
source). For whole, well-formed logs use :class:`sessionref.log.builder.LogBuilder`; to store
them, :mod:`sessionref.log.writer`.
"""

from __future__ import annotations

import os
from typing import Any

from sessionref.log.builder import DEFAULT_SOURCE, text_block

Event = dict[str, Any]
text = text_block


class BytesPath(os.PathLike[bytes]):
    """A path of bytes, which names no root a message can show (a review: a bare TypeError)."""

    def __fspath__(self) -> bytes:
        return b"/tmp"


def user(seq: int, body: str, kind: str = "user", op: Any = "append", **extra: Any) -> Event:
    """A ``user/message`` event with one text block (``kind="compact"``: a checkpoint)."""
    source: dict[str, str] = {"kind": kind}
    if kind == "compact":
        source = {"kind": "plugin", "plugin": "compact"}
    data = {"id": f"m{seq}", "role": "user", "content": [text(body)], "source": source}
    data.update(extra.pop("data", {}))
    return {"type": "user/message", "seq": seq, "time": seq, "data": data, "surfaceOp": op, **extra}


def _step_event(
    kind: str, seq: int, message: dict[str, Any], op: Any, extra: dict[str, Any]
) -> Event:
    """A surface event of turn 1, step 1 carrying ``message``."""
    data = {"turn": 1, "step": 1, "message": message}
    return {"type": kind, "seq": seq, "time": seq, "data": data, "surfaceOp": op, **extra}


def assistant(seq: int, body: str, op: Any = "append", **extra: Any) -> Event:
    """An ``assistant/message`` event with reasoning and one text block."""
    message = {
        "id": f"m{seq}",
        "role": "assistant",
        "content": [{"type": "reasoning", "text": "hidden"}, text(body)],
        "source": dict(DEFAULT_SOURCE),
    }
    return _step_event("assistant/message", seq, message, op, extra)


def tool_result(seq: int, output: str, op: Any = "append", **extra: Any) -> Event:
    """A ``tool/result`` event of call ``c1``."""
    block = {"type": "tool-result", "toolCallId": "c1", "content": [text(output)]}
    source = {"kind": "tool", "callId": "c1"}
    message = {"id": f"m{seq}", "role": "user", "content": [block], "source": source}
    return _step_event("tool/result", seq, message, op, extra)


def replace(start: int, end: int) -> dict[str, Any]:
    """A replace surface op."""
    return {"op": "replace", "start": start, "end": end}


def other(seq: int, kind: str = "turn/start", **extra: Any) -> Event:
    """An event that is not on the surface."""
    return {"type": kind, "seq": seq, "time": seq, "data": {"turn": 1}, **extra}


def header(
    session_id: str = "s", created_at: int = 1, cwd: str | None = "/w", **extra: Any
) -> Event:
    """A session header (``extra`` fields after the usual ones)."""
    head: Event = {"type": "session", "version": 0, "id": session_id, "createdAt": created_at}
    if cwd is not None:
        head["cwd"] = cwd
    head["delegationDepth"] = 0
    return {**head, **extra}


def title(seq: int, text: str) -> Event:
    """A ``session/title`` event the harness's title fold takes (docs/format.md §Titles)."""
    data = {"title": text, "messageSeqs": [], "source": {"kind": "user"}}
    return other(seq, "session/title", data=data)


def turn_end(seq: int) -> Event:
    """A ``turn/end``: damage before it makes a log corrupt (docs/format.md §Recovery)."""
    return other(seq, "turn/end", data={"turn": 1, "reason": {"kind": "completed"}})


# The two-turn log of the reader's tests (tests/test_log_*.py): the harness's answers on its
# bytes are recorded there, so these shapes (times from 1000, ids u/a/t + seq) must not change.


def event(kind: str, seq: int, data: Any, **extra: Any) -> Event:
    """An event envelope at time ``1000 + seq``."""
    return {"type": kind, "seq": seq, "time": 1000 + seq, "data": data, **extra}


def prompt(seq: int, body: str, **extra: Any) -> Event:
    """A direct user prompt on the surface."""
    message = {"id": f"u{seq}", "role": "user", "content": [text(body)], "source": {"kind": "user"}}
    return event("user/message", seq, message, surfaceOp="append", **extra)


def answer(seq: int, body: str, *blocks: Any, turn: int = 1, **extra: Any) -> Event:
    """An assistant answer on the surface (extra content blocks after its text)."""
    message = {
        "id": f"a{seq}",
        "role": "assistant",
        "content": [text(body), *blocks],
        "source": dict(DEFAULT_SOURCE),
    }
    data = {"turn": turn, "step": 1, "message": message}
    return event("assistant/message", seq, data, surfaceOp="append", **extra)


def call_result(seq: int, call_id: str, output: str, **extra: Any) -> Event:
    """A tool result on the surface."""
    block = {
        "type": "tool-result",
        "toolCallId": call_id,
        "isError": False,
        "content": [text(output)],
    }
    source = {"kind": "tool", "callId": call_id}
    message = {"id": f"t{seq}", "role": "user", "content": [block], "source": source}
    extra.setdefault("surfaceOp", "append")
    return event("tool/result", seq, {"turn": 1, "step": 1, "message": message}, **extra)


def turn(first: int, number: int, question: str, reply: str) -> list[Event]:
    """A closed turn of six events from seq ``first``."""
    return [
        event("turn/start", first, {"turn": number}),
        prompt(first + 1, question),
        event("step/start", first + 2, {"turn": number, "step": 1}),
        answer(first + 3, reply, turn=number),
        event("step/end", first + 4, {"turn": number, "step": 1}),
        event("turn/end", first + 5, {"turn": number, "reason": {"kind": "completed"}}),
    ]


def two_turns() -> list[Event]:
    """Two closed turns, seqs 0–11."""
    return [
        *turn(0, 1, "first question", "first answer"),
        *turn(6, 2, "second question", "second answer"),
    ]
