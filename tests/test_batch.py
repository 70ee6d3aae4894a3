"""``sessionref batch`` and :func:`sessionref.batch.build_snapshots` on a DSH store (issue 5)."""

from __future__ import annotations

import fcntl
import io
import json
import os
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from sessionref.batch.core import (
    BatchResult,
    ResultLine,
    Snapshotter,
    context_id,
    listing_order,
    portable_store,
)
from sessionref.batch.local import build_result_lines, build_snapshots, ordered_window
from sessionref.cli import main
from sessionref.cli.batch import Tally, progress_bar
from sessionref.cli.batch_output import OutputFile
from sessionref.cli.demo import sample_root
from sessionref.cli.output_target import locate
from sessionref.codecs.jsjson import js_json
from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.errors import BUDGET_EXCEEDED, INVALID_CONFIG, READ_FAILED, SessionReferenceError
from sessionref.log.store import DirectoryStore, MemoryStore, SessionNotFound
from sessionref.log.writer import log_path
from sessionref.testing.store import LogRecords, write_session_store
from tests.logs import BytesPath, Event, assistant, header, replace, tool_result, turn_end, user
from tests.logs import title as titled

MAX_BYTES = 2048
SURROGATE_ID = "lone \ud800 id"
#: Sessions whose log breaks a rule of docs/format.md,
#: and the one whose title cannot fit ``MAX_BYTES``.
BROKEN = ("seq-gap", "garbage-line", "blank-line")
HUGE_TITLE = "huge-title"
#: Listing order: newest createdAt first, ties by id (case-insensitively).
LISTING = [
    "alpha",
    "beta",
    "Gamma",
    "long",
    SURROGATE_ID,
    "empty",
    "compacted",
    "torn-tail",
    "seq-gap",
    "garbage-line",
    "blank-line",
    HUGE_TITLE,
    "no-cwd",
    ".",
]
TITLES = {
    "alpha": "Alpha, renamed",
    "long": "A long one",
    SURROGATE_ID: "title \udc00 <b>",
    HUGE_TITLE: "T" * 3000,
}


def chat(*turns: str, title: str | None = None, first: int = 0) -> list[Event]:
    """Alternating user and assistant messages, then a title when given."""
    events: list[Event] = []
    for offset, body in enumerate(turns, first):
        events.append((user if offset % 2 == 0 else assistant)(offset, body))
    if title is not None:
        events.append(titled(first + len(turns), title))
    return events


def session(
    session_id: str, created_at: float, events: list[Event], cwd: str | None = "/w"
) -> LogRecords:
    """A log as :func:`write_session_store` takes it."""
    head = {key: value for key, value in header(session_id, 1, cwd).items() if key != "type"}
    return {"header": {**head, "createdAt": created_at}, "events": events}


def logs() -> list[LogRecords]:
    """The sessions of the store, all stored as ``session.jsonl``: the batch is not about mixing
    encodings (docs/format.md §Layout: a root that mixes them serves only the majority one)."""
    alpha = chat("hello", "hi there", title="Alpha")
    alpha += [titled(3, TITLES["alpha"])]
    long = chat(*(f"message {i} " + "x" * 400 for i in range(12)), title=TITLES["long"])
    compacted = [
        *chat("old question", "old answer"),
        user(2, "summary of the above", kind="compact", op=replace(0, 1), sourceEventSeqs=[0, 1]),
        *chat("new question", "new answer", first=3),
    ]
    seq_gap = [*chat("one", "two", "three"), turn_end(3)]
    del seq_gap[1]
    no_cwd = [user(0, "run it"), tool_result(1, "tool output"), assistant(2, "done")]
    surrogates = chat("<tag> \u2028 \ud83d", "ok", title=TITLES[SURROGATE_ID])
    return [
        session("alpha", 100, alpha, "/w/a"),
        session("beta", 100, chat("beta question", "beta answer")),
        session("Gamma", 100, chat("gamma question")),
        session("long", 90, long),
        session(SURROGATE_ID, 80, surrogates),
        session("empty", 70, []),
        session("compacted", 60, compacted),
        session("torn-tail", 50, chat("kept", "also kept")),
        session("seq-gap", 40, seq_gap),
        session("garbage-line", 30, [*chat("a", "b", "c"), turn_end(3)]),
        session("blank-line", 20, [*chat("x", "y", "z"), turn_end(3)]),
        session(HUGE_TITLE, 10, chat("short", title=TITLES[HUGE_TITLE])),
        session("no-cwd", 5, no_cwd, cwd=None),
        session(".", 1, chat("dot")),
    ]


