"""A snapshot of another harness's session against the floor of reading its file.

Run from the repository root::

    python -m benchmarks.harness_bench [--records 10000] [--repeat 15] [--out DIR]

It writes (seeded, deterministic) a Claude Code transcript of ``--records`` lines and a Codex
rollout of as many items, with realistic shapes and sizes: prompts, assistant messages
streamed over several lines, thinking, tool calls and outputs of a few KB, compactions. Then,
rounds taking turns after a warm-up, it times per harness:

- the floor: read the file, split it into lines, msgspec-decode each line's envelope (Claude
  Code: ``type``, ``uuid``, ``parentUuid``, ``timestamp``, ``message`` raw; Codex:
  ``timestamp``, ``type``, ``payload`` raw), nothing of sessionref on its path;
- the snapshot: ``store.read`` and ``snapshot_source`` at a 64 KiB budget, what a reference
  costs.

The target (issue 23) is a median ratio of at most 2.0 for each. Exit status 1 when missed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from benchmarks.measure import alternating_times, median_ratio
from benchmarks.options import at_least_one
from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.codex.store import CodexStore
from sessionref.log.harness_store import HarnessStore
from sessionref.snapshot import snapshot_source

TARGET = 2.0
BUDGET = 65536
CLAUDE_SESSION = "0b5e1c0d-0000-4000-8000-000000000001"
CODEX_THREAD = "0197b000-0000-7000-8000-000000000001"
WORDS = [
    "the",
    "build",
    "fails",
    "because",
    "the",
    "lockfile",
    "is",
    "stale",
    "and",
    "the",
    "cache",
    "keeps",
    "old",
    "wheels",
]


def prose(rng: random.Random, low: int, high: int) -> str:
    """Words, ``low`` to ``high`` of them."""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def iso(millis: int) -> str:
    """A UTC time as both harnesses write it."""
    seconds, ms = divmod(millis, 1000)
    return (
        f"2025-06-{1 + seconds // 86400:02}T{seconds // 3600 % 24:02}:"
        f"{seconds // 60 % 60:02}:{seconds % 60:02}.{ms:03}Z"
    )


class Origin(NamedTuple):
    """Whose log a generator writes: the session (a Codex thread), its cwd, and when its
    first line is (ms after the first day's midnight)."""

    session: str
    cwd: str = "/home/dev/app"
    start: int = 0


CLAUDE_ORIGIN = Origin(CLAUDE_SESSION)
CODEX_ORIGIN = Origin(CODEX_THREAD)


def claude_records(
    count: int, rng: random.Random, origin: Origin = CLAUDE_ORIGIN
) -> Iterator[dict[str, Any]]:
    """``count`` lines of a Claude Code transcript."""
    session, cwd, start = origin
    clock, parent, written, turn = start, None, 0, 0

    def node(kind: str, **fields: Any) -> dict[str, Any]:
        nonlocal clock, parent, written
        clock += rng.randint(50, 4000)
        written += 1
        uuid = f"00000000-0000-4000-8000-{written:012d}"
        record = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session,
            "version": "2.1.0",
            "gitBranch": "main",
            "type": kind,
            "uuid": uuid,
            "timestamp": iso(clock),
            **fields,
        }
        parent = uuid
        return record

    while written < count:
        turn += 1
        yield node("user", message={"role": "user", "content": prose(rng, 5, 60)})
        for step in range(rng.randint(1, 4)):
            message_id = f"msg_{turn}_{step}"

            def said(block: dict[str, Any], message_id: str = message_id) -> dict[str, Any]:
                message = {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [block],
                    "stop_reason": None,
                    "usage": {"input_tokens": 900, "output_tokens": 120},
                }
                return node("assistant", message=message, requestId=f"req_{message_id}")

            yield said({"type": "thinking", "thinking": prose(rng, 20, 120), "signature": "s" * 80})
            yield said({"type": "text", "text": prose(rng, 10, 200)})
            call = f"toolu_{turn}_{step}"
            yield said(
                {
                    "type": "tool_use",
                    "id": call,
                    "name": "Bash",
                    "input": {"command": "pytest -q", "description": prose(rng, 3, 8)},
                }
            )
            output = "\n".join(prose(rng, 5, 15) for _ in range(rng.randint(5, 60)))
            yield node(
                "user",
                message={
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call, "content": output}],
                },
                toolUseResult={"stdout": output, "stderr": ""},
            )
        yield said({"type": "text", "text": prose(rng, 20, 300)})
        if turn % 40 == 0:
            boundary = node(
                "system",
                subtype="compact_boundary",
                content="Conversation compacted",
                logicalParentUuid=parent,
                compactMetadata={"trigger": "auto"},
            )
            yield {**boundary, "parentUuid": None}
            yield node(
                "user",
                isCompactSummary=True,
                message={"role": "user", "content": prose(rng, 200, 600)},
            )
        if turn % 10 == 0:
            yield {"type": "ai-title", "aiTitle": prose(rng, 3, 6), "sessionId": session}


