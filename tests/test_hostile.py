"""Hostile logs and stores: every broken-log kind, repeatable reads, logs growing while read, paths.

(a) Each kind of broken log makes ``sessionref snapshot`` (a real process) print exactly one line
``SESSION_REFERENCE_READ_FAILED: cannot read session "s" from FILE: …`` and exit 1. Limits are
tested with small limits (``--max-line-bytes``, ``--max-log-bytes``), not with huge logs.
(b) Reading the same store twice, or the same logs plain, zstd and from memory, gives the same
context. (c) A log appended to while it is read only ever shows a prefix of its final form.
(d) Session ids never become paths; a log whose header names another session is reported.
"""

from __future__ import annotations

import contextlib
import itertools
import random
import re
import shutil
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionref import DirectoryStore, MemoryStore, SessionReferenceResolver, Target
from sessionref.codecs.jsjson import js_json
from sessionref.errors import READ_FAILED, SessionLogError, SessionReferenceError
from sessionref.log.store import SessionNotFound
from sessionref.log.writer import log_path
from sessionref.testing import LogRecords, session_logs, session_stores, write_session_store
from sessionref.testing.mutations import deep_json, log_lines, zstd_bomb
from sessionref.types import ContextMessage
from tests.conftest import CACHE, examples
from tests.logs import Event, answer, assistant, header, other, replace, tool_result, user

READ_FAILED_LINE = b"SESSION_REFERENCE_READ_FAILED: "
LINE_LIMIT = 1 << 20
"""The ``--max-line-bytes`` every broken-log case runs with: far above the deep-nesting lines
(so they fail as nesting), far below the default 64 MiB (so no test writes such a log)."""
TARGET = Target("\x00hostile-target", "/w")

Lines = list[bytes]


def events() -> list[Event]:
    """A small valid conversation: prompt, streamed answer, tool result, title, prompt."""
    packed: Event = {
        "type": "text-chunks",
        "seq0": 3,
        "time0": 3,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["Hel", "lo"]},
    }
    return [
        other(0),
        user(1, "first question"),
        other(2, "step/start"),
        packed,
        assistant(5, "Hello", sourceEventSeqs=[3, 4]),
        tool_result(6, "tool output"),
        other(
            7,
            "session/title",
            data={"title": "a title", "messageSeqs": [], "source": {"kind": "user"}},
        ),
        user(8, "second question"),
        other(9, "turn/end", data={"turn": 1, "reason": {"kind": "completed"}}),
    ]


def good_log(session_id: str = "s") -> LogRecords:
    return {"header": header(session_id), "events": events()}


def good_lines() -> Lines:
    return log_lines(good_log())


def record(event: Event) -> bytes:
    return log_lines({"header": header(), "events": [event]})[1]


def with_record(event: Event) -> Callable[[Lines], Lines]:
    return lambda lines: [*lines, record(event)]


def replaced(index: int, event: Event) -> Callable[[Lines], Lines]:
    def change(lines: Lines) -> Lines:
        lines = list(lines)
        lines[index] = record(event)
        return lines

    return change


def _swap(lines: Lines) -> Lines:
    lines = list(lines)
    lines[2], lines[3] = lines[3], lines[2]
    return lines


pruned_too_much = tool_result(10, "[pruned]", op=replace(6, 6), sourceEventSeqs=[6])
pruned_too_much["data"]["message"]["content"][0]["toolCallId"] = "another-call"
cesu_text = user(1, "\ud800 then a raw surrogate: XSURROGATE")

# Line-level damage: each kind works on the lines of good_log() (line 0 is the header).
LINE_KINDS: dict[str, Callable[[Lines], Lines]] = {
    "torn header only": lambda lines: [lines[0][:40]],
    "garbage line in the middle": lambda lines: [*lines[:3], b"{not json", *lines[3:]],
    "seq gap": lambda lines: [*lines[:4], *lines[5:]],
    "duplicated line": lambda lines: [*lines[:3], lines[2], *lines[3:]],
    "reordered lines": _swap,
    "surfaceOp on an event off the surface": replaced(1, other(0, surfaceOp="append")),
    "surface event without surfaceOp": replaced(2, user(1, "q", op=None)),
    "unknown surfaceOp": replaced(2, user(1, "q", op="prepend")),
    "replace of a range not on the surface": with_record(
        user(10, "summary", kind="compact", op=replace(0, 1), sourceEventSeqs=[0, 1])
    ),
    "replace that does not list what it replaces": with_record(
        user(10, "summary", kind="compact", op=replace(1, 5), sourceEventSeqs=[1])
    ),
    "prune that changes more than content": with_record(pruned_too_much),
    "line over the length limit": with_record(other(10, data={"pad": "x" * (LINE_LIMIT + 1)})),
    "unbalanced nesting": lambda lines: [*lines[:3], deep_json(100_000, "open"), *lines[3:]],
    "byte order mark before a record": lambda lines: [
        *lines[:2],
        b"\xef\xbb\xbf" + lines[2],
        *lines[3:],
    ],
    "UTF-16 record": lambda lines: [
        *lines[:2],
        lines[2].decode("utf-8").encode("utf-16-le"),
        *lines[3:],
    ],
}


