"""SessionReferenceResolver as a host uses it: policy, errors, placement.

Cancellation: test_api_cancellation.py; the package's rules and wording: test_api_*.py.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sessionref import MemoryStore, SessionReferenceError, SessionReferenceResolver, Target
from sessionref.codecs import encode_session_reference_uri
from sessionref.errors import (
    BUDGET_EXCEEDED,
    INVALID_CONFIG,
    INVALID_REFERENCE,
    READ_FAILED,
    SELF_REFERENCE,
    TOO_MANY,
)
from sessionref.types import ContextMessage
from tests.logs import assistant, header, user


def session(session_id: str, text: str = "hello", created_at: int = 1, **head: Any) -> Any:
    return {
        "header": header(session_id, created_at, **head),
        "events": [user(0, f"{text} from {session_id}"), assistant(1, "ok")],
    }


STORE = MemoryStore([session("a"), session("b", created_at=2), session("c", created_at=3)])


def code_of(call: Any) -> str:
    with pytest.raises(SessionReferenceError) as caught:
        call()
    return caught.value.code


@pytest.mark.parametrize(
    "config",
    [
        {"max_references": 0},
        {"max_references": 4},
        {"max_references": True},
        {"candidate_limit": 0},
        {"max_reference_bytes": 0},
        {"max_reference_bytes": 1.5},
    ],
)
def test_invalid_config(config: dict[str, Any]) -> None:
    assert code_of(lambda: SessionReferenceResolver(STORE, **config)) == INVALID_CONFIG


def test_reference_checks_in_order() -> None:
    resolver = SessionReferenceResolver(STORE, max_references=2)
    assert code_of(lambda: resolver.prepare("t", [], [{"sessionId": 5}])) == INVALID_REFERENCE
    assert code_of(lambda: resolver.prepare("t", [], ["a"])) == INVALID_REFERENCE
    refs = [{"sessionId": "a", "label": 3}]
    assert code_of(lambda: resolver.prepare("t", [], refs)) == INVALID_REFERENCE
    assert code_of(lambda: resolver.prepare("a", [], [{"sessionId": "a"}])) == SELF_REFERENCE
    three = [{"sessionId": s} for s in "abc"]
    assert code_of(lambda: resolver.prepare("t", [], three)) == TOO_MANY


def test_duplicates_collapse_and_the_first_label_wins() -> None:
    refs = [{"sessionId": "a", "label": "first"}, {"sessionId": "a", "label": "second"}]
    context = SessionReferenceResolver(STORE, max_references=1).snapshot("t", refs)
    assert context is not None
    assert [r.label for r in context.source.references] == ["first"]


def test_no_references_no_context_and_content_is_copied() -> None:
    content = [{"type": "text", "text": "hi", "meta": {"k": [1]}}]
    prepared = SessionReferenceResolver(STORE).prepare("t", content, [])
    assert prepared.additional_context is None
    assert prepared.content == content
    prepared.content[0]["meta"]["k"].append(2)
    assert content[0]["meta"]["k"] == [1]


def test_sources_keep_input_order_and_index() -> None:
    refs = [{"sessionId": s} for s in "cab"]
    context = SessionReferenceResolver(STORE).snapshot(Target("t"), refs)
    assert context is not None
    assert [(r.session_id, r.input_index) for r in context.source.references] == [
        ("c", 0),
        ("a", 1),
        ("b", 2),
    ]
    assert context.prompt.index("from c") < context.prompt.index("from a")


def test_read_failure_wins_over_budget_and_names_the_first_missing() -> None:
    resolver = SessionReferenceResolver(STORE, max_reference_bytes=10)
    with pytest.raises(SessionReferenceError) as caught:
        resolver.snapshot("t", [{"sessionId": "a"}, {"sessionId": "gone"}, {"sessionId": "x"}])
    assert caught.value.code == READ_FAILED
    assert caught.value.message == 'failed to read referenced session: session "gone" not found'
    assert code_of(lambda: resolver.snapshot("t", [{"sessionId": "a"}])) == BUDGET_EXCEEDED


def direct(text: str, kind: str = "user") -> dict[str, Any]:
    return {
        "id": "m1",
        "role": "user",
        "content": [{"type": "text", "text": text, "extra": 1}, {"type": "image", "url": "x"}],
        "source": {"kind": kind},
        "meta": "kept",
    }


def test_direct_messages_before_and_after() -> None:
    resolver = SessionReferenceResolver(STORE)
    mention = f"see @[the a](dsh-session:{encode_session_reference_uri('a')[12:]})"
    messages = [direct("no refs"), direct(mention), direct(mention, kind="plugin")]
    original = copy.deepcopy(messages)
    before = resolver.prepare_direct_messages("t", messages)
    assert messages == original
    assert before[0] is messages[0] and before[3] is messages[2]
    assert isinstance(before[1], ContextMessage)
    rewritten = before[2]
    assert isinstance(rewritten, dict)
    assert rewritten["content"] == [
        {"type": "text", "text": "see @the a"},
        messages[1]["content"][1],
    ]
    assert rewritten["meta"] == "kept" and rewritten["id"] == "m1"
    after = resolver.prepare_direct_messages("t", messages, placement="after")
    assert isinstance(after[2], ContextMessage) and after[1] == rewritten


def test_direct_messages_parse_everything_before_preparing() -> None:
    resolver = SessionReferenceResolver(STORE)
    messages = [direct("@[x](dsh-session:InRvby1tYW55Ig)"), direct("dsh-session:!bad")]
    messages[1]["content"][0]["text"] = "@[x](dsh-session:e30)"
    assert code_of(lambda: resolver.prepare_direct_messages("t", messages)) == INVALID_REFERENCE


def test_candidates_rank_query_and_limit() -> None:
    store = MemoryStore(
        [
            session("mine", created_at=1, cwd="/w"),
            session("nocwd", created_at=3, cwd=None),
            session("other", created_at=4, cwd="/elsewhere"),
            session("newer-mine", created_at=2, cwd="/w"),
        ]
    )
    resolver = SessionReferenceResolver(store)
    found = resolver.list_candidates(Target("t", "/w"))
    assert [c.session_id for c in found] == ["newer-mine", "mine", "nocwd", "other"]
    assert [c.session_id for c in resolver.list_candidates(Target("t", "/w"), "MINE")] == [
        "newer-mine",
        "mine",
    ]
    assert [c.session_id for c in resolver.list_candidates(Target("mine", "/w"), limit=1)] == [
        "newer-mine"
    ]
    assert code_of(lambda: resolver.list_candidates("t", limit=0)) == INVALID_REFERENCE
    mentions = resolver.mention_candidates("t", limit=1)
    assert mentions[0].mention == "@[nocwd](" + encode_session_reference_uri("nocwd") + ")"
