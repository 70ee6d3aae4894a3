"""Fuzzing the read path with damaged logs on disk: answers, never crashes.

Every property writes a store of logs damaged by :mod:`sessionref.testing.mutations` (plain and
zstd) to a fresh directory and reads it through a :class:`DirectoryStore`, the resolver or the
command line. Whatever the damage, the library answers with a context or a
:class:`SessionReferenceError` (for a damaged referenced log: ``READ_FAILED`` or
``BUDGET_EXCEEDED``), and the command line prints either its output or one ``CODE: message``
line on stderr with exit status 1 — never a traceback.

Examples per property: ``SESSIONREF_FUZZ_EXAMPLES`` when it is set (``tox -e fuzz`` and
``.ci/run``: 2,000, with a random seed, in ten shards), else the profile's share of 60
(``tests/conftest.py``), derandomized so the normal suite is repeatable. The test that starts a
process per example runs a tenth of that.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionref import DirectoryStore, SessionReferenceResolver, Target
from sessionref.cli import main
from sessionref.codecs import tag_safe_json
from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.errors import BUDGET_EXCEEDED, ERROR_CODES, READ_FAILED, SessionReferenceError
from sessionref.log.records import DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_LINE_BYTES
from sessionref.pipeline.escape_and_serialize import PROMPT_PREFIX, PROMPT_SUFFIX
from sessionref.testing import (
    LogRecords,
    MutatedLog,
    mutated_logs,
    session_logs,
    session_stores,
    write_mutated_store,
    write_session_store,
)
from sessionref.testing.mutations import frame_lines, log_lines, mutate_lines
from sessionref.types import ContextMessage
from tests.conftest import fuzz_examples, fuzz_settings

T = TypeVar("T")

EXAMPLES = fuzz_examples(60)
SUBPROCESS_EXAMPLES = fuzz_settings(max(5, EXAMPLES // 10)).max_examples
"""Per shard: a tenth of the others' count in all."""

fuzz = fuzz_settings(EXAMPLES)

TARGET = Target("\x00fuzz-target-outside-every-store", "/work/project")
LINE_LIMITS = st.sampled_from([DEFAULT_MAX_LINE_BYTES, 1 << 20])
SIZE_LIMITS = st.sampled_from([DEFAULT_MAX_DECOMPRESSED_BYTES, 3 << 20])
BUDGETS = st.sampled_from([65536, 65536, 2048, 300])
ERROR_LINE = re.compile(rb"\A(SESSION_REFERENCE_[A-Z_]+): [^\r\n]*\n\Z")
NOTE_LINE = re.compile(rb"\A(note: [^\r\n]*|\(no sessions[^\r\n]*\))\n\Z")
"""What a command that succeeded may say on stderr: logs passed over, an empty listing."""

damaged = mutated_logs(session_logs(max_turns=2), max_mutations=3)
intact = session_stores(max_sessions=2, max_turns=1)


class Store:
    """A fresh store directory for one example, removed afterwards."""

    def __init__(self, scratch: Path) -> None:
        self._dir = tempfile.TemporaryDirectory(dir=scratch)
        self.root = Path(self._dir.name)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self._dir.cleanup()


def store_of(
    scratch: Path, mutated: list[MutatedLog], others: list[LogRecords], compress: bool
) -> Store:
    """A store with the damaged logs and intact others whose ids differ from theirs."""
    store = Store(scratch)
    write_mutated_store(store.root, mutated)
    taken = {m.session_id for m in mutated}
    write_session_store(
        store.root, [log for log in others if log["header"]["id"] not in taken], compress=compress
    )
    return store


def outcome(call: Callable[[], T]) -> tuple[str, T | str]:
    """``("ok", result)`` or ``(code, message)``; any other exception propagates and fails."""
    try:
        return "ok", call()
    except SessionReferenceError as exc:
        assert exc.code in ERROR_CODES
        return exc.code, exc.message


def check_context(context: ContextMessage, ids: list[str], max_bytes: int) -> None:
    """A context message as docs/snapshot.md §Context message describes it,
    one data object per referenced id."""
    prompt = context.prompt
    assert prompt.startswith(PROMPT_PREFIX) and prompt.endswith(PROMPT_SUFFIX)
    body = prompt[len(PROMPT_PREFIX) : -len(PROMPT_SUFFIX)]
    assert "<" not in body
    objects = json.loads(body)
    assert [data["sessionId"] for data in objects] == ids
    for data, stats in zip(objects, context.source.references, strict=True):
        assert list(data) == ["sessionId", "label", "cwd", "capturedThroughSeq", "conversation"]
        assert all(item["role"] in ("user", "assistant") for item in data["conversation"])
        assert stats.session_id == data["sessionId"]
        assert stats.captured_through_seq == data["capturedThroughSeq"]
        assert stats.retained_messages == len(data["conversation"])
        assert stats.original_messages == stats.retained_messages + stats.omitted_messages
        assert len(tag_safe_json(data)) <= max_bytes
    assert [stats.input_index for stats in context.source.references] == list(range(len(ids)))


