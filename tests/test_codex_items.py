"""A paginated Codex rollout records what the person saw as ``item_completed`` events, not as
``user_message`` and ``agent_message`` ones (docs/harnesses.md §Codex §Each message once).

Codex's ``should_persist_event_msg`` (openai/codex ``codex-rs/rollout/src/policy.rs``) keeps
``ItemCompleted`` events of every ``TurnItem`` in a paginated rollout and writes the legacy
``UserMessage`` and ``AgentMessage`` events only in a legacy one, whose ``ItemCompleted`` events
are never of those two kinds. The lines here are written by hand as serde writes them:
``EventMsg`` is tagged ``type`` in snake case (``item_completed``), ``ItemCompletedEvent`` is
``{thread_id, turn_id, item, started_at_ms?, completed_at_ms}``
(``codex-rs/protocol/src/protocol.rs``), a ``TurnItem`` is tagged ``type`` with its variant's
name (``UserMessage``, ``AgentMessage``), a user message's ``content`` holds ``UserInput``s
tagged in snake case (``text``, ``local_image``) and an agent message's ``AgentMessageContent``s
(``Text``) (``codex-rs/protocol/src/items.rs``, ``user_input.rs``). What each stands for is the
legacy event Codex makes of it (``codex-rs/protocol/src/legacy_events.rs``): one user message
whose text is the user's text inputs joined (``UserMessageItem::message``), one agent message
per content part."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sessionref.codex import pages, records
from sessionref.codex.listed import _Payload, previewed
from sessionref.codex.reader import codex_transcript
from sessionref.codex.reference_lines import before_nth_user_message
from tests.test_codex import THREAD, copy, line, meta, rollout, said, shown, write
from tests.test_codex_references import LIVE, SEGMENTS, reference

PAGINATED = {"history_mode": "paginated"}


def completed(item: dict[str, Any], turn: str = "t0") -> bytes:
    """An ``item_completed`` event as Codex writes it."""
    payload = {
        "type": "item_completed",
        "thread_id": THREAD,
        "turn_id": turn,
        "item": item,
        "started_at_ms": 1748772000000,
        "completed_at_ms": 1748772001000,
    }
    return line("event_msg", payload)


def user_item(*inputs: dict[str, Any]) -> dict[str, Any]:
    return {"type": "UserMessage", "id": "u1", "content": list(inputs)}


def text(value: str) -> dict[str, Any]:
    """A ``UserInput::Text``."""
    return {"type": "text", "text": value, "text_elements": []}


def agent_item(*parts: str) -> dict[str, Any]:
    return {
        "type": "AgentMessage",
        "id": "a1",
        "content": [{"type": "Text", "text": part} for part in parts],
        "phase": "final_answer",
    }


def turn(n: int, prompt: str, answer: str) -> list[bytes]:
    """A turn of a paginated rollout: the model's copies (a context fragment among them, a user
    message too), and what the person saw as completed items."""
    turn_id = f"t{n}"
    return [
        line("event_msg", {"type": "task_started", "turn_id": turn_id}),
        line("response_item", copy("user", "<environment_context>x</environment_context>")),
        line("response_item", copy("user", prompt)),
        completed(user_item(text(prompt)), turn_id),
        line("response_item", copy("assistant", answer)),
        completed(agent_item(answer), turn_id),
        line("event_msg", {"type": "task_complete", "turn_id": turn_id}),
    ]


def test_a_paginated_rollout_shows_what_the_person_saw_once() -> None:
    """A newcomer's trial: a paginated rollout has no ``user_message`` event, so its texts were
    taken from the model's copies, context fragments and image labels included."""
    image = {"type": "local_image", "path": "/w/shot.png"}
    model_copy = {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "<image name=[Image #1]>"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
            {"type": "input_text", "text": "</image>"},
            {"type": "input_text", "text": "what is this"},
        ],
    }
    lines = [
        meta(**PAGINATED),
        line("response_item", copy("user", "<new_context>x</new_context>")),
        line("response_item", model_copy),
        completed(user_item(image, text("what is this"))),
        line("response_item", copy("assistant", "A chart.")),
        completed(agent_item("A chart.")),
        completed({"type": "Plan", "id": "p1", "text": "1. look"}),
        completed(user_item(text("split "), text("it"))),
        completed(agent_item("First.", "Second.")),
    ]
    expected = [
        ("user", "what is this"),
        ("assistant", "A chart."),
        ("user", "split it"),
        ("assistant", "First."),
        ("assistant", "Second."),
    ]
    transcript = codex_transcript(THREAD, lines, None)
    assert (shown(transcript), transcript.title) == (expected, "what is this")
    summary = line("compacted", {"message": "summary"})
    snapshot = codex_transcript(THREAD, [*lines[:6], summary, *lines[6:]], None, texts_only=True)
    assert (shown(snapshot), snapshot.title) == (
        [("checkpoint", "summary"), *expected[2:]],
        "what is this",
    )


