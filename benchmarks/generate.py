"""Seeded, deterministic generator of realistic DSH session stores for benchmarks.

Writes the DSH JSONL backend layout (docs/format.md §Layout)::

    <root>/--<project-key>--/<encoded-id>/session.jsonl.zstd

as concatenated independent zstd frames (checksummed): the first frame holds only
the header line, every later frame one *append batch* — the events that arrived
within a 200 ms window, exactly how the harness flushes. Assistant delta streams
are packed per batch into ``text-chunks`` / ``reasoning-chunks`` /
``tool-call-chunks`` rows (runs shorter than 3 members stay verbatim
``assistant/chunk`` events), so long streams become many rows, as on disk.

Each session has turns of ``user/message`` → steps (streams, ``assistant/message``,
``tool/call``, ``tool/result``) → ``turn/end``, plus occasional titles,
compactions (a compact checkpoint replacing a contiguous surface range) and
tool-result prunes. A model of the current surface keeps every replace valid.

Usage::

    python -m benchmarks.generate --out benchmarks/stores

writes ``sizes/`` (one session per size), ``sizes-plain/`` (the same logs as
plain ``session.jsonl``, for floor measurements), ``batch/`` (many small
sessions) and ``manifest.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time as _time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.dshlog import LogWriter, make_header, read_plain_bytes, write_plain_copy
from benchmarks.options import profile_list, turn_counts
from benchmarks.sessiongen import CHAT, PROFILES, TOOLS, Profile, SessionGenerator
from sessionref.log.writer import SessionWriter, log_path

__all__ = [
    "CHAT",
    "DEFAULT_SEED",
    "DEFAULT_SIZES",
    "PROFILES",
    "TOOLS",
    "GeneratedSession",
    "Profile",
    "generate_batch_store",
    "generate_session",
    "generate_store",
    "main",
    "read_plain_bytes",
    "session_path",
    "size_session_id",
    "write_plain_copy",
]

DEFAULT_SEED = 20240601
DEFAULT_SIZES: tuple[int, ...] = (100, 400, 1600, 6400)

PROJECTS = (
    "/home/dev/projects/harness",
    "/home/dev/projects/webapp",
    "/srv/repos/data-pipeline",
    "/Users/kim/code/mobile app",
    "/mnt/c/Users/dev/repos/tooling",
    "/home/dev/projects/研究/notes",
)


@dataclass
class GeneratedSession:
    """What was written for one session."""

    session_id: str
    profile: str
    cwd: str | None
    turns: int
    path: str
    plain_path: str | None
    events: int
    frames: int
    surface_nodes: int
    compactions: int
    prunes: int
    plain_bytes: int
    zstd_bytes: int
    created_at: int


def generate_session(
    root: Path | str,
    session_id: str,
    turns: int,
    *,
    seed: int = DEFAULT_SEED,
    cwd: str | None = PROJECTS[0],
    created_at: int | None = None,
    plain_root: Path | str | None = None,
    parent: str | None = None,
    profile: Profile = TOOLS,
    lone_surrogate_rate: float = 0.0,
    draws: str | None = None,
) -> GeneratedSession:
    """Write one session of ``turns`` turns under ``root`` and return its description.

    The log is a pure function of ``(seed, session_id, turns)`` and the keyword
    arguments. Its random draws are keyed by ``draws`` (default ``session_id``): two
    sessions of one key and profile hold the same texts, and lone surrogates are drawn
    apart, so adding them changes nothing else. With ``plain_root`` the same bytes also
    go to a plain ``session.jsonl`` in a mirrored layout.
    """
    key = f"{seed}/{session_id if draws is None else draws}/{turns}"
    rng = random.Random(key)
    if created_at is None:
        created_at = 1_750_000_000_000 + rng.randrange(10**9)
    depth = 1 if parent is not None else 0
    header = make_header(session_id, created_at, cwd, parent=parent, depth=depth)
    sink = SessionWriter(root, header, compress=True)
    mirror = None if plain_root is None else SessionWriter(plain_root, header, compress=False)
    writer = LogWriter([sink] if mirror is None else [sink, mirror])
    gen = SessionGenerator(
        writer,
        rng,
        created_at + 500,
        profile=profile,
        lone_surrogate_rate=lone_surrogate_rate,
        lone_rng=random.Random(f"{key}/lone-surrogates"),
    )
    gen.run(turns)
    writer.close()
    sink.close()
    if mirror is not None:
        mirror.close()
    return GeneratedSession(
        session_id=session_id,
        profile=profile.name,
        cwd=cwd,
        turns=turns,
        path=str(sink.path),
        plain_path=None if mirror is None else str(mirror.path),
        events=writer.seq,
        frames=sink.frames,
        surface_nodes=len(gen.surface.nodes),
        compactions=gen.compactions,
        prunes=gen.prunes,
        plain_bytes=sink.plain_bytes,
        zstd_bytes=sink.file_bytes,
        created_at=created_at,
    )


def session_path(
    root: Path | str, session_id: str, cwd: str | None, *, compressed: bool = True
) -> Path:
    """Return the log path of a session inside a store root."""
    header = {"id": session_id} if cwd is None else {"id": session_id, "cwd": cwd}
    return log_path(root, header, compress=compressed)


def size_session_id(turns: int, profile: Profile = CHAT) -> str:
    """Return the id of the size-benchmark session of ``profile`` with ``turns`` turns.

    >>> size_session_id(1600, TOOLS)
    'bench-tools-01600-turns'
    """
    return f"bench-{profile.name}-{turns:05d}-turns"


def generate_store(
    root: Path | str,
    sizes: Sequence[int] = DEFAULT_SIZES,
    *,
    profiles: Sequence[Profile] = (CHAT, TOOLS),
    seed: int = DEFAULT_SEED,
    plain_root: Path | str | None = None,
    lone_surrogate_rate: float = 0.0,
) -> list[GeneratedSession]:
    """Write one session per profile and entry of ``sizes`` (turn counts) into store ``root``.

    Session ids are :func:`size_session_id`; all share one project cwd. A profile's
    session draws as the one of its :attr:`~Profile.draws_like` profile and size does
    (``surrogates``: the ``chat`` session, plus lone surrogates). With ``plain_root``
    every log is also written as plain JSONL (floor measurements).
    """
    root = Path(root)
    plain = Path(plain_root) if plain_root is not None else None
    out = []
    for profile in profiles:
        for i, turns in enumerate(sizes):
            out.append(
                generate_session(
                    root,
                    size_session_id(turns, profile),
                    turns,
                    seed=seed,
                    created_at=1_760_000_000_000 + i * 86_400_000,
                    plain_root=plain,
                    profile=profile,
                    lone_surrogate_rate=lone_surrogate_rate,
                    draws=size_session_id(turns, PROFILES[profile.draws_like or profile.name]),
                )
            )
    return out


_ODD_IDS = (".hidden-session", "sess/α:β ~x", "会话-Δ-🙂", "..")


def batch_session_ids(count: int, seed: int = DEFAULT_SEED) -> list[str]:
    """Return ``count`` deterministic ids: uuid-like ones plus a few odd ones."""
    rng = random.Random(f"{seed}/batch-ids")
    ids = []
    for i in range(count):
        if i % 50 == 7 and i // 50 < len(_ODD_IDS):
            ids.append(_ODD_IDS[i // 50])
        else:
            h = f"{rng.getrandbits(128):032x}"
            ids.append(f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}")
    return ids


def generate_batch_store(
    root: Path | str,
    sessions: int = 200,
    turns: int = 20,
    *,
    seed: int = DEFAULT_SEED,
    plain_root: Path | str | None = None,
) -> list[GeneratedSession]:
    """Write ``sessions`` small sessions of about ``turns`` turns (±50%) into ``root``.

    Sessions spread over several project cwds (and ``_no-cwd``); every tenth is a
    subagent child of an earlier one. Meant for batch-throughput benchmarks.
    """
    root = Path(root)
    plain = Path(plain_root) if plain_root is not None else None
    rng = random.Random(f"{seed}/batch")
    ids = batch_session_ids(sessions, seed)
    out: list[GeneratedSession] = []
    for i, session_id in enumerate(ids):
        n = max(1, rng.randint(turns // 2, turns + turns // 2))
        cwd = None if rng.random() < 0.1 else rng.choice(PROJECTS)
        parent = out[rng.randrange(len(out))].session_id if out and i % 10 == 9 else None
        out.append(
            generate_session(
                root,
                session_id,
                n,
                seed=seed,
                cwd=cwd,
                parent=parent,
                created_at=1_755_000_000_000 + i * 3_600_000 + rng.randrange(3_600_000),
                plain_root=plain,
                profile=TOOLS,
            )
        )
    return out


# --------------------------------------------------------------------------- CLI


def _summary_line(s: GeneratedSession) -> str:
    """Return one human-readable line describing a generated session."""
    return (
        f"{s.profile:>5} {s.turns:>6} turns  {s.plain_bytes / 1e6:8.2f} MB jsonl"
        f"  {s.zstd_bytes / 1e6:7.2f} MB zstd"
        f"  {s.events:>9} events  {s.frames:>6} frames  surface {s.surface_nodes:>6}"
        f"  compactions {s.compactions:>3}  prunes {s.prunes:>4}  {s.session_id}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; see the module docstring."""
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.generate", description=__doc__.split("\n")[0]
    )
    p.add_argument("--out", type=Path, default=Path("benchmarks/stores"), help="output directory")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument(
        "--sizes", type=turn_counts, default=list(DEFAULT_SIZES), help="turn counts, e.g. 100,400"
    )
    p.add_argument(
        "--profiles",
        type=profile_list,
        default=list(PROFILES.values()),
        help=f"session kinds for the sizes store, e.g. chat,tools (of {', '.join(PROFILES)})",
    )
    p.add_argument(
        "--batch-sessions", type=int, default=200, help="sessions in the batch store (0: none)"
    )
    p.add_argument("--batch-turns", type=int, default=20, help="mean turns per batch session")
    p.add_argument(
        "--no-plain", action="store_true", help="skip the plain JSONL mirror of the sizes store"
    )
    p.add_argument(
        "--lone-surrogates", type=float, default=0.0, help="per-text lone-surrogate probability"
    )
    args = p.parse_args(argv)

    out: Path = args.out
    manifest: dict[str, Any] = {"seed": args.seed, "sizes": [], "batch": []}
    t0 = _time.perf_counter()
    plain_root = None if args.no_plain else out / "sizes-plain"
    for s in generate_store(
        out / "sizes",
        args.sizes,
        profiles=args.profiles,
        seed=args.seed,
        plain_root=plain_root,
        lone_surrogate_rate=args.lone_surrogates,
    ):
        print(_summary_line(s), flush=True)
        manifest["sizes"].append(asdict(s))
    if args.batch_sessions > 0:
        batch = generate_batch_store(
            out / "batch", args.batch_sessions, args.batch_turns, seed=args.seed
        )
        manifest["batch"] = [asdict(s) for s in batch]
        total = sum(s.plain_bytes for s in batch)
        ztotal = sum(s.zstd_bytes for s in batch)
        print(
            f"batch: {len(batch)} sessions  {total / 1e6:.2f} MB jsonl  {ztotal / 1e6:.2f} MB zstd"
        )
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out} in {_time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
