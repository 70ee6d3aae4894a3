"""What Codex takes for a rollout and for an id, as openai/codex reads them: a rollout's name
is ``rollout-<time>-<thread>[_<rollout>].jsonl`` whose time is a real one and whose ids are
UUIDs (``RolloutFileName::parse``, ``codex-rs/rollout/src/rollout_file_name.rs``; the listing
and ``find_rollout_path_by_rollout_id`` in ``codex-rs/rollout/src/list.rs`` take no other
file), an id is any spelling the ``uuid`` crate parses (``ThreadId``, ``SegmentId``), and a
``rollout_reference`` whose fields are not of their types is no ``RolloutReferenceItem``
(``codex-rs/protocol``). docs/harnesses.md §Codex. The rollouts are written by hand."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sessionref.cli import main
from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.errors import SessionLogError
from sessionref.log.store import SessionNotFound
from tests.test_codex import PROMPT, THREAD, meta, rollout, said, shown, write
from tests.test_codex_history_base import (
    EXPECTED,
    LIVE,
    ROLLOUTS,
    counted_walks,
    page_name,
    pages,
)
from tests.test_codex_references import NAME, SEGMENTS, reference, segment, segment_path
from tests.test_mcp import listed_and_read

OTHER = "0197a000-0000-7000-8000-0000000000bb"
KEPT = f"sessions/2025/06/02/rollout-2025-06-02T10-00-00-{OTHER}.jsonl"
"""A rollout Codex lists, beside one it does not."""
NOT_ROLLOUTS = [
    f"rollout-2025-02-29T10-00-00-{THREAD}.jsonl",  # 2025 is no leap year
    f"rollout-2025-06-31T10-00-00-{THREAD}.jsonl",
    f"rollout-2025-13-01T10-00-00-{THREAD}.jsonl",
    f"rollout-2025-06-01T24-00-00-{THREAD}.jsonl",
    f"rollout-2025-06-01T10-60-00-{THREAD}.jsonl",
    f"rollout-2025-06-01T10-00-60-{THREAD}.jsonl",
    f"rollout-2025-06-01t10-00-00-{THREAD}.jsonl",
    f"rollout-25-06-01T10-00-00-{THREAD}.jsonl",
    f"rollout-2025-06-01T10-00-00-{THREAD}_.jsonl",  # an empty rollout id
    f"rollout-2025-06-01T10-00-00-{THREAD[:-1]}.jsonl",
    f"rollout-2025-06-01T10-00-00-urn:UUID:{THREAD}.jsonl",
]


def in_braces(id_: str) -> str:
    """A UUID as a Microsoft GUID is written."""
    return "{" + id_ + "}"


def candidates(root: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The session ids ``sessionref candidates`` lists for ``root``."""
    assert main(["candidates", "--root", str(root), "--json", "--no-index"]) == 0
    return sorted(row["sessionId"] for row in json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("name", NOT_ROLLOUTS)
def test_a_file_whose_name_codex_does_not_read_is_no_rollout(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review: a name whose time is no real one (or whose ids are no UUIDs) was listed and
    read as a rollout; Codex's listing takes no such file, so it is no session, no candidate
    and no problem."""
    store = write(
        tmp_path,
        {
            f"sessions/2025/06/01/{name}": rollout(meta(), *said("user", "hidden")),
            KEPT: rollout(meta(OTHER), *said("user", "kept")),
        },
    )
    assert [h.id for h in store.headers()] == [OTHER]
    assert store.problems() == []
    with pytest.raises(SessionNotFound):
        store.transcript(THREAD)
    assert candidates(tmp_path, capsys) == [OTHER]


def test_a_real_time_of_any_year_names_a_rollout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex reads the time as ``[year]-[month]-[day]T[hour]-[minute]-[second]``: a leap day,
    the last second of a day and the year 0000 are real ones, and its ids in any spelling
    the ``uuid`` crate parses (upper case, no hyphens, braces, ``urn:uuid:``)."""
    simple, braced = THREAD.replace("-", "").upper(), in_braces(OTHER.upper())
    third = "0197a000-0000-7000-8000-0000000000cc"
    store = write(
        tmp_path,
        {
            f"sessions/2024/02/29/rollout-2024-02-29T23-59-59-{simple}.jsonl": rollout(
                meta(), *PROMPT
            ),
            f"sessions/rollout-0000-01-01T00-00-00-{braced}.jsonl": rollout(meta(OTHER), *PROMPT),
            f"archived_sessions/rollout-2025-06-01T10-00-00-urn:uuid:{third}.jsonl": rollout(
                meta(third), *PROMPT
            ),
        },
    )
    assert sorted(h.id for h in store.headers()) == sorted([THREAD, OTHER, third])
    assert candidates(tmp_path, capsys) == sorted([THREAD, OTHER, third])


def test_mcp_lists_no_file_whose_name_codex_does_not_read(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    (tmp_path / "project").mkdir()
    write(
        home,
        {
            f"sessions/2025/02/29/{NOT_ROLLOUTS[0]}": rollout(meta(), *said("user", "hidden")),
            KEPT: rollout(meta(OTHER), *said("user", "kept")),
        },
    )
    listed, text = listed_and_read(home, OTHER)
    assert [r.uri for r in listed.resources] == [encode_session_reference_uri(OTHER)]
    assert "kept" in text and "hidden" not in text


@pytest.mark.parametrize("stamp", ["2025-06-01T10-00-00", "2025-06-31T10-00-00"])
def test_a_page_is_found_by_its_rollout_id_only_under_a_name_codex_reads(
    tmp_path: Path, stamp: str
) -> None:
    """``find_rollout_path_by_rollout_id`` reads each name as ``RolloutFileName``: the page a
    ``history_base`` names is not found under a name whose time is no real one (June has 30
    days), and the history before it is what is missing."""
    written = pages()
    oldest = page_name(ROLLOUTS[0])
    written[oldest.replace("2025-06-01T10-00-00", stamp)] = written.pop(oldest)
    store = write(tmp_path, written)
    found = stamp.startswith("2025-06-01")
    assert shown(store.transcript(THREAD)) == (EXPECTED if found else EXPECTED[2:])


@pytest.mark.parametrize(
    "spelling",
    [str.upper, in_braces, lambda id_: id_.replace("-", ""), "urn:uuid:{}".format],
)
def test_a_reference_s_ids_in_another_spelling_name_the_same_segment(
    tmp_path: Path, spelling: Callable[[str], str]
) -> None:
    """Codex parses a reference's ids (``ThreadId``, ``SegmentId``) and looks for the segment
    under the ids it writes (lower case, hyphenated), and compares them with the segment's
    ``session_meta`` as UUIDs: another spelling names the same segment. Here the recorded
    path is stale, so the segment is found in its folder."""
    stale = f"/elsewhere/.codex/{segment_path(SEGMENTS[1])}"
    spelt = reference(stale, spelling(SEGMENTS[1]), spelling(THREAD))
    store = write(
        tmp_path,
        {
            segment_path(SEGMENTS[1]): segment(1, *said("user", "before")),
            f"sessions/2025/06/03/{NAME}": segment(2, spelt, *said("user", "after")),
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "before"), ("user", "after")]


def test_a_history_base_names_its_rollout_in_any_spelling(tmp_path: Path) -> None:
    """``HistoryPosition.thread_id`` is a ``ThreadId``: the page of that UUID is found however
    the id is written."""
    written = pages()
    live = written[LIVE]
    written[LIVE] = live.replace(
        ROLLOUTS[1].encode(), ROLLOUTS[1].replace("-", "").upper().encode()
    )
    assert written[LIVE] != live
    assert shown(write(tmp_path, written).transcript(THREAD)) == EXPECTED


def test_spellings_of_one_thread_id_are_one_thread(tmp_path: Path) -> None:
    """Codex groups rollouts by the UUID its name and its ``session_meta`` give, and keys
    thread names by it (``session_index.jsonl``): two rollouts whose ids differ only in case
    are one thread's, served under the id as Codex writes it, never as two sessions. The
    thread is its newest rollout, whichever spelling it has (openai/codex
    ``codex-rs/rollout/src/list.rs``: ``find_thread_path_by_id_from_filenames`` compares the
    ``ThreadId`` its name parses to, and keeps the latest time)."""
    upper = THREAD.upper()
    store = write(
        tmp_path,
        {
            f"sessions/2025/06/01/{NAME}": rollout(meta(), *said("user", "first")),
            f"sessions/2025/06/02/rollout-2025-06-02T10-00-00-{upper}.jsonl": rollout(
                meta(upper), *said("user", "second")
            ),
            "session_index.jsonl": b'{"id":"%s","thread_name":"Named","updated_at":"t"}\n'
            % upper.encode(),
        },
    )
    assert [h.id for h in store.headers()] == [THREAD]
    assert shown(store.transcript(THREAD)) == [("user", "second")]
    assert store.title(THREAD) == "Named"
    with pytest.raises(SessionNotFound):
        store.transcript(upper)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("segment_id", 7),
        ("segment_id", "initial"),
        ("segment_id", {"id": SEGMENTS[0]}),
        ("rollout_id", 7),
        ("rollout_timestamp", 20250601),
        ("nth_user_message", -1),
        ("nth_user_message", "1"),
        ("nth_user_message", True),
        ("nth_user_message", 2**64),
        ("max_depth", None),
        ("max_depth", "2"),
        ("max_depth", -1),
        ("max_depth", 2.5),
        ("max_depth", False),
        ("max_depth", 2**64),
        ("compacted_replacement_history_filter_texts", "developer text"),
        ("compacted_replacement_history_filter_texts", ["developer text", 7]),
        ("compacted_replacement_history_filter_texts", [None]),
        ("compacted_replacement_history_filter_texts", {"text": "developer text"}),
    ],
)
def test_a_reference_codex_cannot_read_is_skipped(
    tmp_path: Path, field: str, value: object
) -> None:
    """Review: a ``segment_id`` that is no string was read as none (``initial``), and a
    ``max_depth`` or ``compacted_replacement_history_filter_texts`` of any type was taken.
    Codex reads a reference as a ``RolloutReferenceItem`` (openai/codex
    ``codex-rs/protocol/src/protocol.rs``: ``segment_id: Option<SegmentId>``,
    ``nth_user_message: Option<usize>``, ``max_depth: usize`` with a default when absent,
    ``compacted_replacement_history_filter_texts: Option<Vec<String>>``, …) and serde refuses
    one of other types (a ``usize`` takes no ``null``, float, boolean, negative number or one
    past 2⁶⁴ - 1), so it is a line of no known kind: the initial segment it would otherwise
    name is not read."""
    initial = segment_path(None)
    line = reference(initial, None, **{field: value})
    store = write(
        tmp_path,
        {
            initial: rollout(meta(), *said("user", "initial")),
            f"sessions/2025/06/03/{NAME}": segment(2, line, *said("user", "live")),
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "live")]
    control = write(tmp_path, {f"sessions/2025/06/03/{NAME}": segment(2, reference(initial, None))})
    assert shown(control.transcript(THREAD)) == [("user", "initial")]


def test_a_reference_of_the_types_codex_reads_is_followed(tmp_path: Path) -> None:
    """The other side of the types Codex reads (``RolloutReferenceItem`` in openai/codex
    ``codex-rs/protocol/src/protocol.rs``): an absent ``max_depth`` takes its default
    (``#[serde(default = ...)]``), the largest ``usize`` is a count, and
    ``compacted_replacement_history_filter_texts`` may be ``null`` or a list of strings,
    empty or not; each such reference names the initial segment, which is read."""
    initial = segment_path(None)
    fields: list[dict[str, object]] = [
        {"max_depth": 2**64 - 1, "nth_user_message": None},
        {"compacted_replacement_history_filter_texts": []},
        {"compacted_replacement_history_filter_texts": ["developer text"]},
    ]
    without_depth = json.loads(reference(initial, None))
    del without_depth["payload"]["max_depth"]
    for n, extra in enumerate(fields):
        home = tmp_path / str(n)
        store = write(
            home,
            {
                initial: rollout(meta(), *said("user", "initial")),
                f"sessions/2025/06/03/{NAME}": segment(2, reference(home / initial, None, **extra)),
            },
        )
        assert shown(store.transcript(THREAD)) == [("user", "initial")], extra
    store = write(
        tmp_path / "absent",
        {
            initial: rollout(meta(), *said("user", "initial")),
            f"sessions/2025/06/03/{NAME}": segment(2, json.dumps(without_depth).encode()),
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", "initial")]


def test_a_rollout_whose_name_says_another_thread_than_its_meta_is_not_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review: a rollout named for one thread whose first ``session_meta`` is of another was
    read as a segment of the meta's thread. Codex's listing takes each rollout as the thread
    its name says and drops one whose meta says another (openai/codex
    ``codex-rs/rollout/src/list.rs``, ``build_bounded_candidate_summaries``: ``candidate_thread_id
    != Some(metadata.meta.id)``), and its look-up by id goes by the name
    (``find_thread_path_by_id_from_filenames``): the file is neither thread's. It is a problem
    naming both ids, and reading the thread its name says fails naming it."""
    stray = f"sessions/2025/06/01/{NAME}"
    store = write(
        tmp_path,
        {
            stray: rollout(meta(OTHER), *said("user", "stray")),
            KEPT: rollout(meta(OTHER), *said("user", "kept")),
        },
    )
    assert [h.id for h in store.headers()] == [OTHER]
    assert shown(store.transcript(OTHER)) == [("user", "kept")]
    why = (
        f"its name says thread {THREAD} but its session_meta says thread {OTHER} "
        "(Codex does not list it)"
    )
    assert [(p.path, p.message) for p in store.problems()] == [(str(tmp_path / stray), why)]
    with pytest.raises(SessionLogError, match=re.escape(f"{tmp_path / stray}: {why}")):
        store.transcript(THREAD)
    assert candidates(tmp_path, capsys) == [OTHER]


def test_a_rollout_found_nowhere_is_looked_for_again_only_when_the_home_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: every read of a thread whose page is found nowhere walked ``sessions/`` and
    ``archived_sessions/`` again. The store keeps the state of the folders it walked, and
    walks again for a rollout it did not find only when one of them changed (a page that
    comes later is then found)."""
    walks = counted_walks(monkeypatch)
    written = pages()
    oldest = written.pop(page_name(ROLLOUTS[0]))
    store = write(tmp_path, written)
    past = time.time() - 3600
    for folder, _, _ in os.walk(tmp_path):
        os.utime(folder, (past, past))  # settled: no change can hide in the clock's tick
    for _ in range(3):
        assert shown(store.transcript(THREAD)) == EXPECTED[2:]
    assert len(walks) == 1
    (tmp_path / page_name(ROLLOUTS[0])).write_bytes(oldest)
    assert shown(store.transcript(THREAD)) == EXPECTED
    assert len(walks) == 2
