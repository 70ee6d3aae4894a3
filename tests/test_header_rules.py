"""Header values the harness treats apart (docs/format.md §Discovery), beyond the oracle's
answers in tests/test_log_oracle_cases.py: what the library and the command line do with them.

``-0`` written as an integer literal is negative zero to ``JSON.parse``; a cwd that is not a
string is filed under ``--root--``; a ``null`` cwd names no directory at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionref import DirectoryStore, SessionReferenceResolver, Target
from sessionref.cli import main
from sessionref.index import SessionIndex
from tests.log_damage import place, plain_log
from tests.logs import header, other, turn_end, user

CASES = Path(__file__).parent / "data" / "oracle-cases"


def raw_header(session_id: str, fields: str) -> bytes:
    return f'{{"type":"session","version":0,"id":"{session_id}",{fields}}}\n'.encode()


def with_header(line: bytes) -> bytes:
    """A good log whose header line is ``line``."""
    body = plain_log([other(0), user(1, "q"), turn_end(2)])
    return line + body[body.index(b"\n") + 1 :]


@pytest.mark.parametrize(
    "fields",
    [
        '"createdAt":-0,"cwd":"/w","delegationDepth":0',
        '"createdAt":5,"cwd":"/w","delegationDepth":-0',
        '"createdAt":5,"cwd":"/w","delegationDepth": -0 ',
    ],
)
def test_a_negative_zero_created_at_or_depth_is_not_listed(tmp_path: Path, fields: str) -> None:
    place(tmp_path, with_header(raw_header("s", fields)), compress=False)
    place(tmp_path, plain_log([other(0), turn_end(1)], header("b")), "b", compress=False)
    store = DirectoryStore(tmp_path)
    assert [h.id for h in store.headers()] == ["b"]
    assert [Path(p.path).parent.name for p in store.problems()] == ["s"]
    assert [h.id for h in SessionIndex(store, tmp_path / "i.sqlite").headers()] == ["b"]


def test_negative_zero_in_a_string_or_another_field_is_zero(tmp_path: Path) -> None:
    fields = '"createdAt":7,"cwd":"/w-0","seedLength":-0,"delegationDepth":0'
    place(tmp_path, with_header(raw_header("s", fields)), cwd="/w-0", compress=False)
    store = DirectoryStore(tmp_path)
    assert [(h.id, h.created_at, h.cwd) for h in store.headers()] == [("s", 7, "/w-0")]
    assert store.read("s").records[-1].type == "turn/end"


def test_a_null_cwd_is_a_problem_and_not_served(tmp_path: Path) -> None:
    fields = '"createdAt":1,"cwd":null,"delegationDepth":0'
    path = place(tmp_path, with_header(raw_header("s", fields)), cwd=None, compress=False)
    place(tmp_path, plain_log([other(0), turn_end(1)], header("b")), "b", compress=False)
    store = DirectoryStore(tmp_path)
    assert [h.id for h in store.headers()] == ["b"]
    assert [(p.path, p.message) for p in store.problems()] == [
        (str(path), "header cwd null cannot name a storage path")
    ]


def test_a_cwd_that_is_not_a_string_is_a_candidate_on_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = CASES / "header-cwd-number" / "root"
    assert main(["candidates", "--root", str(root), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert (listed[0]["sessionId"], listed[0]["cwd"]) == ("cwd-number", 5)
    assert main(["candidates", "--root", str(root)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[1].split()[2:] == ["cwd-number", "5", "cwd-number"]
    assert main(["snapshot", "--root", str(root), "cwd-number"]) == 1
    assert capsys.readouterr().err.endswith("session header cwd must be a string\n")


@pytest.mark.parametrize(("case", "cwd"), [("header-cwd-number", 5), ("header-cwd-object", {})])
def test_a_query_skips_a_cwd_that_is_not_a_string(case: str, cwd: object, tmp_path: Path) -> None:
    """The package throws a TypeError here (docs/differences.md, sessionref rule 3)."""
    store = DirectoryStore(CASES / case / "root")
    target = Target("t", "/w")
    for source in (store, SessionIndex(store, tmp_path / "i.sqlite")):
        found = SessionReferenceResolver(source).list_candidates(target, "other")
        assert [c.session_id for c in found] == ["bystander"]
        found = SessionReferenceResolver(source).list_candidates(target, "cwd-")
        assert [(c.session_id, c.cwd) for c in found] == [(case.removeprefix("header-"), cwd)]


def cwd_object_log(root: Path, session_id: str, length: str) -> Path:
    """A good log whose header's cwd is the object ``{"length": LENGTH}`` (``length`` its
    JSON text), where the harness files it: under ``--root--``."""
    fields = f'"createdAt":1,"cwd":{{"length":{length}}},"delegationDepth":0'
    path = root / "--root--" / session_id / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(with_header(raw_header(session_id, fields)))
    return path


@pytest.mark.parametrize(
    ("length", "refused"),
    [
        ("1" + "0" * 400, True),  # JSON.parse reads Infinity: 0 < Infinity
        (json.dumps("0x" + "f" * 300), True),  # Number("0x…") is Infinity too
        ("-" + "1" * 400, False),  # -Infinity: no character read
        (json.dumps("\u0663"), False),  # an Arabic-Indic 3 is no number to Number(): NaN
        (json.dumps("\uff11"), False),  # nor is a fullwidth 1
    ],
)
def test_a_cwd_length_past_a_float_or_in_other_digits_is_read_as_javascript_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], length: str, refused: bool
) -> None:
    """The listing reads ``cwd.length`` characters of the object, where ``0 < length`` holds
    (docs/format.md §Discovery): a length too large for a double is Infinity, which does; a
    digit that is not ASCII makes no number, which does not, and the log is filed under
    ``--root--`` as any other object cwd."""
    path = cwd_object_log(tmp_path, "c", length)
    place(tmp_path, plain_log([other(0), turn_end(1)], header("b")), "b", compress=False)
    store = DirectoryStore(tmp_path)
    assert sorted(h.id for h in store.headers()) == (["b"] if refused else ["b", "c"])
    assert [p.path for p in store.problems()] == ([str(path)] if refused else [])
    assert main(["candidates", "--root", str(tmp_path)]) == 0
    assert "Traceback" not in capsys.readouterr().err
