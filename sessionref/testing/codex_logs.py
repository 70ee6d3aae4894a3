"""Hypothesis strategies for Codex CLI rollout files, each with what it shows, known by
construction (docs/harnesses.md §Codex).

A generated rollout is a ``session_meta``, then turns as Codex records them: a
``turn_context``, the user message twice (the model's copy with injected context blocks, and
the event), reasoning, tool calls and their output, the assistant message twice; compactions
(``compacted`` with a summary); lines of kinds the reader ignores. The events are those of a
legacy thread (``user_message``, ``agent_message``) or of a paginated one (its ``session_meta``
says ``"history_mode": "paginated"``, and what the person saw is ``item_completed`` events of
``UserMessage`` and ``AgentMessage`` items, an agent message maybe in several text parts;
Codex's ``should_persist_event_msg``, ``codex-rs/rollout/src/policy.rs``, writes each kind in
one mode only). ``legacy=True`` writes the oldest shape instead: no envelope and no event
stream. Either may also come as a rollout that a newer Codex resumed: older turns without
events (with or without envelope), then turns with legacy events.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from sessionref.codecs.jsjson import js_json
from sessionref.testing.claude_logs import HarnessLog, iso, plain_texts

_EPOCH = 1_750_000_000_000
THREAD_ID = "0197a000-0000-7000-8000-000000000001"
"""The thread of every :func:`codex_rollouts` rollout: the id its file's name ends with."""


class _Writer:
    """The state of a rollout being generated."""

    def __init__(self, draw: Any, legacy: bool, events: bool, paginated: bool = False) -> None:
        self.draw = draw
        self.legacy = legacy
        self.events = events
        self.paginated = paginated
        self.turns = 0
        self.lines: list[bytes] = []
        self.shown: list[tuple[str, str]] = []
        self.clock = _EPOCH
        self.calls = 0

    def write(self, kind: str, payload: dict[str, Any]) -> None:
        self.clock += self.draw(st.integers(1, 3000))
        if self.legacy:
            if kind == "response_item":
                self.lines.append(js_json(payload))
            return
        self.lines.append(js_json({"timestamp": iso(self.clock), "type": kind, "payload": payload}))

    def message(self, role: str, *texts: str, injected: bool = False) -> None:
        kind = "input_text" if role == "user" else "output_text"
        content = [{"type": kind, "text": text} for text in texts]
        if injected:
            content.insert(
                0,
                {
                    "type": "input_text",
                    "text": "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>",
                },
            )
        self.write("response_item", {"type": "message", "role": role, "content": content})

    def turn(self, first: bool) -> None:
        draw = self.draw
        self.turns += 1
        self.write(
            "turn_context", {"cwd": "/work/project", "model": "gpt-5", "approval_policy": "never"}
        )
        prompt = draw(plain_texts())
        self.message("user", prompt, injected=first and draw(st.booleans()))
        self.asked(prompt)
        self.shown.append(("user", prompt))
        if draw(st.booleans()):
            summary = draw(plain_texts())
            self.write(
                "response_item",
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": summary}],
                    "encrypted_content": "x",
                },
            )
            if self.paginated:  # a completed item that says nothing the person saw
                self.completed("Reasoning", summary_text=[summary], raw_content=[])
        for _ in range(draw(st.integers(0, 2))):
            self.calls += 1
            call = f"call_{self.calls}"
            self.write(
                "response_item",
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": '{"command":["ls"]}',
                    "call_id": call,
                },
            )
            self.write(
                "response_item",
                {"type": "function_call_output", "call_id": call, "output": draw(plain_texts())},
            )
        answers = draw(st.lists(plain_texts(), min_size=1, max_size=3 if self.paginated else 1))
        self.message("assistant", *answers)
        if self.paginated:
            parts = [{"type": "Text", "text": answer} for answer in answers]
            self.completed("AgentMessage", content=parts, phase="final_answer")
        else:
            self.event({"type": "agent_message", "message": answers[0]})
        self.shown.extend(("assistant", answer) for answer in answers)
        self.event({"type": "token_count", "info": None})

    def asked(self, prompt: str) -> None:
        """The prompt as the events record it: a ``user_message``, or a completed
        ``UserMessage`` whose text inputs (maybe with an image among them) join to it."""
        if not self.paginated:
            self.event({"type": "user_message", "message": prompt, "images": []})
            return
        cut = self.draw(st.integers(0, len(prompt)))
        inputs: list[dict[str, Any]] = [
            {"type": "text", "text": text, "text_elements": []}
            for text in (prompt[:cut], prompt[cut:])
        ]
        if self.draw(st.booleans()):
            inputs.insert(1, {"type": "local_image", "path": "/work/project/shot.png"})
        self.completed("UserMessage", content=inputs)

    def completed(self, kind: str, **fields: Any) -> None:
        """An ``item_completed`` event of a turn item of ``kind``, as a paginated rollout has it."""
        turn = f"turn_{self.turns}"
        item = {"type": kind, "id": f"{kind.lower()}_{len(self.lines)}", **fields}
        self.event(
            {"type": "item_completed", "thread_id": THREAD_ID, "turn_id": turn, "item": item}
        )

    def event(self, payload: dict[str, Any]) -> None:
        """An ``event_msg``, by a Codex that writes them."""
        if self.events:
            self.write("event_msg", payload)

    def compact(self) -> None:
        summary = self.draw(plain_texts())
        self.write("compacted", {"message": summary, "replacement_history": []})
        if self.paginated:
            self.completed("ContextCompaction")
        else:
            self.event({"type": "context_compacted"})
        self.shown.append(("checkpoint", summary))


