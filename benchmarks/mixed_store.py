"""A generated store of mixed harnesses: DSH, Claude Code and Codex sessions side by side, as
a user of all three has them (``python -m benchmarks.mixed_bench`` writes and measures one).

The store's root holds three roots, one per harness: ``dsh/`` (``generate_batch_store``),
``claude/projects/<project>/<session>.jsonl`` and ``codex/sessions/YYYY/MM/DD/rollout-*.jsonl``
with a ``codex/session_index.jsonl`` naming every third thread. The Claude Code and Codex logs
are those of :mod:`benchmarks.harness_bench` (prompts, streamed answers, thinking, tool calls
and outputs), 10 to 80 lines each, spread over the projects of :mod:`benchmarks.generate` and
over 23 days. Seeded: the same arguments write the same bytes.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import NamedTuple

from benchmarks.generate import PROJECTS, generate_batch_store
from benchmarks.harness_bench import Origin, claude_records, codex_items, iso, prose, write_lines

SPACING_MS = 200_000
"""Between two sessions' first lines: 10,000 sessions span 23 days."""


class MixedRoots(NamedTuple):
    """The three roots of a mixed store."""

    dsh: Path
    claude: Path
    codex: Path


def mixed_roots(root: Path) -> MixedRoots:
    """Where the roots of the mixed store at ``root`` are.

    >>> mixed_roots(Path("/m")).codex.as_posix()
    '/m/codex'
    """
    return MixedRoots(root / "dsh", root / "claude", root / "codex")


def _claude_folder(cwd: str) -> str:
    """The project folder Claude Code names after a cwd.

    >>> _claude_folder("/home/dev/x y")
    '-home-dev-x-y'
    """
    return "".join(c if c.isalnum() else "-" for c in cwd)


def _id(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def write_claude(root: Path, count: int, rng: random.Random) -> None:
    """``count`` Claude Code sessions below ``root/projects``."""
    for n in range(count):
        cwd, session = rng.choice(PROJECTS), _id(rng)
        lines = rng.randint(10, 80)
        path = root / "projects" / _claude_folder(cwd) / f"{session}.jsonl"
        origin = Origin(session, cwd, (3 * n + 1) * SPACING_MS)
        write_lines(path, claude_records(lines, rng, origin), lines)


def write_codex(root: Path, count: int, rng: random.Random) -> None:
    """``count`` Codex threads below ``root/sessions``, every third named in
    ``session_index.jsonl``."""
    names = []
    for n in range(count):
        cwd, thread, start = rng.choice(PROJECTS), _id(rng), (3 * n + 2) * SPACING_MS
        day, stamp = iso(start)[:10].split("-"), iso(start)[:19].replace(":", "-")
        lines = rng.randint(10, 80)
        path = root.joinpath("sessions", *day, f"rollout-{stamp}-{thread}.jsonl")
        write_lines(path, codex_items(lines, rng, Origin(thread, cwd, start)), lines)
        if n % 3 == 0:
            names.append({"id": thread, "thread_name": prose(rng, 2, 5), "updated_at": iso(start)})
    root.joinpath("session_index.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in names)
    )


def generate_mixed_store(root: Path, sessions: int, seed: int = 23) -> MixedRoots:
    """Write ``sessions`` sessions into ``root``: a third of them each DSH (of about 6
    turns), Claude Code and Codex."""
    roots = mixed_roots(root)
    rng = random.Random(f"{seed}/mixed")
    third = sessions // 3
    generate_batch_store(roots.dsh, sessions - 2 * third, turns=6, seed=seed)
    write_claude(roots.claude, third, rng)
    write_codex(roots.codex, third, rng)
    return roots
