"""Which rollout a Codex thread is, as openai/codex resolves a thread id (docs/harnesses.md
§Codex §Where). Expected answers come from Codex's source, never from sessionref's output:

- ``codex-rs/rollout/src/list.rs``, ``find_thread_path_by_id_from_filenames``: of the files
  whose names say the thread (``RolloutFileName::parse``), the one of the latest time in its
  name, equal times broken by the larger rollout id; names only, no ``session_meta`` read.
- same file, ``select_thread_candidates``: the listing groups the candidates by the thread
  their names say and keeps the same newest one of each before any metadata is read; then
  ``build_bounded_candidate_summaries`` drops it when ``candidate_thread_id !=
  Some(metadata.meta.id)``: the thread is not listed, whatever its older rollouts hold.
- ``codex-rs/thread-store/src/local/thread_rollout_resolver.rs``, ``resolve``:
  ``find_thread_path_by_id_str`` (``sessions/``) first, ``find_archived_thread_path_by_id_str``
  only when it finds nothing.
- ``list.rs``, ``get_threads`` and ``get_threads_in_root`` with ``ThreadListLayout::Flat``:
  ``sessions/`` and ``archived_sessions/`` are listed apart, each by its own newest rollout of
  a thread.

The rollouts are written by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sessionref.errors import SessionLogError
from sessionref.log.store import SessionNotFound
from sessionref.roots import Root, check_root
from tests.test_codex import THREAD, meta, rollout, said, shown, write
from tests.test_roots import assert_no_codex_home

OTHER = "0197a000-0000-7000-8000-0000000000bb"
LATER = "0197c000-0000-7000-8000-000000000001"
"""A rollout id made after :data:`THREAD` (UUIDv7s grow with time)."""
EARLIER = "0197a000-0000-7000-8000-000000000001"
"""A rollout id smaller than :data:`THREAD`."""


def named(day: int, thread: str = THREAD, rollout_id: str | None = None, hour: int = 10) -> str:
    """The name Codex gives a rollout of ``thread`` made that day of June 2025 at that hour
    (``_<rollout id>`` after the thread's when it is another rollout of the thread)."""
    suffix = "" if rollout_id is None else f"_{rollout_id}"
    return f"rollout-2025-06-{day:02}T{hour:02}-00-00-{thread}{suffix}.jsonl"


def dated(day: int, name: str) -> str:
    return f"sessions/2025/06/{day:02}/{name}"


def why(thread: str) -> str:
    """The problem of a rollout named for :data:`THREAD` whose meta says ``thread``."""
    return (
        f"its name says thread {THREAD} but its session_meta says thread {thread} "
        "(Codex does not list it)"
    )


def test_a_thread_is_its_newest_rollout(tmp_path: Path) -> None:
    """``find_thread_path_by_id_from_filenames`` keeps the latest time; the older rollout is
    not read."""
    store = write(
        tmp_path,
        {
            dated(1, named(1)): rollout(meta(), *said("user", "older")),
            dated(2, named(2, hour=9)): rollout(meta(), *said("user", "newer")),
        },
    )
    assert [h.id for h in store.headers()] == [THREAD]
    assert store.paths_of(THREAD) == [tmp_path / dated(2, named(2, hour=9))]
    assert shown(store.transcript(THREAD)) == [("user", "newer")]


@pytest.mark.parametrize(("rollout_id", "read"), [(LATER, "rewritten"), (EARLIER, "own")])
def test_in_one_second_the_larger_rollout_id_is_the_newer(
    tmp_path: Path, rollout_id: str, read: str
) -> None:
    """Names carry the time to the second; ``candidate.1 > *id`` breaks a tie by the rollout
    id, which for a name without ``_<rollout id>`` is the thread's own."""
    store = write(
        tmp_path,
        {
            dated(1, named(1)): rollout(meta(), *said("user", "own")),
            dated(1, named(1, rollout_id=rollout_id)): rollout(meta(), *said("user", "rewritten")),
        },
    )
    assert shown(store.transcript(THREAD)) == [("user", read)]


def test_a_thread_whose_newest_rollout_is_of_another_thread_is_not_listed(
    tmp_path: Path,
) -> None:
    """The listing keeps the newest candidate of the thread and drops it on the mismatch:
    the older rollout, of the right thread, does not bring the thread back. Reading the
    thread goes to the same newest file, and fails naming it and both ids."""
    newest = dated(2, named(2))
    store = write(
        tmp_path,
        {
            dated(1, named(1)): rollout(meta(), *said("user", "older")),
            newest: rollout(meta(OTHER), *said("user", "stray")),
        },
    )
    assert store.headers() == []
    assert [(p.path, p.message) for p in store.problems()] == [(str(tmp_path / newest), why(OTHER))]
    with pytest.raises(SessionLogError, match=re.escape(f"{tmp_path / newest}: {why(OTHER)}")):
        store.transcript(THREAD)
    with pytest.raises(SessionNotFound):
        store.transcript(OTHER)  # no file is named for it


def test_an_older_rollout_of_another_thread_is_never_read(tmp_path: Path) -> None:
    """Only the newest candidate's metadata is read (``select_thread_candidates`` comes
    before ``read_bounded_candidate_metadata``): an older mismatched rollout is no problem."""
    store = write(
        tmp_path,
        {
            dated(1, named(1)): rollout(meta(OTHER), *said("user", "stray")),
            dated(2, named(2)): rollout(meta(), *said("user", "newer")),
        },
    )
    assert [h.id for h in store.headers()] == [THREAD]
    assert store.problems() == []
    assert shown(store.transcript(THREAD)) == [("user", "newer")]


def test_sessions_come_before_archived_sessions(tmp_path: Path) -> None:
    """``resolve`` asks ``sessions/`` first: a newer rollout in ``archived_sessions/`` is
    not read while one in ``sessions/`` names the thread; a thread only archived is its
    newest archived rollout."""
    live = dated(1, named(1))
    store = write(
        tmp_path,
        {
            live: rollout(meta(), *said("user", "live")),
            f"archived_sessions/{named(3)}": rollout(meta(), *said("user", "archived")),
            f"archived_sessions/{named(1, OTHER)}": rollout(meta(OTHER), *said("user", "old")),
            f"archived_sessions/{named(2, OTHER)}": rollout(meta(OTHER), *said("user", "new")),
        },
    )
    assert sorted(h.id for h in store.headers()) == [THREAD, OTHER]
    assert store.paths_of(THREAD) == [tmp_path / live]
    assert shown(store.transcript(THREAD)) == [("user", "live")]
    assert shown(store.transcript(OTHER)) == [("user", "new")]


@pytest.mark.parametrize("stray", [meta(OTHER), said("user", "no meta")[1]])
def test_a_thread_whose_rollout_in_sessions_does_not_list_is_its_archived_one(
    tmp_path: Path, stray: bytes
) -> None:
    """Codex lists ``sessions/`` and ``archived_sessions/`` apart (``get_threads`` over the
    one, ``ThreadListLayout::Flat`` over the other), each by its newest rollout of the thread,
    and ``build_bounded_candidate_summaries`` drops only that listing's candidate when its meta
    says another thread (or ``build_thread_item`` finds no meta): the archived listing still
    lists the thread. Codex archives by moving only the rollouts whose meta is the thread's
    (``archive_thread_with_paths``), so a stray rollout named for the thread stays in
    ``sessions/``, and the state database then points the thread at its archived rollout,
    which ``resolve`` and ``read_thread`` read. The stray rollout is still a problem."""
    live = dated(2, named(2))
    archived = f"archived_sessions/{named(1)}"
    store = write(
        tmp_path,
        {
            live: rollout(stray, *said("user", "stray")),
            archived: rollout(meta(), *said("user", "archived")),
        },
    )
    assert [h.id for h in store.headers()] == [THREAD]
    assert [p.path for p in store.problems()] == [str(tmp_path / live)]
    assert store.paths_of(THREAD) == [tmp_path / archived]
    assert shown(store.transcript(THREAD)) == [("user", "archived")]
    assert store.title(THREAD) == "archived"


def test_a_folder_whose_rollouts_are_all_of_other_threads_is_no_codex_home(
    tmp_path: Path,
) -> None:
    """Codex lists no thread of such a folder (``build_bounded_candidate_summaries`` drops
    each), so, as a folder of files Codex takes for no rollout, it holds no sessions: the one
    error line names its first rollout and the other thread its meta says. One rollout of
    the thread its name says makes it a Codex home."""
    home = tmp_path / "codex"
    first = home / dated(1, named(1))
    write(
        home,
        {
            dated(1, named(1)): rollout(meta(OTHER)),
            dated(2, named(2, OTHER)): rollout(meta(THREAD)),
        },
    )
    near = f"; {first}: {why(OTHER)}"
    assert_no_codex_home(home, near)
    write(home, {f"archived_sessions/{named(3, OTHER)}": rollout(meta(OTHER))})
    assert check_root(str(home)) == Root(str(home), "codex", str(home))
