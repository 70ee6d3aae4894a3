"""Small valid DSH logs as bytes, to damage one way at a time in the tests of the reader.

Every expectation the ``test_log_*`` modules state about these logs was checked against the
real DSH stack (``shared/oracle/real.mjs surface``) on the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import zstandard

from sessionref.log.layout import encode_project_directory, encode_session_directory

Event = dict[str, Any]
SOURCE = {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}


def line(value: Any) -> bytes:
    """One JSON line as JavaScript writes it (no spaces, non-ASCII literal)."""
    return (
        json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
        + b"\n"
    )


def header(session_id: str = "s", cwd: str | None = "/w", **extra: Any) -> Event:
    """A session header the listing takes."""
    head: Event = {"type": "session", "version": 0, "id": session_id, "createdAt": 1}
    if cwd is not None:
        head["cwd"] = cwd
    head["delegationDepth"] = 0
    return {**head, **extra}


def event(kind: str, seq: int, data: Any, **extra: Any) -> Event:
    """An event envelope."""
    return {"type": kind, "seq": seq, "time": 1000 + seq, "data": data, **extra}


def user(seq: int, text: str, **extra: Any) -> Event:
    """A direct user prompt on the surface."""
    message = {
        "id": f"u{seq}",
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "user"},
    }
    return event("user/message", seq, message, surfaceOp="append", **extra)


def assistant(seq: int, text: str, *blocks: Any, turn: int = 1, **extra: Any) -> Event:
    """An assistant answer on the surface (extra content blocks after its text)."""
    message = {
        "id": f"a{seq}",
        "role": "assistant",
        "content": [{"type": "text", "text": text}, *blocks],
        "source": SOURCE,
    }
    return event(
        "assistant/message",
        seq,
        {"turn": turn, "step": 1, "message": message},
        surfaceOp="append",
        **extra,
    )


def tool_result(seq: int, call_id: str, output: str, **extra: Any) -> Event:
    """A tool result on the surface."""
    block = {
        "type": "tool-result",
        "toolCallId": call_id,
        "isError": False,
        "content": [{"type": "text", "text": output}],
    }
    message = {
        "id": f"t{seq}",
        "role": "user",
        "content": [block],
        "source": {"kind": "tool", "callId": call_id},
    }
    extra.setdefault("surfaceOp", "append")
    return event("tool/result", seq, {"turn": 1, "step": 1, "message": message}, **extra)


def turn(first: int, number: int, question: str, answer: str) -> list[Event]:
    """A closed turn of six events from seq ``first``."""
    return [
        event("turn/start", first, {"turn": number}),
        user(first + 1, question),
        event("step/start", first + 2, {"turn": number, "step": 1}),
        assistant(first + 3, answer, turn=number),
        event("step/end", first + 4, {"turn": number, "step": 1}),
        event("turn/end", first + 5, {"turn": number, "reason": {"kind": "completed"}}),
    ]


def two_turns() -> list[Event]:
    """Two closed turns, seqs 0–11."""
    return [
        *turn(0, 1, "first question", "first answer"),
        *turn(6, 2, "second question", "second answer"),
    ]


def log_bytes(events: list[Any], head: Event | None = None) -> bytes:
    """A plain log: the header line, one line per event."""
    return line(head or header()) + b"".join(e if isinstance(e, bytes) else line(e) for e in events)


def frame(data: bytes) -> bytes:
    """One checksummed zstd frame, as the harness writes each batch."""
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


def zstd_bytes(batches: list[list[Any]], head: Event | None = None) -> bytes:
    """A zstd log: the header frame, then one frame per batch of events."""
    frames = [frame(line(head or header()))]
    frames += [
        frame(b"".join(e if isinstance(e, bytes) else line(e) for e in batch)) for batch in batches
    ]
    return b"".join(frames)


def store_path(root: Path, session_id: str = "s", cwd: str | None = "/w") -> Path:
    """The session directory of ``session_id`` in the DSH layout under ``root``."""
    path = root / encode_project_directory(cwd) / encode_session_directory(session_id)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_plain(root: Path, content: bytes, session_id: str = "s", cwd: str | None = "/w") -> Path:
    """Write a plain log for ``session_id`` under ``root``."""
    path = store_path(root, session_id, cwd) / "session.jsonl"
    path.write_bytes(content)
    return path


def write_zstd(root: Path, content: bytes, session_id: str = "s", cwd: str | None = "/w") -> Path:
    """Write a zstd log for ``session_id`` under ``root``."""
    path = store_path(root, session_id, cwd) / "session.jsonl.zstd"
    path.write_bytes(content)
    return path
