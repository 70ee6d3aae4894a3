"""Titles that are not strings (a log may hold any JSON value as a title), as the published
package answers them and as the commands show them.

``tests/data/api/package_titles.json`` holds the real stack's answers (``package_titles.mjs``
ran them): ``listCandidates`` labels such a session with the value itself, while its mention
face and ``formatSessionReferenceMention`` throw a ``TypeError`` (there is no text to escape).
(A query that reaches such a label makes ``listCandidates`` throw too; sessionref's listing
does not search it instead, docs/api.md §Candidates.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sessionref.cli.app import main
from sessionref.codecs.uri import format_session_reference_mention, parse_session_reference_text
from sessionref.index import SessionIndex
from sessionref.log.store import DirectoryStore, SessionStore
from sessionref.resolver import SessionReferenceResolver
from sessionref.testing import write_session_store
from sessionref.types import Target
from tests.logs import turn

ANSWERS = json.loads(
    (Path(__file__).parent / "data" / "api" / "package_titles.json").read_text("utf-8")
)
TITLES: dict[str, Any] = ANSWERS["titles"]
TARGET = Target("t", "/w")


def write_titled_store(root: Path) -> None:
    """The store of package_titles.mjs: one session per title, in cwd /w, created 1, 2, …;
    each also says hello (so that search finds it)."""
    logs = [
        {
            "header": {
                "version": 0,
                "id": session_id,
                "createdAt": n,
                "cwd": "/w",
                "delegationDepth": 0,
            },
            "events": [
                *turn(0, 1, f"hello from {session_id}", "ok"),
                {
                    "type": "session/title",
                    "seq": 6,
                    "time": 9,
                    "data": {"title": title, "messageSeqs": [], "source": {"kind": "user"}},
                },
            ],
        }
        for n, (session_id, title) in enumerate(TITLES.items(), start=1)
    ]
    write_session_store(root, logs)


@pytest.fixture(params=["directory", "index"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SessionStore:
    write_titled_store(tmp_path / "store")
    directory = DirectoryStore(tmp_path / "store")
    if request.param == "directory":
        return directory
    return SessionIndex(directory, tmp_path / "index.sqlite")


@pytest.mark.parametrize("query", ["", "W"])
def test_candidates_are_labelled_by_the_title_as_the_log_holds_it(
    store: SessionStore, query: str
) -> None:
    found = SessionReferenceResolver(store).list_candidates(TARGET, query, 50)
    name = "list" if query == "" else f"list/query={query}"
    assert msgspec.to_builtins(found) == ANSWERS[name]["ok"]


def test_the_mention_face_throws_a_type_error_as_the_package_does(store: SessionStore) -> None:
    assert ANSWERS["mention"]["error"]["name"] == "TypeError"
    with pytest.raises(TypeError, match="mention label must be a string"):
        SessionReferenceResolver(store).mention_candidates(TARGET)


@pytest.mark.parametrize("session_id", sorted(TITLES))
def test_mention_formatting_of_each_title(session_id: str) -> None:
    answer = ANSWERS[f"format/{session_id}"]
    if "ok" in answer:
        assert format_session_reference_mention(session_id, TITLES[session_id]) == answer["ok"]
    else:
        assert answer["error"]["name"] == "TypeError"
        with pytest.raises(TypeError):
            format_session_reference_mention(session_id, TITLES[session_id])


def label_of(session_id: str) -> Any:
    """A session's label as the package lists it: the title, the id when there is none."""
    title = TITLES[session_id]
    return session_id if title is None else title


def text_of(label: Any) -> str:
    """A label as the commands write it on a terminal and in a mention: a string as it is,
    another value as its JSON text."""
    return label if isinstance(label, str) else json.dumps(label, separators=(",", ":"))


def assert_listed(entries: list[dict[str, Any]]) -> None:
    assert sorted(entry["sessionId"] for entry in entries) == sorted(TITLES)
    for entry in entries:
        label = label_of(entry["sessionId"])
        assert entry["label"] == label
        parsed = parse_session_reference_text(entry["mention"])
        shown = [(r.session_id, r.label) for r in parsed.references]
        assert shown == [(entry["sessionId"], text_of(label))]


@pytest.mark.parametrize("command", ["candidates", "search"])
def test_the_commands_list_every_title_and_write_it_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    write_titled_store(tmp_path / "store")
    where = ["--root", str(tmp_path / "store"), "--index", str(tmp_path / "index.sqlite")]
    query = ["--cwd", "/w"] if command == "candidates" else ["hello"]
    assert main([command, *query, *where, "--json"]) == 0
    assert_listed(json.loads(capsys.readouterr().out))
    assert main([command, *query, *where]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    for session_id in TITLES:
        assert text_of(label_of(session_id)) in out
    assert '{"a":1}' in out and '["x"]' in out


def test_a_query_reaching_such_a_title_lists_what_matches_where_the_package_throws(
    store: SessionStore,
) -> None:
    """docs/differences.md §sessionref rules 3: the label that is not a string is not searched."""
    assert ANSWERS["list/query=seven"]["error"]["name"] == "TypeError"
    found = SessionReferenceResolver(store).list_candidates(TARGET, "seven", 50)
    expected = [s for s, t in TITLES.items() if isinstance(t, str) and "seven" in t.lower()]
    assert [candidate.session_id for candidate in found] == expected
