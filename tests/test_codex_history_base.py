"""Paginated history: the newest Codex keeps a thread's older pages out of its live rollout, in
``sessions/rollout_segments/YYYY/MM/DD/rollout-<time>-<thread>_<rollout id>.jsonl``, and the
live rollout's ``session_meta`` says which prefix of which page comes before its own lines
(``history_mode: "paginated"``, ``history_base: {thread_id, end_ordinal_exclusive,
end_byte_offset}``), as openai/codex ``codex-rs/rollout/src/reference.rs``
(``load_history_base_prefix``, ``expand_lines``) reads them (docs/harnesses.md §Codex
§Pages). The rollouts here are written by hand from that definition: every line carries its
``ordinal``, counted on across the pages, and a page's end is its byte length when the next
page began."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import zstandard

from sessionref.cli import main
from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.codex.pages import FolderState
from sessionref.codex.store import CodexStore
from sessionref.errors import SessionLogError
from sessionref.index import SessionIndex
from tests.test_codex import THREAD, meta, said, shown, write
from tests.test_codex_references import captured
from tests.test_mcp import listed_and_read

STAMP = "2025-06-01T10-00-00"
DAY = "sessions/2025/06/01"
PAGES = "sessions/rollout_segments/2025/06/01"
ROLLOUTS = [f"0197c000-0000-7000-8000-00000000000{n}" for n in range(4)]
"""Rollout ids (UUIDv7, as Codex makes them) of a thread's pages."""
LIVE = f"{DAY}/rollout-{STAMP}-{THREAD}.jsonl"


def page_name(rollout_id: str, thread: str = THREAD) -> str:
    """Where Codex keeps a page: its thread's canonical name with its rollout id spliced in."""
    return f"{PAGES}/rollout-{STAMP}-{thread}_{rollout_id}.jsonl"


def numbered(first: int, lines: list[bytes]) -> bytes:
    """``lines`` as a rollout whose lines carry ordinals from ``first`` on (``RolloutLine``)."""
    out = b""
    for ordinal, item in enumerate(lines, first):
        record = json.loads(item)
        out += json.dumps({"timestamp": record["timestamp"], "ordinal": ordinal, **record}).encode()
        out += b"\n"
    return out


def paginated(base: dict[str, Any] | None = None, thread: str = THREAD) -> bytes:
    """A paginated thread's ``session_meta``, with the prefix it continues (if any)."""
    return meta(thread, history_mode="paginated", history_base=base)


def base(rollout_id: str, prefix: bytes, lines: int) -> dict[str, Any]:
    """A ``HistoryPosition``: the first ``lines`` lines, ``prefix``, of rollout ``rollout_id``."""
    return {
        "thread_id": rollout_id,
        "end_ordinal_exclusive": lines,
        "end_byte_offset": len(prefix),
    }


def pages(oldest_base: dict[str, Any] | None = None) -> dict[str, bytes]:
    """A thread of three pages: the oldest (continuing ``oldest_base``), a middle one whose
    last turn was taken back after the live page began (the live page continues before it),
    and the live one."""
    oldest = paginated(oldest_base)
    first = numbered(0, [oldest, *said("user", "one"), *said("assistant", "One.")])
    middle_kept = numbered(5, [paginated(base(ROLLOUTS[0], first, 5)), *said("user", "two")])
    middle_kept += numbered(8, said("assistant", "Two."))
    middle = middle_kept + numbered(10, said("user", "taken back"))
    live = numbered(10, [paginated(base(ROLLOUTS[1], middle_kept, 10)), *said("user", "three")])
    return {page_name(ROLLOUTS[0]): first, page_name(ROLLOUTS[1]): middle, LIVE: live}


EXPECTED = [
    ("user", "one"),
    ("assistant", "One."),
    ("user", "two"),
    ("assistant", "Two."),
    ("user", "three"),
]
TEXTS = ["one", "One.", "two", "Two.", "three"]


def in_order(text: str) -> bool:
    """Whether each message is in ``text`` once, in the thread's order, and the turn taken
    back is not."""
    quoted = [f'"text":"{said}"' for said in TEXTS]
    places = [text.find(said) for said in quoted]
    once = all(text.count(said) == 1 for said in quoted)
    return once and places == sorted(places) and "taken back" not in text


