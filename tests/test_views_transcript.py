"""``dsh_transcript`` and the stores' ``transcript()``: the current surface as a person reads
it, held against an independent reading of the same log (the reference fold of
``sessionref.testing``) and against literal logs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from sessionref.cli.listed import HeadersOnce
from sessionref.errors import SessionLogError
from sessionref.index import SessionIndex
from sessionref.log.builder import LogBuilder
from sessionref.log.store import DirectoryStore, MemoryStore
from sessionref.testing import (
    LogRecords,
    closers,
    current_surface,
    expand_records,
    js_normalize,
    js_strings,
    session_logs,
    write_session_store,
)
from sessionref.transcript import Entry
from tests.conftest import examples

HEADER = {"version": 0, "id": "s", "createdAt": 5, "delegationDepth": 0, "cwd": "/w"}
INTERRUPTED = "The tool call was interrupted."  # the text of the harness's closing results


def texts(blocks: Any) -> str:
    found = [
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    return js_normalize("\n".join(found))


def expected_entries(log: LogRecords) -> list[tuple[str, str, str, Any, Any]]:
    """An independent reading: the reference surface, closers included, entry by entry."""
    events = expand_records(log["events"])
    events += closers(events)
    names: dict[str, str] = {}
    out: list[tuple[str, str, str, Any, Any]] = []
    for seq in current_surface(events):
        event = events[seq]
        data, time = event["data"], event.get("time")
        if event["type"] == "user/message":
            source = data["source"]
            if source.get("kind") == "plugin" and source.get("plugin") == "compact":
                role, kind, text = "user", "checkpoint", texts(data["content"])
            elif source.get("kind") == "user":
                role, kind = "user", "text"
                text = texts(data["display"] if "display" in data else data["content"])
            else:
                role, kind, text = "system", "text", texts(data["content"])
            if text:
                out.append((role, kind, text, time, None))
        elif event["type"] == "assistant/message":
            for block in data["message"]["content"]:
                if block["type"] == "tool-call":
                    names[block["id"]] = block["name"]
                    out.append(("assistant", "tool-call", block["arguments"], time, block["name"]))
                elif block["type"] in ("text", "reasoning") and block["text"]:
                    kind = "text" if block["type"] == "text" else "thinking"
                    out.append(("assistant", kind, js_normalize(block["text"]), time, None))
        else:
            call = data["message"]["source"]["callId"]
            content = data["message"].get("content")
            text = INTERRUPTED if content is None else texts(content[0]["content"])
            out.append(("tool", "tool-result", text, time, names.get(call)))
    return out


def entries_of(store: Any, session_id: str) -> list[tuple[str, str, str, Any, Any]]:
    return [(e.role, e.kind, e.text, e.time, e.name) for e in store.transcript(session_id).entries]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(session_logs(max_turns=4, texts=js_strings(max_size=30)))
def test_the_transcript_is_the_surface_read_entry_by_entry(log: LogRecords) -> None:
    store = MemoryStore([log])
    session_id = log["header"]["id"]
    transcript = store.transcript(session_id)
    assert entries_of(store, session_id) == expected_entries(log)
    assert (transcript.session_id, transcript.harness) == (session_id, "dsh")
    assert transcript.cwd == log["header"].get("cwd")
    assert transcript.created_at == log["header"]["createdAt"]


def built_log() -> LogBuilder:
    b = LogBuilder(time=1000)
    b.turn_start()
    b.user("context", source={"kind": "goal"})
    b.user("<ctx>fix it</ctx>", display=[{"type": "text", "text": "fix it"}])
    b.step_start()
    b.assistant(
        [
            {"type": "reasoning", "text": "look first"},
            {"type": "text", "text": "Looking."},
            {"type": "tool-call", "id": "c1", "name": "bash", "arguments": '{"cmd":"ls"}'},
        ]
    )
    b.tool_call("c1", "bash", '{"cmd":"ls"}')
    b.tool_result("c1", "a.py")
    b.step_end()
    b.turn_end()
    b.title("Fix it")
    return b


def test_a_literal_log_reads_as_written() -> None:
    store = MemoryStore([{"header": HEADER, "events": built_log().events}])
    transcript = store.transcript("s")
    assert transcript.title == "Fix it"
    assert transcript.entries == [
        Entry("system", "text", "context", 1014),
        Entry("user", "text", "fix it", 1021),
        Entry("assistant", "thinking", "look first", 1035),
        Entry("assistant", "text", "Looking.", 1035),
        Entry("assistant", "tool-call", '{"cmd":"ls"}', 1035, "bash", call="c1"),
        Entry("tool", "tool-result", "a.py", 1049, "bash", call="c1"),
    ]


def test_a_checkpoint_replaces_what_it_summarizes() -> None:
    b = built_log()
    first, last = b.surface[0], b.surface[-1]
    b.checkpoint("we fixed it", first, last)
    b.turn_start()
    b.user("thanks")
    b.turn_end()
    transcript = MemoryStore([{"header": HEADER, "events": b.events}]).transcript("s")
    assert [(e.role, e.kind, e.text) for e in transcript.entries] == [
        ("user", "checkpoint", "we fixed it"),
        ("user", "text", "thanks"),
    ]


def test_a_title_that_is_not_text_is_its_json() -> None:
    b = built_log()
    b.emit("session/title", {"title": 7, "messageSeqs": [], "source": {"kind": "user"}})
    assert MemoryStore([{"header": HEADER, "events": b.events}]).transcript("s").title == "7"


def test_every_store_gives_the_same_transcript(tmp_path: Path) -> None:
    log = {"header": HEADER, "events": built_log().events}
    write_session_store(tmp_path / "store", [log], compress=True)
    directory = DirectoryStore(tmp_path / "store")
    memory = MemoryStore([log])
    index = SessionIndex(directory, tmp_path / "index.sqlite")
    listed = HeadersOnce(directory, directory.headers())
    expected = memory.transcript("s")
    assert expected.entries
    for store in (directory, index, listed):
        assert store.transcript("s") == expected


def test_a_surface_the_harness_cannot_fold_is_a_log_error() -> None:
    b = built_log()
    events = [*b.events, {**b.events[-1], "seq": len(b.events), "surfaceOp": "append"}]
    with pytest.raises(SessionLogError):
        MemoryStore([{"header": HEADER, "events": events}]).transcript("s")
