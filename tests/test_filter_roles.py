"""The text an assistant message shows, decoded by block type where it can, against the rule
read literally from the parsed JSON: the ``text`` of every block whose ``type`` is ``"text"``
and whose ``text`` is a string, joined by newlines; a ``null`` block fails."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionref.errors import SessionLogError
from sessionref.log.records import decode_records
from sessionref.pipeline.filter_roles import model_blocks
from sessionref.pipeline.unitize import message_text
from sessionref.testing import js_strings


def shown(content: list[Any]) -> str:
    """The rule, on parsed JSON (JSON.parse keeps the last of duplicate keys, as json does)."""
    if any(block is None for block in content):
        raise SessionLogError("a content block is null")
    return "\n".join(
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and type(block.get("text")) is str
    )


def record_of(content_json: str) -> Any:
    line = '{"type":"assistant/message","seq":0,"time":0,"data":{"message":{"content":'
    line += content_json + ',"source":{"kind":"model"}}}}\n'
    [record] = decode_records(line.encode("utf-8", "surrogatepass"))
    return record


def outcome(work: Any) -> Any:
    try:
        return work()
    except SessionLogError as exc:
        return type(exc)


values = st.one_of(js_strings(0, 8), st.integers(), st.none(), st.booleans())
blocks = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "reasoning", "tool-call", "image", 3])},
        optional={"text": values, "arguments": values, "id": values},
    ),
    st.fixed_dictionaries({}, optional={"text": values}),
    values,
    st.lists(values, max_size=2),
)


@given(st.lists(blocks, max_size=5))
def test_model_blocks_show_what_the_rule_shows(content: list[Any]) -> None:
    record = record_of(json.dumps(content))
    assert outcome(lambda: message_text(model_blocks(record))) == outcome(lambda: shown(content))


@pytest.mark.parametrize(
    ("content_json", "text"),
    [
        ('[{"type":"reasoning","type":"text","text":"x"}]', "x"),
        ('[{"type":"text","type":"reasoning","text":"x"}]', ""),
        ('[{"type":"text","text":"a","text":"b"},{"type":"tool-call","text":"c"}]', "b"),
        ('[{"text":"a","type":"text"},{"type":"reasoning","text":"r"},{"type":"text"}]', "a"),
    ],
)
def test_duplicate_keys_count_as_the_last(content_json: str, text: str) -> None:
    assert message_text(model_blocks(record_of(content_json))) == text
