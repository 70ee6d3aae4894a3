"""Rollout references: a newer Codex moves a thread's older history into frozen segments under
``rotated_rollout_segments/<thread>/<segment>/`` and the live rollout refers to them (a fork
refers to its parent the same way), as openai/codex ``codex-rs/rollout/src/reference.rs``
defines them (docs/harnesses.md §Codex §References). The rollouts here are written by hand
from that definition."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import pytest
import zstandard

from sessionref import SessionReferenceResolver, Target
from sessionref.cli import main
from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.codex.store import CodexStore
from sessionref.errors import READ_FAILED, SessionReferenceError
from tests.test_codex import THREAD, line, meta, rollout, said, shown, write
from tests.test_mcp import listed_and_read

NAME = f"rollout-2025-06-01T10-00-00-{THREAD}.jsonl"
LIVE = f"sessions/2025/06/03/{NAME}"
SEGMENTS = [f"0197b000-0000-7000-8000-00000000000{n}" for n in range(4)]


def segment_path(segment: str | None, thread: str = THREAD, name: str = NAME) -> str:
    """Where Codex moves a frozen segment: ``rotated_rollout_segments/<thread>/<segment>``."""
    return f"rotated_rollout_segments/{thread}/{segment or 'initial'}/{name}"


def reference(path: Path | str, segment: str | None, thread: str = THREAD, **fields: Any) -> bytes:
    """A ``rollout_reference`` item as Codex serializes a ``RolloutReferenceItem``."""
    payload = {
        "rollout_path": str(path),
        "thread_id": thread,
        "rollout_timestamp": None,
        "segment_id": segment,
        "max_depth": 256,
        "nth_user_message": None,
        "compacted_replacement_history_filter_texts": None,
        **fields,
    }
    return line("rollout_reference", payload)


def segment(n: int, *lines: bytes) -> bytes:
    """A rollout of segment ``n`` of the thread: its meta, then ``lines``."""
    return rollout(meta(segment_id=SEGMENTS[n]), *lines)


ASKED: Final = said("user", "go on")[1]
"""A user message event: a rollout holding one is listed (docs/harnesses.md §Codex §Listed)."""


def captured(store: CodexStore, thread: str = THREAD) -> str:
    resolver = SessionReferenceResolver(store)
    prepared = resolver.prepare(Target("me"), content=[], references=[{"sessionId": thread}])
    return prepared.additional_context.prompt


@pytest.mark.parametrize("recorded", ["where it is", "moved with the home"])
def test_a_live_rollout_shows_the_history_of_the_segment_it_refers_to(
    tmp_path: Path, recorded: str
) -> None:
    """A newcomer's trial: after Codex rotated a long thread, only the turns since showed.
    The reference's recorded path is used when the rollout there is the segment named, else
    the segment is looked up in its folder (a Codex home copied elsewhere)."""
    old = tmp_path / segment_path(SEGMENTS[1])
    path = (
        old if recorded == "where it is" else Path("/elsewhere/.codex") / segment_path(SEGMENTS[1])
    )
    store = write(
        tmp_path,
        {
            segment_path(SEGMENTS[1]): segment(
                1, *said("user", "fix the build"), *said("assistant", "Fixed.")
            ),
            LIVE: segment(2, reference(path, SEGMENTS[1]), *said("user", "and the docs")),
        },
    )
    assert [h.id for h in store.headers()] == [THREAD]
    assert store.problems() == []
    expected = [("user", "fix the build"), ("assistant", "Fixed."), ("user", "and the docs")]
    assert shown(store.transcript(THREAD)) == expected
    assert store.title(THREAD) == "fix the build"
    prompt = captured(store)
    # the live meta, the segment's four lines in place of the reference, then two more
    assert '"capturedThroughSeq":6' in prompt
    assert [prompt.count(text) for text, _ in [(t, r) for r, t in expected]] == [1, 1, 1]


def test_a_chain_of_references_is_read_oldest_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = (tmp_path / segment_path(SEGMENTS[n]) for n in (0, 1))
    write(
        tmp_path,
        {
            segment_path(SEGMENTS[0]): segment(0, *said("user", "one")),
            segment_path(SEGMENTS[1]): segment(
                1, reference(first, SEGMENTS[0]), *said("user", "two")
            ),
            LIVE: segment(2, reference(second, SEGMENTS[1]), *said("user", "three")),
        },
    )
    store = CodexStore(tmp_path)
    assert shown(store.transcript(THREAD)) == [("user", "one"), ("user", "two"), ("user", "three")]
    assert main(["show", "--root", str(tmp_path), THREAD]) == 0
    assert "kept 3 of 3 units" in capsys.readouterr().out
    assert main(["snapshot", "--root", str(tmp_path), THREAD]) == 0
    assert '"capturedThroughSeq":6' in capsys.readouterr().out  # meta + 3 × 2 lines


def test_rotated_segments_are_no_sessions_of_their_own(tmp_path: Path) -> None:
    """Codex lists threads in ``sessions/`` and ``archived_sessions/`` only: its frozen
    segments (``rotated_rollout_segments/``, or an archived thread's, below
    ``archived_sessions/<thread>/<segment>/``) are read through the references to them."""
    other = "0197a000-0000-7000-8000-0000000000bb"
    store = write(
        tmp_path,
        {
            segment_path(SEGMENTS[0]): segment(0, *said("user", "one")),
            segment_path(None, other): rollout(meta(other), *said("user", "lost")),
            f"archived_sessions/{THREAD}/{SEGMENTS[1]}/{NAME}": segment(1, *said("user", "two")),
            LIVE: segment(2, *said("user", "three")),
        },
    )
    assert [h.id for h in store.headers()] == [THREAD]
    assert store.problems() == []
    assert shown(store.transcript(THREAD)) == [("user", "three")]


def test_a_reference_that_cannot_be_found_leaves_out_only_what_it_held(tmp_path: Path) -> None:
    """Codex's listing resolves such a reference to nothing and summarizes the rest; a thread
    whose older history is gone still shows what it has."""
    gone = tmp_path / segment_path(SEGMENTS[1])
    store = write(
        tmp_path,
        {
            segment_path(SEGMENTS[0]): segment(0, *said("user", "another segment")),
            LIVE: segment(2, reference(gone, SEGMENTS[1]), *said("user", "and the docs")),
        },
    )
    assert [h.id for h in store.headers()] == [THREAD]
    assert shown(store.transcript(THREAD)) == [("user", "and the docs")]
    assert '"capturedThroughSeq":2' in captured(store)


def test_a_segment_of_another_identity_at_the_recorded_path_is_not_it(tmp_path: Path) -> None:
    """A reference names a thread and a segment: a rollout at its path that is another
    segment is passed over, and the named one found in its folder."""
    store = write(
        tmp_path,
        {
            segment_path(SEGMENTS[0]): segment(0, *said("user", "wrong one")),
            segment_path(SEGMENTS[1]): segment(1, *said("user", "right one")),
            LIVE: segment(2, reference(tmp_path / segment_path(SEGMENTS[0]), SEGMENTS[1])),
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "right one")]


def test_a_compressed_segment_is_read_and_a_plain_one_hides_it(tmp_path: Path) -> None:
    compressed = zstandard.ZstdCompressor(level=3).compress
    store = write(
        tmp_path,
        {
            segment_path(SEGMENTS[0]) + ".zst": compressed(segment(0, *said("user", "old"))),
            segment_path(SEGMENTS[1]) + ".zst": compressed(segment(1, *said("user", "stale"))),
            segment_path(SEGMENTS[1]): segment(1, *said("user", "fresh")),
            LIVE: segment(
                2,
                reference(tmp_path / segment_path(SEGMENTS[0]), SEGMENTS[0]),
                reference(Path("/gone") / segment_path(SEGMENTS[1]), SEGMENTS[1]),
            ),
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "old"), ("user", "fresh")]


def test_a_legacy_reference_finds_the_initial_segment_by_its_name(tmp_path: Path) -> None:
    """A rollout from before segments had ids is the thread's ``initial`` segment, the one of
    the recorded name there."""
    other = f"rollout-2025-05-01T10-00-00-{THREAD}.jsonl"
    store = write(
        tmp_path,
        {
            segment_path(None, name=other): rollout(meta(), *said("user", "not this one")),
            segment_path(None): rollout(meta(), *said("user", "before ids")),
            LIVE: segment(2, reference(f"/gone/{NAME}", None), *said("user", "after")),
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "before ids"), ("user", "after")]


def test_a_reference_is_found_by_the_time_in_the_rollout_name(tmp_path: Path) -> None:
    """A fork of a thread since archived: the parent is found in ``archived_sessions/`` by the
    time in its rollout's name, which the reference records."""
    parent = "0197a000-0000-7000-8000-0000000000bb"
    stamp = "2025-05-01T10-00-00"
    archived = f"archived_sessions/rollout-{stamp}-{parent}.jsonl"
    fork = reference(f"/gone/{parent}.jsonl", SEGMENTS[3], parent, rollout_timestamp=stamp)
    store = write(
        tmp_path,
        {
            archived: rollout(meta(parent, segment_id=SEGMENTS[3]), *said("user", "inherited")),
            LIVE: segment(2, fork, *said("user", "now")),
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "inherited"), ("user", "now")]
    assert shown(store.transcript(parent)) == [("user", "inherited")]


