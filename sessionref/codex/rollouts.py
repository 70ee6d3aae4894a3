"""Codex CLI rollout files, plain or compressed (docs/harnesses.md §Codex §Compressed).

Codex compresses a cold rollout (one untouched for a week) to ``<name>.jsonl.zst`` beside it:
one zstd stream, written to a temporary file, checked, and renamed into place whole, and the
plain file removed; to append to it again it decompresses it back the same way. A plain
``.jsonl`` therefore hides a ``.jsonl.zst`` of the same name in the same folder (one caught
between the two steps), and a compressed rollout that ends inside a frame or does not
decompress is damaged, not torn (openai/codex ``codex-rs/rollout/src/compression.rs``:
``RolloutFile::from_path``, ``existing_rollout_path``, the compression worker).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from sessionref.log.discovery import StoreProblem, directory_entries
from sessionref.log.harness_store import first_lines, head_lines, real_directories
from sessionref.log.jsonl import committed_lines, file_bytes
from sessionref.log.zstd_files import plaintext_chunks

ROLLOUT_PREFIX: Final = "rollout-"
UUID: Final = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
"""A thread or segment id, as Codex writes them (a UUID)."""
PLAIN_SUFFIX: Final = ".jsonl"
COMPRESSED_SUFFIX: Final = ".zst"
PAGES: Final = "rollout_segments"
"""The folder below ``sessions/`` where Codex keeps the older pages of its paginated threads
(:mod:`sessionref.codex.references`)."""


def folders(
    directory: Path, passed: list[StoreProblem] | None = None, skipped: str | None = None
) -> Iterator[Path]:
    """``directory`` and every real directory below it, by name, but the one directly below it
    named ``skipped`` and what it holds (see
    :func:`~sessionref.log.harness_store.real_directories` for ``passed``).

    >>> list(folders(Path("/nonexistent")))
    [PosixPath('/nonexistent')]
    """
    yield directory
    for below in real_directories(directory, passed):
        if below.name != skipped:
            yield from folders(below, passed)


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


def rollout_files(folder: Path, passed: list[StoreProblem] | None = None) -> list[Path]:
    """The rollouts in ``folder``, by name (:func:`shown_names`): files, and whatever else
    bears such a name (reading it says what is wrong); a folder that cannot be listed is a
    problem added to ``passed``.

    >>> rollout_files(Path("/nonexistent"))
    []
    """
    names = [entry.name for entry in directory_entries(folder, passed)]
    return [folder / name for name in shown_names(names)]


def existing_rollout(path: Path) -> Path | None:
    """The rollout a path names, as it is on disk: the plain file, else its compressed
    sibling; ``None`` when neither is there.

    >>> existing_rollout(Path("/nonexistent/rollout-1.jsonl")) is None
    True
    """
    plain = path.with_name(path.name.removesuffix(COMPRESSED_SUFFIX))
    for candidate in (plain, plain.with_name(plain.name + COMPRESSED_SUFFIX)):
        if os.path.exists(candidate):
            return candidate
    return None


def rollout_head(path: Path, max_bytes: int, max_line_bytes: int) -> list[bytes]:
    """The committed lines of a rollout's first 64 KiB of text, plain or compressed (a
    compressed one no larger than ``max_bytes``, and decompressed only that far).

    >>> rollout_head(Path("/no/rollout-1.jsonl.zst"), 10, 10)
    Traceback (most recent call last):
    sessionref.errors.LogUnreadable: cannot read /no/rollout-1.jsonl.zst: No such file or directory
    """
    if not is_compressed(path):
        return head_lines(path, max_line_bytes)
    location = str(path)
    chunks = plaintext_chunks(location, file_bytes(location, max_bytes), max_bytes)
    return first_lines(chunks, location, max_line_bytes)


def rollout_text(path: Path, max_bytes: int) -> bytes:
    """The text of a rollout, plain or compressed; neither the file nor its text may be over
    ``max_bytes``. A damaged compressed rollout raises :class:`SessionLogError` naming it.

    >>> rollout_text(Path("/no/rollout-1.jsonl.zst"), 10)
    Traceback (most recent call last):
    sessionref.errors.LogUnreadable: cannot read /no/rollout-1.jsonl.zst: No such file or directory
    """
    location = str(path)
    data = file_bytes(location, max_bytes)
    return b"".join(plaintext_chunks(location, data, max_bytes)) if is_compressed(path) else data


def rollout_lines(path: Path, max_bytes: int, max_line_bytes: int) -> list[bytes]:
    """The committed lines of a rollout's text (:func:`rollout_text`).

    >>> rollout_lines(Path("/no/rollout-1.jsonl.zst"), 10, 10)
    Traceback (most recent call last):
    sessionref.errors.LogUnreadable: cannot read /no/rollout-1.jsonl.zst: No such file or directory
    """
    return committed_lines(rollout_text(path, max_bytes), max_line_bytes, str(path))
