"""The one-pass drop phase, and the cut and serialization after it, against the procedure of
docs/snapshot.md §Retention taken literally."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from sessionref.codecs import utf8_length
from sessionref.errors import BUDGET_EXCEEDED, SessionReferenceError
from sessionref.pipeline.escape_and_serialize import escape_and_serialize
from sessionref.pipeline.messages import SourceData, Unit
from sessionref.pipeline.retain_budget import retain_budget
from sessionref.pipeline.truncate import cut_text, truncate
from sessionref.testing import js_stringify, js_strings

FIELDS = SourceData("s", "label", None, 7)
FIXED = {"sessionId": "s", "label": "label", "cwd": None, "capturedThroughSeq": 7}

units = st.lists(
    st.builds(Unit, st.sampled_from(["user", "assistant"]), js_strings(1, 30), st.booleans()),
    max_size=12,
)


def tag_safe_length(value: object) -> int:
    """UTF-8 length of ``JSON.stringify(value)`` with ``<`` written ``\\u003c``.

    Counted from the standard library's serializer, not the package's: a lone surrogate
    is escaped (6 bytes), a surrogate pair is one 4-byte character, ``<`` takes 6 bytes.
    """
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    total = i = 0
    while i < len(text):
        char = text[i]
        pair = text[i : i + 2]
        if len(pair) == 2 and "\ud800" <= pair[0] <= "\udbff" and "\udc00" <= pair[1] <= "\udfff":
            total, i = total + 4, i + 2
            continue
        total += 6 if char == "<" or "\ud800" <= char <= "\udfff" else len(char.encode())
        i += 1
    return total


def literal_drop(items: list[Unit], max_bytes: int) -> tuple[list[Unit], list[Unit]]:
    """Kept and dropped units: serialize everything again after each drop, as
    docs/snapshot.md §Drop says."""
    kept, dropped = list(items), []
    while True:
        conversation = [{"role": u.role, "text": u.text} for u in kept]
        if tag_safe_length({**FIXED, "conversation": conversation}) <= max_bytes:
            break
        droppable = [i for i, u in enumerate(kept) if not u.checkpoint and i != len(kept) - 1]
        if not droppable:
            break
        dropped.append(kept.pop(droppable[0]))
    return kept, dropped


@given(units, st.integers(60, 600))
def test_one_pass_drops_what_the_literal_rule_drops(items: list[Unit], max_bytes: int) -> None:
    kept, dropped = literal_drop(items, max_bytes)
    retained = retain_budget(items, FIELDS, max_bytes)
    assert [sized.unit for sized in retained.units] == kept
    assert retained.omitted_messages == len(dropped)
    assert retained.dropped_bytes == sum(utf8_length(u.text) for u in dropped)
    assert retained.original_messages == len(items)
    assert retained.compacted == any(u.checkpoint for u in items)
    kept_items = [{"role": u.role, "text": u.text} for u in kept]
    assert retained.size == tag_safe_length({**FIXED, "conversation": kept_items})


def test_checkpoints_between_dropped_messages_stay_in_place() -> None:
    items = [
        Unit("user", "a" * 40),
        Unit("user", "summary", checkpoint=True),
        Unit("assistant", "b" * 40),
        Unit("user", "later summary", checkpoint=True),
        Unit("assistant", "c"),
    ]
    retained = retain_budget(items, FIELDS, 200)
    assert [sized.unit for sized in retained.units] == [items[1], items[3], items[4]]
    assert retained.omitted_messages == 2


def literal_fit(items: list[Unit], max_bytes: int) -> bytes | None:
    """The data object's tag-safe JSON after the drop and the cut as
    docs/snapshot.md §Retention words them, every
    size taken from a fresh serialization; ``None`` where the procedure fails."""
    kept, _ = literal_drop(items, max_bytes)
    texts = [u.text for u in kept]

    def data() -> dict[str, object]:
        conversation = [{"role": u.role, "text": t} for u, t in zip(kept, texts, strict=True)]
        return {**FIXED, "conversation": conversation}

    while (size := tag_safe_length(data())) > max_bytes:
        lengths = [utf8_length(t) for t in texts]
        if not lengths or max(lengths) == 0:
            return None
        i = lengths.index(max(lengths))
        cut, _ = cut_text(kept[i].text, max(0, lengths[i] - (size - max_bytes)))
        if cut == texts[i]:
            return None
        texts[i] = cut
    literal = js_stringify(data()).replace("<", "\\u003c")
    return literal.encode("utf-16-le", "surrogatepass").decode("utf-16-le").encode()


@given(units, st.integers(60, 400))
def test_stages_5_to_7_give_the_literal_bytes(items: list[Unit], max_bytes: int) -> None:
    expected = literal_fit(items, max_bytes)
    try:
        snapshot = escape_and_serialize(
            truncate(retain_budget(items, FIELDS, max_bytes), max_bytes)
        )
    except SessionReferenceError as exc:
        assert exc.code == BUDGET_EXCEEDED
        assert expected is None
        return
    assert snapshot.data_json == expected
    assert len(snapshot.data_json) <= max_bytes
