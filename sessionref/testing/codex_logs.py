"""Hypothesis strategies for Codex CLI rollout files, each with what it shows, known by
construction (docs/harnesses.md §Codex).

A generated rollout is a ``session_meta``, then turns as Codex records them: a
``turn_context``, the user message twice (the model's copy with injected context blocks, and
the event), reasoning, tool calls and their output, the assistant message twice; compactions
(``compacted`` with a summary); lines of kinds the reader ignores. ``legacy=True`` writes the
oldest shape instead: no envelope and no event stream. Either may also come as a rollout that
a newer Codex resumed: older turns without events (with or without envelope), then turns with.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from sessionref.codecs.jsjson import js_json
from sessionref.testing.claude_logs import HarnessLog, iso, plain_texts

_EPOCH = 1_750_000_000_000
THREAD_ID = "0197a000-0000-7000-8000-000000000001"


class _Writer:
    """The state of a rollout being generated."""

    def __init__(self, draw: Any, legacy: bool, events: bool) -> None:
        self.draw = draw
        self.legacy = legacy
        self.events = events
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

    def message(self, role: str, text: str, injected: bool = False) -> None:
        kind = "input_text" if role == "user" else "output_text"
        content = [{"type": kind, "text": text}]
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
        self.write(
            "turn_context", {"cwd": "/work/project", "model": "gpt-5", "approval_policy": "never"}
        )
        prompt = draw(plain_texts())
        self.message("user", prompt, injected=first and draw(st.booleans()))
        self.event({"type": "user_message", "message": prompt, "images": []})
        self.shown.append(("user", prompt))
        if draw(st.booleans()):
            self.write(
                "response_item",
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": draw(plain_texts())}],
                    "encrypted_content": "x",
                },
            )
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
        answer = draw(plain_texts())
        self.message("assistant", answer)
        self.event({"type": "agent_message", "message": answer})
        self.shown.append(("assistant", answer))
        self.event({"type": "token_count", "info": None})

    def event(self, payload: dict[str, Any]) -> None:
        """An ``event_msg``, by a Codex that writes them."""
        if self.events:
            self.write("event_msg", payload)

    def compact(self) -> None:
        summary = self.draw(plain_texts())
        self.write("compacted", {"message": summary, "replacement_history": []})
        self.event({"type": "context_compacted"})
        self.shown.append(("checkpoint", summary))


@st.composite
def codex_rollouts(draw: Any, max_turns: int = 6, legacy: bool | None = None) -> HarnessLog:
    """A Codex rollout and what it shows: a legacy one when ``legacy``, one with events from
    its first turn when not, and when ``None`` either or one that a newer Codex resumed."""
    old = draw(st.booleans()) if legacy is None else legacy
    older = draw(st.sampled_from([0, 0, 1, 2])) if legacy is None else 0  # turns before a resume
    writer = _Writer(draw, old, events=not old and older == 0)
    meta = {
        "id": THREAD_ID,
        "timestamp": iso(_EPOCH),
        "cwd": "/work/project",
        "originator": "codex_cli_rs",
        "cli_version": "0.40.0",
        "source": "cli",
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
