"""The strategies of ``sessionref.testing`` produce what they claim.

Oracles here are deliberately naive and written from docs/, independent of the module under test.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import doctest
import gzip
import importlib
import io
import itertools
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from sessionref.log.layout import encode_project_directory as project_dir_name
from sessionref.log.layout import encode_session_directory as encode_session_id
from sessionref.log.writer import render_batch, render_header, render_log
from sessionref.testing import (
    LogRecords,
    MentionSample,
    captured_through_seq,
    closers,
    event_units,
    expand_records,
    js_stringify,
    js_strings,
    mention_texts,
    projected_units,
    recovered_events,
    session_ids,
    session_logs,
    session_stores,
    turn_batches,
    well_formed_mention_texts,
    write_session_store,
)
from sessionref.testing.reference import current_surface
from tests.conftest import examples

VECTORS = Path(__file__).parent / "data" / "vectors.jsonl.gz"
FAST = settings(max_examples=examples(40), deadline=None)
PACKED = {"text-chunks": "texts", "reasoning-chunks": "texts", "tool-call-chunks": "args"}
SURFACE_TYPES = {"user/message", "assistant/message", "tool/result"}


# --- naive oracles -------------------------------------------------------------------------------


def is_lone(char: str) -> bool:
    return 0xD800 <= ord(char) <= 0xDFFF


def has_split_pair(text: str) -> bool:
    """A high surrogate code point directly followed by a low one (one astral char in JS)."""
    return any(
        0xD800 <= ord(a) <= 0xDBFF and 0xDC00 <= ord(b) <= 0xDFFF
        for a, b in itertools.pairwise(text)
    )


def js_join(parts: list[str]) -> str:
    """Concatenate as JavaScript would: a high surrogate meeting a low one makes one character."""
    return "".join(parts).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def naive_stringify(value: object) -> str:
    """JSON.stringify via json.dumps: only lone surrogates need fixing (left raw by Python)."""
    dumped = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", dumped)


def naive_uri(session_id: str) -> str:
    raw = naive_stringify(session_id).encode("utf-8")
    return "dsh-session:" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def naive_decode(uri: str) -> str:
    payload = uri.removeprefix("dsh-session:")
    if payload == uri or not re.fullmatch("[A-Za-z0-9_-]+", payload):
        raise ValueError(uri)
    value = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    if not isinstance(value, str) or naive_uri(value) != uri:
        raise ValueError(uri)
    return value


JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
MENTION = re.compile(
    r"@\[((?:\\[^\n\r\u2028\u2029]|[^\\\]])*)\]\((dsh-session:[^)" + JS_SPACE + r"]*)\)"
)
BARE = re.compile("dsh-session:[A-Za-z0-9_-]+")


def naive_parse(text: str) -> tuple[str, list[dict[str, str]]]:
    """docs/snapshot.md §Codecs parse, one position at a time; raises ValueError on a bad URI."""
    out: list[str] = []
    refs: list[dict[str, str]] = []
    i = 0
    while i < len(text):
        if match := MENTION.match(text, i):
            session_id = naive_decode(match.group(2))
            label = re.sub(r"\\(.)", r"\1", match.group(1), flags=re.DOTALL)
        elif match := BARE.match(text, i):
            session_id = label = naive_decode(match.group())
        else:
            out.append(text[i])
            i += 1
            continue
        out.append("@" + label)
        refs.append({"sessionId": session_id, "label": label})
        i = match.end()
    return js_join(out), refs


def naive_expand(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for record in records:
        if record["type"] in PACKED:
            items = record["data"][PACKED[record["type"]]]
            assert len(record["data"]["dt"]) == len(items) - 1
            events += [
                {"type": "assistant/chunk", "seq": record["seq0"] + k} for k in range(len(items))
            ]
        else:
            events.append(record)
    return events


def without_output(data: dict[str, Any]) -> str:
    copy = json.loads(json.dumps(data))
    del copy["message"]["content"][0]["content"]
    return json.dumps(copy, sort_keys=True)


def check_surface_ops(events: list[dict[str, Any]]) -> list[int]:
    """Fold the surface, asserting every docs/snapshot.md §Surface
    rule; returns the final surface."""
    surface: list[int] = []
    by_seq = {e["seq"]: e for e in events}
    for event in events:
        op, sources = event.get("surfaceOp"), event.get("sourceEventSeqs")
        assert (op is not None) == (event["type"] in SURFACE_TYPES), event
        if sources is not None:
            assert len(set(sources)) == len(sources)
            assert all(0 <= s < event["seq"] for s in sources)
            assert sources or event["type"] == "assistant/message"
        if op is None:
            continue
        if op == "append":
            surface.append(event["seq"])
            continue
        first, last = surface.index(op["start"]), surface.index(op["end"])
        assert first <= last
        replaced = surface[first : last + 1]
        assert set(replaced) <= set(sources or [])
        if event["type"] == "tool/result":
            assert len(replaced) == 1 and by_seq[replaced[0]]["type"] == "tool/result"
            assert without_output(event["data"]) == without_output(by_seq[replaced[0]]["data"])
        surface[first : last + 1] = [event["seq"]]
    return surface


def zstd_frames(data: bytes) -> Iterator[bytes]:
    while data:
        decompressor = zstandard.ZstdDecompressor().decompressobj()
        yield decompressor.decompress(data)
        data = decompressor.unused_data


def share(
    strategy: st.SearchStrategy[Any], predicate: Callable[[Any], bool], n: int = 200
) -> float:
    """Fraction of ``n`` deterministic examples satisfying ``predicate``."""
    hits: list[bool] = []

    @settings(max_examples=n, deadline=None, database=None, derandomize=True)
    @given(strategy)
    def collect(value: Any) -> None:
        hits.append(predicate(value))

    collect()
    return sum(hits) / len(hits)


def vector_cases(op: str) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    with gzip.open(VECTORS, "rt", encoding="utf-8") as lines:
        for line in lines:
            case = json.loads(line)
            if case["case"]["op"] == op:
                yield case["case"], case["expect"]


# --- the oracles agree with the published package ----------------------------------------------


def test_naive_parse_agrees_with_vectors() -> None:
    for case, expect in vector_cases("parse"):
        try:
            text, refs = naive_parse(case["text"])
        except ValueError:
            assert "error" in expect, case
        else:
            assert expect == {"ok": {"text": text, "references": refs}}, case


def test_naive_uri_agrees_with_vectors() -> None:
    for case, expect in vector_cases("encode"):
        if "ok" in expect:
            assert naive_uri(case["id"]) == expect["ok"]["uri"]


def snapshot_data(context: dict[str, Any]) -> list[dict[str, Any]]:
    text = context["content"][0]["text"]
    start = text.index("<referenced-sessions>\n") + len("<referenced-sessions>\n")
    data: list[dict[str, Any]] = json.loads(text[start : text.rindex("\n</referenced-sessions>")])
    return data


def test_projected_units_agree_with_vectors() -> None:
    checked = 0
    for case, expect in vector_cases("prepare"):
        context = expect.get("ok", {}).get("additionalContext")
        if context is None:
            continue
        logs = {log["header"]["id"]: log for log in case["sessions"]}
        for data, stats in zip(
            snapshot_data(context), context["source"]["references"], strict=True
        ):
            # A case's sessions are stored as plain JSONL; some end in a damaged tail.
            log = logs[data["sessionId"]]
            written = render_log(log["header"], [log["events"]], compress=False, pack=False)
            events = recovered_events(written, compress=False)
            units = event_units(events + closers(events))
            assert data["capturedThroughSeq"] == captured_through_seq(events)
            assert stats["originalMessages"] == len(units)
            assert stats["compacted"] == any(unit["checkpoint"] for unit in units)
            if not stats["truncated"]:
                assert data["conversation"] == [
                    {"role": u["role"], "text": u["text"]} for u in units
                ]
            checked += 1
    assert checked > 0


# --- js_strings ---------------------------------------------------------------------------------


@FAST
@given(js_strings(min_size=3, max_size=9))
def test_js_strings_respect_bounds_and_never_split_a_pair(text: str) -> None:
    assert 3 <= len(text) <= 9
    assert not has_split_pair(text)


@FAST
@given(st.lists(js_strings(max_size=6), max_size=4).map("".join))
def test_js_stringify_joins_split_pairs_like_javascript(text: str) -> None:
    assert js_stringify(text) == naive_stringify(js_join([text]))


@FAST
@given(js_strings())
def test_js_stringify_matches_json_dumps(text: str) -> None:
    encoded = js_stringify({"t": text, "n": [1, None, True]})
    assert encoded == naive_stringify({"t": text, "n": [1, None, True]})
    encoded.encode("utf-8")  # no raw lone surrogate survives
    assert json.loads(encoded)["t"] == text


def test_lone_surrogates_and_astral_characters_are_common() -> None:
    assert share(js_strings(min_size=4), lambda s: any(map(is_lone, s))) > 0.25
    assert share(js_strings(min_size=4), lambda s: any(ord(c) > 0xFFFF for c in s)) > 0.25


def test_interesting_fragments_are_common() -> None:
    assert share(js_strings(min_size=4), lambda s: "<" in s or "\\" in s or '"' in s) > 0.2


def test_js_stringify_fixed_cases() -> None:
    assert js_stringify("\ud83d\ude42\ud800\x7f\u2028\x00\b") == '"🙂\\ud800\x7f\u2028\\u0000\\b"'
    assert js_stringify([0.5, 1e-7, 1e21, float("inf")]) == "[0.5,1e-7,1e+21,null]"


# --- session ids ---------------------------------------------------------------------------------


@FAST
@given(session_ids())
def test_session_ids_are_storable(session_id: str) -> None:
    assert session_id
    assert not has_split_pair(session_id)
    assert len(encode_session_id(session_id)) <= 244
    assert naive_decode(naive_uri(session_id)) == session_id


def test_session_ids_include_hostile_ones() -> None:
    assert share(session_ids(), lambda s: any(map(is_lone, s))) > 0.05
    assert share(session_ids(), lambda s: s in {".", "..", "a/b"} or "/" in s) > 0.02


def test_encoded_ids_and_project_dirs() -> None:
    assert encode_session_id(".") == "~002E"
    assert encode_session_id("..") == "~002E~002E"
    assert encode_session_id("a.b_c-D9") == "a.b_c-D9"
    assert encode_session_id("~ \ud800🙂") == "~007E~0020~D800~D83D~DE42"
    assert project_dir_name(None) == "_no-cwd"
    assert project_dir_name("") == "--root--"
    assert project_dir_name("//a\\\\b::c/") == "--a-b-c---"
    assert project_dir_name("/" + "x" * 300) == "--" + "x" * 251 + "--"


# --- mentions -----------------------------------------------------------------------------------


@FAST
@given(well_formed_mention_texts())
def test_well_formed_mentions_parse_as_constructed(sample: MentionSample) -> None:
    assert naive_parse(sample.text) == (sample.readable, sample.references)
    assert not has_split_pair(sample.text)


@FAST
@given(mention_texts())
def test_mention_texts_parse_or_fail_cleanly(text: str) -> None:
    assert not has_split_pair(text)
    with contextlib.suppress(ValueError):
        naive_parse(text)


def test_mention_texts_mix_successes_and_failures() -> None:
    outcomes: collections.Counter[str] = collections.Counter()

    def classify(text: str) -> bool:
        try:
            outcomes["refs" if naive_parse(text)[1] else "plain"] += 1
        except ValueError:
            outcomes["fails"] += 1
        return True

    share(mention_texts(), classify, n=150)
    assert outcomes["refs"] > 15 and outcomes["fails"] > 15, outcomes


# --- session logs -------------------------------------------------------------------------------


@FAST
@given(session_logs())
def test_logs_are_contiguous_and_every_surface_op_is_valid(log: LogRecords) -> None:
    header = log["header"]
    assert header["version"] == 0 and header["delegationDepth"] == 0
    assert isinstance(header["id"], str) and isinstance(header["createdAt"], int)
    events = naive_expand(log["events"])
    assert [e["seq"] for e in events] == list(range(len(events)))
    full = expand_records(log["events"])
    assert check_surface_ops(full) == current_surface(full)


@FAST
@given(session_logs())
def test_projected_units_follow_the_surface(log: LogRecords) -> None:
    units = projected_units(log)
    assert all(u["text"] and u["role"] in {"user", "assistant"} for u in units)
    assert all(u["role"] == "user" for u in units if u["checkpoint"])
    surface = check_surface_ops(expand_records(log["events"]))
    assert len(units) <= len(surface)


def harness_refusal(log: LogRecords) -> str | None:
    """What the harness would refuse in a log's shapes (docs/format.md §Validation), naively."""
    header = log["header"]
    if "cwd" in header and not str(header["cwd"]).startswith("/"):
        return "cwd not absolute"
    envelope = {"type", "seq", "time", "data", "ignorable", "surfaceOp", "sourceEventSeqs"}
    for event in log["events"]:
        kind, data = event["type"], event["data"]
        if kind in PACKED:
            continue
        if not set(event) <= envelope or not isinstance(event["time"], int):
            return f"envelope of {event}"
        message = data if kind == "user/message" else data.get("message")
        if kind in SURFACE_TYPES:
            role = "assistant" if kind == "assistant/message" else "user"
            source = message.get("source", {})
            if not message.get("id") or message.get("role") != role:
                return f"message id or role of {event}"
            if kind == "assistant/message" and not (source.get("provider") and source.get("model")):
                return f"assistant source of {event}"
            if kind == "tool/result":
                (block,) = message["content"]
                if block["toolCallId"] != source.get("callId") or source.get("kind") != "tool":
                    return f"tool result call id of {event}"
        if kind == "turn/end" and (set(data) != {"turn", "reason"} or data["turn"] < 1):
            return f"turn end {event}"
    return None


