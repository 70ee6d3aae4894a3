"""Independent checker for generated benchmark stores.

Walks a store root (two directory levels, dot-names included), reads every
``session.jsonl.zstd`` / ``session.jsonl`` frame by frame and checks, per
docs/format.md: header shape, one header frame first, that the directory names derive
from the header, storage-record shapes, seq contiguity after packed-row
expansion, surfaceOp placement, ``sourceEventSeqs`` rules, surface-fold validity
(replace ranges on the surface, checkpoints citing every replaced node, prunes
replacing exactly one tool result and changing only its first block's content),
and that each ``assistant/message`` equals the concatenation of the deltas it
cites. Shares no code with :mod:`benchmarks.generate`.

Usage::

    python -m benchmarks.verify benchmarks/stores/sizes benchmarks/stores/batch
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import zstandard

SURFACE_TYPES = ("user/message", "assistant/message", "tool/result")
ROW_TYPES = {
    "text-chunks": ("text-delta", "texts", "text"),
    "reasoning-chunks": ("reasoning-delta", "texts", "text"),
    "tool-call-chunks": ("tool-call-delta", "args", "argumentsDelta"),
}


class StoreError(Exception):
    """A violation of the on-disk contract."""


def _check(cond: bool, message: str) -> None:
    """Raise :class:`StoreError` with ``message`` unless ``cond`` holds."""
    if not cond:
        raise StoreError(message)


def session_files(root: Path) -> Iterator[Path]:
    """Yield every session log two levels below ``root`` (dot-names included)."""
    for project in sorted(root.iterdir()):
        if not project.is_dir():
            continue
        for session in sorted(project.iterdir()):
            for name in ("session.jsonl.zstd", "session.jsonl"):
                if (session / name).is_file():
                    yield session / name


def frames(path: Path, window: int = 4096) -> Iterator[bytes]:
    """Yield the decompressed content of each zstd frame (or the whole plain file).

    Input is fed ``window`` bytes at a time so that finding each frame's end
    costs O(frame + window), not O(rest of file).
    """
    raw = memoryview(path.read_bytes())
    if path.suffix != ".zstd":
        yield raw.tobytes()
        return
    dctx = zstandard.ZstdDecompressor()
    pos = 0
    while pos < len(raw):
        obj = dctx.decompressobj()
        parts = []
        start = pos
        while not obj.eof:
            _check(pos < len(raw), f"{path}: truncated zstd frame at byte {start}")
            piece = raw[pos : pos + window]
            parts.append(obj.decompress(piece))
            pos += len(piece)
        pos -= len(obj.unused_data)
        yield b"".join(parts)


def _escape_units(text: str, separators: bool) -> str:
    """Reference escape of docs/format.md §Layout (written independently of the generator)."""
    units = text.encode("utf-16-le", "surrogatepass")
    out = []
    prev_sep = False
    for i in range(0, len(units), 2):
        u = int.from_bytes(units[i : i + 2], "little")
        c = chr(u)
        if separators and c in "/\\:":
            if not prev_sep:
                out.append("-")
            prev_sep = True
            continue
        prev_sep = False
        out.append(c if c.isascii() and (c.isalnum() or c in "._-") else f"~{u:04X}")
    return "".join(out)


def expected_dirs(header: dict[str, Any]) -> tuple[str, str]:
    """Return the (project, session) directory names a header implies."""
    sid = header["id"]
    sdir = {".": "~002E", "..": "~002E~002E"}.get(sid) or _escape_units(sid, False)
    cwd = header.get("cwd")
    if cwd is None:
        return "_no-cwd", sdir
    key = _escape_units(cwd, True).lstrip("-") or "root"
    return "--" + key[:251] + "--", sdir


def check_header(header: Any, path: Path) -> None:
    """Check the header line's shape and that ``path`` derives from it."""
    _check(isinstance(header, dict) and header.get("type") == "session", f"{path}: bad header")
    _check(header.get("version") == 0, f"{path}: bad version")
    _check(isinstance(header.get("id"), str), f"{path}: header id")
    _check(isinstance(header.get("createdAt"), int), f"{path}: header createdAt")
    _check(isinstance(header.get("delegationDepth"), int), f"{path}: header delegationDepth")
    project, sdir = expected_dirs(header)
    _check(path.parent.name == sdir, f"{path}: session dir should be {sdir!r}")
    _check(path.parent.parent.name == project, f"{path}: project dir should be {project!r}")


