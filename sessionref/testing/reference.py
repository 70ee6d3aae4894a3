"""A slow, obvious reference for reading one session log as the harness does
(docs/format.md, docs/snapshot.md §Surface and §Projection).

Written straight from the contract and the real stack's observed behaviour (recovery of damaged
tails, closers of an open turn), independently of the library core, so property tests can
compare the library against it.

>>> log = {"header": {"version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0},
...        "events": [
...     {"type": "user/message", "seq": 0, "time": 0, "surfaceOp": "append", "data": {
...         "id": "m0", "role": "user", "source": {"kind": "user"},
...         "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}]}},
...     {"type": "text-chunks", "seq0": 1, "time0": 5,
...      "data": {"turn": 1, "step": 1, "index": 0, "dt": [2], "texts": ["he", "llo"]}}]}
>>> projected_units(log)
[{'role': 'user', 'text': 'hi\\nthere', 'checkpoint': False}]
>>> [(e["seq"], e["time"], e["data"]["chunk"]["text"]) for e in expand_records(log["events"])[1:]]
[(1, 5, 'he'), (2, 7, 'llo')]
"""

from __future__ import annotations

from typing import Any, TypedDict

from sessionref.testing._js import js_normalize
from sessionref.testing.store import LogRecords

__all__ = [
    "ReferenceUnit",
    "captured_through_seq",
    "closers",
    "current_surface",
    "event_units",
    "expand_records",
    "expand_row",
    "migrate",
    "projected_units",
]

Event = dict[str, Any]

_PACKED = {
    "text-chunks": ("texts", "text-delta"),
    "reasoning-chunks": ("texts", "reasoning-delta"),
    "tool-call-chunks": ("args", "tool-call-delta"),
}
_SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})


class ReferenceUnit(TypedDict):
    """One projected conversation item (docs/snapshot.md §Projection)."""

    role: str
    text: str
    checkpoint: bool


def _packed_chunk(kind: str, data: dict[str, Any], item: str) -> dict[str, Any]:
    if kind != "tool-call-delta":
        return {"type": kind, "index": data["index"], "text": item}
    chunk = {"type": kind, "index": data["index"], "id": data.get("id")}
    if "name" in data:
        chunk["name"] = data["name"]
    chunk["argumentsDelta"] = item
    return chunk


def expand_row(row: dict[str, Any]) -> list[Event]:
    """The ``assistant/chunk`` events a packed chunk row stands for
    (docs/format.md §Packed rows)."""
    items_key, kind = _PACKED[row["type"]]
    data = row["data"]
    events, time = [], row["time0"]
    for k, item in enumerate(data[items_key]):
        time += data["dt"][k - 1] if k else 0
        events.append(
            {
                "type": "assistant/chunk",
                "seq": row["seq0"] + k,
                "time": time,
                "data": {
                    "turn": data["turn"],
                    "step": data["step"],
                    "chunk": _packed_chunk(kind, data, item),
                },
            }
        )
    return events


def expand_records(records: list[dict[str, Any]]) -> list[Event]:
    """Storage records → events: packed chunk rows become ``assistant/chunk`` events.

    Raises ``ValueError`` unless ``events[i]["seq"] == i`` afterwards.

    >>> row = {"type": "tool-call-chunks", "seq0": 0, "time0": 10,
    ...        "data": {"turn": 1, "step": 1, "index": 2, "dt": [3], "args": ["{", "}"],
    ...                 "id": "c1", "name": "bash"}}
    >>> second = expand_records([row])[1]
    >>> second["seq"], second["time"], second["data"]["chunk"]["argumentsDelta"]
    (1, 13, '}')
    >>> second["data"]["chunk"]["id"], second["data"]["chunk"]["name"]
    ('c1', 'bash')
    """
    events: list[Event] = []
    for record in records:
        events += expand_row(record) if record.get("type") in _PACKED else [record]
    for index, event in enumerate(events):
        if event.get("seq") != index:
            raise ValueError(f"seq gap: event {index} has seq {event.get('seq')!r}")
    return events


def _legacy_id(seq: int) -> str:
    """A message id for a migrated event (the harness also names the session in it)."""
    return f"legacy-message:{seq}"