def turn(n: int, prompt: str, answer: str) -> list[bytes]:
    """A turn as a current Codex writes it: started, the prompt, the answer, complete."""
    return [
        line("event_msg", {"type": "task_started", "turn_id": f"t{n}"}),
        *said("user", prompt),
        *said("assistant", answer),
        line("event_msg", {"type": "task_complete", "turn_id": f"t{n}"}),
    ]


def test_a_fork_inherits_its_parent_up_to_the_message_it_forked_at(tmp_path: Path) -> None:
    """A fork refers to its parent's rollout with ``nth_user_message``: the parent's history
    before the turn of that user message (counted from 0), then the fork's own."""
    parent = "0197a000-0000-7000-8000-0000000000bb"
    parent_rollout = f"sessions/2025/06/01/rollout-2025-06-01T09-00-00-{parent}.jsonl"
    parent_lines = [
        meta(parent, segment_id=SEGMENTS[3]),
        *turn(0, "first", "one"),
        *turn(1, "second", "two"),
        line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}),
        *turn(2, "third", "three"),
    ]
    fork = reference(tmp_path / parent_rollout, SEGMENTS[3], parent, nth_user_message=1)
    store = write(
        tmp_path,
        {parent_rollout: rollout(*parent_lines), LIVE: segment(2, fork, *turn(3, "mine", "ok"))},
    )
    assert sorted(h.id for h in store.headers()) == sorted([THREAD, parent])
    # the rollback took back "second": the fork's second user message is "third"
    assert shown(store.transcript(THREAD)) == [
        ("user", "first"),
        ("assistant", "one"),
        ("user", "second"),
        ("assistant", "two"),
        ("user", "mine"),
        ("assistant", "ok"),
    ]
    assert len(shown(store.transcript(parent))) == 6