def codex_items(
    count: int, rng: random.Random, origin: Origin = CODEX_ORIGIN
) -> Iterator[dict[str, Any]]:
    """``count`` lines of a Codex rollout."""
    thread, cwd, start = origin
    clock, calls = start, 0

    def item(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        nonlocal clock
        clock += rng.randint(20, 3000)
        return {"timestamp": iso(clock), "type": kind, "payload": payload}

    yield item(
        "session_meta",
        {
            "id": thread,
            "timestamp": iso(start),
            "cwd": cwd,
            "originator": "codex_cli_rs",
            "cli_version": "0.40.0",
            "source": "cli",
            "base_instructions": prose(rng, 500, 800),
        },
    )
    written, turn = 1, 0
    while written < count:
        turn += 1
        prompt = prose(rng, 5, 60)
        batch = [
            item("turn_context", {"cwd": cwd, "model": "gpt-5", "effort": "medium"}),
            item(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": prompt}],
                },
            ),
            item("event_msg", {"type": "user_message", "message": prompt, "images": []}),
        ]
        for _ in range(rng.randint(1, 4)):
            calls += 1
            output = "\n".join(prose(rng, 5, 15) for _ in range(rng.randint(5, 60)))
            batch += [
                item(
                    "response_item",
                    {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": prose(rng, 10, 60)}],
                        "encrypted_content": "e" * 400,
                    },
                ),
                item(
                    "response_item",
                    {
                        "type": "function_call",
                        "name": "shell",
                        "arguments": json.dumps({"command": ["pytest", "-q"]}),
                        "call_id": f"c{calls}",
                    },
                ),
                item(
                    "response_item",
                    {
                        "type": "function_call_output",
                        "call_id": f"c{calls}",
                        "output": json.dumps({"output": output, "metadata": {"exit_code": 0}}),
                    },
                ),
            ]
        answer = prose(rng, 20, 300)
        batch += [
            item(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": answer}],
                },
            ),
            item("event_msg", {"type": "agent_message", "message": answer}),
            item("event_msg", {"type": "token_count", "info": {"total": turn}}),
        ]
        if turn % 40 == 0:
            batch.append(item("compacted", {"message": prose(rng, 200, 600)}))
        yield from batch
        written += len(batch)


def write_lines(path: Path, records: Iterator[dict[str, Any]], count: int) -> Path:
    """The first ``count`` records as JSONL at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    encode = msgspec.json.Encoder().encode
    with path.open("wb") as file:
        for _, record in zip(range(count), records, strict=False):
            file.write(encode(record) + b"\n")
    return path


class ClaudeEnvelope(msgspec.Struct, rename="camel", gc=False):
    type: Any = None
    uuid: Any = None
    parent_uuid: Any = None
    timestamp: Any = None
    message: msgspec.Raw = msgspec.Raw(b"")


class CodexEnvelope(msgspec.Struct, gc=False):
    timestamp: Any = None
    type: Any = None
    payload: msgspec.Raw = msgspec.Raw(b"")


def floor(path: Path, kind: type[msgspec.Struct]) -> Callable[[], object]:
    """Read the file, split its lines, decode each line's envelope."""
    decoder = msgspec.json.Decoder(kind)

    def run() -> object:
        return [decoder.decode(line) for line in path.read_bytes().splitlines()]

    return run


def snapshot(store: HarnessStore, session_id: str) -> Callable[[], object]:
    """Read the session from its store and snapshot it at the budget."""
    return lambda: snapshot_source(store.read(session_id), session_id, BUDGET)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=at_least_one, default=10_000)
    parser.add_argument("--repeat", type=at_least_one, default=15)
    parser.add_argument("--out", type=Path, default=None, help="where to write the files")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="harness-bench-"))
    claude = write_lines(
        out / "claude" / "projects" / "-home-dev-app" / f"{CLAUDE_SESSION}.jsonl",
        claude_records(args.records, random.Random(23)),
        args.records,
    )
    codex = write_lines(
        out
        / "codex"
        / "sessions"
        / "2025"
        / "06"
        / "01"
        / f"rollout-2025-06-01T00-00-00-{CODEX_THREAD}.jsonl",
        codex_items(args.records, random.Random(23)),
        args.records,
    )
    cases = [
        (
            "claude-code",
            claude,
            ClaudeEnvelope,
            snapshot(ClaudeCodeStore(out / "claude"), CLAUDE_SESSION),
        ),
        ("codex", codex, CodexEnvelope, snapshot(CodexStore(out / "codex"), CODEX_THREAD)),
    ]
    missed = False
    for harness, path, kind, work in cases:
        floor_times, snapshot_times = alternating_times([floor(path, kind), work], args.repeat)
        ratio = median_ratio(snapshot_times, floor_times)
        missed = missed or ratio > TARGET
        size = path.stat().st_size / 1e6
        print(
            f"{harness}: {args.records} lines, {size:.1f} MB: floor "
            f"{sorted(floor_times)[len(floor_times) // 2]:.3f} s, snapshot "
            f"{sorted(snapshot_times)[len(snapshot_times) // 2]:.3f} s, median ratio "
            f"{ratio:.2f}x (target <= {TARGET}x) {'MISSED' if ratio > TARGET else 'met'}"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