def test_a_paginated_thread_reads_its_pages_in_order_each_message_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A newcomer's trial: a long thread of the newest Codex showed its latest page first, then
    the older pages whole, the turn taken back included."""
    store = write(tmp_path, pages())
    assert [h.id for h in store.headers()] == [THREAD]
    assert store.problems() == []
    assert store.paths_of(THREAD) == [tmp_path / LIVE]
    assert shown(store.transcript(THREAD)) == EXPECTED
    assert store.title(THREAD) == "one"
    prompt = captured(store)
    # the live meta, the oldest page's 4 lines, the middle's 4 before its end, the live's 2
    assert '"capturedThroughSeq":10' in prompt and in_order(prompt)
    assert main(["candidates", "--root", str(tmp_path), "--json"]) == 0
    listed = capsys.readouterr().out
    assert listed.count(THREAD) == 1 and ROLLOUTS[0] not in listed
    assert main(["show", "--root", str(tmp_path), THREAD]) == 0
    assert "kept 5 of 5 units" in capsys.readouterr().out
    assert main(["snapshot", "--root", str(tmp_path), THREAD]) == 0
    assert in_order(capsys.readouterr().out)


def test_the_index_and_the_mcp_server_read_a_paginated_thread_whole(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    (tmp_path / "project").mkdir()
    write(home, pages())
    index = SessionIndex(CodexStore(home), tmp_path / "i.sqlite")
    try:
        index.refresh()
        assert [h.id for h in index.headers()] == [THREAD]
        assert shown(index.transcript(THREAD)) == EXPECTED
        assert [hit.session_id for hit in index.search("One")] == [THREAD]
        assert list(index.search("taken")) == []
    finally:
        index.close()

    listed, text = listed_and_read(home, THREAD)
    assert [r.uri for r in listed.resources] == [encode_session_reference_uri(THREAD)]
    assert in_order(text)


def test_a_compressed_page_is_continued_by_the_offset_into_its_text(tmp_path: Path) -> None:
    """Codex compresses a cold page like any rollout; the offset counts bytes of its text, and
    a plain page hides a compressed one of its name (one caught between the two steps)."""
    files = pages()
    oldest, middle = page_name(ROLLOUTS[0]), page_name(ROLLOUTS[1])
    compress = zstandard.ZstdCompressor(level=3).compress
    files[oldest + ".zst"] = compress(files.pop(oldest))
    files[middle + ".zst"] = compress(files[middle].replace(b"Two.", b"Old."))
    store = write(tmp_path, files)
    assert shown(store.transcript(THREAD)) == EXPECTED


def test_a_page_that_is_not_on_disk_leaves_out_only_what_it_held(tmp_path: Path) -> None:
    """As a reference found nowhere: the thread shows what it has."""
    files = pages()
    del files[page_name(ROLLOUTS[0])]
    assert shown(write(tmp_path, files).transcript(THREAD)) == EXPECTED[2:]


def test_only_a_paginated_thread_continues_another_rollout(tmp_path: Path) -> None:
    """Codex follows ``history_base`` only when ``history_mode`` is ``paginated``."""
    files = pages()
    files[LIVE] = files[LIVE].replace(b'"paginated"', b'"legacy"')
    assert shown(write(tmp_path, files).transcript(THREAD)) == [("user", "three")]


def test_a_fork_continues_its_parent_s_rollout_and_the_parent_stays_a_session(
    tmp_path: Path,
) -> None:
    """A ``history_base`` may name another thread's rollout: a fork continuing its parent."""
    parent = "0197a000-0000-7000-8000-0000000000bb"
    parent_rollout = f"{DAY}/rollout-2025-06-01T09-00-00-{parent}.jsonl"
    asked = numbered(0, [paginated(thread=parent), *said("user", "one")])
    answered = asked + numbered(3, said("assistant", "One."))
    fork = numbered(3, [paginated(base(parent, asked, 3)), *said("user", "mine")])
    store = write(tmp_path, {parent_rollout: answered, LIVE: fork})
    assert sorted(h.id for h in store.headers()) == sorted([THREAD, parent])
    assert shown(store.transcript(THREAD)) == [("user", "one"), ("user", "mine")]
    assert shown(store.transcript(parent)) == EXPECTED[:2]


def cut(files: dict[str, bytes], end: int | None = None, ordinal: int | None = None) -> None:
    """Let the live page's ``history_base`` end at byte ``end`` or line ``ordinal``."""
    first, _, rest = files[LIVE].partition(b"\n")
    record = json.loads(first)
    position = record["payload"]["history_base"]
    position["end_byte_offset"] = position["end_byte_offset"] if end is None else end
    position["end_ordinal_exclusive"] = ordinal or position["end_ordinal_exclusive"]
    files[LIVE] = json.dumps(record).encode() + b"\n" + rest