@pytest.mark.parametrize(
    "kind", ["cycle", "forks too deep", "ambiguous", "initial twice", "damaged"]
)
def test_a_reference_graph_codex_refuses_fails_naming_the_file(tmp_path: Path, kind: str) -> None:
    """A cycle, forks nested deeper than 256, two rollouts that are the named segment, or a named
    segment that is damaged: Codex refuses to read the thread, and so does sessionref, naming
    the file and why. The live rollout asks something after its reference, so Codex lists it
    whatever the reference leads to."""
    files: dict[str, bytes] = {}
    if kind == "cycle":
        back = reference(tmp_path / LIVE, SEGMENTS[2])
        files[segment_path(SEGMENTS[1])] = segment(1, back)
        files[LIVE] = segment(
            2, reference(tmp_path / segment_path(SEGMENTS[1]), SEGMENTS[1]), ASKED
        )
        # as Codex's: the segments being expanded, not the live rollout, are checked
        where, reason = LIVE, f"rollout reference cycle at {THREAD}/{SEGMENTS[1]}"
    elif kind == "forks too deep":  # each rollout a fork of the next thread's
        threads = [f"0197c000-0000-7000-8000-{n:012}" for n in range(257)]
        for n in range(256):
            parent = reference(tmp_path / segment_path(None, threads[n + 1]), None, threads[n + 1])
            files[segment_path(None, threads[n])] = rollout(meta(threads[n]), parent)
        first = reference(tmp_path / segment_path(None, threads[0]), None, threads[0])
        files[LIVE] = segment(2, first, ASKED)
        # the live rollout's fork is the first, that in the 256th rollout the 257th
        where, reason = segment_path(None, threads[255]), "forks nest deeper than 256"
    elif kind == "ambiguous":
        files[segment_path(SEGMENTS[1])] = segment(1)
        files[segment_path(SEGMENTS[1], name="rollout-other.jsonl")] = segment(1)
        files[LIVE] = segment(2, reference("/gone.jsonl", SEGMENTS[1]), ASKED)
        where, reason = f"rotated_rollout_segments/{THREAD}/{SEGMENTS[1]}", "is ambiguous"
    elif kind == "initial twice":  # a legacy reference, in both segment roots
        files[segment_path(None)] = rollout(meta())
        files[f"archived_sessions/{THREAD}/initial/{NAME}"] = rollout(meta())
        files[LIVE] = segment(2, reference(f"/gone/{NAME}", None), ASKED)
        where, reason = segment_path(None), "is ambiguous: "
    else:
        data = zstandard.ZstdCompressor().compress(segment(1, *said("user", "x")))
        files[segment_path(SEGMENTS[1]) + ".zst"] = data[:-2]
        files[LIVE] = segment(
            2, reference(tmp_path / segment_path(SEGMENTS[1]), SEGMENTS[1]), ASKED
        )
        where, reason = segment_path(SEGMENTS[1]) + ".zst", "corrupt zstd file: it ends inside"
    store = write(tmp_path, files)
    assert [h.id for h in store.headers()] == [THREAD]
    with pytest.raises(SessionReferenceError) as failed:
        captured(store)
    assert failed.value.code == READ_FAILED
    assert f"{tmp_path / where}: " in failed.value.message and reason in failed.value.message