def _cesu(lines: Lines) -> Lines:
    return [line.replace(b"XSURROGATE", b"\xed\xa0\x80") for line in lines]


def plain_file(lines: Lines) -> bytes:
    return _join(_cesu(lines))


def _join(lines: Lines) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def zstd_file(lines: Lines) -> bytes:
    compressor = zstandard.ZstdCompressor()
    return b"".join(compressor.compress(line + b"\n") for line in _cesu(lines))


def _damaged_frame(lines: Lines) -> bytes:
    frames = [zstandard.ZstdCompressor().compress(line + b"\n") for line in lines]
    middle = frames[3]
    frames[3] = middle[:4] + bytes(b ^ 0xFF for b in middle[4:10]) + middle[10:]
    return b"".join(frames)


def _torn_header_file(lines: Lines, compress: bool) -> bytes:
    torn = lines[0][:40]
    return zstandard.ZstdCompressor().compress(torn) if compress else torn


# File-level damage: (plain bytes or None, zstd bytes or None) from the good lines.
FILE_KINDS: dict[str, Callable[[Lines], tuple[bytes | None, bytes | None]]] = {
    "empty file": lambda lines: (b"", b""),
    "torn header without newline": lambda lines: (
        _torn_header_file(lines, False),
        _torn_header_file(lines, True),
    ),
    "damaged complete zstd frame": lambda lines: (None, _damaged_frame(lines)),
    "zstd frame cut in the middle of the file": lambda lines: (
        None,
        zstd_file(lines[:3])[:-3] + zstd_file(lines[3:]),
    ),
    "garbage after a complete zstd frame": lambda lines: (
        None,
        zstd_file(lines[:3]) + b"\x00garbage" + zstd_file(lines[3:]),
    ),
}

# Over the store's size limit, set small with --max-log-bytes.
BOMB_LIMIT = 1 << 16
LIMIT_KINDS: dict[str, tuple[bytes | None, bytes | None]] = {
    "zstd bomb over the size limit": (
        None,
        zstd_file(good_lines()) + zstd_bomb(1 << 20, seq=10),
    ),
    "plain log over the size limit": (
        plain_file([*good_lines(), record(other(10, data={"pad": "x" * BOMB_LIMIT}))]),
        None,
    ),
}


def run_cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sessionref", *args],
        capture_output=True,
        env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C", "PATH": "", "XDG_CACHE_HOME": CACHE},
        timeout=120,
    )