def _path(root: Path, log: LogRecords) -> Path:
    return log_path(root, log["header"], compress=False)


def insert_line(path: Path, index: int, line: bytes) -> None:
    """Put ``line`` before line ``index`` of the log at ``path``."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*lines[:index], line, *lines[index:]]))


def write_store(root: Path) -> Path:
    """The test store: 14 listed sessions, 3 of them broken, plus one unlisted bad header."""
    stored = logs()
    write_session_store(root, stored)
    by_id = {log["header"]["id"]: log for log in stored}
    with _path(root, by_id["torn-tail"]).open("ab") as torn:
        torn.write(b'{"type":"user/message","seq":2,"da')
    # Damage before the last turn/end: the harness refuses the log (FINDINGS.md §B.9, §B.10).
    insert_line(_path(root, by_id["garbage-line"]), 2, b"not json\n")
    insert_line(_path(root, by_id["blank-line"]), 2, b"\n")
    unlisted = root / "--w--" / "bad-header" / "session.jsonl"
    unlisted.parent.mkdir(parents=True)
    unlisted.write_bytes(b"not a header\n")
    return root


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(tmp_path_factory.mktemp("store"))


def run_batch(root: Path, out: Path, *options: str) -> int:
    return main(["batch", "--root", str(root), "--out", str(out), *options])


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def expected_label(session_id: str, label: str) -> str:
    return TITLES.get(session_id, session_id) if label == "title" else session_id


def snapshot_cli(root: Path, session_id: str, label: str, capsys: Any) -> dict[str, Any]:
    """What ``sessionref snapshot --json`` answers for one session: the context or the error."""
    uri = encode_session_reference_uri(session_id)
    argv = ["snapshot", "--root", str(root), "--max-bytes", str(MAX_BYTES), "--json"]
    status = main([*argv, "--label-from", label, uri])
    captured = capsys.readouterr()
    if status == 0:
        return {"context": json.loads(captured.out)}
    code, message = captured.err.rstrip("\n").split(": ", 1)
    return {"error": {"code": code, "message": message}}


def in_cli_terms(api: str, cli: str) -> None:
    """The command line words an API error its own way, but says the same thing."""
    if api.startswith("failed to read referenced session: "):
        reason = api.removeprefix("failed to read referenced session: ")
        assert cli.startswith("cannot read session ")
        # the log file named once: the reader names it in front of the reason, as "from FILE"
        assert cli.endswith((" from " + reason, ": " + reason)), (cli, reason)
    else:
        assert api == "referenced session snapshot cannot fit the configured byte budget", api
        assert cli.startswith(f"--max-bytes {MAX_BYTES} is too small for session "), cli


def without_id(context: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in context.items() if key != "id"}


def test_listing_order_is_the_resolvers(store_root: Path) -> None:
    assert listing_order(DirectoryStore(store_root)) == LISTING


@pytest.mark.parametrize("label", ["title", "id"])
def test_each_line_is_what_snapshot_prints(
    store_root: Path, tmp_path: Path, label: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    assert run_batch(store_root, out, "--max-bytes", str(MAX_BYTES), "--label-from", label) == 1
    failures = len(BROKEN) + (label == "title")
    assert capsys.readouterr().err == (  # not a terminal: no progress bar, one summary line
        f"{len(LISTING)} sessions: {len(LISTING) - failures} written, {failures} failed → {out} "
        f'(failed: "seq-gap", "garbage-line", "blank-line"'
        f"{' and 1 more' if label == 'title' else ''})\n"
        "note: 1 log passed over (--verbose lists them)\n"
    )
    lines = read_lines(out)
    assert [line["sessionId"] for line in lines] == LISTING
    failed = {line["sessionId"] for line in lines if "error" in line}
    assert failed == {*BROKEN, *([HUGE_TITLE] if label == "title" else [])}
    for line in lines:
        session_id = line["sessionId"]
        expected = snapshot_cli(store_root, session_id, label, capsys)
        if "error" in line:
            assert set(line) == {"sessionId", "error"}
            assert line["error"]["code"] == expected["error"]["code"]
            in_cli_terms(line["error"]["message"], expected["error"]["message"])
            continue
        assert list(line) == ["sessionId", "label", "context"]
        assert line["label"] == expected_label(session_id, label)
        assert without_id(line["context"]) == without_id(expected["context"])
        assert line["context"]["id"] == context_id(session_id)


def test_error_codes(store_root: Path) -> None:
    store = DirectoryStore(store_root)
    results: dict[str, Any] = {
        r["sessionId"]: r
        for r in build_snapshots(store, max_reference_bytes=MAX_BYTES, label="title")
    }
    codes = {sid: r["error"]["code"] for sid, r in results.items() if "error" in r}
    assert codes == {**dict.fromkeys(BROKEN, READ_FAILED), HUGE_TITLE: BUDGET_EXCEEDED}
    [long] = results["long"]["context"]["source"]["references"]
    assert long["truncated"] and long["omittedMessages"] > 0
    [compacted] = results["compacted"]["context"]["source"]["references"]
    assert compacted["compacted"]


def test_workers_give_identical_lines(store_root: Path, tmp_path: Path) -> None:
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out-{workers}.jsonl"
        assert run_batch(store_root, out, "--workers", workers, "--max-bytes", str(MAX_BYTES)) == 1
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert len(outputs[0].splitlines()) == len(LISTING)


def test_library_pool_with_a_memory_store() -> None:
    logs = [session(f"s{i}", i, chat(f"question {i}", title=f"T{i}")) for i in range(5)]
    store = MemoryStore(logs)
    alone = list(build_snapshots(store))
    assert [r["sessionId"] for r in alone] == ["s4", "s3", "s2", "s1", "s0"]
    assert js_json(list(build_snapshots(store, workers=3))) == js_json(alone)


def test_build_snapshots_is_lazy_and_checks_options_at_once() -> None:
    class Exploding(MemoryStore):
        def headers(self) -> Any:
            raise AssertionError("listed too early")

    results = build_snapshots(Exploding([]))
    with pytest.raises(AssertionError, match="too early"):
        next(results)
    with pytest.raises(SessionReferenceError) as caught:
        build_snapshots(Exploding([]), workers=0)
    assert caught.value.code == INVALID_CONFIG


@pytest.mark.parametrize(
    ("option", "value", "wanted"),
    [
        ("workers", 0, "a positive safe integer"),
        ("workers", 2.5, "a positive safe integer"),
        ("max_reference_bytes", -1, "a positive safe integer"),
        ("label", "cwd", "one of title, id"),
        ("label", None, "one of title, id"),
    ],
)
def test_an_option_error_names_the_function_and_the_value(
    option: str, value: object, wanted: str
) -> None:
    """A newcomer's trial: ``workers must be a positive safe integer`` named neither the
    function given it nor the value, where ``SessionIndex`` says ``… not -1``."""
    for build in (build_snapshots, build_result_lines):
        with pytest.raises(SessionReferenceError) as raised:
            build(MemoryStore([]), **{option: value})
        expected = f"{build.__name__} {option} must be {wanted}, not {value!r}"
        assert (raised.value.code, raised.value.message) == (INVALID_CONFIG, expected)


def test_ordered_window_bounds_what_is_in_flight() -> None:
    in_flight = peak = 0

    def submit(item: int) -> Future[int]:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        future: Future[int] = Future()
        future.set_result(item * 10)
        return future

    def consume(results: Iterator[int]) -> Iterator[int]:
        nonlocal in_flight
        for result in results:
            in_flight -= 1
            yield result

    assert list(consume(ordered_window(submit, range(20), 3))) == [i * 10 for i in range(20)]
    assert peak == 3


def test_resume_completes_a_torn_file(store_root: Path, tmp_path: Path) -> None:
    full = tmp_path / "full.jsonl"
    assert run_batch(store_root, full) == 1
    lines = full.read_bytes().splitlines(keepends=True)
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"".join(lines[:5]) + lines[5][: len(lines[5]) // 2])
    assert run_batch(store_root, out, "--resume") == 1
    assert out.read_bytes() == full.read_bytes()
    assert run_batch(store_root, out, "--resume") == 1  # nothing to do; the file holds failures
    assert out.read_bytes() == full.read_bytes()


def test_resume_skips_ids_already_written(store_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    kept = b'{"sessionId":"long","label":"from before","context":{}}\n'
    out.write_bytes(kept)
    assert run_batch(store_root, out, "--resume") == 1
    data = out.read_bytes()
    assert data.startswith(kept)
    assert [line["sessionId"] for line in read_lines(out)] == [
        "long",
        *(session_id for session_id in LISTING if session_id != "long"),
    ]


def test_resume_with_only_good_sessions_left_exits_zero(store_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    failing = [*BROKEN, HUGE_TITLE]
    out.write_bytes(b"".join(js_json({"sessionId": s, "context": {}}) + b"\n" for s in failing))
    assert run_batch(store_root, out, "--resume") == 0
    assert len(read_lines(out)) == len(LISTING)


def error_line(session_id: str) -> bytes:
    return js_json({"sessionId": session_id, "error": {"code": "X", "message": "earlier"}}) + b"\n"


def test_retry_failed_replaces_each_failed_line_in_place(
    store_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The failed lines (real failures and two that failed "earlier") are snapshotted again,
    each new line where the old one was; every other line is kept byte for byte (one that
    differs from what a fresh run writes shows it), and the missing session comes last."""
    full = tmp_path / "full.jsonl"
    assert run_batch(store_root, full) == 1
    lines = full.read_bytes().splitlines(keepends=True)
    results = [json.loads(line) for line in lines]
    good = [i for i, result in enumerate(results[:-1]) if "error" not in result]
    faked, kept = good[:2], good[2]
    earlier = list(lines)
    for i in faked:
        earlier[i] = error_line(results[i]["sessionId"])
    kept_line = {"sessionId": results[kept]["sessionId"], "label": "from before", "context": {}}
    earlier[kept] = lines[kept] = js_json(kept_line) + b"\n"
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"".join(earlier[:-1]))
    capsys.readouterr()
    assert run_batch(store_root, out, "--resume", "--retry-failed") == 1  # BROKEN fail again
    assert out.read_bytes() == b"".join(lines)
    failures = sum("error" in result for result in results)
    retried = len(faked) + sum("error" in result for result in results[:-1])
    written = len(faked) + ("error" not in results[-1])
    summary = capsys.readouterr().err.splitlines()[0]
    assert summary.startswith(
        f"{len(lines)} sessions: {len(lines) - 1 - retried} already done, {retried} retried, "
        f"{written} written, {failures} failed → {out} (failed: "
    )
    assert "kept" not in summary


