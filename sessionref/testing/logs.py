"""A Hypothesis strategy for valid DSH session logs (docs/format.md), built against a surface model.

The builder emits storage records in seq order and folds every surface operation into its own
model of the current surface as it goes, so every ``replace`` it emits names a real range.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from sessionref.testing._js import js_normalize
from sessionref.testing.store import SessionLog
from sessionref.testing.strategies import js_strings, mention_texts, session_ids

__all__ = ["session_logs", "session_stores"]

Record = dict[str, Any]
Block = dict[str, Any]

_START_TIME = 1_700_000_000_000
_PACKED_TYPE = {
    "text": "text-chunks",
    "reasoning": "reasoning-chunks",
    "tool-call": "tool-call-chunks",
}
_DELTA_TYPE = {"text": "text-delta", "reasoning": "reasoning-delta", "tool-call": "tool-call-delta"}
_MODEL_SOURCE = {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}
_INJECTED_SOURCES: tuple[dict[str, Any], ...] = (
    {"kind": "plugin", "plugin": "agent-instructions"},
    {"kind": "plugin", "plugin": "memory"},
    {"kind": "goal"},
    {"kind": "session-reference", "form": "recall", "version": 1, "references": []},
)
_TOOL_NAMES = ("bash", "read_file", "edit", "web.search")
_CWDS = ("/work/project", "/work/other", "/", "/tmp/a b/c", "C:\\Users\\dev", "/work/项目", "")


@dataclass
class _Limits:
    texts: st.SearchStrategy[str]
    prompts: st.SearchStrategy[str]
    min_turns: int
    max_turns: int
    max_steps: int
    max_chunks: int


@dataclass
class _Builder:
    """Emits records with contiguous seqs and tracks the current surface
    (docs/snapshot.md §Surface)."""

    rng: random.Random
    records: list[Record] = field(default_factory=list)
    next_seq: int = 0
    time: int = _START_TIME
    surface: list[int] = field(default_factory=list)
    on_surface: dict[int, Record] = field(default_factory=dict)

    def _tick(self) -> int:
        self.time += self.rng.randint(0, 40)
        return self.time

    def emit(self, kind: str, data: dict[str, Any]) -> Record:
        record: Record = {"type": kind, "seq": self.next_seq, "time": self._tick(), "data": data}
        self.records.append(record)
        self.next_seq += 1
        return record

    def append(self, kind: str, data: dict[str, Any], sources: list[int] | None = None) -> Record:
        """Emit a surface event with ``surfaceOp: "append"``."""
        record = self.emit(kind, data)
        record["surfaceOp"] = "append"
        if sources is not None:
            record["sourceEventSeqs"] = sources
        self.surface.append(record["seq"])
        self.on_surface[record["seq"]] = record
        return record

    def replace(self, kind: str, data: dict[str, Any], first: int, last: int) -> Record:
        """Emit a surface event replacing surface positions ``first..last`` (inclusive)."""
        replaced = self.surface[first : last + 1]
        record = self.emit(kind, data)
        record["surfaceOp"] = {"op": "replace", "start": replaced[0], "end": replaced[-1]}
        record["sourceEventSeqs"] = list(replaced)
        for seq in replaced:
            del self.on_surface[seq]
        self.surface[first : last + 1] = [record["seq"]]
        self.on_surface[record["seq"]] = record
        return record

    def chunk_run(
        self, kind: str, head: dict[str, Any], pieces: list[str], packed: bool, call: dict[str, Any]
    ) -> list[int]:
        """Emit deltas of one content block, as one packed row or as single chunk events."""
        if packed:
            return self._packed_row(kind, head, pieces, call)
        seqs = []
        for piece in pieces:
            chunk = {"type": _DELTA_TYPE[kind], "index": head["index"], **call}
            chunk["argumentsDelta" if kind == "tool-call" else "text"] = piece
            seqs.append(
                self.emit(
                    "assistant/chunk", {"turn": head["turn"], "step": head["step"], "chunk": chunk}
                )["seq"]
            )
            call.pop("name", None)
        return seqs

    def _packed_row(
        self, kind: str, head: dict[str, Any], pieces: list[str], call: dict[str, Any]
    ) -> list[int]:
        seq0, time0 = self.next_seq, self._tick()
        dt = [self.rng.randint(0, 30) for _ in pieces[1:]]
        data = {**head, "dt": dt, ("args" if kind == "tool-call" else "texts"): pieces, **call}
        self.records.append(
            {"type": _PACKED_TYPE[kind], "seq0": seq0, "time0": time0, "data": data}
        )
        call.pop("name", None)
        self.next_seq += len(pieces)
        self.time = time0 + sum(dt)
        return list(range(seq0, self.next_seq))

    def message_id(self) -> str:
        return f"m-{self.next_seq}-{self.rng.randrange(10**9)}"


def _text_blocks(draw: st.DrawFn, texts: st.SearchStrategy[str], max_size: int) -> list[Block]:
    return [{"type": "text", "text": t} for t in draw(st.lists(texts, max_size=max_size))]


def _prompt_blocks(draw: st.DrawFn, limits: _Limits) -> list[Block]:
    """Blocks of a direct prompt: mostly text, sometimes an image or an unknown block type."""
    other = st.sampled_from(
        [
            {"type": "image", "mediaType": "image/png", "data": "iVBORw0KGgo="},
            {"type": "x-unknown", "text": "not a text block"},
        ]
    ).map(copy.deepcopy)
    text = limits.prompts.map(lambda t: {"type": "text", "text": t})
    return draw(st.lists(st.one_of(text, text, other), min_size=1, max_size=3))


def _injected_context(draw: st.DrawFn, b: _Builder, limits: _Limits) -> None:
    source = copy.deepcopy(draw(st.sampled_from(_INJECTED_SOURCES)))
    content = _text_blocks(draw, limits.texts, 2)
    b.append(
        "user/message", {"id": b.message_id(), "role": "user", "content": content, "source": source}
    )


def _user_prompt(draw: st.DrawFn, b: _Builder, limits: _Limits) -> None:
    """A direct prompt; with ``display`` its ``content`` holds solidified context first."""
    shown = _prompt_blocks(draw, limits)
    data: dict[str, Any] = {
        "id": b.message_id(),
        "role": "user",
        "content": shown,
        "source": {"kind": "user"},
    }
    if draw(st.integers(0, 3)) == 0:
        context = (
            "## Referenced sessions\n\n<referenced-sessions>\n"
            + draw(limits.texts)
            + "\n</referenced-sessions>"
        )
        data["content"] = [{"type": "text", "text": context}, *copy.deepcopy(shown)]
        data["display"] = shown
    b.append("user/message", data)


def _block_pieces(draw: st.DrawFn, limits: _Limits) -> list[str]:
    return draw(st.lists(limits.texts, max_size=limits.max_chunks))


def _stream_block(
    draw: st.DrawFn,
    b: _Builder,
    kind: str,
    head: dict[str, Any],
    pieces: list[str],
    call: dict[str, Any],
) -> list[int]:
    """Emit the deltas of one block split into runs, each packed or not."""
    seqs: list[int] = []
    rest = pieces
    while rest:
        size = draw(st.integers(1, len(rest)))
        seqs += b.chunk_run(kind, head, rest[:size], draw(st.booleans()), call)
        rest = rest[size:]
    return seqs


def _assistant_blocks(
    draw: st.DrawFn, b: _Builder, limits: _Limits, turn: int, step: int
) -> tuple[list[Block], list[int]]:
    """Stream and assemble the content of one assistant message; returns (blocks, chunk seqs)."""
    kinds = (
        (["reasoning"] if draw(st.booleans()) else [])
        + ["text"] * draw(st.integers(0, 2))
        + ["tool-call"] * draw(st.integers(0, 2))
    )
    blocks: list[Block] = []
    seqs: list[int] = []
    for index, kind in enumerate(kinds):
        pieces = _block_pieces(draw, limits)
        head = {"turn": turn, "step": step, "index": index}
        joined = js_normalize("".join(pieces))
        if kind == "tool-call":
            call_id, name = f"call-{turn}-{step}-{index}", draw(st.sampled_from(_TOOL_NAMES))
            seqs += _stream_block(draw, b, kind, head, pieces, {"id": call_id, "name": name})
            blocks.append({"type": "tool-call", "id": call_id, "name": name, "arguments": joined})
        else:
            seqs += _stream_block(draw, b, kind, head, pieces, {})
            blocks.append({"type": kind, "text": joined})
    return blocks, seqs


def _tool_round(
    draw: st.DrawFn, b: _Builder, limits: _Limits, turn: int, step: int, call: Block
) -> None:
    b.emit(
        "tool/call",
        {
            "turn": turn,
            "step": step,
            "callId": call["id"],
            "name": call["name"],
            "arguments": call["arguments"],
        },
    )
    output = [{"type": "text", "text": draw(limits.texts)}]
    message = {
        "id": b.message_id(),
        "role": "user",
        "content": [{"type": "tool-result", "toolCallId": call["id"], "content": output}],
        "source": {"kind": "tool", "callId": call["id"]},
    }
    b.append("tool/result", {"turn": turn, "step": step, "message": message})


def _step(draw: st.DrawFn, b: _Builder, limits: _Limits, turn: int, step: int) -> None:
    b.emit("step/start", {"turn": turn, "step": step})
    blocks, seqs = _assistant_blocks(draw, b, limits, turn, step)
    message = {
        "id": b.message_id(),
        "role": "assistant",
        "content": blocks,
        "source": dict(_MODEL_SOURCE),
    }
    keep_empty = draw(st.booleans())
    sources = seqs if seqs or keep_empty else None
    b.append("assistant/message", {"turn": turn, "step": step, "message": message}, sources)
    for block in blocks:
        if block["type"] == "tool-call":
            _tool_round(draw, b, limits, turn, step, block)
    b.emit("step/end", {"turn": turn, "step": step})


def _turn(draw: st.DrawFn, b: _Builder, limits: _Limits, turn: int) -> None:
    b.emit("turn/start", {"turn": turn})
    for _ in range(draw(st.integers(0, 2))):
        _injected_context(draw, b, limits)
    _user_prompt(draw, b, limits)
    for step in range(1, draw(st.integers(1, limits.max_steps)) + 1):
        _step(draw, b, limits, turn, step)
    b.emit("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def _compaction(draw: st.DrawFn, b: _Builder, limits: _Limits) -> None:
    """compaction/start, summary, the checkpoint replacing a surface range, compaction/end."""
    if not b.surface:
        return
    first = draw(st.integers(0, len(b.surface) - 1))
    last = draw(st.integers(first, len(b.surface) - 1))
    cid = f"cmp-{b.rng.randrange(10**9)}"
    summary = draw(limits.texts)
    shadowed = b.surface[first : last + 1]
    b.emit("compaction/start", {"compactionId": cid, "turn": None})
    b.emit(
        "compaction/summary",
        {
            "compactionId": cid,
            "summary": [{"type": "text", "text": summary}],
            "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
            "shadowedSeqs": list(shadowed),
            "shadowedTokenCount": b.rng.randint(1, 5000),
            "provider": "deepseek",
            "model": "deepseek-chat",
            "rawOutput": summary,
        },
    )
    text = f"<compacted-summary>{summary}</compacted-summary>"
    b.replace(
        "user/message",
        {
            "id": b.message_id(),
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": "plugin", "plugin": "compact", "compactionId": cid},
        },
        first,
        last,
    )
    b.emit("compaction/end", {"compactionId": cid, "turn": None})


def _prune(draw: st.DrawFn, b: _Builder, limits: _Limits) -> None:
    """compaction/prune, then a copy of a surfaced tool result with only its output changed."""
    results = [i for i, seq in enumerate(b.surface) if b.on_surface[seq]["type"] == "tool/result"]
    if not results:
        return
    position = draw(st.sampled_from(results))
    seq = b.surface[position]
    b.emit(
        "compaction/prune",
        {
            "shadowedRange": {"start": seq, "end": seq},
            "shadowedSeqs": [seq],
            "shadowedTokenCount": b.rng.randint(1, 500),
        },
    )
    data = copy.deepcopy(b.on_surface[seq]["data"])
    pruned = draw(st.just("[pruned]") | limits.texts)
    data["message"]["content"][0]["content"] = [{"type": "text", "text": pruned}]
    b.replace("tool/result", data, position, position)


def _title(draw: st.DrawFn, b: _Builder, limits: _Limits) -> None:
    source = draw(st.sampled_from(["fallback", "model"]))
    b.emit(
        "session/title",
        {"title": draw(limits.texts), "messageSeqs": b.surface[:1], "source": {"kind": source}},
    )


_BETWEEN_TURNS = (_title, _compaction, _prune)


def _header(
    draw: st.DrawFn, ids: st.SearchStrategy[str], cwds: st.SearchStrategy[str | None]
) -> dict[str, Any]:
    header: dict[str, Any] = {
        "version": 0,
        "id": draw(ids),
        "createdAt": draw(st.integers(1_600_000_000_000, 1_800_000_000_000)),
        "delegationDepth": 0,
    }
    cwd = draw(cwds)
    if cwd is not None:
        header["cwd"] = cwd
    return header


@st.composite
def _session_logs(
    draw: st.DrawFn,
    ids: st.SearchStrategy[str],
    cwds: st.SearchStrategy[str | None],
    limits: _Limits,
    allow_incomplete: bool,
) -> SessionLog:
    header = _header(draw, ids, cwds)
    # Uniform noise (times, ids, truncation), free of Hypothesis' bias towards edge values.
    b = _Builder(random.Random(draw(st.integers(0, 2**32 - 1))))
    for turn in range(1, draw(st.integers(limits.min_turns, limits.max_turns)) + 1):
        _turn(draw, b, limits, turn)
        for action in draw(st.lists(st.sampled_from(_BETWEEN_TURNS), max_size=2)):
            action(draw, b, limits)
    return {"header": header, "events": _maybe_cut(b, allow_incomplete)}


def _maybe_cut(b: _Builder, allow_incomplete: bool) -> list[Record]:
    """About 5% of logs become empty and 10% stop at a random record (a crash mid-turn)."""
    roll = b.rng.random()
    if not allow_incomplete or not b.records or roll >= 0.15:
        return b.records
    return [] if roll < 0.05 else b.records[: b.rng.randrange(len(b.records))]


def session_logs(
    *,
    ids: st.SearchStrategy[str] | None = None,
    cwds: st.SearchStrategy[str | None] | None = None,
    texts: st.SearchStrategy[str] | None = None,
    min_turns: int = 1,
    max_turns: int = 3,
    max_steps: int = 2,
    max_chunks: int = 3,
    allow_incomplete: bool = True,
) -> st.SearchStrategy[SessionLog]:
    """Valid session logs ``{"header", "events"}`` whose events are storage records
    (docs/format.md §Events, docs/api.md §Conformance).

    Turns hold injected context (``plugin``, ``goal``, ``session-reference``), a direct prompt
    (sometimes with ``display``), and steps whose assistant messages are streamed as chunk events
    and packed ``*-chunks`` rows, followed by tool calls and results. Between turns come titles,
    compactions (a checkpoint replacing a range of the current surface) and tool-result prunes.
    With ``allow_incomplete`` some logs are empty or stop mid-turn (any prefix of a valid log is
    valid).

    ``texts`` feeds every text (default :func:`js_strings` up to 12 code points); prompts also
    draw from :func:`mention_texts`. ``cwds`` may yield ``None`` (no ``cwd`` in the header).

    >>> from hypothesis import given, settings
    >>> from sessionref.testing import expand_records
    >>> @settings(max_examples=20)
    ... @given(session_logs(max_turns=2))
    ... def test_seqs_are_contiguous(log):
    ...     events = expand_records(log["events"])
    ...     assert [e["seq"] for e in events] == list(range(len(events)))
    >>> test_seqs_are_contiguous()
    """
    text_strategy = js_strings(max_size=12) if texts is None else texts
    limits = _Limits(
        texts=text_strategy,
        prompts=st.one_of(text_strategy, mention_texts(max_parts=3)),
        min_turns=min_turns,
        max_turns=max(min_turns, max_turns),
        max_steps=max(1, max_steps),
        max_chunks=max_chunks,
    )
    cwd_strategy = (st.none() | st.sampled_from(_CWDS)) if cwds is None else cwds
    return _session_logs(
        session_ids() if ids is None else ids, cwd_strategy, limits, allow_incomplete
    )


def session_stores(
    max_sessions: int = 3, **log_options: Any
) -> st.SearchStrategy[list[SessionLog]]:
    """Lists of :func:`session_logs` with distinct ids, ready for ``write_session_store``.

    ``log_options`` are passed to :func:`session_logs`.

    Example::

        @given(session_stores(max_turns=1), st.booleans())
        def test_reads_back(tmp_path_factory, logs, compress):
            root = tmp_path_factory.mktemp("store")
            write_session_store(root, logs, compress=compress)
            assert sorted(my_list_ids(root)) == sorted(log["header"]["id"] for log in logs)
    """
    return st.lists(
        session_logs(**log_options),
        max_size=max_sessions,
        unique_by=lambda log: str(log["header"]["id"]),
    )
