"""The closers of a log that ends inside a turn, as the harness's ``interruptedTurnClosers``
computes them (``@deepseek-ai/dsh-session`` ``lib/types/repair.js``): calls are kept in a
JavaScript ``Map`` keyed by call id, so numbers are told apart as doubles are."""

from __future__ import annotations

from typing import Any

import pytest

from sessionref.log.closers import interrupted_turn_closers
from sessionref.log.structs import DecodedLogRecord


def record(kind: str, seq: int, data: Any) -> DecodedLogRecord:
    return DecodedLogRecord(kind, seq=seq, time=seq, data=data)


@pytest.mark.parametrize(
    ("called", "resolved"),
    [
        (2**53, 2**53 + 1),  # one double: 9007199254740993 reads as 9007199254740992
        (10**400, 10**401),  # both Infinity
        (10**400, float("inf")),
        (2**53, float(2**53)),
    ],
)
def test_a_result_resolves_the_call_whose_id_is_the_same_double(
    called: object, resolved: object
) -> None:
    """The call is resolved by a result whose call id is the same double, as ``Map.delete``
    finds it; it was left pending (and its closer, of a call id that is no string, failed)."""
    records = [
        record("turn/start", 0, {"turn": 1}),
        record("step/start", 1, {"turn": 1, "step": 1}),
        record(
            "assistant/message",
            2,
            {"turn": 1, "step": 1, "message": {"content": [{"type": "tool-call", "id": called}]}},
        ),
        record("tool/result", 3, {"message": {"source": {"kind": "tool", "callId": resolved}}}),
    ]
    closers = interrupted_turn_closers(records)
    assert [(closer.type, closer.seq) for closer in closers] == [("step/end", 4), ("turn/end", 5)]