def test_retry_failed_keeps_the_failed_lines_of_other_stores(
    store_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = tmp_path / "full.jsonl"
    assert run_batch(store_root, full) == 1
    out = tmp_path / "out.jsonl"
    out.write_bytes(error_line("elsewhere") + full.read_bytes())
    capsys.readouterr()
    assert run_batch(store_root, out, "--resume", "--retry-failed") == 1
    assert out.read_bytes() == error_line("elsewhere") + full.read_bytes()
    assert (
        capsys.readouterr()
        .err.splitlines()[1]
        .endswith("; 1 failed line kept (their sessions are in no root read)")
    )


def test_an_interruption_while_the_kept_lines_are_copied_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out.jsonl"
    before = error_line("a") + b'{"sessionId":"b","label":"b","context":{}}\n' + error_line("c")
    out.write_bytes(before)
    copy = OutputFile._copy_old

    def interrupted_at_the_end(self: OutputFile, end: int) -> None:
        copy(self, end // 2 if end == len(before) else end)
        if end == len(before):
            raise KeyboardInterrupt

    monkeypatch.setattr(OutputFile, "_copy_old", interrupted_at_the_end)
    output = OutputFile(locate(str(out), "--out"), resume=True)
    assert output.retry({"a", "c"}) == ["a", "c"]
    with pytest.raises(KeyboardInterrupt), output:
        output.write(ResultLine("a", False, b'{"sessionId":"a","label":"a","context":{}}\n'))
    assert out.read_bytes() == before
    assert hidden_files(tmp_path) == []


def test_retry_failed_needs_resume(store_root: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_:
        run_batch(store_root, tmp_path / "out.jsonl", "--retry-failed")
    assert exit_.value.code == 2


LEFTOVER = ".out.jsonl.0123456789ab.tmp"
"""A temporary file as a killed ``batch --out out.jsonl`` leaves it."""


def hidden_files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.startswith("."))


def test_resume_takes_over_what_a_killed_batch_left(
    store_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = tmp_path / "full.jsonl"
    assert run_batch(store_root, full) == 1
    lines = full.read_bytes().splitlines(keepends=True)
    (tmp_path / LEFTOVER).write_bytes(b"".join(lines[:5]) + lines[5][:20])  # torn mid-line
    capsys.readouterr()
    out = tmp_path / "out.jsonl"
    assert run_batch(store_root, out, "--resume") == 1
    assert out.read_bytes() == full.read_bytes()
    assert hidden_files(tmp_path) == []
    note, summary, passed_over = capsys.readouterr().err.splitlines()
    assert note == f"note: resuming from the lines a killed batch left ({LEFTOVER})"
    assert summary.startswith(f"{len(lines)} sessions: 5 already done, ")
    assert passed_over == "note: 1 log passed over (--verbose lists them)"


@pytest.mark.parametrize("resume", [True, False])
def test_a_leftover_beside_an_output_is_removed(
    store_root: Path, tmp_path: Path, resume: bool
) -> None:
    """Never mistaken for output: the file ``--out`` names is what a batch resumes."""
    out = tmp_path / "out.jsonl"
    assert run_batch(store_root, out) == 1
    written = out.read_bytes()
    (tmp_path / LEFTOVER).write_bytes(b'{"sessionId":"elsewhere","context":{}}\n')
    assert run_batch(store_root, out, *(["--resume"] if resume else [])) == 1
    assert out.read_bytes() == written
    assert hidden_files(tmp_path) == []


BUSY = "another batch is writing it; run again once that one is done"


def test_a_running_batchs_temporary_file_is_left_alone(
    store_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A batch is running: the second one to the same file is refused, and touches nothing."""
    running = tmp_path / LEFTOVER
    out = tmp_path / "out.jsonl"
    with running.open("wb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # as the batch writing it holds it
        assert run_batch(store_root, out, "--resume") == 1
        assert hidden_files(tmp_path) == [LEFTOVER]
    assert capsys.readouterr().err == f"{INVALID_CONFIG}: --out {out}: {BUSY}\n"
    assert not out.exists()


@pytest.mark.parametrize(
    ("first", "lines_before"),
    [
        (["--resume"], 5),  # appends to the file itself
        (["--resume", "--retry-failed"], 10),  # a temporary file, over the file at the end
        ([], 1),  # a temporary file replaces an existing file
        ([], 0),  # a temporary file becomes the file: none yet
    ],
    ids=["resume", "retry-failed", "replace", "new"],
)
def test_a_second_batch_to_the_same_file_is_refused_while_one_runs(
    store_root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    first: list[str],
    lines_before: int,
) -> None:
    """Two ``--resume`` batches appending to one file at once each wrote the sessions the
    other wrote: the file held duplicates, kept by every later ``--resume``. The second
    batch, started while the first snapshots its sessions, is refused in one line."""
    full = tmp_path / "full.jsonl"
    assert run_batch(store_root, full) == 1
    out = tmp_path / "out.jsonl"
    if lines_before:
        out.write_bytes(b"".join(full.read_bytes().splitlines(keepends=True)[:lines_before]))
    capsys.readouterr()
    real = Snapshotter.__call__
    second: list[tuple[int, str]] = []

    def meanwhile(self: Snapshotter, session_id: str) -> BatchResult:
        if not second:
            second.append((-1, ""))  # the batch below snapshots too: it must not recurse
            status = run_batch(store_root, out, "--resume")
            second[0] = (status, capsys.readouterr().err)
        return real(self, session_id)

    monkeypatch.setattr(Snapshotter, "__call__", meanwhile)
    assert run_batch(store_root, out, *first) == 1
    assert second == [(1, f"{INVALID_CONFIG}: --out {out}: {BUSY}\n")]
    assert out.read_bytes() == full.read_bytes()
    assert hidden_files(tmp_path) == []


def test_a_batch_starting_as_another_renames_its_file_leaves_that_file_whole(
    store_root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A finishing batch closed its temporary file, releasing its lock, before renaming it
    over the file: a batch starting in between took it for a killed batch's leftover and
    removed it, and the finished batch's rename failed. Locked up to the rename, it is
    a running batch's file to the second batch, which is refused."""
    full = tmp_path / "full.jsonl"
    assert run_batch(store_root, full) == 1
    out = tmp_path / "out.jsonl"
    capsys.readouterr()
    real = os.replace
    second: list[tuple[int, str]] = []

    def meanwhile(source: Any, destination: Any) -> None:
        if Path(destination) == out and not second:
            second.append((-1, ""))  # the batch below may rename too: it must not recurse
            second[0] = (run_batch(store_root, out), capsys.readouterr().err)
        real(source, destination)

    monkeypatch.setattr(os, "replace", meanwhile)
    assert run_batch(store_root, out) == 1
    assert second == [(1, f"{INVALID_CONFIG}: --out {out}: {BUSY}\n")]
    assert out.read_bytes() == full.read_bytes()
    assert hidden_files(tmp_path) == []


@pytest.mark.parametrize("resume", [False, True])
def test_a_batch_to_a_new_file_holds_it_from_the_start(tmp_path: Path, resume: bool) -> None:
    """Two batches to a file not made yet both found nothing held when they started, ran
    at once, and the last to finish replaced the other's file. The first holds its output
    from when it opens it, before a line is snapshot, so the second is refused."""
    target = locate(str(tmp_path / "out.jsonl"), "--out")
    first = OutputFile(target, resume=resume)
    with pytest.raises(SessionReferenceError, match=BUSY):
        OutputFile(target, resume=False)
    with first:
        first.write(ResultLine("s", False, b"x\n"))
    assert target.file.read_bytes() == b"x\n" and hidden_files(tmp_path) == []


def test_resume_refuses_a_file_that_is_not_batch_output(
    store_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    for text in (b"hello\n{}\n", b"[" * 100_000 + b"\n"):  # not JSON; nested too deep
        out.write_bytes(text)
        assert run_batch(store_root, out, "--resume") == 1
        assert (
            capsys.readouterr().err
            == f"{INVALID_CONFIG}: {out}: line 1 is not a batch result; cannot --resume\n"
        )
        assert out.read_bytes() == text


def test_output_appears_only_when_complete(
    store_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"previous run\n")
    real = Snapshotter.__call__
    calls = 0

    def flaky(self: Snapshotter, session_id: str) -> BatchResult:
        nonlocal calls
        calls += 1
        assert out.read_bytes() == b"previous run\n"  # still the old file while running
        if calls == 4:
            raise RuntimeError("worker crashed")
        return real(self, session_id)

    monkeypatch.setattr(Snapshotter, "__call__", flaky)
    with pytest.raises(RuntimeError, match="crashed"):
        run_batch(store_root, out)
    assert out.read_bytes() == b"previous run\n"
    assert os.listdir(tmp_path) == ["out.jsonl"]

    calls = -100
    assert run_batch(store_root, out) == 1
    assert len(read_lines(out)) == len(LISTING)
    assert os.listdir(tmp_path) == ["out.jsonl"]


def interrupt_at(call: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the batch (one process) snapshots its ``call``-th session."""
    real = Snapshotter.__call__
    calls = 0

    def interrupted(self: Snapshotter, session_id: str) -> BatchResult:
        nonlocal calls
        calls += 1
        if calls == call:
            raise KeyboardInterrupt
        return real(self, session_id)

    monkeypatch.setattr(Snapshotter, "__call__", interrupted)


def test_an_interrupt_keeps_the_finished_lines_for_resume(
    store_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    full = tmp_path / "full.jsonl"
    assert run_batch(store_root, full) == 1
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"previous run\n")
    interrupt_at(4, monkeypatch)
    capsys.readouterr()
    assert run_batch(store_root, out) == 130
    assert capsys.readouterr().err == (
        f"interrupted: 3 of {len(LISTING)} sessions are in {out}; "
        "run the same command with --resume to do the rest\n"
    )
    assert out.read_bytes() == b"".join(full.read_bytes().splitlines(keepends=True)[:3])
    assert sorted(os.listdir(tmp_path)) == ["full.jsonl", "out.jsonl"]
    monkeypatch.undo()
    assert run_batch(store_root, out, "--resume") == 1
    assert out.read_bytes() == full.read_bytes()


def test_an_interrupt_after_the_last_line_asks_for_no_resume(
    store_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """A Ctrl-C that lands once every line is in the file (before the summary): the line
    said to run --resume "to do the rest", when there was none."""
    count = Tally.count

    def counted_then_interrupted(self: Tally, result: ResultLine) -> None:
        count(self, result)
        if self.written + len(self.failed) == self.sessions:
            raise KeyboardInterrupt

    monkeypatch.setattr(Tally, "count", counted_then_interrupted)
    out = tmp_path / "out.jsonl"
    assert run_batch(store_root, out) == 130
    sessions = len(LISTING)
    assert (
        capsys.readouterr().err == f"interrupted: {sessions} of {sessions} sessions are in {out}\n"
    )
    assert len(read_lines(out)) == sessions


def test_an_interrupt_before_any_line_leaves_the_file_alone(
    store_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"previous run\n")
    interrupt_at(1, monkeypatch)
    assert run_batch(store_root, out) == 130
    err = capsys.readouterr().err
    assert err == f"interrupted before any session was done: {out} is unchanged\n"
    assert out.read_bytes() == b"previous run\n"
    assert os.listdir(tmp_path) == ["out.jsonl"]


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("no-such-dir/out.jsonl", "--out {out}: No such file or directory"),
        ("a-directory", "--out {out}: Is a directory"),
    ],
)
def test_errors_are_one_line(
    store_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], out: str, message: str
) -> None:
    out_path = tmp_path / out
    (tmp_path / "a-directory").mkdir()
    assert run_batch(store_root, out_path) == 1
    err = capsys.readouterr().err
    assert err == f"{INVALID_CONFIG}: {message.format(out=out_path)}\n"
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_an_empty_store_writes_an_empty_file(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    assert list(build_snapshots(DirectoryStore(tmp_path / "store"))) == []


def test_the_command_refuses_an_empty_root_and_writes_nothing(tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "store").mkdir()
    out = tmp_path / "out.jsonl"
    assert run_batch(tmp_path / "store", out) == 1
    assert not out.exists()
    assert capsys.readouterr().err.startswith(
        f"SESSION_REFERENCE_INVALID_CONFIG: --root {tmp_path / 'store'}: holds no sessions"
    )


def test_progress_bar_only_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    with progress_bar(3, screen) as bar:
        for _ in range(3):
            bar.update()
    assert "3/3" in screen.getvalue().rsplit("\r", 1)[-1]
    quiet = io.StringIO()
    with progress_bar(3, quiet) as bar:
        bar.update()
    assert quiet.getvalue() == ""


def test_worker_stores_keep_the_store_limits(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path, max_bytes=1234, max_line_bytes=56)
    rebuilt = portable_store(store)()
    assert isinstance(rebuilt, DirectoryStore)
    assert (rebuilt.root, rebuilt.max_bytes, rebuilt.max_line_bytes) == (tmp_path, 1234, 56)


def test_worker_stores_read_the_listed_logs_without_scanning_the_root(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = DirectoryStore(store_root)
    rebuilt = portable_store(store, [*listing_order(store), "not-stored"])()
    scans = 0
    real_scan = DirectoryStore._scan

    def counted(self: DirectoryStore) -> Any:
        nonlocal scans
        scans += 1
        return real_scan(self)

    monkeypatch.setattr(DirectoryStore, "_scan", counted)
    assert [rebuilt.read(session_id).header.id for session_id in ("alpha", ".")] == ["alpha", "."]
    assert scans == 0
    with pytest.raises(SessionNotFound):
        rebuilt.read("not-stored")
    assert scans == 1


def test_a_stop_inside_the_first_write_keeps_what_reached_the_file(tmp_path: Path) -> None:
    """A stop can land inside a write, after its bytes went into the file and before the
    output counted the line (seen under load with the distributed engine): the bytes are
    kept, not discarded as if no session had been done."""
    from sessionref.cli.batch_output import OutputFile

    out = tmp_path / "out.jsonl"
    output = OutputFile(locate(str(out), "--out"), resume=False)
    line = b'{"sessionId":"s","context":{}}\n'
    with pytest.raises(KeyboardInterrupt), output:
        assert output._file is not None
        output._file.write(line)  # what write() does before it counts the line
        raise KeyboardInterrupt
    assert output.kept
    assert out.read_bytes() == line


def test_build_snapshots_takes_a_root_path_as_the_dask_engine_does(tmp_path: Path) -> None:
    """``build_snapshots("/path/to/root")`` was an AttributeError."""
    write_store(tmp_path)
    from_store = list(build_snapshots(DirectoryStore(tmp_path), max_reference_bytes=MAX_BYTES))
    assert [r["sessionId"] for r in from_store] == LISTING
    for root in (tmp_path, str(tmp_path)):
        assert list(build_snapshots(root, max_reference_bytes=MAX_BYTES)) == from_store


STORE_WANTED = "a store (with headers(), read() and title()) or a root path"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"session_ids": "abc"}, "session_ids must be a list, not str"),
        ({"session_ids": {"a": 1}}, "session_ids must be a list, not dict"),
        ({"session_ids": ["a", 1]}, "session_ids[1] must be a string, not int"),
        ({"store": None}, f"store must be {STORE_WANTED}, not NoneType"),
        ({"store": 5}, f"store must be {STORE_WANTED}, not int"),
        (
            {"store": BytesPath()},
            "store must be a string or an os.PathLike of text, not BytesPath of bytes",
        ),
    ],
)
def test_build_snapshots_refuses_a_store_or_ids_of_the_wrong_kind_at_once(
    arguments: dict[str, Any], message: str
) -> None:
    """``session_ids="abc"`` snapshotted sessions "a", "b" and "c"."""
    call = {"store": MemoryStore([]), **arguments}
    for build in (build_snapshots, build_result_lines):
        with pytest.raises(SessionReferenceError) as raised:
            build(**call)  # no next(): checked when called
        named = f"{build.__name__} {message}"
        assert (raised.value.code, raised.value.message) == (INVALID_CONFIG, named)


def test_result_lines_are_build_snapshots_results_with_its_defaults() -> None:
    """A newcomer's trial: ``build_result_lines(store)``, documented as ``build_snapshots``'
    results as JSON lines, labelled every session by its title where ``build_snapshots`` (and
    ``sessionref batch``) label it by its id."""
    root = sample_root()
    lines = [line.decoded() for line in build_result_lines(root)]
    assert lines == list(build_snapshots(root))
    assert [line["label"] for line in lines] == [line["sessionId"] for line in lines]
