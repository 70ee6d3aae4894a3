"""Well-formed DSH session events, built in order with contiguous seqs (docs/format.md §Events).

:class:`LogBuilder` writes the events the harness writes, in the shapes it validates when it
loads a log: messages with an ``id`` and their role, assistant messages with a ``model`` source
naming ``provider`` and ``model``, tool results holding exactly one ``tool-result`` block whose
call id matches their source, ``turn/end`` reasons as the harness writes them, and surface ops
that name nodes of the current surface, which it tracks. Give its events to
:mod:`sessionref.log.writer` to store them.

>>> b = LogBuilder(time=100)
>>> b.turn_start(); b.user("hi"); b.step_start()
0
1
2
>>> b.chunks("text", ["he", "llo"]); b.assistant([text_block("hello")])
[3, 4]
5
>>> b.step_end(); b.turn_end()
6
7
>>> b.surface, [e["time"] for e in b.events][:3]
([1, 5], [107, 114, 121])
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, Final

from sessionref.log.writer import Record

__all__ = ["DEFAULT_SOURCE", "LogBuilder", "text_block"]

Block = dict[str, Any]

DEFAULT_SOURCE: Final = {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}
"""The source of assistant messages unless a builder is given another."""
_DELTAS: Final = {"text": "text-delta", "reasoning": "reasoning-delta"}


def text_block(text: str) -> Block:
    """A ``text`` content block.

    >>> text_block("a")
    {'type': 'text', 'text': 'a'}
    """
    return {"type": "text", "text": text}


def _blocks(content: str | Sequence[Block]) -> list[Block]:
    return [text_block(content)] if isinstance(content, str) else [dict(b) for b in content]


class LogBuilder:
    """Appends events with contiguous seqs, tracking the turn, the step and the surface.

    Times start after ``time`` and advance by ``tick`` ms per event (or by what ``tick()``
    returns) unless an event is given its own. Message ids are ``<prefix>-<seq>`` unless given.
    ``source`` is the source of assistant messages.
    """

    def __init__(
        self,
        *,
        time: int = 1_700_000_000_000,
        tick: int | Callable[[], int] = 7,
        source: dict[str, Any] | None = None,
    ) -> None:
        """Start an empty log at ``time``."""
        self.events: list[Record] = []
        """Every event so far, in seq order (``events[i]["seq"] == i``)."""
        self.surface: list[int] = []
        """The current surface: seqs of the surface nodes, in order (docs/snapshot.md §Surface)."""
        self.time = time
        self._tick = tick if callable(tick) else lambda: tick
        self.turn = 0
        self.step = 0
        self.source = dict(DEFAULT_SOURCE if source is None else source)

    @property
    def next_seq(self) -> int:
        """The seq of the next event."""
        return len(self.events)

    def emit(
        self,
        kind: str,
        data: Any,
        *,
        time: int | None = None,
        surface_op: str | dict[str, Any] | None = None,
        sources: Sequence[int] | None = None,
        ignorable: bool = False,
    ) -> int:
        """Append one event and return its seq; a surface op is folded into :attr:`surface`.

        >>> b = LogBuilder()
        >>> b.user("a"), b.user("b"), b.checkpoint("summary", 0, 1), b.surface
        (0, 1, 2, [2])
        """
        self.time = self.time + self._tick() if time is None else time
        seq = self.next_seq
        event: Record = {"type": kind, "seq": seq, "time": self.time, "data": data}
        if ignorable:
            event["ignorable"] = True
        if surface_op is not None:
            event["surfaceOp"] = surface_op
        if sources is not None:
            event["sourceEventSeqs"] = list(sources)
        if isinstance(surface_op, dict):
            first = self.surface.index(surface_op["start"])
            last = self.surface.index(surface_op["end"])
            self.surface[first : last + 1] = [seq]
        elif surface_op == "append":
            self.surface.append(seq)
        self.events.append(event)
        return seq

    def turn_start(self, *, time: int | None = None) -> int:
        """Open the next turn."""
        self.turn += 1
        self.step = 0
        return self.emit("turn/start", {"turn": self.turn}, time=time)

    def turn_end(self, reason: dict[str, Any] | None = None, *, time: int | None = None) -> int:
        """Close the turn; ``reason`` defaults to ``{"kind": "completed"}``."""
        data = {"turn": self.turn, "reason": reason or {"kind": "completed"}}
        return self.emit("turn/end", data, time=time)

    def step_start(self, *, time: int | None = None) -> int:
        """Open the next step of the turn."""
        self.step += 1
        return self.emit("step/start", {"turn": self.turn, "step": self.step}, time=time)

    def step_end(self, *, time: int | None = None) -> int:
        """Close the step."""
        return self.emit("step/end", {"turn": self.turn, "step": self.step}, time=time)

    def message_id(self, prefix: str) -> str:
        """A fresh message id for the next event."""
        return f"{prefix}-{self.next_seq}"

    def user(
        self,
        content: str | Sequence[Block],
        *,
        source: dict[str, Any] | None = None,
        display: Sequence[Block] | None = None,
        message_id: str | None = None,
        time: int | None = None,
    ) -> int:
        """Append a ``user/message`` (a direct prompt unless ``source`` says otherwise)."""
        data: Record = {
            "id": message_id or self.message_id("u"),
            "role": "user",
            "content": _blocks(content),
            "source": dict(source or {"kind": "user"}),
        }
        if display is not None:
            data["display"] = _blocks(display)
        return self.emit("user/message", data, time=time, surface_op="append")

    def assistant(
        self,
        content: str | Sequence[Block],
        *,
        sources: Sequence[int] | None = None,
        message_id: str | None = None,
        time: int | None = None,
        **extra: Any,
    ) -> int:
        """Append an ``assistant/message`` of this step; ``extra`` goes into its data."""
        message = {
            "id": message_id or self.message_id("a"),
            "role": "assistant",
            "content": _blocks(content),
            "source": dict(self.source),
        }
        data = {"turn": self.turn, "step": self.step, "message": message, **extra}
        return self.emit("assistant/message", data, time=time, surface_op="append", sources=sources)

    def chunks(
        self,
        kind: str,
        pieces: Sequence[str],
        *,
        index: int = 0,
        times: Sequence[int] | None = None,
    ) -> list[int]:
        """Append ``text`` or ``reasoning`` deltas of block ``index``; returns their seqs."""
        chunks = [{"type": _DELTAS[kind], "index": index, "text": piece} for piece in pieces]
        return self._chunk_events(chunks, times)

    def tool_chunks(
        self,
        call_id: str,
        pieces: Sequence[str],
        *,
        index: int,
        name: str | None = None,
        times: Sequence[int] | None = None,
    ) -> list[int]:
        """Append tool-call argument deltas (each naming the tool when ``name`` is given)."""
        named = {} if name is None else {"name": name}
        chunks = [
            {"type": "tool-call-delta", "index": index, "id": call_id, **named, "argumentsDelta": p}
            for p in pieces
        ]
        return self._chunk_events(chunks, times)

    def _chunk_events(self, chunks: list[Block], times: Sequence[int] | None) -> list[int]:
        if times is not None and len(times) != len(chunks):
            raise ValueError("one time per chunk")
        return [
            self.emit(
                "assistant/chunk",
                {"turn": self.turn, "step": self.step, "chunk": chunk},
                time=None if times is None else times[k],
            )
            for k, chunk in enumerate(chunks)
        ]

    def tool_call(self, call_id: str, name: str, arguments: str, *, time: int | None = None) -> int:
        """Append the ``tool/call`` of a call made by this step's assistant message."""
        data = {
            "turn": self.turn,
            "step": self.step,
            "callId": call_id,
            "name": name,
            "arguments": arguments,
        }
        return self.emit("tool/call", data, time=time)

    def tool_result(
        self,
        call_id: str,
        output: str | Sequence[Block],
        *,
        is_error: bool = False,
        message_id: str | None = None,
        time: int | None = None,
    ) -> int:
        """Append the ``tool/result`` of call ``call_id``: one ``tool-result`` block."""
        block: Block = {"type": "tool-result", "toolCallId": call_id, "content": _blocks(output)}
        if is_error:
            block["isError"] = True
        message = {
            "id": message_id or self.message_id("t"),
            "role": "user",
            "content": [block],
            "source": {"kind": "tool", "callId": call_id},
        }
        data = {"turn": self.turn, "step": self.step, "message": message}
        return self.emit("tool/result", data, time=time, surface_op="append")

    def checkpoint(
        self, text: str, start: int, end: int, *, source: dict[str, Any] | None = None
    ) -> int:
        """Append a compact checkpoint replacing surface nodes ``start``..``end`` (seqs).

        ``source`` defaults to ``{"kind": "plugin", "plugin": "compact"}``.
        """
        first, last = self.surface.index(start), self.surface.index(end)
        replaced = self.surface[first : last + 1]
        data = {
            "id": self.message_id("c"),
            "role": "user",
            "content": [text_block(text)],
            "source": dict(source or {"kind": "plugin", "plugin": "compact"}),
        }
        op = {"op": "replace", "start": start, "end": end}
        return self.emit("user/message", data, surface_op=op, sources=replaced)

    def prune(self, seq: int, output: str = "[Old tool result content cleared]") -> int:
        """Append ``compaction/prune`` and the copy of tool result ``seq`` with new output."""
        self.emit(
            "compaction/prune",
            {"shadowedRange": {"start": seq, "end": seq}, "shadowedSeqs": [seq]},
        )
        data = copy.deepcopy(self.events[seq]["data"])
        data["message"]["content"][0]["content"] = [text_block(output)]
        op = {"op": "replace", "start": seq, "end": seq}
        return self.emit("tool/result", data, surface_op=op, sources=[seq])

    def title(
        self, title: str, *, message_seqs: Sequence[int] | None = None, kind: str = "fallback"
    ) -> int:
        """Append ``session/title``; ``message_seqs`` default to the direct prompts so far."""
        if message_seqs is None:
            message_seqs = [
                e["seq"]
                for e in self.events
                if e["type"] == "user/message" and e["data"]["source"].get("kind") == "user"
            ]
        data = {"title": title, "messageSeqs": list(message_seqs), "source": {"kind": kind}}
        return self.emit("session/title", data)
