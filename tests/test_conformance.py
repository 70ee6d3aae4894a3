"""Every vector answered by the published package must be answered the same way."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from sessionref.conform import answer
from tests.conftest import load_vectors

VECTORS = load_vectors()


def same_answer(have: dict[str, Any], want: dict[str, Any]) -> bool:
    """Errors match by code; ok values as parsed JSON (docs/api.md §Conformance)."""
    if "error" in want:
        return have.get("error", {}).get("code") == want["error"]["code"]
    return "ok" in have and have["ok"] == want["ok"]


def test_every_op_is_covered() -> None:
    ops = {vector["case"]["op"] for vector in VECTORS}
    assert ops == {"encode", "decode", "format", "parse", "prepare", "direct", "candidates"}
    assert len(VECTORS) == 942


@pytest.mark.parametrize(
    "vector", VECTORS, ids=[f"{v['case']['op']}-{i}" for i, v in enumerate(VECTORS)]
)
def test_vector(vector: dict[str, Any]) -> None:
    have = json.loads(json.dumps(answer(vector["case"])))
    assert same_answer(have, vector["expect"]), (have, vector["expect"])


def test_error_messages_match_where_the_spec_gives_them() -> None:
    """INVALID_REFERENCE messages, and READ_FAILED for a missing session; the harness's own
    words for a damaged log are not part of the contract (SPEC §9: errors by code)."""
    checked = 0
    for vector in VECTORS:
        want = vector["expect"].get("error")
        if (
            want
            and vector["case"]["op"] in ("decode", "parse", "prepare")
            and (
                want["code"] == "SESSION_REFERENCE_INVALID_REFERENCE"
                or want["message"].endswith("not found")
            )
        ):
            assert answer(vector["case"])["error"]["message"] == want["message"]
            checked += 1
    assert checked > 20


def test_conform_command_answers_line_by_line() -> None:
    cases = [v["case"] for v in VECTORS[:60]]
    stdin = "".join(json.dumps(case) + "\n" for case in cases)
    done = subprocess.run(
        [sys.executable, "-m", "sessionref", "conform"],
        input=stdin.encode(),
        capture_output=True,
        check=True,
    )
    lines = done.stdout.decode("utf-8").split("\n")[:-1]
    assert len(lines) == len(cases)
    for line, vector in zip(lines, VECTORS[:60], strict=True):
        assert same_answer(json.loads(line), vector["expect"])


def test_a_case_that_is_no_json_object_is_answered_with_an_error_line() -> None:
    """One answer per line, whatever the line: a line nested 100,000 deep (a RecursionError
    in Python's parser) gave a traceback and ended the run."""
    cases = [b"[" * 100_000, b"{oops", json.dumps(VECTORS[0]["case"]).encode()]
    done = subprocess.run(
        [sys.executable, "-m", "sessionref", "conform"],
        input=b"\n".join(cases) + b"\n",
        capture_output=True,
        check=True,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [answer.get("error", {}).get("code") for answer in answers[:2]] == ["BAD_CASE"] * 2
    assert same_answer(answers[2], VECTORS[0]["expect"])


NEGATIVE_ZERO_HEADERS = {
    "op": "candidates",
    "target": {"id": "t"},
    "sessions": [
        {"header": {"version": 0, "id": "created", "createdAt": -0.0, "delegationDepth": 0}},
        {"header": {"version": 0, "id": "depth", "createdAt": 5, "delegationDepth": -0.0}},
    ],
    "query": "",
}


def test_a_case_header_holding_negative_zero_is_written_as_javascript_writes_it() -> None:
    """A case's sessions lie in the store as ``JSON.stringify`` writes them: ``-0.0`` in a
    header is written ``0`` (the listing skips only a log that holds the literal ``-0``).
    The real stack's answer (``conform.mjs``), recorded."""
    want = {
        "candidates": [
            {"sessionId": "depth", "label": "depth", "createdAt": 5},
            {"sessionId": "created", "label": "created", "createdAt": 0},
        ]
    }
    have = json.loads(json.dumps(answer(json.loads(json.dumps(NEGATIVE_ZERO_HEADERS)))))
    assert have == {"ok": want}