@FAST
@given(session_logs())
def test_logs_have_the_shapes_the_harness_requires(log: LogRecords) -> None:
    assert harness_refusal(log) is None


def test_logs_cover_every_feature() -> None:
    seen: collections.Counter[str] = collections.Counter()

    def features(log: LogRecords) -> bool:
        for record in log["events"]:
            op = record.get("surfaceOp")
            data = record["data"]
            source = data.get("source", {}) if record["type"] == "user/message" else {}
            seen[record["type"] + (":replace" if isinstance(op, dict) else "")] += 1
            seen["source:" + str(source.get("kind"))] += 1
            seen["display"] += "display" in data
        seen["empty"] += not log["events"]
        return True

    share(session_logs(), features, n=200)
    wanted = [
        "text-chunks",
        "reasoning-chunks",
        "tool-call-chunks",
        "assistant/chunk",
        "user/message:replace",
        "tool/result:replace",
        "session/title",
        "display",
        "source:plugin",
        "source:goal",
        "source:session-reference",
        "source:user",
        "empty",
    ]
    missing = [name for name in wanted if not seen[name]]
    assert not missing, missing


def test_projected_units_by_hand() -> None:
    def msg(seq: int, kind: str, texts: list[str], **extra: Any) -> dict[str, Any]:
        source = {"kind": kind} if kind != "compact" else {"kind": "plugin", "plugin": "compact"}
        data = {
            "id": f"m{seq}",
            "role": "user",
            "source": source,
            "content": [{"type": "text", "text": t} for t in texts],
            **extra,
        }
        return {
            "type": "user/message",
            "seq": seq,
            "time": seq,
            "data": data,
            "surfaceOp": "append",
        }

    summary = msg(4, "compact", ["S"])
    summary.update(surfaceOp={"op": "replace", "start": 0, "end": 1}, sourceEventSeqs=[0, 1])
    log: LogRecords = {
        "header": {"version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0},
        "events": [
            msg(0, "user", ["old"]),
            msg(1, "goal", ["goal"]),
            msg(2, "user", ["ctx", "hi"], display=[{"type": "text", "text": "hi"}]),
            {
                "type": "assistant/message",
                "seq": 3,
                "time": 3,
                "surfaceOp": "append",
                "data": {
                    "message": {
                        "id": "a",
                        "role": "assistant",
                        "source": {"kind": "model"},
                        "content": [
                            {"type": "reasoning", "text": "r"},
                            {"type": "text", "text": "a"},
                            {"type": "text", "text": "b"},
                        ],
                    }
                },
            },
            summary,
            msg(5, "user", [""]),
            msg(6, "user", ["", ""]),
        ],
    }
    assert projected_units(log) == [
        {"role": "user", "text": "S", "checkpoint": True},
        {"role": "user", "text": "hi", "checkpoint": False},
        {"role": "assistant", "text": "a\nb", "checkpoint": False},
        {"role": "user", "text": "\n", "checkpoint": False},
    ]
    log["events"][4]["surfaceOp"] = {"op": "replace", "start": 1, "end": 0}
    with pytest.raises(ValueError):
        projected_units(log)


# --- serialization and the on-disk store ---------------------------------------------------------


def session_log_lines(log: LogRecords) -> list[str]:
    """The lines the writer writes for a log, without their newlines."""
    records = render_batch(log["events"], pack=False).decode("utf-8").split("\n")[:-1]
    return [render_header(log["header"]).decode("utf-8")[:-1], *records]


@settings(max_examples=examples(30), deadline=None)
@given(session_logs(max_turns=2))
def test_lines_are_javascript_json(log: LogRecords) -> None:
    lines = session_log_lines(log)
    assert json.loads(lines[0]) == {"type": "session", **log["header"]}
    assert [json.loads(line) for line in lines[1:]] == json.loads(json.dumps(log["events"]))
    for line in lines:
        assert line == naive_stringify(json.loads(line))
        line.encode("utf-8")


@settings(max_examples=examples(15), deadline=None)
@given(session_stores(max_turns=1), st.booleans())
def test_store_round_trips(
    tmp_path_factory: pytest.TempPathFactory, logs: list[LogRecords], compress: bool
) -> None:
    root = tmp_path_factory.mktemp("store")
    paths = write_session_store(root, logs, compress=compress)
    found = [
        file
        for project in root.iterdir()
        for session in project.iterdir()
        for file in session.iterdir()
    ]
    assert sorted(found) == sorted(paths)
    for log, path in zip(logs, paths, strict=True):
        assert path.parent.name == encode_session_id(log["header"]["id"])
        assert path.parent.parent.name == project_dir_name(log["header"].get("cwd"))
        data = path.read_bytes()
        lines = session_log_lines(log)
        if compress:
            frames = list(zstd_frames(data))
            assert frames[0] == (lines[0] + "\n").encode()
            assert len(frames) == 1 + len(turn_batches(log["events"]))
            data = b"".join(frames)
            with zstandard.ZstdDecompressor().stream_reader(
                io.BytesIO(path.read_bytes()), read_across_frames=True
            ) as reader:
                assert reader.read() == data
        assert data.decode("utf-8").split("\n") == [*lines, ""]


def test_store_rejects_colliding_paths(tmp_path: Path) -> None:
    log: LogRecords = {
        "header": {"version": 0, "id": "a", "createdAt": 0, "delegationDepth": 0},
        "events": [],
    }
    with pytest.raises(ValueError):
        write_session_store(tmp_path, [log, log])


@pytest.mark.parametrize(
    "module", ["_js", "logs", "recovery", "reference", "store", "strategies", "__init__"]
)
def test_docstring_examples(module: str) -> None:
    name = "sessionref.testing" + ("" if module == "__init__" else f".{module}")
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    "bounds",
    [
        {"max_turns": 0},
        {"max_turns": -1},
        {"min_turns": -1},
        {"min_turns": 3, "max_turns": 2},
        {"max_steps": 0},
        {"max_chunks": -1},
    ],
)
def test_session_logs_refuses_bounds_that_admit_no_log(bounds: dict[str, int]) -> None:
    """A newcomer's trial: ``max_turns=0`` (below the default ``min_turns=1``) quietly gave
    logs of one turn; bounds that admit no log are refused, as ``st.integers(3, 2)`` is."""
    with pytest.raises(InvalidArgument):
        session_logs(**bounds)
