"""Config and limit values, reference checks and the failure order of direct messages, and
several references in one call (order, duplicates, odd labels, budgets over several
sources, mentions mixed with bare URIs), a read failure beside a budget failure, as the
published package answers them: code *and* message, but for a damaged log, whose wording is
the harness's own (docs/api.md §Configuration, §Errors, §Direct messages).

``tests/data/api/package_cases.jsonl.gz`` holds conformance cases (docs/api.md §Conformance)
made by ``make_package_cases.py`` and answered by the real stack (``conform.mjs``).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from sessionref.conform import answer

CASES = Path(__file__).parent / "data" / "api" / "package_cases.jsonl.gz"
with gzip.open(CASES, "rt", encoding="utf-8") as lines:
    VECTORS = [json.loads(line) for line in lines if line.strip()]


def describe(case: dict[str, Any]) -> str:
    shown = {k: case[k] for k in ("config", "limit", "query", "references") if k in case}
    if case["op"] == "direct":
        shown["texts"] = [message["content"][0]["text"][:40] for message in case["messages"]]
    return f"{case['op']} {json.dumps(shown, ensure_ascii=False)[:120]}"


def test_the_set_covers_every_rule() -> None:
    codes = {vector["expect"].get("error", {}).get("code") for vector in VECTORS}
    assert {
        f"SESSION_REFERENCE_{c}"
        for c in (
            "INVALID_CONFIG",
            "INVALID_REFERENCE",
            "SELF_REFERENCE",
            "TOO_MANY",
            "READ_FAILED",
        )
    } <= codes
    assert {vector["case"]["op"] for vector in VECTORS} == {
        "prepare",
        "direct",
        "candidates",
        "format",
    }


def contract(result: dict[str, Any]) -> dict[str, Any]:
    """What of a result the contract fixes: all of it, but the harness's own words for a
    damaged log (SPEC §9: errors by code), of which only the code counts.

    >>> contract({"error": {"code": "C", "message": "failed to inspect session: corrupt"}})
    {'error': {'code': 'C'}}
    """
    error = result.get("error")
    if error is not None and "corrupt" in error["message"] and "not found" not in error["message"]:
        return {"error": {"code": error["code"]}}
    return result


@pytest.mark.parametrize("vector", VECTORS, ids=[describe(v["case"]) for v in VECTORS])
def test_package_answer(vector: dict[str, Any]) -> None:
    have = json.loads(json.dumps(answer(vector["case"])))
    assert contract(have) == contract(vector["expect"])