def test_the_limit_holds_for_a_rollout_and_what_it_refers_to_together(tmp_path: Path) -> None:
    big = "x" * 3000
    write(
        tmp_path,
        {
            segment_path(SEGMENTS[1]): segment(1, *said("user", big)),
            LIVE: segment(
                2, reference(tmp_path / segment_path(SEGMENTS[1]), SEGMENTS[1]), *said("user", big)
            ),
        },
    )
    with pytest.raises(SessionReferenceError) as failed:
        captured(CodexStore(tmp_path, max_bytes=10_000))
    assert "over the limit of 10000 bytes together" in failed.value.message
    assert shown(CodexStore(tmp_path, max_bytes=20_000).transcript(THREAD)) == [("user", big)] * 2


def test_a_thread_s_own_segments_are_followed_however_many(tmp_path: Path) -> None:
    """Codex bounds only how deep forks nest: a thread rotated 300 times reads whole."""
    ids = [f"0197c000-0000-7000-8000-{n:012}" for n in range(300)]
    files = {segment_path(ids[0]): rollout(meta(segment_id=ids[0]), *said("user", "turn 0"))}
    for n in range(1, 300):
        back = reference(tmp_path / segment_path(ids[n - 1]), ids[n - 1])
        files[segment_path(ids[n])] = rollout(
            meta(segment_id=ids[n]), back, *said("user", f"turn {n}")
        )
    files[LIVE] = segment(2, reference(tmp_path / segment_path(ids[299]), ids[299]))
    store = write(tmp_path, files)
    assert shown(store.transcript(THREAD)) == [("user", f"turn {n}") for n in range(300)]


def test_a_reference_never_leads_out_of_the_codex_home(tmp_path: Path) -> None:
    """As in Codex, a rollout is taken only from ``sessions/``, ``archived_sessions/`` or
    ``rotated_rollout_segments/`` of the home (links followed, then checked again)."""
    home = tmp_path / "home"
    outside = tmp_path / "elsewhere" / NAME
    outside.parent.mkdir()
    outside.write_bytes(segment(1, *said("user", "not of this home")))
    (home / "rotated_rollout_segments" / THREAD).mkdir(parents=True)
    (home / "rotated_rollout_segments" / THREAD / SEGMENTS[0]).symlink_to(outside.parent)
    store = write(
        home,
        {
            LIVE: segment(
                2,
                reference(outside, SEGMENTS[1]),
                reference(home / segment_path(SEGMENTS[0]), SEGMENTS[1]),
                reference(home / "sessions" / ".." / ".." / "elsewhere" / NAME, SEGMENTS[1]),
                *said("user", "mine"),
            )
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "mine")]


def test_mcp_serves_a_compressed_rotated_thread_whole(tmp_path: Path) -> None:
    """The MCP server reads through the same store: a thread whose live rollout Codex
    compressed, and whose older history is a rotated segment, is one resource, read whole."""
    home = tmp_path / "codex"
    (tmp_path / "project").mkdir()
    live = segment(
        2, reference(home / segment_path(SEGMENTS[1]), SEGMENTS[1]), *said("user", "and the docs")
    )
    write(
        home,
        {
            segment_path(SEGMENTS[1]): segment(1, *said("user", "fix the build")),
            LIVE + ".zst": zstandard.ZstdCompressor(level=3).compress(live),
        },
    )

    listed, text = listed_and_read(home, THREAD)
    assert [r.uri for r in listed.resources] == [encode_session_reference_uri(THREAD)]
    assert listed.resources[0].name == "fix the build"
    assert "fix the build" in text and "and the docs" in text


