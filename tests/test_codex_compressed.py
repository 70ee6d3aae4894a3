"""Compressed Codex rollouts (``rollout-*.jsonl.zst``), as openai/codex
``codex-rs/rollout/src/compression.rs`` writes and reads them (docs/harnesses.md §Codex
§Compressed): one zstd stream beside the plain file's place, which a plain file of the same name
hides; a damaged one is an error naming it."""

from __future__ import annotations

import os
import random
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard

from sessionref import SessionReferenceResolver, Target
from sessionref.cli import main
from sessionref.codex.store import CodexStore
from sessionref.errors import SessionReferenceError
from sessionref.index import SessionIndex
from sessionref.log import zstdfile
from tests.test_codex import (
    NAME,
    THREAD,
    copy,
    fails_naming,
    line,
    meta,
    rollout,
    said,
    shown,
    write,
)

DAY = "sessions/2025/06/01"
ASKED = rollout(meta(), *said("user", "fix the build"), *said("assistant", "Fixed."))
FIXED = [("user", "fix the build"), ("assistant", "Fixed.")]


def compressed(data: bytes) -> bytes:
    """``data`` as Codex's worker writes it: one zstd stream at level 3, its size unsaid."""
    stream = zstandard.ZstdCompressor(level=3).compressobj()
    return stream.compress(data) + stream.flush()


def snapshot_of(store: CodexStore) -> str:
    resolver = SessionReferenceResolver(store)
    prepared = resolver.prepare(Target("me"), content=[], references=[{"sessionId": THREAD}])
    return prepared.additional_context.prompt


@pytest.mark.parametrize("folder", [DAY, "sessions", "archived_sessions"])
def test_a_compressed_rollout_is_listed_and_read(tmp_path: Path, folder: str) -> None:
    """A newcomer's trial: a week-old thread Codex had compressed was not listed at all."""
    store = write(tmp_path, {f"{folder}/{NAME}.zst": compressed(ASKED)})
    assert [(h.id, h.cwd) for h in store.headers()] == [(THREAD, "/w")]
    assert store.problems() == []
    assert shown(store.transcript(THREAD)) == FIXED
    assert store.title(THREAD) == "fix the build"
    assert "fix the build" in snapshot_of(store) and "Fixed." in snapshot_of(store)


def test_show_and_snapshot_read_a_compressed_rollout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, {f"archived_sessions/{NAME}.zst": compressed(ASKED)})
    assert main(["candidates", "--root", str(tmp_path), "--json"]) == 0
    assert THREAD in capsys.readouterr().out
    assert main(["show", "--root", str(tmp_path), THREAD]) == 0
    assert "kept 2 of 2 units" in capsys.readouterr().out
    assert main(["snapshot", "--root", str(tmp_path), THREAD]) == 0
    prompt = capsys.readouterr().out
    assert '"capturedThroughSeq":4' in prompt  # the meta and two lines per message
    assert [prompt.count(text) for text in ("fix the build", "Fixed.")] == [1, 1]


def test_a_plain_rollout_hides_its_compressed_sibling(tmp_path: Path) -> None:
    """Codex decompresses a rollout it appends to again beside the compressed one, then
    removes that: while both are there, the plain one is the rollout."""
    older = rollout(meta(), *said("user", "fix the build"))
    store = write(
        tmp_path, {f"{DAY}/{NAME}": ASKED, f"{DAY}/{NAME}.zst": compressed(older + b"torn")}
    )
    assert [h.id for h in store.headers()] == [THREAD]
    assert store.paths_of(THREAD) == [tmp_path / DAY / NAME]
    assert shown(store.transcript(THREAD)) == FIXED


@pytest.mark.parametrize(
    ("live", "archived"),
    [
        (f"{DAY}/{NAME}.zst", f"archived_sessions/{NAME}"),
        (f"{DAY}/{NAME}", f"archived_sessions/{NAME}.zst"),
    ],
)
@pytest.mark.parametrize("longer", ["live", "archived"])
def test_a_rollout_compressed_in_one_place_and_plain_in_the_other_is_read_once(
    tmp_path: Path, live: str, archived: str, longer: str
) -> None:
    """The same rollout in ``sessions/`` and in ``archived_sessions/`` is one rollout in two
    places: the copy in ``sessions/`` is read, whichever of the two is compressed or longer, as
    Codex looks a thread up in ``archived_sessions/`` only when no rollout in ``sessions/``
    names it (openai/codex ``codex-rs/thread-store/src/local/thread_rollout_resolver.rs``:
    ``resolve``, ``find_thread_path_by_id_str`` before ``find_archived_thread_path_by_id_str``)."""
    more = ASKED + rollout(*said("user", "and the docs"))
    contents = (
        {live: ASKED, archived: more} if longer == "archived" else {live: more, archived: ASKED}
    )
    store = write(
        tmp_path,
        {
            name: compressed(data) if name.endswith(".zst") else data
            for name, data in contents.items()
        },
    )
    read = [*FIXED, ("user", "and the docs")] if longer == "live" else FIXED
    assert shown(store.transcript(THREAD)) == read


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[:-3], "corrupt zstd file: it ends inside the frame at byte 0"),
        (lambda data: data + b"junk", "corrupt zstd log: invalid frame magic at byte"),
        (lambda data: data[:-8] + bytes(8), "corrupt zstd log: a frame failed validation"),
        (lambda data: bytes(40), "corrupt zstd log: invalid frame magic at byte 0"),
    ],
)
def test_a_damaged_compressed_rollout_fails_naming_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Callable[[bytes], bytes],
    reason: str,
) -> None:
    """Codex writes a compressed rollout whole (a temporary file, checked, then renamed), so
    one that ends inside a frame or does not decompress is damaged, not being written: it is a
    problem of the listing, and reading its thread fails naming the file and why, rather than
    showing part of it as the whole."""
    path = tmp_path / DAY / f"{NAME}.zst"
    store = write(tmp_path, {f"{DAY}/{NAME}.zst": damage(compressed(ASKED * 40))})
    assert store.headers() == []
    [problem] = store.problems()
    assert problem.path == str(path) and problem.message.startswith(reason)
    fails_naming(lambda: snapshot_of(store), tmp_path, f"{path}: {reason}", capsys)