def expand(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Expand a storage record into events (packed rows become chunk events)."""
    kind = record.get("type")
    if kind not in ROW_TYPES:
        return [record]
    _check(set(record) == {"type", "seq0", "time0", "data"}, f"row keys {sorted(record)}")
    delta, key, field = ROW_TYPES[kind]
    data = record["data"]
    members = data[key]
    _check(isinstance(members, list) and len(members) >= 1, "row payload")
    _check(len(data["dt"]) == len(members) - 1, "dt length")
    t = record["time0"]
    out = []
    for k, member in enumerate(members):
        if k:
            t += data["dt"][k - 1]
        chunk: dict[str, Any] = {"type": delta, "index": data["index"]}
        if kind == "tool-call-chunks":
            chunk["id"] = data["id"]
            if "name" in data:
                chunk["name"] = data["name"]
        chunk[field] = member
        out.append(
            {
                "type": "assistant/chunk",
                "seq": record["seq0"] + k,
                "time": t,
                "data": {"turn": data["turn"], "step": data["step"], "chunk": chunk},
            }
        )
    return out


def read_session(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """Return ``(header, events, frame_count)`` of one log, checking framing."""
    header: dict[str, Any] | None = None
    events: list[dict[str, Any]] = []
    count = 0
    for count, blob in enumerate(frames(path), 1):
        text = blob.decode("utf-8")
        _check(text.endswith("\n"), f"{path}: frame {count} does not end with a newline")
        lines = text[:-1].split("\n")
        if header is None:
            if path.suffix == ".zstd":
                _check(len(lines) == 1, f"{path}: first frame must hold only the header")
            header = json.loads(lines[0])
            lines = lines[1:]
        for line in lines:
            events.extend(expand(json.loads(line)))
    _check(header is not None, f"{path}: empty log")
    assert header is not None
    return header, events, count


def _check_sources(ev: dict[str, Any]) -> None:
    """Check the ``sourceEventSeqs`` rules of docs/format.md §Events."""
    src = ev.get("sourceEventSeqs")
    if src is None:
        return
    _check(ev["type"] in SURFACE_TYPES, f"seq {ev['seq']}: sourceEventSeqs on {ev['type']}")
    _check(
        isinstance(src, list) and len(set(src)) == len(src),
        f"seq {ev['seq']}: sources not distinct",
    )
    _check(
        all(isinstance(s, int) and 0 <= s < ev["seq"] for s in src), f"seq {ev['seq']}: bad source"
    )
    _check(bool(src) or ev["type"] == "assistant/message", f"seq {ev['seq']}: empty sources")


def _check_message_matches_chunks(ev: dict[str, Any], events: list[dict[str, Any]]) -> None:
    """Check an assistant message's reasoning/text/tool-call blocks against its deltas."""
    by_index: dict[int, list[dict[str, Any]]] = {}
    for s in ev.get("sourceEventSeqs", []):
        c = events[s]
        _check(c["type"] == "assistant/chunk", f"seq {ev['seq']}: cites non-chunk {s}")
        _check(c["data"]["turn"] == ev["data"]["turn"], f"seq {ev['seq']}: chunk from another turn")
        by_index.setdefault(c["data"]["chunk"]["index"], []).append(c["data"]["chunk"])
    reasoning = "".join(
        b["text"] for b in ev["data"]["message"]["content"] if b["type"] == "reasoning"
    )
    texts = "\n".join(b["text"] for b in ev["data"]["message"]["content"] if b["type"] == "text")
    calls = [b for b in ev["data"]["message"]["content"] if b["type"] == "tool-call"]
    streamed_text = ""
    streamed_reasoning = ""
    streamed_calls: dict[str, str] = {}
    for chunks in by_index.values():
        for c in chunks:
            if c["type"] == "text-delta":
                streamed_text += c["text"]
            elif c["type"] == "reasoning-delta":
                streamed_reasoning += c["text"]
            else:
                streamed_calls[c["id"]] = streamed_calls.get(c["id"], "") + c["argumentsDelta"]
    _check(streamed_reasoning == reasoning, f"seq {ev['seq']}: reasoning differs from its deltas")
    _check(streamed_text == texts, f"seq {ev['seq']}: text differs from its deltas")
    _check(
        {c["id"]: c["arguments"] for c in calls} == streamed_calls,
        f"seq {ev['seq']}: tool args differ",
    )


def fold(events: list[dict[str, Any]]) -> list[int]:
    """Fold the log into the current surface, checking every docs/snapshot.md §Surface rule."""
    surface: list[int] = []
    for i, ev in enumerate(events):
        _check(ev.get("seq") == i, f"seq gap at index {i}: {ev.get('seq')}")
        _check_sources(ev)
        op: Any = ev.get("surfaceOp")
        if ev["type"] not in SURFACE_TYPES:
            _check(op is None, f"seq {i}: surfaceOp on {ev['type']}")
            continue
        _check(op is not None, f"seq {i}: {ev['type']} without surfaceOp")
        if ev["type"] == "assistant/message":
            _check_message_matches_chunks(ev, events)
        if op == "append":
            surface.append(i)
            continue
        _check(isinstance(op, dict) and op.get("op") == "replace", f"seq {i}: bad surfaceOp {op}")
        _check(
            op["start"] in surface and op["end"] in surface, f"seq {i}: replace range off surface"
        )
        a, b = surface.index(op["start"]), surface.index(op["end"])
        _check(a <= b, f"seq {i}: replace start after end")
        replaced = surface[a : b + 1]
        _check(
            set(replaced) <= set(ev.get("sourceEventSeqs", [])), f"seq {i}: replaced node not cited"
        )
        if ev["type"] == "tool/result":
            _check(len(replaced) == 1, f"seq {i}: prune replaces {len(replaced)} nodes")
            _check_prune(events[replaced[0]], ev)
        else:
            src = ev["data"].get("source", {})
            _check(
                src.get("kind") == "plugin" and src.get("plugin") == "compact",
                f"seq {i}: replacing user/message is not a compact checkpoint",
            )
        surface[a : b + 1] = [i]
    return surface


def _check_prune(old: dict[str, Any], new: dict[str, Any]) -> None:
    """Check a replacing tool/result differs only in ``message.content[0].content``."""
    _check(old["type"] == "tool/result", f"seq {new['seq']}: prune replaces {old['type']}")

    def strip(data: dict[str, Any]) -> str:
        data = json.loads(json.dumps(data))
        data["message"]["content"][0]["content"] = None
        return json.dumps(data, sort_keys=True)

    _check(
        strip(old["data"]) == strip(new["data"]),
        f"seq {new['seq']}: prune changes more than content",
    )


def verify_file(path: Path) -> dict[str, Any]:
    """Verify one session log and return a small summary."""
    header, events, nframes = read_session(path)
    check_header(header, path)
    surface = fold(events)
    return {"id": header["id"], "events": len(events), "frames": nframes, "surface": len(surface)}


def store_root(text: str) -> Path:
    """A store root named on the command line: a directory, else a usage error.

    >>> store_root("/")
    PosixPath('/')
    """
    root = Path(text)
    if not root.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a directory")
    return root


def main(argv: Sequence[str] | None = None) -> int:
    """Verify every session under each given store root; exit 1 on the first failure."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.verify",
        description="Check generated benchmark stores independently of the generator.",
    )
    parser.add_argument("roots", nargs="+", type=store_root, metavar="ROOT", help="a store root")
    roots: list[Path] = parser.parse_args(argv).roots
    n = 0
    for root in roots:
        for path in session_files(root):
            try:
                info = verify_file(path)
            except (StoreError, ValueError, KeyError, TypeError) as exc:
                print(f"FAIL {path}: {exc}", file=sys.stderr)
                return 1
            n += 1
            print(json.dumps(info, ensure_ascii=False))
    print(f"{n} sessions OK", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