@pytest.mark.parametrize("kind", ["past its end", "inside a line", "wrong ordinal", "cycle"])
def test_a_history_base_codex_refuses_fails_naming_the_page(tmp_path: Path, kind: str) -> None:
    """An offset past the page's end or inside a line, a line number that does not follow the
    last line before it, or pages that continue each other: Codex refuses to read the thread,
    and so does sessionref, naming the page and why."""
    files = pages()
    middle = page_name(ROLLOUTS[1])
    kept = len(files[middle]) - len(numbered(10, said("user", "taken back")))
    if kind == "past its end":
        cut(files, end=len(files[middle]) + 1)
        reason = f"byte offset {len(files[middle]) + 1} is past its end"
    elif kind == "inside a line":
        cut(files, end=kept - 2)
        reason = f"byte offset {kept - 2} does not end a line"
    elif kind == "wrong ordinal":
        cut(files, ordinal=9)
        reason = "history_base ordinal 9 does not follow"
    else:
        files = pages(oldest_base=base(ROLLOUTS[1], b"", 10))
        middle = page_name(ROLLOUTS[0])
        reason = f"history_base cycle at rollout {ROLLOUTS[1]}"
    store = write(tmp_path, files)
    with pytest.raises(SessionLogError) as failed:
        store.transcript(THREAD)
    assert str(tmp_path / middle) in str(failed.value) and reason in str(failed.value)


REWRITTEN = f"{DAY}/rollout-2025-06-01T11-00-00-{THREAD}_{ROLLOUTS[3]}.jsonl"
"""A rollout of the thread that continues the thread's first one (a reverted thread's, which
Codex names with its own rollout id, in the same folder)."""


def test_a_listed_rollout_another_one_continues_is_no_segment_of_its_own(
    tmp_path: Path,
) -> None:
    """Both rollouts are in the thread's folder and both are the thread's: the one continued
    is read only as far as the other continues it, so no message shows twice."""
    kept = numbered(0, [paginated(), *said("user", "one"), *said("assistant", "One.")])
    first = kept + numbered(5, said("user", "taken back"))
    then = numbered(5, [paginated(base(THREAD, kept, 5)), *said("user", "three")])
    store = write(tmp_path, {LIVE: first, REWRITTEN: then})
    assert [h.id for h in store.headers()] == [THREAD]
    assert shown(store.transcript(THREAD)) == [*EXPECTED[:2], EXPECTED[-1]]
    assert '"capturedThroughSeq":6' in captured(store)  # its meta, 4 lines continued, 2 own


def test_a_passed_over_rollout_of_a_rewritten_thread_is_named_by_its_thread(
    tmp_path: Path,
) -> None:
    """``rollout-<time>-<thread>_<rollout>.jsonl`` holds the thread, not the rollout id."""
    store = write(tmp_path, {REWRITTEN: said("user", "no meta")[1] + b"\n"})
    assert store.headers() == []
    with pytest.raises(SessionLogError, match=REWRITTEN.rsplit("/", 1)[1]):
        store.transcript(THREAD)


def counted_walks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The homes the Codex store walks for rollouts by id from now on, one entry a walk."""
    import sessionref.codex.pages as pages_module

    walks: list[Path] = []
    walk = pages_module.rollouts_by_id

    def counted(home: Path, states: dict[Path, FolderState] | None = None) -> dict[str, Path]:
        walks.append(home)
        return walk(home, states)

    monkeypatch.setattr(pages_module, "rollouts_by_id", counted)
    return walks


def test_the_home_is_walked_for_pages_once_and_again_when_a_page_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: every read of a paginated thread walked ``sessions/`` and ``archived_sessions/``
    again to find its pages. The store keeps where they are, and walks again only when a page
    is not where the last walk found it."""
    walks = counted_walks(monkeypatch)
    store = write(tmp_path, pages())
    for _ in range(3):
        assert shown(store.transcript(THREAD)) == EXPECTED
    assert len(walks) == 1
    moved = tmp_path / "archived_sessions" / Path(page_name(ROLLOUTS[0])).name
    moved.parent.mkdir(exist_ok=True)
    (tmp_path / page_name(ROLLOUTS[0])).rename(moved)
    assert shown(store.transcript(THREAD)) == EXPECTED
    assert len(walks) == 2