def write_log(root: Path, data: bytes, compress: bool, session_id: str = "s") -> Path:
    path = root / "--w--" / session_id / ("session.jsonl.zstd" if compress else "session.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def assert_read_failed(done: subprocess.CompletedProcess[bytes], path: Path | None = None) -> None:
    """One ``READ_FAILED`` line naming, when given, the log file: the one that could not be
    read, or the one passed over when its header does not read."""
    assert done.returncode == 1, done.stderr
    assert done.stdout == b""
    assert done.stderr.startswith(READ_FAILED_LINE), done.stderr
    if path is not None:
        assert done.stderr.startswith(
            (
                READ_FAILED_LINE + f'cannot read session "s" from {path}: '.encode(),
                READ_FAILED_LINE
                + f'session "s" not found in --root {path.parents[2]}; '
                f"its log {path} was passed over: ".encode(),
            )
        ), done.stderr
    assert done.stderr.count(b"\n") == 1 and done.stderr.endswith(b"\n"), done.stderr
    assert b"\r" not in done.stderr


FORMATS = pytest.mark.parametrize("compress", [False, True], ids=["plain", "zstd"])


def test_the_good_log_reads_in_both_formats(tmp_path: Path) -> None:
    for compress, data in ((False, plain_file(good_lines())), (True, zstd_file(good_lines()))):
        write_log(tmp_path / str(compress), data, compress)
        done = run_cli("snapshot", "--root", str(tmp_path / str(compress)), "s")
        assert done.returncode == 0, done.stderr
        assert b"second question" in done.stdout


@FORMATS
@pytest.mark.parametrize("kind", list(LINE_KINDS))
def test_a_broken_log_is_one_read_failed_line(tmp_path: Path, kind: str, compress: bool) -> None:
    lines = LINE_KINDS[kind](good_lines())
    path = write_log(tmp_path, zstd_file(lines) if compress else plain_file(lines), compress)
    limit = ("--max-line-bytes", str(LINE_LIMIT))
    assert_read_failed(run_cli("snapshot", "--root", str(tmp_path), *limit, "s"), path)


def applicable(kinds: dict[str, tuple[bytes | None, bytes | None]]) -> list[Any]:
    """(kind, compress) for every damage that exists in that format (zstd frames only in zstd)."""
    return [
        pytest.param(kind, compress, id=f"{kind}-{'zstd' if compress else 'plain'}")
        for kind, variants in kinds.items()
        for compress in (False, True)
        if variants[compress]
    ]


FILE_DAMAGE = {kind: make(good_lines()) for kind, make in FILE_KINDS.items()}


@pytest.mark.parametrize(("kind", "compress"), applicable(FILE_DAMAGE))
def test_a_broken_file_is_one_read_failed_line(tmp_path: Path, kind: str, compress: bool) -> None:
    data = FILE_DAMAGE[kind][compress]
    assert data is not None
    path = write_log(tmp_path, data, compress)
    assert_read_failed(run_cli("snapshot", "--root", str(tmp_path), "s"), path)


@pytest.mark.parametrize(("kind", "compress"), applicable(LIMIT_KINDS))
def test_a_log_over_the_store_limit_is_one_read_failed_line(
    tmp_path: Path, kind: str, compress: bool
) -> None:
    data = LIMIT_KINDS[kind][compress]
    assert data
    path = write_log(tmp_path, data, compress)
    done = run_cli("snapshot", "--root", str(tmp_path), "--max-log-bytes", str(BOMB_LIMIT), "s")
    assert_read_failed(done, path)
    assert f"exceeds {BOMB_LIMIT} bytes".encode() in done.stderr
    assert b"exceeds" not in run_cli("snapshot", "--root", str(tmp_path), "s").stderr


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zstd"])
def test_the_store_limits_hold_in_the_library(tmp_path: Path, compress: bool) -> None:
    write_log(tmp_path, zstd_file(good_lines()) if compress else plain_file(good_lines()), compress)
    store = DirectoryStore(tmp_path, max_bytes=200, max_line_bytes=100)
    with pytest.raises(SessionReferenceError) as caught:
        SessionReferenceResolver(store).snapshot(TARGET, [{"sessionId": "s"}])
    assert caught.value.code == READ_FAILED
    assert "exceeds 200 bytes" in caught.value.message or "longer than 100" in caught.value.message


def rle_blocks(count: int, last: bool) -> bytes:
    """``count`` run-length blocks of 128 KiB of ``a`` each: 4 bytes apiece, a zstd bomb."""
    block = (131072 << 3 | 2).to_bytes(3, "little") + b"a"
    final = (131072 << 3 | 3).to_bytes(3, "little") + b"a"
    return block * (count - 1) + (final if last else block)


BOMB_START = b"\x28\xb5\x2f\xfd\x00\x38"
"""A frame's start: its magic, then a header with no content size and a 128 KiB window."""


def peak_traced(call: Callable[[], Any]) -> int:
    """The most memory Python allocations held while ``call`` ran (its outcome ignored)."""
    tracemalloc.start()
    try:
        with contextlib.suppress(SessionReferenceError):
            call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_zstd_header_frame_bomb_is_refused_without_being_decompressed(tmp_path: Path) -> None:
    """A hostile trial: a header frame of 8 KiB (64 MiB of run-length blocks) was decompressed
    whole, unbounded by the line limit, on every listing: 64 KiB of it took 2 GB of memory."""
    write_log(tmp_path, zstd_file(good_lines()), compress=True)
    bomb = write_log(tmp_path, BOMB_START + rle_blocks(512, last=True), True, "bomb")
    store = DirectoryStore(tmp_path, max_line_bytes=1 << 20)
    assert peak_traced(store.headers) < 16 << 20
    assert [h.id for h in store.headers()] == ["s"]
    [problem] = store.problems()
    assert problem.path == str(bomb)
    assert problem.message.startswith("corrupt zstd log: first frame holds more than")
    assert problem.message.endswith(f"at most {1 << 20} bytes")  # the line limit, named


def test_a_torn_last_frame_bomb_is_refused_without_being_decompressed(tmp_path: Path) -> None:
    """The same for a torn last frame, which was decompressed whole before its size was
    compared with the log's limit."""
    path = write_log(tmp_path, zstd_file(good_lines()) + BOMB_START + rle_blocks(512, False), True)
    store = DirectoryStore(tmp_path, max_bytes=1 << 20)
    assert peak_traced(lambda: store.read("s")) < 16 << 20
    with pytest.raises(SessionLogError, match=f"^{re.escape(str(path))}: .*exceeds 1048576 bytes"):
        store.read("s")


@pytest.mark.parametrize(
    "hostile_type",
    ["user\nmessage", "x\r\nSESSION_REFERENCE_CANCELLED: forged", "a\u2028b"],
    ids=["newline", "forged line", "line separator"],
)
def test_an_error_echoing_a_hostile_record_type_stays_one_line(
    tmp_path: Path, hostile_type: str
) -> None:
    """A record type is echoed in some errors; a line break in it must not split the error."""
    lines = [*good_lines(), record({**user(10, "q"), "type": hostile_type})]
    write_log(tmp_path, plain_file(lines), False)
    assert_read_failed(run_cli("snapshot", "--root", str(tmp_path), "s"))
    # An event's seq0 is no seq: the line is a gap, which a later turn/end makes corrupt.
    packed = {"type": hostile_type, "seq0": 10, "data": {}}
    end = other(10, "turn/end", data={"turn": 2, "reason": {"kind": "completed"}})
    write_log(tmp_path, plain_file([*good_lines(), record(packed), record(end)]), False)
    assert_read_failed(run_cli("snapshot", "--root", str(tmp_path), "s"))


@pytest.mark.parametrize(
    ("call_id", "shown"),
    [
        # one run of printable ASCII: no part of it is shown (it could be a key cut short)
        ({"k": "v" * 5000}, "{… (5008 characters of JSON)"),
        # words: cut after the last whole one within 80 characters
        ({"note": "word " * 100}, f'{{"note":"{" ".join(["word"] * 14)}… (511 characters of JSON)'),
        (7, "7"),
    ],
)
def test_a_closer_refused_for_its_call_id_shows_no_more_than_80_characters_of_it(
    tmp_path: Path, call_id: object, shown: str
) -> None:
    """A pending tool call whose id is not a non-empty string fails the load (the harness's
    closer would carry it); the message named the id's whole JSON, a one-line message as long
    as the id. It shows at most 80 characters of it now, cut as a title is (never inside a
    run a secret detector must see whole), and how long it is."""
    call = {"type": "tool-call", "id": call_id, "name": "sh", "input": {}}
    turn = [other(0), other(1, "step/start", data={"turn": 1, "step": 1})]
    write_session_store(tmp_path, [{"header": header(), "events": [*turn, answer(2, "x", call)]}])
    with pytest.raises(SessionLogError) as failure:
        DirectoryStore(tmp_path).read("s")
    assert str(failure.value).endswith(
        f"the closing tool result at seq 3 (for the pending tool call {shown}) must have tool "
        "source: a call id that is a non-empty string"
    )


READABLE_KINDS: dict[str, Callable[[Lines], Lines]] = {
    "invalid UTF-8 in a text": lambda lines: [
        *lines[:2],
        lines[2].replace(b"first question", b"first \xff question"),
        *lines[3:],
    ],
    "UTF-8-encoded surrogate in a line with an escape": replaced(2, cesu_text),
}
"""Lines the harness reads with U+FFFD for each invalid UTF-8 sequence (FINDINGS A.2)."""


@FORMATS
@pytest.mark.parametrize("kind", list(READABLE_KINDS))
def test_invalid_utf8_reads_as_replacement_characters(
    tmp_path: Path, kind: str, compress: bool
) -> None:
    lines = READABLE_KINDS[kind](good_lines())
    write_log(tmp_path, zstd_file(lines) if compress else plain_file(lines), compress)
    context = SessionReferenceResolver(DirectoryStore(tmp_path)).snapshot(
        TARGET, [{"sessionId": "s"}]
    )
    assert context is not None and "\ufffd" in context.prompt


@pytest.mark.parametrize(
    "bad_id",
    [b'"s\xff"', b'"s\xed\xa0\x80"', b'"s\xed\xa0\x80\\ud800"'],
    ids=["invalid byte", "encoded surrogate", "encoded surrogate next to an escape"],
)
def test_a_header_id_that_is_not_utf8_no_longer_names_its_directory(
    tmp_path: Path, bad_id: bytes
) -> None:
    """The harness reads the id with U+FFFD, so it no longer names the directory ``s``: a
    whole-root refusal, which sessionref reports and does not serve."""
    lines = good_lines()
    lines[0] = lines[0].replace(b'"s"', bad_id)
    write_log(tmp_path, plain_file(lines), False)
    store = DirectoryStore(tmp_path)
    assert store.headers() == []
    (problem,) = store.problems()
    assert "\ufffd" in problem.message and "identify --w--/" in problem.message


def through_fallback(line: bytes) -> bytes:
    """The same record with its seq written as an integral float (``"seq":3.0``), which the
    harness reads as 3 and msgspec refuses for an integer. (An extra key, as this helper used
    to add, is no longer ignored: the harness refuses an envelope with one.)"""
    return re.sub(rb'^(\{"type":"[^"]*","seq0?":)(\d+)', rb"\g<1>\g<2>.0", line, count=1)


@pytest.mark.parametrize(
    ("index", "before", "after"),
    [
        (4, b'"texts":["Hel","lo"]', b'"texts":[1,"lo"]'),
        (4, b'"texts":["Hel","lo"]', b'"texts":[null,{}]'),
        (1, b'{"type":"turn/start"', b'{"\xff":0,"type":"turn/start"'),
        (1, b'"data":{"turn":1}', b'"data":{"turn":1,"x":"\xed\xa0\x80"}'),
        (0, b'"createdAt":1', b'"createdAt":1,"origin":"\xc0\xaf"'),
    ],
    ids=[
        "packed member not a string",
        "packed members of other types",
        "invalid UTF-8 in an ignored key",
        "encoded surrogate in ignored data",
        "invalid UTF-8 in an ignored header field",
    ],
)
def test_the_decoder_a_line_goes_through_does_not_change_the_answer(
    tmp_path: Path, index: int, before: bytes, after: bytes
) -> None:
    """msgspec reads most lines; a line with a lone-surrogate escape goes to the standard
    library instead. An escape in a field nobody reads must not turn a read into a failure
    or the other way round."""
    lines = good_lines()
    assert before in lines[index]
    lines[index] = lines[index].replace(before, after)
    answers: list[subprocess.CompletedProcess[bytes]] = []
    for variant in (lines, [*lines[:index], through_fallback(lines[index]), *lines[index + 1 :]]):
        root = tmp_path / str(len(answers))
        write_log(root, _join(variant), False)
        answers.append(run_cli("snapshot", "--root", str(root), "s"))
    assert [a.returncode for a in answers] == [answers[0].returncode] * 2, [
        a.stderr for a in answers
    ]
    assert answers[0].stdout == answers[1].stdout


# (b) Repeatable reads.

repeatable = settings(
    max_examples=examples(25),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def without_id(context: ContextMessage | None) -> ContextMessage | None:
    return None if context is None else msgspec.structs.replace(context, id="")


def outcome(resolver: SessionReferenceResolver, session_id: str) -> object:
    try:
        return without_id(resolver.snapshot(TARGET, [{"sessionId": session_id}]))
    except SessionReferenceError as exc:
        return exc.code


@repeatable
@given(session_stores(max_sessions=3, max_turns=3), st.booleans())
def test_the_same_store_read_twice_gives_the_same_contexts(
    tmp_path_factory: pytest.TempPathFactory, logs: list[LogRecords], compress: bool
) -> None:
    root = tmp_path_factory.mktemp("repeat")
    write_session_store(root, logs, compress=compress)
    memory = SessionReferenceResolver(MemoryStore(logs))
    first = SessionReferenceResolver(DirectoryStore(root))
    for log in logs:
        session_id = log["header"]["id"]
        once = outcome(first, session_id)
        assert isinstance(once, ContextMessage)
        assert once.prompt == first.snapshot(TARGET, [{"sessionId": session_id}]).prompt  # type: ignore[union-attr]
        assert outcome(first, session_id) == once
        assert outcome(SessionReferenceResolver(DirectoryStore(root)), session_id) == once
        assert outcome(memory, session_id) == once
    listing = first.list_candidates(TARGET)
    assert SessionReferenceResolver(DirectoryStore(root)).list_candidates(TARGET) == listing


# (c) A log appended to while it is read.

growing = settings(
    max_examples=examples(3),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def expected_contexts(log: LogRecords) -> dict[bytes, list[int]]:
    """The context of every prefix of the log (by record), mapped to the lengths of the
    prefixes that give it (several can: a cut turn's closers may make two prefixes read alike)."""
    found: dict[bytes, list[int]] = {}
    for size in range(len(log["events"]) + 1):
        prefix = {"header": log["header"], "events": log["events"][:size]}
        resolver = SessionReferenceResolver(MemoryStore([prefix]))
        context = resolver.snapshot(TARGET, [{"sessionId": log["header"]["id"]}], message_id="m")
        found.setdefault(js_json(context), []).append(size)
    return found


def earliest_at_least(sizes: list[int], floor: int) -> int | None:
    """The smallest of ``sizes`` not below ``floor``, if any.

    >>> earliest_at_least([2, 5, 9], 3), earliest_at_least([2], 3)
    (5, None)
    """
    return min((size for size in sizes if size >= floor), default=None)


def split_writes(chunks: list[bytes], rng: random.Random) -> list[bytes]:
    """Each appended line or frame in one, two or three writes, so readers meet torn tails."""
    writes: list[bytes] = []
    for chunk in chunks:
        count = min(len(chunk) - 1, rng.randint(0, 2))
        cuts = sorted(rng.sample(range(1, len(chunk)), k=count))
        bounds = [0, *cuts, len(chunk)]
        writes += [chunk[a:b] for a, b in itertools.pairwise(bounds)]
    return writes


@growing
@given(
    session_logs(min_turns=3, max_turns=4, allow_incomplete=False),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_a_log_read_while_it_grows_shows_only_prefixes(
    tmp_path_factory: pytest.TempPathFactory, log: LogRecords, compress: bool, seed: int
) -> None:
    root = tmp_path_factory.mktemp("growing")
    compressor = zstandard.ZstdCompressor()
    chunks = [compressor.compress(x + b"\n") if compress else x + b"\n" for x in log_lines(log)]
    path = log_path(root, log["header"], compress=compress)
    path.parent.mkdir(parents=True)
    path.write_bytes(chunks[0])
    session_id = log["header"]["id"]
    expected = expected_contexts(log)
    rng = random.Random(seed)
    writes = split_writes(chunks[1:], rng)
    pauses = [rng.choice([0, 0, 0.0005, 0.001]) for _ in writes]
    done = threading.Event()

    def writer() -> None:
        try:
            with path.open("ab") as out:
                for piece, pause in zip(writes, pauses, strict=True):
                    out.write(piece)
                    out.flush()
                    time.sleep(pause)
        finally:
            done.set()

    resolver = SessionReferenceResolver(DirectoryStore(root))
    seen: list[int] = []
    last = b""
    thread = threading.Thread(target=writer)
    thread.start()
    try:
        while True:
            finished = done.is_set()
            context = resolver.snapshot(TARGET, [{"sessionId": session_id}], message_id="m")
            last = js_json(context)
            assert last in expected, f"not the context of any prefix (reads so far: {seen})"
            size = earliest_at_least(expected[last], seen[-1] if seen else 0)
            assert size is not None, "a later read showed less of the log than an earlier one"
            seen.append(size)
            if finished:
                break
    finally:
        thread.join()
    assert len(log["events"]) in expected[last], "the read after the last write is not the log"


# (d) Paths.

ESCAPING_IDS = ["../../etc", "a/../../b", "..", ".", "../x", "/etc/passwd", "a/b", "~002E~002E"]


def titled(session_id: str, title: str, created_at: int = 1) -> LogRecords:
    log = good_log(session_id)
    log["header"]["createdAt"] = created_at
    log["events"][6]["data"]["title"] = title
    return log


@FORMATS
def test_ids_that_look_like_paths_never_become_paths(tmp_path: Path, compress: bool) -> None:
    root = tmp_path / "deep" / "root"
    decoy = {"../../etc": tmp_path / "deep" / "etc", "a/../../b": root / "b"}
    for session_id, directory in decoy.items():
        directory.mkdir(parents=True)
        (directory / "session.jsonl").write_bytes(
            plain_file(log_lines(titled(session_id, "decoy")))
        )
    root.mkdir(parents=True, exist_ok=True)
    store = DirectoryStore(root)
    assert store.headers() == []
    for session_id in ESCAPING_IDS:
        with pytest.raises(SessionNotFound):
            store.read(session_id)
    (bystander,) = write_session_store(root, [titled("bystander", "real")])
    done = run_cli("snapshot", "--root", str(root), "../../etc")
    assert_read_failed(done)
    # root/b/session.jsonl is a flat artifact: the real listing refuses the root for it
    # (FINDINGS D.3 `flat-artifact`; `real.mjs list` on this root), sessionref passes it over.
    flat = root / "b" / "session.jsonl"
    not_found = f'session "../../etc" not found in --root {root}; 1 log passed over'
    assert done.stderr == READ_FAILED_LINE + f"{not_found} (--verbose lists them)\n".encode()
    shutil.rmtree(bystander.parent)

    logs = [titled(sid, f"real {i}", created_at=i) for i, sid in enumerate(ESCAPING_IDS)]
    written = write_session_store(root, logs, compress=compress)
    for path in written:
        assert ".." not in path.relative_to(root).parts
        assert path.resolve().is_relative_to(root.resolve())
    store = DirectoryStore(root)
    assert sorted(h.id for h in store.headers()) == sorted(ESCAPING_IDS)
    assert [problem.path for problem in store.problems()] == [str(flat)]
    resolver = SessionReferenceResolver(store)
    labels = {c.session_id: c.label for c in resolver.list_candidates(TARGET)}
    assert labels == {sid: f"real {i}" for i, sid in enumerate(ESCAPING_IDS)}
    for session_id in ESCAPING_IDS:
        assert store.path_of(session_id).resolve().is_relative_to(root.resolve())
        context = resolver.snapshot(TARGET, [{"sessionId": session_id}])
        assert context is not None and "decoy" not in context.prompt


@FORMATS
def test_a_log_under_another_name_is_reported_and_not_served(
    tmp_path: Path, compress: bool
) -> None:
    """A header that does not name its directory makes the harness refuse the whole root
    (FINDINGS D.3); sessionref reports each such log and serves the others."""
    for stray in ("stray-1", "stray-2"):
        write_log(tmp_path, _file(titled("../../etc", stray), compress), compress, stray)
    write_log(tmp_path, _file(titled("plain-id", "at home", 2), compress), compress, "plain-id")
    store = DirectoryStore(tmp_path)
    assert [h.id for h in store.headers()] == ["plain-id"]
    problems = sorted(Path(p.path).parent.name for p in store.problems())
    assert problems == ["stray-1", "stray-2"]
    assert all("../../etc" in p.message for p in store.problems())
    resolver = SessionReferenceResolver(store)
    found = [(c.session_id, c.label) for c in resolver.list_candidates(TARGET)]
    assert found == [("plain-id", "at home")]
    with pytest.raises(SessionNotFound):
        store.path_of("../../etc")


def _file(log: LogRecords, compress: bool) -> bytes:
    return zstd_file(log_lines(log)) if compress else plain_file(log_lines(log))


def test_a_link_that_loops_beside_the_logs_is_passed_over_as_a_dangling_one(
    tmp_path: Path,
) -> None:
    """``<project>/x.jsonl`` linking to itself: asked whether it is a flat artifact (a file),
    ``DirEntry.is_file`` raised ELOOP out of the listing; it leads to no file, as a dangling
    link does not, and the listing serves the sessions beside it."""
    (written,) = write_session_store(tmp_path, [titled("s", "beside the loop")])
    project = written.parent.parent
    (project / "loop.jsonl").symlink_to("loop.jsonl")
    (project / "dangling.jsonl").symlink_to("nowhere.jsonl")
    store = DirectoryStore(tmp_path)
    assert [h.id for h in store.headers()] == ["s"]
    assert store.problems() == []