def check_error_output(status: int, out: bytes, err: bytes, codes: set[str]) -> None:
    """Exit 0 with at most notes on stderr, or exit 1, no stdout and one ``CODE: message`` line."""
    if status == 0:
        assert all(NOTE_LINE.match(line) for line in err.splitlines(keepends=True)), err
        return
    assert status == 1, (status, err)
    assert out == b""
    found = ERROR_LINE.match(err)
    assert found is not None, f"not one CODE: message line: {err!r}"
    assert found.group(1).decode() in codes, err


def pristine(log: LogRecords) -> bytes:
    return b"".join(line + b"\n" for line in log_lines(log))


@fuzz
@given(
    damaged,
    intact,
    st.booleans(),
    BUDGETS,
    LINE_LIMITS,
    SIZE_LIMITS,
)
def test_a_damaged_log_gives_a_context_or_a_read_failure(
    scratch: Path,
    mutated: MutatedLog,
    others: list[LogRecords],
    with_another: bool,
    budget: int,
    max_line_bytes: int,
    max_bytes: int,
) -> None:
    with store_of(scratch, [mutated], others, mutated.compress) as store:
        directory = DirectoryStore(store.root, max_line_bytes=max_line_bytes, max_bytes=max_bytes)
        resolver = SessionReferenceResolver(directory, max_reference_bytes=budget)
        ids = [mutated.session_id]
        ids += [log["header"]["id"] for log in others if log["header"]["id"] != ids[0]][
            : int(with_another)
        ]
        references = [{"sessionId": session_id} for session_id in ids]
        code, result = outcome(lambda: resolver.snapshot(TARGET, references))
        if code == "ok":
            assert isinstance(result, ContextMessage)
            check_context(result, ids, budget)
        else:
            assert code in (READ_FAILED, BUDGET_EXCEEDED), (code, result)
            assert code != READ_FAILED or str(result).startswith(
                "failed to read referenced session: "
            )
        if not mutated.compress and mutated.data == pristine(mutated.log) and budget == 65536:
            assert code == "ok", result
        content = [{"type": "text", "text": "see @ref"}]
        again = outcome(lambda: resolver.prepare(TARGET, content, references))
        assert again[0] == code


@fuzz
@given(session_logs(max_turns=2), st.booleans(), st.data())
def test_plain_and_zstd_logs_with_the_same_lines_read_the_same(
    scratch: Path, log: LogRecords, damaged: bool, data: st.DataObject
) -> None:
    """The harness reads a plain log and a zstd log of the same lines alike, except where the
    zstd layout is stricter (docs/format.md §Recovery; FINDINGS D.3): a damaged line in a
    complete frame makes the zstd log unreadable where the plain log ends its prefix there (or
    fails as well), and a header frame holding more than the header line keeps the zstd log out
    of the listing. So undamaged lines in frames after the header's read the same; otherwise a
    zstd log reads as the plain one or fails, never as something else."""
    lines = log_lines(log)
    steps: tuple[str, ...] = ()
    if damaged:
        lines, steps = data.draw(mutate_lines(lines), label="lines")
    frames, layout = data.draw(frame_lines(lines), label="frames")
    seen = []
    for compress, content in (
        (False, b"".join(x + b"\n" for x in lines)),
        (True, b"".join(frames)),
    ):
        with Store(scratch) as store:
            MutatedLog(log, compress, content, steps).write(store.root)
            seen.append(read_everything(store.root))
    header_shares_a_frame = any(step.startswith("lines 1..") for step in layout)
    if not damaged and not header_shares_a_frame:
        assert seen[0] == seen[1], layout
        return
    plain, zstd = (
        {sid: (label, read) for (sid, label), read in zip(*got, strict=True)} for got in seen
    )
    assert zstd.keys() <= plain.keys(), (steps, layout)
    for session_id, (label, read) in zstd.items():
        assert read == READ_FAILED or (label, read) == plain[session_id], (steps, layout)