def migrate(event: Event) -> Event:
    """An event of an older log in the shape the harness migrates it to (docs/format.md §Legacy).

    ``steering/message`` becomes a ``user/message``; a ``user/message`` without an id gets one
    and its role; an ``assistant/message`` ``{content, provenance}`` and a ``tool/result``
    ``{callId, content, isError}`` are wrapped into a message; ``turn/start`` loses ``trigger``.
    Other events, and events already current, come back unchanged.

    >>> migrate({"type": "steering/message", "seq": 3, "data": {"turn": 1, "content": [],
    ...          "source": {"kind": "user"}}})["data"]
    {'content': [], 'source': {'kind': 'user'}, 'id': 'legacy-message:3', 'role': 'user'}
    """
    kind, data, seq = event.get("type"), event.get("data"), event.get("seq", 0)
    if not isinstance(data, dict):
        return event
    if kind == "steering/message":
        message = data.get("message")
        if not isinstance(message, dict):
            message = {k: v for k, v in data.items() if k != "turn"}
            message.update(id=_legacy_id(seq), role="user")
        return {**event, "type": "user/message", "data": message}
    bare = not {"id", "role", "message"} & set(data) and {"content", "source"} <= set(data)
    if kind == "user/message" and bare:
        return {**event, "data": {**data, "id": _legacy_id(seq), "role": "user"}}
    if kind == "assistant/message" and "message" not in data and "provenance" in data:
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        source = {**(data["provenance"] or {}), "kind": "model"}
        message = {"id": _legacy_id(seq), "role": "assistant", "content": data.get("content")}
        return {**event, "data": {**rest, "message": {**message, "source": source}}}
    if kind == "tool/result" and "message" not in data and {"callId", "isError"} <= set(data):
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        block = {
            "type": "tool-result",
            "toolCallId": data["callId"],
            "content": data.get("content"),
        }
        source = {"kind": "tool", "callId": data["callId"]}
        message = {"id": _legacy_id(seq), "role": "user", "content": [block], "source": source}
        return {**event, "data": {**rest, "message": message}}
    if kind == "turn/start" and "trigger" in data:
        return {**event, "data": {"turn": data.get("turn")}}
    return event


def _is_seq_list(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in value
    )


def _check_sources(event: Event) -> None:
    if "sourceEventSeqs" not in event:
        return
    sources = event["sourceEventSeqs"]
    if not _is_seq_list(sources) or len(set(sources)) != len(sources):
        raise ValueError(f"seq {event['seq']}: bad sourceEventSeqs")
    if any(s >= event["seq"] for s in sources):
        raise ValueError(f"seq {event['seq']}: sourceEventSeqs must precede the event")
    if not sources and event["type"] != "assistant/message":
        raise ValueError(f"seq {event['seq']}: empty sourceEventSeqs")


def _without_output(data: dict[str, Any]) -> dict[str, Any]:
    try:
        message = dict(data["message"])
        first = dict(message["content"][0])
    except (KeyError, IndexError, TypeError) as error:
        raise ValueError(f"tool/result without message.content[0]: {error!r}") from error
    first.pop("content", None)
    message["content"] = [first, *message["content"][1:]]
    return {**data, "message": message}


def _check_prune(event: Event, replaced: list[Event]) -> None:
    if len(replaced) != 1 or replaced[0]["type"] != "tool/result":
        raise ValueError(f"seq {event['seq']}: a tool/result must replace one tool/result")
    if _without_output(event["data"]) != _without_output(replaced[0]["data"]):
        raise ValueError(f"seq {event['seq']}: a prune may only change content[0].content")


def _replace(surface: list[int], event: Event, events: list[Event]) -> None:
    op = event.get("surfaceOp")  # a message without one breaks a rule too
    if not isinstance(op, dict) or op.get("op") != "replace":
        raise ValueError(f"seq {event['seq']}: bad surfaceOp {op!r}")
    if op.get("start") not in surface or op.get("end") not in surface:
        raise ValueError(f"seq {event['seq']}: replace range not on the surface")
    first, last = surface.index(op["start"]), surface.index(op["end"])
    if first > last:
        raise ValueError(f"seq {event['seq']}: replace start after end")
    replaced = surface[first : last + 1]
    if not set(replaced) <= set(event.get("sourceEventSeqs", [])):
        raise ValueError(f"seq {event['seq']}: sourceEventSeqs must list the replaced nodes")
    if event["type"] == "tool/result":
        _check_prune(event, [events[seq] for seq in replaced])
    surface[first : last + 1] = [event["seq"]]


def current_surface(events: list[Event]) -> list[int]:
    """Fold expanded events into the current surface
    (docs/snapshot.md §Surface), checking every rule on the way.

    Raises ``ValueError`` on any violation.

    >>> ev = lambda seq, op: {"type": "user/message", "seq": seq, "surfaceOp": op, "data": {}}
    >>> current_surface([ev(0, "append"), ev(1, "append"), ev(2, "append"),
    ...                  {**ev(3, {"op": "replace", "start": 0, "end": 1}),
    ...                   "sourceEventSeqs": [0, 1]}])
    [3, 2]
    """
    surface: list[int] = []
    for event in events:
        _check_sources(event)
        if event["type"] not in _SURFACE_TYPES:
            if "surfaceOp" in event:
                raise ValueError(f"seq {event['seq']}: surfaceOp on {event['type']}")
        elif event.get("surfaceOp") == "append":
            surface.append(event["seq"])
        else:
            _replace(surface, event, events)
    return surface


def _text(blocks: list[dict[str, Any]]) -> str:
    """Text blocks joined; a ``text`` block whose ``text`` is not a string is skipped."""
    texts = (b["text"] for b in blocks if b.get("type") == "text")
    return js_normalize("\n".join(text for text in texts if isinstance(text, str)))