def test_the_limits_hold_for_the_text_of_a_compressed_rollout(tmp_path: Path) -> None:
    """``max_bytes`` bounds what a compressed rollout decompresses to, not only its size."""
    big = ASKED + rollout(*said("assistant", "x" * 150_000))  # said twice: item and event
    data = compressed(big)
    assert len(data) < 2000 < 300_000 < len(big) < 310_000
    write(tmp_path, {f"{DAY}/{NAME}.zst": data})
    tight = CodexStore(tmp_path, max_bytes=300_000)
    assert [h.id for h in tight.headers()] == [THREAD]  # its start is within the limit
    with pytest.raises(SessionReferenceError) as failed:
        snapshot_of(tight)
    where = str(tmp_path / DAY / f"{NAME}.zst")
    assert f"{where}: decompressed log exceeds 300000 bytes" in failed.value.message
    roomy = CodexStore(tmp_path, max_bytes=310_000)
    assert shown(roomy.transcript(THREAD)) == [*FIXED, ("assistant", "x" * 150_000)]


def test_the_index_picks_up_a_compressed_rollout(tmp_path: Path) -> None:
    """The index lists and searches a compressed rollout, and follows Codex compressing a
    plain one (the plain file goes, the compressed one comes)."""
    home = tmp_path / "codex"
    write(home, {f"{DAY}/{NAME}": ASKED})
    index = SessionIndex(CodexStore(home), tmp_path / "i.sqlite")
    try:
        index.refresh()
        assert [h.id for h in index.headers()] == [THREAD]
        (home / DAY / f"{NAME}.zst").write_bytes(compressed(ASKED + rollout(*said("user", "zeta"))))
        (home / DAY / NAME).unlink()
        index.refresh()
        assert [h.id for h in index.headers()] == [THREAD]
        assert [hit.session_id for hit in index.search("zeta")] == [THREAD]
        assert shown(index.transcript(THREAD))[-1] == ("user", "zeta")
    finally:
        index.close()


def test_a_compressed_rollout_is_listed_holding_a_piece_of_it_not_all(tmp_path: Path) -> None:
    """The listing reads a rollout's head: a compressed one was read whole (up to
    ``max_bytes``) for it. It is now decompressed from its file as far as the head goes,
    after its frames were located a piece at a time, so the memory the listing takes is a
    piece's, not the file's, and it lists the thread as the plain rollout lists it."""
    filler = [
        line("response_item", copy("assistant", random.Random(n).randbytes(60_000).hex()))
        for n in range(100)
    ]
    text = ASKED + rollout(*filler)
    data = compressed(text)
    assert len(data) > 6_000_000
    plain = write(tmp_path / "plain", {f"{DAY}/{NAME}": text})
    packed = write(tmp_path / "packed", {f"{DAY}/{NAME}.zst": data})
    tracemalloc.start()
    try:
        headers = packed.headers()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (
        [(h.id, h.cwd) for h in headers]
        == [(THREAD, "/w")]
        == [(h.id, h.cwd) for h in plain.headers()]
    )
    assert packed.problems() == plain.problems() == []
    assert packed.title(THREAD) == plain.title(THREAD) == "fix the build"
    assert peak < 3 << 20


def test_a_compressed_rollout_truncated_while_it_is_listed_is_a_problem_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Truncated once its frames are located, before its text is decompressed: the listing
    says the file changed, naming it, and lists nothing of it (never a signal, never part of
    the rollout taken for all of it)."""
    path = tmp_path / DAY / f"{NAME}.zst"
    store = write(tmp_path, {f"{DAY}/{NAME}.zst": compressed(ASKED * 40)})
    find = zstdfile.find_frames

    def truncated_after(pieces: Any, first_only: bool = False) -> Any:
        found = find(pieces, first_only)
        os.truncate(path, 10)
        return found

    monkeypatch.setattr(zstdfile, "find_frames", truncated_after)
    assert store.headers() == []
    assert [(p.path, p.message) for p in store.problems()] == [
        (str(path), "the file changed while it was read: it is shorter now")
    ]