@st.composite
def codex_rollouts(
    draw: Any, max_turns: int = 6, legacy: bool | None = None, paginated: bool | None = None
) -> HarnessLog:
    """A Codex rollout and what it shows: a legacy one when ``legacy``, one with events from
    its first turn when not, and when ``None`` either or one that a newer Codex resumed. One
    with events from its first turn has a paginated thread's events when ``paginated``, a
    legacy thread's when not, and either when ``None``. The rollout is thread
    :data:`THREAD_ID`'s, to be written as ``sessions/YYYY/MM/DD/rollout-<time>-<THREAD_ID>.jsonl``
    under a Codex home.

    Here read by sessionref's own store (yours in its place): a snapshot shows the surface:

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from hypothesis import given, settings
    >>> from sessionref import SessionReferenceResolver, Target
    >>> from sessionref.codex.store import CodexStore
    >>> from sessionref.testing.codex_logs import THREAD_ID
    >>> @settings(max_examples=10, deadline=None)
    ... @given(codex_rollouts(max_turns=3))
    ... def test_a_snapshot_shows_the_surface(log):
    ...     with tempfile.TemporaryDirectory() as home:
    ...         day = Path(home, "sessions", "2025", "06", "15")
    ...         day.mkdir(parents=True)
    ...         (day / f"rollout-2025-06-15T10-00-00-{THREAD_ID}.jsonl").write_bytes(log.content)
    ...         resolver = SessionReferenceResolver(CodexStore(home), max_reference_bytes=1 << 30)
    ...         context = resolver.snapshot(Target("other"), [{"sessionId": THREAD_ID}])
    ...     [source] = json.loads(context.prompt.split("\\n")[-2])  # its one line of JSON
    ...     shown = [(unit["role"], unit["text"]) for unit in source["conversation"]]
    ...     roles = {"checkpoint": "user"}
    ...     assert shown == [(roles.get(kind, kind), text) for kind, text in log.surface]
    >>> test_a_snapshot_shows_the_surface()
    """
    old = draw(st.booleans()) if legacy is None else legacy
    older = draw(st.sampled_from([0, 0, 1, 2])) if legacy is None else 0  # turns before a resume
    events = not old and older == 0
    paging = events and (draw(st.booleans()) if paginated is None else paginated)
    writer = _Writer(draw, old, events=events, paginated=paging)
    meta = {
        "id": THREAD_ID,
        "timestamp": iso(_EPOCH),
        "cwd": "/work/project",
        "originator": "codex_cli_rs",
        "cli_version": "0.40.0",
        "source": "cli",
        **({"history_mode": "paginated"} if paging else {}),
    }
    if old:
        writer.lines.append(
            js_json({"id": THREAD_ID, "timestamp": iso(_EPOCH), "instructions": None})
        )
    else:
        writer.write("session_meta", meta)
    for turn in range(older):
        writer.turn(first=turn == 0)
        if not old and draw(st.booleans()):
            writer.compact()
    if older:  # resumed by a Codex that writes the envelope and the events
        writer.legacy, writer.events = False, True
    writer.turn(first=True)
    for op in draw(st.lists(st.sampled_from(["turn", "turn", "compact"]), max_size=max_turns)):
        if op == "compact" and not writer.legacy:
            writer.compact()
        else:
            writer.turn(first=False)
    return HarnessLog(writer.lines, writer.shown, None)