def _unit(event: Event) -> ReferenceUnit | None:
    if event["type"] == "assistant/message":
        role, checkpoint, blocks = "assistant", False, event["data"]["message"]["content"]
    elif event["type"] == "user/message":
        data = event["data"]
        source = data.get("source") or {}
        checkpoint = source.get("kind") == "plugin" and source.get("plugin") == "compact"
        if not checkpoint and source.get("kind") != "user":
            return None
        display = data.get("display")
        role = "user"
        blocks = display if not checkpoint and isinstance(display, list) else data["content"]
    else:
        return None
    text = _text(blocks)
    return {"role": role, "text": text, "checkpoint": checkpoint} if text else None


def event_units(events: list[Event]) -> list[ReferenceUnit]:
    """The units of expanded events: fold the surface, keep what a snapshot shows
    (docs/snapshot.md §Projection).

    >>> event_units([{"type": "user/message", "seq": 0, "surfaceOp": "append",
    ...               "data": {"source": {"kind": "user"}, "content": [{"type": "text",
    ...                                                                 "text": "hi"}]}}])
    [{'role': 'user', 'text': 'hi', 'checkpoint': False}]
    """
    units = (_unit(events[seq]) for seq in current_surface(events))
    return [unit for unit in units if unit is not None]


def projected_units(log: LogRecords) -> list[ReferenceUnit]:
    """The units ``[{role, text, checkpoint}]`` a snapshot of this valid log is built from.

    Expands packed rows, folds the current surface, then keeps direct prompts (their ``display``
    when present), compact checkpoints and assistant messages with non-empty text
    (docs/snapshot.md §Projection).
    Raises ``ValueError`` if the log breaks a rule of docs/format.md or docs/snapshot.md §Surface.

    Here held against sessionref's own projection (your implementation's in its place):

    >>> from hypothesis import given, settings
    >>> from sessionref import MemoryStore
    >>> from sessionref.snapshot import project_units
    >>> from sessionref.testing import session_logs
    >>> @settings(max_examples=20, deadline=None)
    ... @given(session_logs(max_turns=2))
    ... def test_pipeline_projection(log):
    ...     records = MemoryStore([log]).read(log["header"]["id"]).records
    ...     units = [(u.role, u.text, u.checkpoint) for u in project_units(records)]
    ...     assert units == [(u["role"], u["text"], u["checkpoint"]) for u in projected_units(log)]
    >>> test_pipeline_projection()
    """
    return event_units(expand_records(log["events"]))


def closers(events: list[Event]) -> list[Event]:
    """The events the harness appends in memory to close a log that ends inside a turn.

    One ``tool/result`` per tool call of the open step still without a result, then ``step/end``
    if a step is open, then ``turn/end`` (interrupted), continuing the seqs
    (docs/format.md §Closers).
    Calls are registered by ``tool-call`` blocks of assistant messages and forgotten at
    ``turn/start``, ``turn/end`` and ``step/end``. A balanced or empty log needs none.

    >>> log = [{"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}},
    ...        {"type": "step/start", "seq": 1, "time": 6, "data": {"turn": 1, "step": 1}}]
    >>> [(e["type"], e["seq"]) for e in closers(log)]
    [('step/end', 2), ('turn/end', 3)]
    """
    turn: int | None = None
    step: int | None = None
    pending: dict[str, int] = {}
    for event in events:
        kind, data = event["type"], event["data"]
        if kind in ("turn/start", "turn/end"):
            turn = data["turn"] if kind == "turn/start" else None
            step = None
            pending.clear()
        elif kind == "step/start":
            step = data["step"]
        elif kind == "step/end":
            step = None
            pending.clear()
        elif kind == "assistant/message":
            for block in data["message"]["content"]:
                if block.get("type") == "tool-call":
                    pending[block["id"]] = data["step"]
        elif kind == "tool/result":
            pending.pop(data["message"]["source"]["callId"], None)
    if turn is None or not events:
        return []
    seq, time = events[-1]["seq"] + 1, events[-1]["time"]
    out: list[Event] = []
    for call_id, call_step in pending.items():
        result = {"role": "user", "source": {"kind": "tool", "callId": call_id}}
        data = {"turn": turn, "step": call_step, "message": result}
        closer = {"type": "tool/result", "seq": seq, "time": time, "data": data}
        out.append({**closer, "surfaceOp": "append"})
        seq += 1
    if step is not None:
        out.append({"type": "step/end", "seq": seq, "time": time, "data": {"turn": turn}})
        seq += 1
    reason = {"kind": "interrupted"}
    out.append(
        {"type": "turn/end", "seq": seq, "time": time, "data": {"turn": turn, "reason": reason}}
    )
    return out


def captured_through_seq(events: list[Event]) -> int | None:
    """The ``capturedThroughSeq`` of a snapshot of these events: the last closer's seq, else the
    last event's, ``None`` for no events.

    >>> captured_through_seq([]), captured_through_seq([{"type": "x", "seq": 0, "data": {}}])
    (None, 0)
    """
    closed = events + closers(events)
    return closed[-1]["seq"] if closed else None
