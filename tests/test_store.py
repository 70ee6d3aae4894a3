"""DirectoryStore on fixtures written in the DSH layout, plain and zstd (docs/format.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from sessionref import DirectoryStore, SessionReferenceResolver, Target
from sessionref.cli import main
from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.errors import READ_FAILED, SessionLogError, SessionReferenceError
from sessionref.log.writer import zstd_frame
from sessionref.testing.store import LogRecords, write_session_store
from tests.log_damage import lines
from tests.logs import Event, assistant, header, other, user

HOSTILE_IDS = ["..", ".", ".x", "a/b", "a]b\\c", "\ud800x", "id with spaces", "🙂~"]


def conversation(session_id: str, created_at: int = 1, cwd: str | None = "/w") -> LogRecords:
    packed: Event = {
        "type": "text-chunks",
        "seq0": 3,
        "time0": 10,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [2], "texts": ["Hel", "lo"]},
    }
    events = [
        other(0),
        user(1, f"question about {session_id} <b>"),
        other(2, "step/start", data={"turn": 1, "step": 1}),
        packed,
        assistant(5, "Hello", sourceEventSeqs=[3, 4]),
        other(6, "step/end", data={"turn": 1, "step": 1}),
        titled(7, f"title of {session_id}"),
        other(8, "turn/end", data={"turn": 1, "reason": {"kind": "completed"}}),
    ]
    return {"header": header(session_id, created_at, cwd), "events": events}


def titled(seq: int, title: str, **data: Any) -> Event:
    """A ``session/title`` event the harness's title fold takes."""
    title_data = {"title": title, "messageSeqs": [1], "source": {"kind": "user"}, **data}
    return other(seq, "session/title", data=title_data)


def prompt_of(root: Path, session_id: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["snapshot", "--root", str(root), encode_session_reference_uri(session_id)]) == 0
    return capsys.readouterr().out


@pytest.fixture(params=[False, True], ids=["plain", "zstd"])
def compress(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def test_hostile_ids_round_trip(tmp_path: Path, compress: bool) -> None:
    logs = [conversation(sid, created_at=i) for i, sid in enumerate(HOSTILE_IDS)]
    write_session_store(tmp_path, logs, compress=compress)
    store = DirectoryStore(tmp_path)
    assert sorted(h.id for h in store.headers()) == sorted(HOSTILE_IDS)
    for sid in HOSTILE_IDS:
        log = store.read(sid)
        assert log.header.id == sid
        assert len(log.records) == 8


def test_plain_and_zstd_print_the_same_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = [conversation(sid) for sid in HOSTILE_IDS]
    write_session_store(tmp_path / "plain", logs)
    write_session_store(tmp_path / "zstd", logs, compress=True)
    for sid in HOSTILE_IDS:
        plain = prompt_of(tmp_path / "plain", sid, capsys)
        assert plain == prompt_of(tmp_path / "zstd", sid, capsys)
        assert "question about" in plain and "\\u003cb>" in plain


def _only_file(root: Path) -> Path:
    (path,) = [p for p in root.rglob("session.jsonl*") if p.is_file()]
    return path


def test_torn_last_line_is_dropped(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation("s")])
    path = _only_file(tmp_path)
    with path.open("ab") as log:
        log.write(b'{"type":"user/message","seq":9,"da')
    assert len(DirectoryStore(tmp_path).read("s").records) == 8


def test_unparsable_line_before_the_last_turn_end_fails(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation("s")])
    path = _only_file(tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines[3] = b"{not json"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(SessionLogError, match="line 4"):
        DirectoryStore(tmp_path).read("s")


def test_a_torn_final_frame_keeps_its_complete_lines(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation("s")], compress=True)
    path = _only_file(tmp_path)
    extra = zstd_frame(lines([titled(9, "again")]))
    whole = path.read_bytes()
    path.write_bytes(whole + extra[:3])  # a torn frame start: nothing of it survives
    assert len(DirectoryStore(tmp_path).read("s").records) == 8
    path.write_bytes(whole + extra[:-4])  # only the checksum lost: its line is complete
    assert DirectoryStore(tmp_path).read("s").records[-1].type == "session/title"
    path.write_bytes(whole + extra)
    assert len(DirectoryStore(tmp_path).read("s").records) == 9


def test_damaged_complete_frame_fails(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation("s")], compress=True)
    path = _only_file(tmp_path)
    data = path.read_bytes()
    second = data.index(b"\x28\xb5\x2f\xfd", 4)
    damaged = data[: second + 4] + b"\xff" * 6 + data[second + 10 :]
    path.write_bytes(damaged)
    with pytest.raises(SessionReferenceError) as caught:
        SessionReferenceResolver(DirectoryStore(tmp_path)).snapshot("t", [{"sessionId": "s"}])
    assert caught.value.code == READ_FAILED
    assert caught.value.message.startswith("failed to read referenced session: ")


def test_listing_reads_headers_only(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation("good"), conversation("bad", created_at=2)])
    bad = next(p for p in tmp_path.rglob("session.jsonl") if p.parent.name == "bad")
    bad.write_bytes(bad.read_bytes().split(b"\n")[0] + b"\ngarbage\nmore garbage\n")
    resolver = SessionReferenceResolver(DirectoryStore(tmp_path))
    found = resolver.list_candidates(Target("t", "/w"))
    assert [(c.session_id, c.label) for c in found] == [("bad", "bad"), ("good", "title of good")]


