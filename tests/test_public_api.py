"""The package's public face: plain JSON out of any answer, ``dir(sessionref)``, and what
``import sessionref.testing`` says without hypothesis."""

from __future__ import annotations

import json
from typing import Any

import pytest

import sessionref
from sessionref import MemoryStore, SessionReferenceResolver, to_builtins
from sessionref.errors import SessionReferenceError
from tests.conftest import load_vectors, run_script

DIRECT = [
    vector
    for vector in load_vectors()
    if vector["case"]["op"] == "direct" and "ok" in vector["expect"]
]


def without_context_ids(messages: list[Any]) -> list[Any]:
    """The messages with each context message's random ``id`` left out."""
    return [
        {k: v for k, v in m.items() if k != "id"}
        if m.get("source", {}).get("kind") == "session-reference"
        else m
        for m in messages
    ]


def test_there_are_direct_vectors_to_check() -> None:
    assert len(DIRECT) >= 20 and len(PREPARE) >= 20


@pytest.mark.parametrize("vector", DIRECT, ids=lambda v: str(DIRECT.index(v)))
def test_direct_messages_through_json_are_the_packages(vector: dict[str, Any]) -> None:
    """``json.dumps(to_builtins(...))`` of ``prepare_direct_messages`` is the package's answer
    (the vendored vectors), ids of the context messages aside."""
    case = vector["case"]
    store = MemoryStore(case["sessions"])
    resolver = SessionReferenceResolver.from_config(store, case.get("config"))
    try:
        messages = resolver.prepare_direct_messages(
            case["target"], case["messages"], case.get("placement") or "before"
        )
    except SessionReferenceError:  # pragma: no cover - the vector says it succeeds
        pytest.fail("the package answered this case")
    wire = json.loads(json.dumps(to_builtins(messages)))
    assert without_context_ids(wire) == vector["expect"]["ok"]["messages"]


PREPARE = [
    vector
    for vector in load_vectors()
    if vector["case"]["op"] == "prepare" and "ok" in vector["expect"]
]


@pytest.mark.parametrize("vector", PREPARE, ids=lambda v: str(PREPARE.index(v)))
def test_prepare_through_json_is_the_packages(vector: dict[str, Any]) -> None:
    """``json.dumps(to_builtins(prepare(...)))`` is the package's answer, the context's random
    ``id`` aside. A newcomer's trial: without references it held ``"additionalContext": null``
    where the package's answer has no such key."""
    case = vector["case"]
    resolver = SessionReferenceResolver.from_config(
        MemoryStore(case["sessions"]), case.get("config")
    )
    prepared = resolver.prepare(case["target"], case["content"], case["references"])
    wire = json.loads(json.dumps(to_builtins(prepared)))
    if "additionalContext" in wire:
        del wire["additionalContext"]["id"]
    assert wire == vector["expect"]["ok"]


def test_structs_in_direct_messages_do_not_serialize_without_to_builtins() -> None:
    """Why :func:`sessionref.to_builtins` exists: the list mixes dicts and structs."""
    case = next(v["case"] for v in DIRECT if len(v["expect"]["ok"]["messages"]) > 1)
    resolver = SessionReferenceResolver.from_config(MemoryStore(case["sessions"]))
    messages = resolver.prepare_direct_messages(case["target"], case["messages"])
    with pytest.raises(TypeError):
        json.dumps(messages)


def test_dir_lists_each_public_name_once() -> None:
    assert sessionref.DirectoryStore is not None  # a name used is cached in the module
    names = dir(sessionref)
    assert len(names) == len(set(names))
    assert set(sessionref.__all__) <= set(names)


def test_testing_without_hypothesis_names_the_extra_to_install() -> None:
    code = "import sys; sys.modules['hypothesis'] = None; import sessionref.testing"
    done = run_script(code, capture_output=True, text=True)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        'ImportError: sessionref.testing needs hypothesis: pip install "sessionref[test]"'
    )
