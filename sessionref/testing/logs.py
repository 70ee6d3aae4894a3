"""A Hypothesis strategy for valid DSH session logs (docs/format.md), built with the
log builder.

Events come from :class:`~sessionref.log.builder.LogBuilder`, which keeps seqs contiguous and
folds every surface operation into its model of the current surface, so every ``replace`` names
a real range. Some runs of delta chunks are then packed into rows
(:func:`~sessionref.log.writer.chunk_row`), of any length, as drawn.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from sessionref.log.builder import LogBuilder, text_block
from sessionref.log.writer import chunk_row
from sessionref.testing._js import js_normalize
from sessionref.testing.store import LogRecords
from sessionref.testing.strategies import js_strings, mention_texts, session_ids

__all__ = ["session_logs", "session_stores"]

Record = dict[str, Any]
Block = dict[str, Any]

_START_TIME = 1_700_000_000_000
_INJECTED_SOURCES: tuple[dict[str, Any], ...] = (
    {"kind": "plugin", "plugin": "agent-instructions"},
    {"kind": "plugin", "plugin": "memory"},
    {"kind": "goal"},
    {"kind": "session-reference", "form": "recall", "version": 1, "references": []},
)
_TOOL_NAMES = ("bash", "read_file", "edit", "web.search")
_CWDS = ("/work/project", "/work/other", "/", "/tmp/a b/c", "/work/项目", "//double//slash/")


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
    """A log builder with uniform random time steps, and the chunk runs drawn to be packed."""

    rng: random.Random
    log: LogBuilder = field(init=False)
    packed: list[list[int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.log = LogBuilder(time=_START_TIME, tick=lambda: self.rng.randint(0, 40))

    def records(self) -> list[Record]:
        """The events, each packed run replaced by its row."""
        runs = {run[0]: run for run in self.packed}
        events, out, seq = self.log.events, [], 0
        while seq < len(events):
            run = runs.get(seq, [seq])
            out.append(chunk_row(events[run[0] : run[-1] + 1]) if seq in runs else events[seq])
            seq = run[-1] + 1
        return out


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
    b.log.user(_text_blocks(draw, limits.texts, 2), source=source)


def _user_prompt(draw: st.DrawFn, b: _Builder, limits: _Limits) -> None:
    """A direct prompt; with ``display`` its ``content`` holds solidified context first."""
    shown = _prompt_blocks(draw, limits)
    if draw(st.integers(0, 3)) == 0:
        context = (
            "## Referenced sessions\n\n<referenced-sessions>\n"
            + draw(limits.texts)
            + "\n</referenced-sessions>"
        )
        b.log.user([text_block(context), *copy.deepcopy(shown)], display=shown)
    else:
        b.log.user(shown)


def _block_pieces(draw: st.DrawFn, limits: _Limits) -> list[str]:
    return draw(st.lists(limits.texts, max_size=limits.max_chunks))


def _stream_block(
    draw: st.DrawFn,
    b: _Builder,
    kind: str,
    index: int,
    pieces: list[str],
    call: tuple[str, str | None] | None,
) -> list[int]:
    """Emit the deltas of one block split into runs, each packed or not.

    ``call`` is a tool call's ``(id, name)``. Its deltas are named in their first run: every
    member of it if it is packed, else only its first delta.
    """
    seqs: list[int] = []
    rest = pieces
    while rest:
        size = draw(st.integers(1, len(rest)))
        packed = draw(st.booleans())
        run = rest[:size]
        if call is None:
            emitted = b.log.chunks(kind, run, index=index)
        else:
            call_id, name = call
            named = run if packed or name is None else run[:1]
            emitted = b.log.tool_chunks(call_id, named, index=index, name=name)
            emitted += b.log.tool_chunks(call_id, run[len(named) :], index=index)
            call = (call_id, None)
        if packed:
            b.packed.append(emitted)
        seqs += emitted
        rest = rest[size:]
    return seqs


def _assistant_blocks(
    draw: st.DrawFn, b: _Builder, limits: _Limits
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
        joined = js_normalize("".join(pieces))
        if kind == "tool-call":
            call_id = f"call-{b.log.turn}-{b.log.step}-{index}"
            name = draw(st.sampled_from(_TOOL_NAMES))
            seqs += _stream_block(draw, b, kind, index, pieces, (call_id, name))
            blocks.append({"type": "tool-call", "id": call_id, "name": name, "arguments": joined})
        else:
            seqs += _stream_block(draw, b, kind, index, pieces, None)
            blocks.append({"type": kind, "text": joined})
    return blocks, seqs


def _step(draw: st.DrawFn, b: _Builder, limits: _Limits) -> None:
    b.log.step_start()
    blocks, seqs = _assistant_blocks(draw, b, limits)
    keep_empty = draw(st.booleans())
    b.log.assistant(blocks, sources=seqs if seqs or keep_empty else None)
    for block in blocks:
        if block["type"] == "tool-call":
            b.log.tool_call(block["id"], block["name"], block["arguments"])
            b.log.tool_result(block["id"], [text_block(draw(limits.texts))])
    b.log.step_end()


def _turn(draw: st.DrawFn, b: _Builder, limits: _Limits) -> None:
    b.log.turn_start()
    for _ in range(draw(st.integers(0, 2))):
        _injected_context(draw, b, limits)
    _user_prompt(draw, b, limits)
    for _ in range(draw(st.integers(1, limits.max_steps))):
        _step(draw, b, limits)
    b.log.turn_end()


def _compaction(draw: st.DrawFn, b: _Builder, limits: _Limits) -> None:
    """compaction/start, summary, the checkpoint replacing a surface range, compaction/end."""
    surface = b.log.surface
    if not surface:
        return
    first = draw(st.integers(0, len(surface) - 1))
    last = draw(st.integers(first, len(surface) - 1))
    cid = f"cmp-{b.rng.randrange(10**9)}"
    summary = draw(limits.texts)
    shadowed = surface[first : last + 1]
    b.log.emit("compaction/start", {"compactionId": cid, "turn": None})
    b.log.emit(
        "compaction/summary",
        {
            "compactionId": cid,
            "summary": [text_block(summary)],
            "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
            "shadowedSeqs": list(shadowed),
            "shadowedTokenCount": b.rng.randint(1, 5000),
            "provider": "deepseek",
            "model": "deepseek-chat",
            "rawOutput": summary,
        },
    )
    source = {"kind": "plugin", "plugin": "compact", "compactionId": cid}
    text = f"<compacted-summary>{summary}</compacted-summary>"
    b.log.checkpoint(text, shadowed[0], shadowed[-1], source=source)
    b.log.emit("compaction/end", {"compactionId": cid, "turn": None})


def _prune(draw: st.DrawFn, b: _Builder, limits: _Limits) -> None:
    """compaction/prune, then a copy of a surfaced tool result with only its output changed."""
    events = b.log.events
    results = [seq for seq in b.log.surface if events[seq]["type"] == "tool/result"]
    if results:
        b.log.prune(draw(st.sampled_from(results)), draw(st.just("[pruned]") | limits.texts))


def _title(draw: st.DrawFn, b: _Builder, limits: _Limits) -> None:
    kind = draw(st.sampled_from(["fallback", "model"]))
    b.log.title(draw(limits.texts), message_seqs=b.log.surface[:1], kind=kind)


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
) -> LogRecords:
    header = _header(draw, ids, cwds)
    # Uniform noise (times, ids, truncation), free of Hypothesis' bias towards edge values.
    b = _Builder(random.Random(draw(st.integers(0, 2**32 - 1))))
    for _ in range(draw(st.integers(limits.min_turns, limits.max_turns))):
        _turn(draw, b, limits)
        for action in draw(st.lists(st.sampled_from(_BETWEEN_TURNS), max_size=2)):
            action(draw, b, limits)
    roll = draw(st.integers(0, 19)) if allow_incomplete else 0
    return {"header": header, "events": _maybe_cut(b.rng, b.records(), roll)}


def _maybe_cut(rng: random.Random, records: list[Record], roll: int) -> list[Record]:
    """Rolls 18 and 19 (of 0 to 19) empty the log, 15 to 17 stop it at a random record (a crash).

    High rolls, because Hypothesis draws 0 far more often than any other value.
    """
    if roll < 15 or not records:
        return records
    return [] if roll >= 18 else records[: rng.randrange(len(records))]


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
) -> st.SearchStrategy[LogRecords]:
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

    Bounds that admit no log are refused, as Hypothesis refuses ``st.integers(3, 1)``:

    >>> session_logs(min_turns=2, max_turns=1)
    Traceback (most recent call last):
    hypothesis.errors.InvalidArgument: session_logs needs 0 <= min_turns <= max_turns, \
max_steps >= 1 and max_chunks >= 0 (min_turns=2, max_turns=1, max_steps=2, max_chunks=3)
    """
    if not (0 <= min_turns <= max_turns and max_steps >= 1 and max_chunks >= 0):
        raise InvalidArgument(
            "session_logs needs 0 <= min_turns <= max_turns, max_steps >= 1 and max_chunks >= 0"
            f" ({min_turns=}, {max_turns=}, {max_steps=}, {max_chunks=})"
        )
    text_strategy = js_strings(max_size=12) if texts is None else texts
    limits = _Limits(
        texts=text_strategy,
        prompts=st.one_of(text_strategy, mention_texts(max_parts=3)),
        min_turns=min_turns,
        max_turns=max_turns,
        max_steps=max_steps,
        max_chunks=max_chunks,
    )
    cwd_strategy = (st.none() | st.sampled_from(_CWDS)) if cwds is None else cwds
    return _session_logs(
        session_ids() if ids is None else ids, cwd_strategy, limits, allow_incomplete
    )


def session_stores(
    max_sessions: int = 3, **log_options: Any
) -> st.SearchStrategy[list[LogRecords]]:
    """Lists of :func:`session_logs` with distinct ids, ready for ``write_session_store``.

    ``log_options`` are passed to :func:`session_logs`.

    A store written and listed back, here by sessionref's own store (yours in its place):

    >>> import tempfile
    >>> from hypothesis import given, settings, strategies as st
    >>> from sessionref import DirectoryStore
    >>> from sessionref.testing import write_session_store
    >>> @settings(max_examples=10, deadline=None)
    ... @given(session_stores(max_turns=1), st.booleans())
    ... def test_reads_back(logs, compress):
    ...     with tempfile.TemporaryDirectory() as root:
    ...         write_session_store(root, logs, compress=compress)
    ...         listed = [header.id for header in DirectoryStore(root).headers()]
    ...     assert sorted(listed) == sorted(log["header"]["id"] for log in logs)
    >>> test_reads_back()
    """
    return st.lists(
        session_logs(**log_options),
        max_size=max_sessions,
        unique_by=lambda log: str(log["header"]["id"]),
    )