@fuzz
@given(session_logs(max_turns=2), st.data())
def test_the_fallback_decoder_gives_the_same_answers(
    scratch: Path, log: LogRecords, data: st.DataObject
) -> None:
    """A line msgspec refuses (an integral float where an integer is expected) is decoded alone
    by the fallback decoder; the answers (listing, prompts, error codes) must not change.

    Huge texts here are 64 KiB (past a decode window), not also 1 MiB: every line of the
    second variant is decoded alone, and a 1 MiB text of ``a\n`` is half a million lines,
    read four times (27 s of the suite's 3.5 minutes, whenever Hypothesis drew it)."""
    lines, steps = data.draw(mutate_lines(log_lines(log), huge_sizes=[1 << 16]), label="lines")
    seen = []
    for variant in (lines, [through_fallback(line) for line in lines]):
        with Store(scratch) as store:
            MutatedLog(log, False, b"".join(x + b"\n" for x in variant), steps).write(store.root)
            seen.append(read_everything(store.root))
    assert seen[0] == seen[1], steps


def through_fallback(line: bytes) -> bytes:
    """The same record with its seq written as an integral float (``"seq":3.0``): the harness
    reads it as 3, msgspec refuses it for an integer field. (An extra key, as this test used to
    add, is no longer ignored: the harness refuses an event envelope with one.)"""
    return re.sub(rb'^(\{"type":"[^"]*","seq0?":)(\d+)', rb"\g<1>\g<2>.0", line, count=1)


def read_everything(root: Path) -> tuple[object, ...]:
    """The listing, then every listed session's snapshot (prompt or error code)."""
    resolver = SessionReferenceResolver(DirectoryStore(root))
    listed = resolver.list_candidates(TARGET, "", 10)
    snapshots = []
    for candidate in listed:
        references = [{"sessionId": candidate.session_id}]
        code, result = outcome(functools.partial(resolver.snapshot, TARGET, references))
        snapshots.append(result.prompt if isinstance(result, ContextMessage) else code)
    return [(c.session_id, c.label) for c in listed], snapshots


@fuzz
@given(
    st.lists(
        mutated_logs(session_logs(max_turns=1), min_mutations=0, max_mutations=2),
        min_size=1,
        max_size=4,
        unique_by=lambda m: m.session_id,
    ),
    st.sampled_from(["", "a", "w", "é", "\ud800", "title"]),
    st.integers(1, 6),
)
def test_listing_a_damaged_store_never_fails(
    scratch: Path, mutated: list[MutatedLog], query: str, limit: int
) -> None:
    with store_of(scratch, mutated, [], False) as store:
        directory = DirectoryStore(store.root)
        resolver = SessionReferenceResolver(directory)
        found = resolver.list_candidates(TARGET, query, limit)
        mentions = resolver.mention_candidates(TARGET, query, limit)
        readable = {header.id for header in directory.headers()}
        assert len(found) <= limit
        assert [c.session_id for c in found] == [m.session_id for m in mentions]
        assert len({c.session_id for c in found}) == len(found)
        assert {c.session_id for c in found} <= readable
        for problem in directory.problems():
            assert problem.path.startswith(str(store.root)) and problem.message
        if not query and len(readable) <= limit:
            assert {c.session_id for c in found} == readable


@fuzz
@given(damaged, intact, st.sampled_from(["snapshot", "snapshot-json", "candidates"]))
def test_the_command_line_prints_one_error_line_never_a_traceback(
    scratch: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
    mutated: MutatedLog,
    others: list[LogRecords],
    command: str,
) -> None:
    with store_of(scratch, [mutated], others, mutated.compress) as store:
        capsysbinary.readouterr()
        uri = encode_session_reference_uri(mutated.session_id)
        if command == "candidates":
            argv = ["candidates", "--root", str(store.root), "--query", "e", "--json"]
            codes: set[str] = set()
        else:
            argv = ["snapshot", "--root", str(store.root), uri]
            argv += ["--json"] if command == "snapshot-json" else []
            codes = {READ_FAILED, BUDGET_EXCEEDED}
        status = main(argv)
        out, err = capsysbinary.readouterr()
        check_error_output(status, out, err, codes)
        if status == 0 and command == "snapshot":
            assert out.decode("utf-8").startswith(PROMPT_PREFIX)
        elif status == 0:
            json.loads(out)


def run_cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sessionref", *args],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "ascii", "LC_ALL": "C"},
        timeout=60,
    )


@settings(fuzz, max_examples=SUBPROCESS_EXAMPLES)
@given(damaged)
def test_the_command_line_in_a_process(scratch: Path, mutated: MutatedLog) -> None:
    with store_of(scratch, [mutated], [], mutated.compress) as store:
        uri = encode_session_reference_uri(mutated.session_id)
        done = run_cli("snapshot", "--root", str(store.root), uri)
        check_error_output(done.returncode, done.stdout, done.stderr, {READ_FAILED})
        assert b"Traceback" not in done.stderr