def test_a_segment_is_read_once_however_many_copies_of_the_live_rollout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: each copy of a rollout (in ``sessions/`` and in ``archived_sessions/``) was
    expanded, the segments it refers to read, before one copy was chosen; now the copy is
    chosen on the lines as read and only it is expanded."""
    import sessionref.codex.references as references

    reads: list[Path] = []
    read = references.rollout_lines

    def counted(path: Path, max_bytes: int, max_line_bytes: int) -> list[bytes]:
        reads.append(path)
        return read(path, max_bytes, max_line_bytes)

    monkeypatch.setattr(references, "rollout_lines", counted)
    old = tmp_path / segment_path(SEGMENTS[1])
    live = segment(2, reference(old, SEGMENTS[1]), *said("user", "and the docs"))
    store = write(
        tmp_path,
        {
            segment_path(SEGMENTS[1]): segment(1, *said("user", "fix the build")),
            LIVE: live,
            f"archived_sessions/{NAME}": live,
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "fix the build"), ("user", "and the docs")]
    assert reads == [old]


PARENT = "0197a000-0000-7000-8000-0000000000bb"
REWRITE = "0197c000-0000-7000-8000-0000000000cc"
"""The rollout id of a reverted thread's rewrite: Codex names that rollout
``rollout-<time>-<thread>_<rollout id>.jsonl`` (``RolloutFileName``)."""


def parent_name(rollout_id: str = PARENT, stamp: str = "2025-05-01T10-00-00") -> str:
    """The name of a rollout of thread ``PARENT``: its own, or a rewrite's."""
    ids = PARENT if rollout_id == PARENT else f"{PARENT}_{rollout_id}"
    return f"rollout-{stamp}-{ids}.jsonl"


@pytest.mark.parametrize("where", ["sessions/2025/05/01", "archived_sessions"])
def test_a_stale_path_is_followed_by_the_rollout_id_its_name_carries(
    tmp_path: Path, where: str
) -> None:
    """A fork recorded an absolute path and no time: in a home moved elsewhere, Codex looks
    the rollout up by the id the name of that path carries, below ``sessions/`` then
    ``archived_sessions/`` (``find_rollout_path_by_rollout_id``), and takes it when its
    ``session_meta`` is the one named."""
    fork = reference(f"/old/home/sessions/2025/05/01/{parent_name()}", None, PARENT)
    store = write(
        tmp_path,
        {
            f"{where}/{parent_name()}": rollout(meta(PARENT), *said("user", "inherited")),
            LIVE: segment(2, fork, *said("user", "mine")),
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "inherited"), ("user", "mine")]


def test_a_named_rollout_id_wins_and_picks_the_rollout_of_that_name(tmp_path: Path) -> None:
    """A reverted thread has two rollouts of one identity (the thread, no segment): the
    original and its rewrite. A reference that names a ``rollout_id`` takes only the file
    whose name carries it, even where its recorded path holds the other one."""
    original = f"sessions/2025/05/01/{parent_name()}"
    rewrite = f"sessions/2025/05/01/{parent_name(REWRITE, '2025-05-02T10-00-00')}"
    fork = reference(tmp_path / original, None, PARENT, rollout_id=REWRITE)
    store = write(
        tmp_path,
        {
            original: rollout(meta(PARENT), *said("user", "taken back")),
            rewrite: rollout(meta(PARENT), *said("user", "kept")),
            LIVE: segment(2, fork, *said("user", "mine")),
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "kept"), ("user", "mine")]