def test_a_header_that_does_not_name_its_directory_is_not_served(tmp_path: Path) -> None:
    """The harness refuses the whole root for it; sessionref reports it and serves the rest."""
    write_session_store(tmp_path, [conversation("real"), conversation("other")])
    path = DirectoryStore(tmp_path).path_of("real")
    renamed = path.parent.rename(path.parent.with_name("renamed"))
    store = DirectoryStore(tmp_path)
    assert [h.id for h in store.headers()] == ["other"]
    assert [p.path for p in store.problems()] == [str(renamed / "session.jsonl")]
    with pytest.raises(SessionLogError, match="not found"):
        store.read("real")


def test_dot_directories_are_found(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation(".hidden", cwd="/.config")])
    assert [h.id for h in DirectoryStore(tmp_path).headers()] == [".hidden"]


def test_links_out_of_the_root_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_session_store(outside, [conversation("secret")])
    root = tmp_path / "root"
    (root / "--w--").mkdir(parents=True)
    os.symlink(_only_file(outside).parent, root / "--w--" / "secret")
    store = DirectoryStore(root)
    assert store.headers() == []
    with pytest.raises(SessionLogError, match="not found"):
        store.read("secret")


def test_missing_session_message(tmp_path: Path) -> None:
    with pytest.raises(SessionReferenceError) as caught:
        SessionReferenceResolver(DirectoryStore(tmp_path)).snapshot("t", [{"sessionId": "x"}])
    assert caught.value.message == 'failed to read referenced session: session "x" not found'


def test_a_misplaced_log_is_reported_and_not_used_twice(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation("real"), conversation("other", created_at=2)])
    home = next(p for p in tmp_path.rglob("session.jsonl") if p.parent.name == "real")
    copy = tmp_path / "--w--" / "stray" / "session.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(home.read_bytes())
    store = DirectoryStore(tmp_path)
    assert sorted(h.id for h in store.headers()) == ["other", "real"]
    assert store.path_of("real") == home
    messages = [p.message for p in store.problems() if p.path == str(copy)]
    assert messages == ['header id "real" and cwd identify --w--/real']


def test_a_damaged_later_frame_still_lists_but_fails_to_read(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation("s")], compress=True)
    path = _only_file(tmp_path)
    data = path.read_bytes()
    second = data.index(b"\x28\xb5\x2f\xfd", 4)
    path.write_bytes(data[: second + 4] + b"\xff" * 6 + data[second + 10 :])
    store = DirectoryStore(tmp_path)
    assert [h.id for h in store.headers()] == ["s"]
    with pytest.raises(SessionLogError, match="corrupt zstd log"):
        store.read("s")


def test_a_zstd_bomb_stops_at_the_size_limit(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation("s")], compress=True)
    path = _only_file(tmp_path)
    bomb = lines([titled(9, "bomb", pad="x" * (8 << 20))])
    path.write_bytes(path.read_bytes() + zstd_frame(bomb))
    with pytest.raises(SessionLogError, match="exceeds 1048576 bytes"):
        DirectoryStore(tmp_path, max_bytes=1 << 20).read("s")
    assert DirectoryStore(tmp_path).read("s").records[-1].type == "session/title"


def test_a_plain_log_over_the_size_limit_is_not_loaded(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation("s")])
    with pytest.raises(SessionLogError, match="exceeds 100 bytes"):
        DirectoryStore(tmp_path, max_bytes=100).read("s")


def test_a_line_over_the_length_limit_fails(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation("s")])
    path = _only_file(tmp_path)
    path.write_bytes(path.read_bytes() + lines([titled(9, "long", pad="x" * 5000)]))
    with pytest.raises(SessionLogError, match="line 10 is longer than 4096 bytes"):
        DirectoryStore(tmp_path, max_line_bytes=4096).read("s")


def test_deep_nesting_is_a_read_failure_not_a_recursion_error(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation("s")])
    path = _only_file(tmp_path)
    deep = b"[" * 100_000 + b"]" * 100_000
    turn_end = lines([other(10, "turn/end", data={"turn": 1, "reason": {"kind": "completed"}})])
    nested = b'{"type":"session/title","seq":9,"time":9,"data":' + deep + b"}\n"
    path.write_bytes(path.read_bytes() + nested + turn_end)  # unparsable, then a turn/end
    with pytest.raises(SessionLogError, match="unparsable committed event at line 10"):
        DirectoryStore(tmp_path).read("s")


def test_titles_are_read_again_only_when_the_log_changes(
    tmp_path: Path, compress: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_session_store(tmp_path, [conversation("a"), conversation("b")], compress=compress)
    store = DirectoryStore(tmp_path)
    reads: list[str] = []
    read = DirectoryStore.read

    def counted(self: DirectoryStore, session_id: str) -> Any:
        reads.append(session_id)
        return read(self, session_id)

    monkeypatch.setattr(DirectoryStore, "read", counted)
    assert [store.title(sid) for sid in ("a", "b", "a", "b")] == ["title of a", "title of b"] * 2
    assert reads == ["a", "b"]

    retitled = conversation("a")
    retitled["events"].append(titled(9, "renamed"))
    write_session_store(tmp_path, [retitled], compress=compress)
    assert store.title("a") == "renamed"
    assert store.title("b") == "title of b"
    assert reads == ["a", "b", "a"]


def test_a_title_is_none_when_the_log_cannot_be_read(tmp_path: Path) -> None:
    write_session_store(tmp_path, [conversation("a")])
    store = DirectoryStore(tmp_path)
    path = store.path_of("a")
    turn_end = lines([other(10, "turn/end", data={"turn": 1, "reason": {"kind": "completed"}})])
    path.write_bytes(path.read_bytes() + b"{not json\n" + turn_end)
    assert store.title("a") is None
    assert store.title("missing") is None