def test_the_first_completed_user_message_that_says_something_titles_the_thread() -> None:
    """Codex takes a completed ``UserMessage`` for the thread's first user message as it takes
    a legacy ``user_message`` event: ``apply_event_msg`` in ``codex-rs/state/src/extract.rs``
    applies ``user.as_legacy_user_message_event()`` through ``apply_user_message``, which sets
    the title from the first message whose text (after an IDE's request heading, trimmed) is
    not empty, so an image alone titles nothing and the next message does; a goal is a preview,
    never a title (``ThreadGoalUpdated`` sets the preview alone). The list.rs head scan counts
    the same item as the first user message (``read_head_summary_with_references``)."""
    image = {"type": "local_image", "path": "/w/shot.png"}
    ide = "# Context from my IDE setup:\nopen: a.py\n## My request for Codex:\n fix the chart\n"
    lines = [
        meta(**PAGINATED),
        line("event_msg", {"type": "thread_goal_updated", "goal": {"objective": "ship it"}}),
        completed(user_item(image)),
        completed(agent_item("A chart.")),
        completed(user_item(text(ide)), "t1"),
        completed(user_item(text("later")), "t2"),
    ]
    assert codex_transcript(THREAD, lines, None).title == "fix the chart"
    assert codex_transcript(THREAD, lines, None, texts_only=True).title == "fix the chart"


def test_a_paginated_fork_of_a_legacy_thread_shows_both_parts(tmp_path: Path) -> None:
    """The parent records ``user_message`` events, the fork ``item_completed`` ones: each
    message shows once, the fork's own too."""
    parent = "0197a000-0000-7000-8000-0000000000bb"
    parent_rollout = f"sessions/2025/06/01/rollout-2025-06-01T09-00-00-{parent}.jsonl"
    parent_lines = [
        meta(parent, segment_id=SEGMENTS[3]),
        *said("user", "first"),
        *said("assistant", "one"),
        *said("user", "second"),
        *said("assistant", "two"),
    ]
    fork = reference(tmp_path / parent_rollout, SEGMENTS[3], parent, nth_user_message=1)
    live = [meta(segment_id=SEGMENTS[2], **PAGINATED), fork, *turn(0, "mine", "ok")]
    store = write(tmp_path, {parent_rollout: rollout(*parent_lines), LIVE: rollout(*live)})
    assert shown(store.transcript(THREAD)) == [
        ("user", "first"),
        ("assistant", "one"),
        ("user", "mine"),
        ("assistant", "ok"),
    ]


def test_a_fork_of_a_paginated_thread_counts_its_completed_user_messages(
    tmp_path: Path,
) -> None:
    """Codex's ``truncate_before_nth_user_message`` (``codex-rs/rollout/src/reference.rs``)
    counts ``item_completed`` user messages as it counts ``user_message`` events, not the
    user response items, among which are context fragments."""
    parent = "0197a000-0000-7000-8000-0000000000bb"
    parent_rollout = f"sessions/2025/06/01/rollout-2025-06-01T09-00-00-{parent}.jsonl"
    parent_lines = [
        meta(parent, segment_id=SEGMENTS[3], **PAGINATED),
        *turn(0, "first", "one"),
        *turn(1, "second", "two"),
        *turn(2, "third", "three"),
    ]
    fork = reference(tmp_path / parent_rollout, SEGMENTS[3], parent, nth_user_message=2)
    live = [meta(segment_id=SEGMENTS[2], **PAGINATED), fork, *turn(3, "mine", "ok")]
    store = write(tmp_path, {parent_rollout: rollout(*parent_lines), LIVE: rollout(*live)})
    assert shown(store.transcript(THREAD)) == [
        ("user", "first"),
        ("assistant", "one"),
        ("user", "second"),
        ("assistant", "two"),
        ("user", "mine"),
        ("assistant", "ok"),
    ]


class _Counting:
    """A decoder that counts the texts it decodes."""

    def __init__(self, decoder: Any, counts: list[bytes]) -> None:
        self.decoder, self.counts = decoder, counts

    def decode(self, text: bytes) -> Any:
        self.counts.append(bytes(text))
        return self.decoder.decode(text)


def test_a_forks_cut_decodes_each_line_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cutting a parent's history before its nth user message reads each line once: a
    completed item's kind from the line already decoded, not from the line decoded again."""
    lines = [*turn(0, "first", "one"), *turn(1, "second", "two")]
    counts: list[bytes] = []
    for module, name in ((pages, "_LINE"), (records, "_ROLLOUT")):
        monkeypatch.setattr(module, name, _Counting(getattr(module, name), counts))
    assert before_nth_user_message(lines, 1) == lines[:7]  # turn 1 starts at its task_started
    assert sorted(counts) == sorted(lines)


def test_a_completed_user_item_previews_as_the_decoder_keeps_it() -> None:
    """The listing reads a completed item's text from the item itself, whether a decoder kept
    it raw or built it (its preview: the text inputs joined, trimmed)."""
    item = user_item(text(" "), text("fix it"), {"type": "local_image", "path": "/a.png"})
    for value in (item, msgspec.Raw(json.dumps(item).encode())):
        assert previewed(_Payload("item_completed", item=value))
    assert not previewed(_Payload("item_completed", item=msgspec.Raw(b'{"type":"Plan"}')))