def test_a_relative_path_counts_by_its_name_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex opens a recorded path only when it lies in the home's ``sessions/``,
    ``archived_sessions/`` or ``rotated_rollout_segments/``, which a relative path never does:
    it is read neither relative to the home nor to the working folder, and only its name
    counts (its segment folder, the rollout id it carries, the thread when none is recorded)."""
    unlisted = "archived_sessions/x/segment.jsonl"  # not where Codex lists or looks up rollouts
    elsewhere = tmp_path / "cwd"
    for folder in (elsewhere, tmp_path / "home"):
        (folder / unlisted).parent.mkdir(parents=True)
        (folder / unlisted).write_bytes(segment(0, *said("user", "not by a relative path")))
    monkeypatch.chdir(elsewhere)
    store = write(
        tmp_path / "home",
        {
            f"archived_sessions/{parent_name()}": rollout(meta(PARENT), *said("user", "by name")),
            segment_path(SEGMENTS[1]): segment(1, *said("user", "in its folder")),
            LIVE: segment(
                2,
                reference(unlisted, SEGMENTS[0]),
                reference(f"sessions/{NAME}", SEGMENTS[1]),
                reference(f"x/../{parent_name()}", None, thread_id=None),
                *said("user", "mine"),
            ),
        },
    )
    assert shown(store.transcript(THREAD)) == [
        ("user", "in its folder"),
        ("user", "by name"),
        ("user", "mine"),
    ]


def test_a_reference_without_a_thread_id_takes_it_from_its_path_s_name(tmp_path: Path) -> None:
    """The newest Codex infers a missing ``thread_id`` from the name of the path; such a
    reference is always a fork (``is_fork_boundary_reference`` compares the recorded thread),
    so forks nest no deeper than 256 even through a thread's own segments. One whose path's
    name gives no thread is refused by Codex and skipped here."""
    ids = [f"0197c000-0000-7000-8000-{n:012}" for n in range(258)]
    files = {segment_path(ids[0]): rollout(meta(segment_id=ids[0]), *said("user", "turn 0"))}
    for n in range(1, 258):
        back = reference(tmp_path / segment_path(ids[n - 1]), ids[n - 1], thread_id=None)
        files[segment_path(ids[n])] = rollout(meta(segment_id=ids[n]), back)
    unnamed = reference("/gone/segment.jsonl", ids[0], thread_id=None)
    files[LIVE] = segment(2, unnamed, reference(tmp_path / segment_path(ids[2]), ids[2]))
    store = write(tmp_path, files)
    assert shown(store.transcript(THREAD)) == [("user", "turn 0")]  # two forks deep
    files[LIVE] = segment(2, reference(tmp_path / segment_path(ids[257]), ids[257]))
    store = write(tmp_path, files)
    with pytest.raises(SessionReferenceError) as failed:
        captured(store)
    assert f"{tmp_path / segment_path(ids[1])}: forks nest deeper than 256" in failed.value.message


def test_references_to_rollouts_of_one_identity_are_no_cycle(tmp_path: Path) -> None:
    """Codex tells what a reference names by its thread, segment and rollout id: a rewrite
    that refers to the rollout it rewrote (the same thread, no segment) is no cycle."""
    folder = f"rotated_rollout_segments/{PARENT}/initial"
    first, second = (f"{folder}/{parent_name(r)}" for r in (PARENT, REWRITE))
    store = write(
        tmp_path,
        {
            first: rollout(meta(PARENT), *said("user", "first")),
            second: rollout(
                meta(PARENT),
                reference(tmp_path / first, None, PARENT, rollout_id=PARENT),
                *said("user", "second"),
            ),
            LIVE: segment(
                2,
                reference(tmp_path / second, None, PARENT, rollout_id=REWRITE),
                *said("user", "3"),
            ),
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "first"), ("user", "second"), ("user", "3")]


def test_the_time_is_tried_when_the_first_rollout_of_the_id_is_another(tmp_path: Path) -> None:
    """Codex takes the first rollout the walk finds whose name carries the rollout id; when
    that is not the one named, it still looks where the recorded time and the rollout id
    name it, in ``sessions/YYYY/MM/DD/`` then ``archived_sessions/``."""
    stamp = "2025-05-03T10-00-00"
    other = f"sessions/2025/05/01/{parent_name(REWRITE)}"
    named = f"archived_sessions/{parent_name(REWRITE, stamp)}"
    fork = reference(
        "/gone.jsonl", SEGMENTS[3], PARENT, rollout_id=REWRITE, rollout_timestamp=stamp
    )
    store = write(
        tmp_path,
        {
            other: rollout(meta(PARENT, segment_id=SEGMENTS[2]), *said("user", "another")),
            named: rollout(meta(PARENT, segment_id=SEGMENTS[3]), *said("user", "inherited")),
            LIVE: segment(2, fork, *said("user", "mine")),
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "inherited"), ("user", "mine")]
