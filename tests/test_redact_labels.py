"""With redaction on, a snapshot's label is redacted (docs/redaction.md §Labels and titles),
whether a title or given in a reference or a mention, before the budget measures it, and
counted; batch lines carry it. Found by a newcomer's trial: a title that held a key was
printed whole beside the redacted text."""

from __future__ import annotations

import json
from typing import Any

from sessionref import MemoryStore, SessionReferenceResolver, Target
from sessionref.batch import build_snapshots
from sessionref.codecs.jsjson import js_json
from sessionref.codecs.uri import (
    Reference,
    format_session_reference_mention,
)
from sessionref.log.builder import LogBuilder
from sessionref.types import ContextMessage
from tests.redact_corpus import leaked, secrets

SECRET = next(s for s in secrets(seed=41) if s.kind == "github-token")
TITLE = f"deploy with {SECRET.snippet}"
SHOWN = "deploy with [REDACTED:github-token]"
TARGET = Target("t", "/w")


def logs(title: Any = TITLE) -> list[dict[str, Any]]:
    """Session ``s`` (says hello, titled ``title``) and session ``u`` (untitled), both in /w."""
    titled = LogBuilder()
    titled.user("hello")
    titled.assistant("ok")
    titled.title(title)
    plain = LogBuilder()
    plain.user("hello too")
    header = {"version": 0, "createdAt": 1, "cwd": "/w", "delegationDepth": 0}
    return [
        {"header": {**header, "id": "s"}, "events": titled.events},
        {"header": {**header, "id": "u", "createdAt": 2}, "events": plain.events},
    ]


def data_object(context: ContextMessage) -> dict[str, Any]:
    """The one data object of a context message's prompt."""
    prompt = context.prompt
    array = prompt[prompt.index("<referenced-sessions>\n") + 22 : prompt.rindex("\n</")]
    (data,) = json.loads(array)
    assert isinstance(data, dict)
    return data


def snapshot_of(resolver: SessionReferenceResolver, reference: Reference) -> ContextMessage:
    sources = resolver.read_sources([reference], label_from_title=True)
    return resolver.render_sources(sources)


def test_a_label_from_a_title_is_redacted_and_counted() -> None:
    store = MemoryStore(logs())
    context = snapshot_of(SessionReferenceResolver(store, redact=True), Reference("s", "s"))
    (stats,) = context.source.references
    assert (stats.label, data_object(context)["label"]) == (SHOWN, SHOWN)
    assert stats.redacted == {"github-token": 1}  # the label's; the conversation has none
    assert not leaked(SECRET, js_json(context).decode())
    plain = snapshot_of(SessionReferenceResolver(store), Reference("s", "s"))
    assert plain.source.references[0].label == TITLE


def test_a_label_given_in_a_reference_or_a_mention_is_redacted() -> None:
    resolver = SessionReferenceResolver(MemoryStore(logs()), redact=True)
    prepared = resolver.prepare(TARGET, [], [{"sessionId": "u", "label": TITLE}])
    context = prepared.additional_context
    assert context is not None
    assert data_object(context)["label"] == "deploy with [REDACTED:github-token]"
    assert not leaked(SECRET, js_json(context).decode())
    text = f"see {format_session_reference_mention('u', TITLE)}"
    message = {
        "role": "user",
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": text}],
    }
    first, _ = resolver.prepare_direct_messages(TARGET, [message])
    assert isinstance(first, ContextMessage)
    assert first.source.references[0].label == SHOWN
    assert not leaked(SECRET, js_json(first).decode())


def test_the_budget_measures_the_redacted_label() -> None:
    """A budget of exactly the redacted data object's bytes keeps it whole; one byte less
    cuts. Measured with the label as logged (the token is longer than its marker), the first
    would cut too."""
    expected = (
        '{"sessionId":"s","label":"deploy with [REDACTED:github-token]","cwd":"/w",'
        '"capturedThroughSeq":2,"conversation":[{"role":"user","text":"hello"},'
        '{"role":"assistant","text":"ok"}]}'
    )
    store = MemoryStore(logs())
    for budget, cut in ((len(expected), False), (len(expected) - 1, True)):
        resolver = SessionReferenceResolver(store, redact=True, max_reference_bytes=budget)
        context = snapshot_of(resolver, Reference("s", "s"))
        (stats,) = context.source.references
        assert stats.truncated is cut
        if not cut:
            assert json.dumps(data_object(context), separators=(",", ":")) == expected
            assert (stats.omitted_bytes, stats.omitted_messages) == (0, 0)


def test_a_redacted_label_is_redacted_alike_again() -> None:
    """A mention copied from a redacted listing names its label redacted: the snapshot
    keeps that label as it is, and counts nothing for it."""
    resolver = SessionReferenceResolver(MemoryStore(logs()), redact=True)
    context = snapshot_of(resolver, Reference("u", SHOWN))
    assert context.source.references[0].label == SHOWN
    assert context.source.references[0].redacted == {}


def test_batch_lines_carry_the_redacted_label() -> None:
    results = {
        r["sessionId"]: r for r in build_snapshots(MemoryStore(logs()), redact=True, label="title")
    }
    line = results["s"]
    assert line["label"] == SHOWN
    assert line["context"]["source"]["references"][0]["label"] == SHOWN
    assert line["context"]["source"]["references"][0]["redacted"] == {"github-token": 1}
    assert not leaked(SECRET, json.dumps(list(results.values())))
