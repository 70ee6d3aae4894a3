"""The names of Codex CLI rollout files, plain or compressed (``rollout-<time>-<thread>.jsonl``
and ``….jsonl.zst``; docs/harnesses.md §Codex): pure functions of a name, which the detection
of a store's kind (:mod:`sessionref.roots`) uses without importing a reader.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

RUST_WHITESPACE: Final = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)
"""What Rust's ``str::trim`` takes off both ends: the characters of Unicode's White_Space."""
IDE_REQUEST: Final = "## My request for Codex:"
"""What an IDE writes before the person's request (Codex's ``USER_MESSAGE_BEGIN``)."""

ROLLOUT_PREFIX: Final = "rollout-"
PLAIN_SUFFIX: Final = ".jsonl"
COMPRESSED_SUFFIX: Final = ".zst"
_HEX32: Final = re.compile(r"[0-9a-fA-F]{32}")
_STAMP: Final = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2})-([0-9]{2})-([0-9]{2})")
_URN: Final = "urn:uuid:"


def canonical_id(text: str) -> str | None:
    """A thread, segment or rollout id as Codex reads one (a UUID, the ``uuid`` crate's
    ``parse_str``: 32 hex digits, or 8-4-4-4-12 of them with hyphens, maybe in braces or after
    ``urn:uuid:``, in either case), written as Codex writes it (lower case, hyphenated); ``None``
    for text of another shape. Two spellings of one UUID are one id.

    >>> canonical_id("{0197A000-0000-7000-8000-0000000000AA}")
    '0197a000-0000-7000-8000-0000000000aa'
    >>> canonical_id("0197a0000000700080000000000000aa")
    '0197a000-0000-7000-8000-0000000000aa'
    >>> canonical_id("0197a000-0000-7000-8000-0000000000a"), canonical_id("URN:uuid:" + "0" * 36)
    (None, None)
    """
    if len(text) == 38 and text[0] == "{" and text[-1] == "}":
        text = text[1:-1]
    elif len(text) == 45 and text.startswith(_URN):
        text = text[len(_URN) :]
    if len(text) == 36 and all(text[at] == "-" for at in (8, 13, 18, 23)):
        text = text.replace("-", "")
    if not _HEX32.fullmatch(text):
        return None
    digits = text.lower()
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def is_rollout_time(stamp: str) -> bool:
    """Whether ``stamp`` is the time of a rollout's name as Codex reads it
    (``[year]-[month]-[day]T[hour]-[minute]-[second]``): a real date (years 0000 to 9999) and
    time of day, each field of its width.

    >>> is_rollout_time("2024-02-29T23-59-59"), is_rollout_time("2025-02-29T10-00-00")
    (True, False)
    >>> is_rollout_time("2025-06-01T24-00-00"), is_rollout_time("2025-6-01T10-00-00")
    (False, False)
    """
    found = _STAMP.fullmatch(stamp)
    if found is None:
        return False
    year, month, day, hour, minute, second = map(int, found.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    return (
        1 <= month <= 12 and 1 <= day <= days[month - 1] and hour < 24 and max(minute, second) < 60
    )


def plain_name(name: str) -> str | None:
    """The plain name of a rollout file's name (``rollout-*.jsonl``, or that with ``.zst``);
    ``None`` for another name.

    >>> plain_name("rollout-1.jsonl.zst"), plain_name("rollout-1.jsonl"), plain_name("x.jsonl")
    ('rollout-1.jsonl', 'rollout-1.jsonl', None)
    """
    plain = name.removesuffix(COMPRESSED_SUFFIX)
    return plain if plain.startswith(ROLLOUT_PREFIX) and plain.endswith(PLAIN_SUFFIX) else None


def rollout_ids(name: str) -> tuple[str, str] | None:
    """The thread and the rollout a rollout file's name says it holds, as Codex's
    ``RolloutFileName::parse`` reads the name: ``rollout-<time>-<thread>.jsonl``, the rollout
    being the thread's own, or ``rollout-<time>-<thread>_<rollout>.jsonl`` (a page of a
    paginated thread, or a reverted thread's rewrite), maybe compressed, whose time is a real
    one (:func:`is_rollout_time`) and whose ids are UUIDs (:func:`canonical_id`, which gives
    them); ``None`` for any other name: Codex takes no such file for a rollout.

    >>> a, b = "0197a000-0000-7000-8000-0000000000aa", "0197c000-0000-7000-8000-000000000001"
    >>> rollout_ids(f"rollout-2025-06-01T10-00-00-{a}_{b}.jsonl.zst") == (a, b)
    True
    >>> rollout_ids(f"rollout-2025-06-01T10-00-00-{a.upper()}.jsonl") == (a, a)
    True
    >>> rollout_ids(f"rollout-2025-06-01T10-00-00-{a}_.jsonl"), rollout_ids("rollout-1.jsonl")
    (None, None)
    >>> rollout_ids(f"rollout-2025-06-31T10-00-00-{a}.jsonl") is None
    True
    """
    core = (plain_name(name) or "")[len(ROLLOUT_PREFIX) : -len(PLAIN_SUFFIX)]
    if not is_rollout_time(core[:19]) or core[19:20] != "-":
        return None
    thread, underscore, rollout = core[20:].partition("_")
    thread_id = canonical_id(thread)
    rollout_id = canonical_id(rollout) if underscore else thread_id
    return (thread_id, rollout_id) if thread_id and rollout_id else None


def rollout_order(name: str) -> tuple[str, str] | None:
    """Where a rollout file's name puts it among its thread's rollouts, the newest last: by
    the time of its name, then by its rollout id (a UUIDv7, later for a later rollout), as
    Codex picks the rollout a thread id resolves to (openai/codex
    ``codex-rs/rollout/src/list.rs``: ``find_thread_path_by_id_from_filenames``,
    ``select_thread_candidates``). The time's fields have fixed widths and the ids are written
    one way (:func:`rollout_ids`), so the texts compare as the times and UUIDs do. ``None``
    for a name Codex does not read.

    >>> a, b = "0197a000-0000-7000-8000-0000000000aa", "0197c000-0000-7000-8000-000000000001"
    >>> rollout_order(f"rollout-2025-06-01T10-00-00-{a}_{b}.jsonl.zst") == (
    ...     "2025-06-01T10-00-00", b)
    True
    >>> rollout_order(f"rollout-2025-06-01T10-00-00-{a}.jsonl") < rollout_order(
    ...     f"rollout-2025-06-01T10-00-00-{a}_{b}.jsonl")
    True
    >>> rollout_order("rollout-1.jsonl") is None
    True
    """
    ids = rollout_ids(name)
    return None if ids is None else (name[len(ROLLOUT_PREFIX) :][:19], ids[1])


def is_compressed(path: Path) -> bool:
    """Whether ``path`` names a compressed rollout.

    >>> is_compressed(Path("a/rollout-1.jsonl.zst")), is_compressed(Path("a/rollout-1.jsonl"))
    (True, False)
    """
    return path.name.endswith(PLAIN_SUFFIX + COMPRESSED_SUFFIX)


def shown_names(names: list[str]) -> list[str]:
    """The rollout files of a folder's ``names``, in their order, as Codex's ``RolloutFile``
    finds them: those named ``rollout-*.jsonl``, plain or compressed, a compressed one only
    when no plain one of its name is there.

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


def listed_names(names: list[str]) -> list[str]:
    """The rollouts of a folder's ``names`` that Codex lists and finds by id: those of
    :func:`shown_names` whose name it reads (:func:`rollout_ids`).

    >>> t = "0197a000-0000-7000-8000-0000000000aa"
    >>> listed_names([f"rollout-2025-06-01T10-00-00-{t}.jsonl", "rollout-1.jsonl"]) == [
    ...     f"rollout-2025-06-01T10-00-00-{t}.jsonl"]
    True
    """
    return [name for name in shown_names(names) if rollout_ids(name) is not None]
