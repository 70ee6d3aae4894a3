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


# Titles as a log's bytes hold them, and the label the real stack lists for each: observed
# with shared/oracle (real.mjs candidates, rc.8) over a store of these sessions. JavaScript
# reads `1.0` as the number 1 and writes it back as `1`, `1e21` as `1e+21`, `0.000001` as it is
# (msgspec wrote `1.0`, `1e21`, `1e-6`); a `null` title is no title (the id labels it).
WRITTEN_TITLES = {
    "float1": ("1.0", b"1"),
    "negzero": ("-0.0", b"0"),
    "exp": ("2E3", b"2000"),
    "big": ("1e21", b"1e+21"),
    "small": ("0.000001", b"0.000001"),
    "tiny": ("1e-7", b"1e-7"),
    "half": ("1.5", b"1.5"),
    "arr": ("[1.0,2.50]", b"[1,2.5]"),
    "obj": ('{"a":1.0,"b":"<x>"}', b'{"a":1,"b":"<x>"}'),
    "true": ("true", b"true"),
    "null": ("null", b'"null"'),
}


@pytest.fixture
def written_root(tmp_path: Path) -> Path:
    """One session per title of :data:`WRITTEN_TITLES`, its title line holding the literal."""
    root = tmp_path / "store"
    logs = [
        {
            "header": {"version": 0, "id": sid, "createdAt": n, "cwd": "/w", "delegationDepth": 0},
            "events": [
                *turn(0, 1, "hello", "ok"),
                {
                    "type": "session/title",
                    "seq": 6,
                    "time": 9,
                    "data": {"title": f"RAW-{sid}", "messageSeqs": [], "source": {"kind": "user"}},
                },
            ],
        }
        for n, sid in enumerate(WRITTEN_TITLES, start=1)
    ]
    write_session_store(root, logs)
    for sid, (literal, _) in WRITTEN_TITLES.items():
        [path] = root.glob(f"*/{sid}/session.jsonl")
        path.write_bytes(path.read_bytes().replace(f'"RAW-{sid}"'.encode(), literal.encode()))
    return root


def label_bytes(output: bytes, session_id: str, after: bytes) -> bytes:
    """The bytes of the label written after ``"sessionId":"<id>",`` and before ``after``."""
    start = output.index(b'"sessionId":"%s","label":' % session_id.encode())
    start += len(b'"sessionId":"","label":') + len(session_id)
    return output[start : output.index(after, start)]


@pytest.mark.parametrize("index", [["--no-index"], ["--index", "index.sqlite"]])
def test_the_listing_writes_a_title_as_javascript_does(
    written_root: Path, capsys: pytest.CaptureFixture[bytes], index: list[str]
) -> None:
    if index[0] == "--index":
        index = ["--index", str(written_root.parent / index[1])]
    assert main(["candidates", "--root", str(written_root), "--cwd", "/w", "--json", *index]) == 0
    output = capsys.readouterr().out.encode("utf-8")
    for session_id, (_, listed) in WRITTEN_TITLES.items():
        assert label_bytes(output, session_id, b',"cwd":') == listed


@pytest.mark.parametrize("session_id", sorted(WRITTEN_TITLES))
def test_a_title_labels_a_snapshot_as_it_labels_the_listing(
    written_root: Path, capsys: pytest.CaptureFixture[str], session_id: str
) -> None:
    """The real stack's ``prepare`` takes string labels only; with ``--label-from title`` the
    title labels the snapshot as the listing labels the session: the same bytes in the
    reference and (tag-safe) in the data object, which is measured as it is written."""
    listed = WRITTEN_TITLES[session_id][1]
    argv = ["snapshot", "--root", str(written_root), "--json", "--label-from", "title"]
    assert main([*argv, session_id]) == 0
    output = capsys.readouterr().out.encode("utf-8")
    assert label_bytes(output, session_id, b',"capturedThroughSeq":') == listed
    prompt = json.loads(output)["content"][0]["text"].encode("utf-8")
    assert label_bytes(prompt, session_id, b',"cwd":') == listed.replace(b"<", b"\\u003c")
    data = prompt[prompt.index(b"\n[") + 2 : prompt.rindex(b"]\n")]
    exact = ["--max-bytes", str(len(data))]  # the data object fits its own size exactly
    assert main([*argv, *exact, session_id]) == 0
    assert json.loads(capsys.readouterr().out)["source"]["references"][0]["truncated"] is False
