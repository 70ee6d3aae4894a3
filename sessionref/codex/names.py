"""The names of Codex CLI rollout files, plain or compressed (``rollout-<time>-<thread>.jsonl``
and ``….jsonl.zst``; docs/harnesses.md §Codex): pure functions of a name, which the detection
of a store's kind (:mod:`sessionref.roots`) uses without importing a reader.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

ROLLOUT_PREFIX: Final = "rollout-"
UUID: Final = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
"""A thread or segment id, as Codex writes them (a UUID)."""
PLAIN_SUFFIX: Final = ".jsonl"
COMPRESSED_SUFFIX: Final = ".zst"


def plain_name(name: str) -> str | None:
    """The plain name of a rollout file's name (``rollout-*.jsonl``, or that with ``.zst``);
    ``None`` for another name.

    >>> plain_name("rollout-1.jsonl.zst"), plain_name("rollout-1.jsonl"), plain_name("x.jsonl")
    ('rollout-1.jsonl', 'rollout-1.jsonl', None)
    """
    plain = name.removesuffix(COMPRESSED_SUFFIX)
    return plain if plain.startswith(ROLLOUT_PREFIX) and plain.endswith(PLAIN_SUFFIX) else None


def rollout_ids(name: str) -> tuple[str, str] | None:
    """The thread and the rollout a rollout file's name says it holds (Codex's
    ``RolloutFileName``): ``rollout-<time>-<thread>.jsonl``, the rollout being the thread's
    own, or ``rollout-<time>-<thread>_<rollout>.jsonl`` (a page of a paginated thread, or a
    reverted thread's rewrite), maybe compressed; ``None`` for another name.

    >>> a, b = "0197a000-0000-7000-8000-0000000000aa", "0197c000-0000-7000-8000-000000000001"
    >>> rollout_ids(f"rollout-2025-06-01T10-00-00-{a}_{b}.jsonl.zst") == (a, b)
    True
    >>> rollout_ids(f"rollout-2025-06-01T10-00-00-{a}.jsonl") == (a, a)
    True
    >>> rollout_ids(f"rollout-2025-06-01T10-00-00-{a}_x.jsonl"), rollout_ids("rollout-1.jsonl")
    (None, None)
    """
    core = (plain_name(name) or "")[len(ROLLOUT_PREFIX) : -len(PLAIN_SUFFIX)]
    thread, _, rollout = core[20:].partition("_") if core[19:20] == "-" else ("", "", "")
    rollout = rollout or thread
    return (thread, rollout) if UUID.fullmatch(thread) and UUID.fullmatch(rollout) else None


def is_compressed(path: Path) -> bool:
    """Whether ``path`` names a compressed rollout.

    >>> is_compressed(Path("a/rollout-1.jsonl.zst")), is_compressed(Path("a/rollout-1.jsonl"))
    (True, False)
    """
    return path.name.endswith(PLAIN_SUFFIX + COMPRESSED_SUFFIX)


def shown_names(names: list[str]) -> list[str]:
    """The rollout files of a folder's ``names``, in their order: a compressed one only when
    no plain one of its name is there.

    >>> shown_names(["rollout-1.jsonl", "rollout-1.jsonl.zst", "rollout-2.jsonl.zst", "x"])
    ['rollout-1.jsonl', 'rollout-2.jsonl.zst']
    """
    present = set(names)
    return [
        name
        for name in names
        if plain_name(name) is not None
        and not (
            name.endswith(COMPRESSED_SUFFIX) and name.removesuffix(COMPRESSED_SUFFIX) in present
        )
    ]
