"""Paginated threads: the newest Codex keeps a thread's older pages out of its live rollout,
in ``sessions/rollout_segments/YYYY/MM/DD/rollout-<time>-<thread>_<rollout id>.jsonl``, and a
page's ``session_meta`` (``history_mode: "paginated"``) names in its ``history_base`` the
prefix of the rollout that comes before its own lines: up to a byte offset of that rollout's
text, which ends a line, and a line number (docs/harnesses.md §Codex §Pages; openai/codex
``codex-rs/rollout/src/reference.rs``: ``load_history_base_prefix``, ``expand_lines``; the
page is found by the rollout id in its name, ``find_rollout_path_by_rollout_id`` in
``codex-rs/rollout/src/list.rs``). :class:`~sessionref.codex.references.Expansion` reads them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Final, NamedTuple

import msgspec

from sessionref.codex.names import canonical_id, rollout_ids
from sessionref.codex.rollouts import folders, rollout_files
from sessionref.errors import SessionLogError
from sessionref.log.jsonl import committed_lines, decode_line


class LinePayload(msgspec.Struct, frozen=True, gc=False):
    """The fields of a payload that pages and references read (a ``session_meta``'s, a
    ``rollout_reference``'s, an event's or a response item's); any value, checked where read
    (``max_depth`` is ``UNSET`` when absent: Codex takes an absent one, not a ``null``)."""

    type: object = None
    id: object = None
    segment_id: object = None
    history_mode: object = None
    history_base: object = None
    rollout_path: object = None
    thread_id: object = None
    rollout_id: object = None
    rollout_timestamp: object = None
    nth_user_message: object = None
    max_depth: object = msgspec.UNSET
    compacted_replacement_history_filter_texts: object = None
    role: object = None
    num_turns: object = None
    item: object = None


class _RawLinePayload(LinePayload, frozen=True, gc=False):
    """A payload as msgspec takes it: an event's ``item`` kept raw (only a fork's cut reads
    it, :func:`~sessionref.codex.records.turn_item`)."""

    item: msgspec.Raw = msgspec.Raw(b"null")


class RolloutLine(msgspec.Struct, frozen=True, gc=False):
    """A rollout line as far as pages and references read it."""

    type: object = None
    ordinal: object = None
    payload: LinePayload | None = None


class _RawRolloutLine(RolloutLine, frozen=True, gc=False):
    payload: _RawLinePayload | None = None


_LINE: Final = msgspec.json.Decoder(_RawRolloutLine)


def decoded(line: bytes) -> RolloutLine:
    """A line as far as pages and references read it (empty for one not of that shape).

    >>> decoded(b'{"type":"session_meta","payload":{"id":"t"}}').payload.id, decoded(b"[1]")
    ('t', RolloutLine(type=None, ordinal=None, payload=None))
    """
    found = decode_line(_LINE, RolloutLine, line)
    return found if isinstance(found, RolloutLine) else RolloutLine()


class HistoryBase(NamedTuple):
    """What a page continues (Codex's ``HistoryPosition``): the rollout of that id up to the
    line numbered ``end_ordinal`` and the byte ``end_byte`` of its text."""

    rollout: str
    end_ordinal: int
    end_byte: int


def history_base_of(first_lines: list[bytes]) -> HistoryBase | None:
    """The ``history_base`` of a rollout's first line: a ``session_meta`` of a paginated
    thread (Codex follows no other); ``None`` when there is none or it is not of its shape.
    Its rollout id is read as Codex reads ids (:func:`~sessionref.codex.names.canonical_id`).

    >>> meta = (b'{"type":"session_meta","payload":{"id":"t","history_mode":"paginated",'
    ...     b'"history_base":{"thread_id":"0197c000-0000-7000-8000-000000000001",'
    ...     b'"end_ordinal_exclusive":5,"end_byte_offset":900}}}')
    >>> history_base_of([meta])
    HistoryBase(rollout='0197c000-0000-7000-8000-000000000001', end_ordinal=5, end_byte=900)
    >>> history_base_of([meta.replace(b"paginated", b"legacy")]), history_base_of([])
    (None, None)
    """
    line = decoded(first_lines[0]) if first_lines else RolloutLine()
    meta = line.payload
    if line.type != "session_meta" or meta is None or meta.history_mode != "paginated":
        return None
    base = meta.history_base if isinstance(meta.history_base, dict) else {}
    rollout, ordinal, offset = (
        base.get(key) for key in ("thread_id", "end_ordinal_exclusive", "end_byte_offset")
    )
    rollout = canonical_id(rollout) if type(rollout) is str else None
    if rollout is None or type(ordinal) is not int or type(offset) is not int:
        return None
    return HistoryBase(rollout, ordinal, offset) if min(ordinal, offset) >= 0 else None


def prefix(
    text: bytes, base: HistoryBase, path: Path, max_line_bytes: int
) -> tuple[str, list[bytes]]:
    """The thread of the rollout at ``path`` whose text is ``text`` (its id as Codex reads it:
    :func:`~sessionref.codex.names.canonical_id`), and its lines that ``base`` names, as Codex
    takes them: those before byte ``base.end_byte``, which must end a
    line, but blank ones; the first a ``session_meta`` with an id, the last numbered just
    before ``base.end_ordinal``. Else :class:`SessionLogError` names the file and why.

    >>> text = b'{"ordinal":0,"type":"session_meta","payload":{"id":"t"}}\\n\\n{"ordinal":1}\\n'
    >>> prefix(text, HistoryBase("r", 2, len(text)), Path("p"), 100)[0]
    't'
    >>> prefix(text, HistoryBase("r", 2, len(text) - 2), Path("p"), 100)
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: p: history_base byte offset 70 does not end a line
    """
    end = base.end_byte
    if len(text) < end:
        raise SessionLogError(
            f"{path}: history_base byte offset {end} is past its end ({len(text)} bytes)"
        )
    if not text[:end].endswith(b"\n"):
        raise SessionLogError(f"{path}: history_base byte offset {end} does not end a line")
    lines = [
        line for line in committed_lines(text[:end], max_line_bytes, str(path)) if line.strip()
    ]
    first = decoded(lines[0]) if lines else RolloutLine()
    if first.type != "session_meta" or first.payload is None or type(first.payload.id) is not str:
        raise SessionLogError(f"{path}: history_base prefix starts with no session_meta")
    last = decoded(lines[-1]).ordinal
    if type(last) is not int or last + 1 != base.end_ordinal:
        raise SessionLogError(
            f"{path}: history_base ordinal {base.end_ordinal} does not follow the last line "
            f"before byte {end}"
        )
    return canonical_id(first.payload.id) or first.payload.id, lines


FolderState = tuple[int, int, int] | None
"""What tells one state of a folder from another (its inode, modification and change times):
a file or folder made, renamed or removed in it changes it; ``None`` for one not there."""
RACY_NS: Final = 2_000_000_000
"""How recent a folder's modification time may be for a walk not to trust it: a change made
within the file system's clock tick after the walk listed it leaves it as it was."""


def folder_state(folder: Path) -> FolderState:
    """The state of ``folder`` (:data:`FolderState`).

    >>> folder_state(Path("/nonexistent")) is None
    True
    """
    try:
        status = os.stat(folder)
    except OSError:
        return None
    return status.st_ino, status.st_mtime_ns, status.st_ctime_ns


def rollouts_by_id(home: Path, states: dict[Path, FolderState] | None = None) -> dict[str, Path]:
    """Every rollout below ``sessions/`` (its pages too), then ``archived_sessions/``, of the
    Codex home ``home``, by the rollout id its name says (the first found of an id), as
    Codex's ``find_rollout_path_by_rollout_id`` looks a page up. With ``states``, the state of
    each folder walked is added there, taken before the folder is listed.

    >>> rollouts_by_id(Path("/nonexistent"))
    {}
    """
    found: dict[str, Path] = {}
    for root in ("sessions", "archived_sessions"):
        for folder in folders(home / root):
            if states is not None:
                states[folder] = folder_state(folder)
            for path in rollout_files(folder):
                ids = rollout_ids(path.name)
                if ids is not None:
                    found.setdefault(ids[1], path)
    return found


class _Walk(NamedTuple):
    """What a walk of the home found, the state of each folder it walked, and whether one of
    them changed so recently that a later change may not show (:data:`RACY_NS`)."""

    found: dict[str, Path]
    states: dict[Path, FolderState]
    racy: bool

    def is_current(self) -> bool:
        """Whether no folder walked has changed since: a rollout not found then is not there
        now either."""
        return not self.racy and all(
            folder_state(folder) == state for folder, state in self.states.items()
        )


class RolloutsById:
    """:func:`rollouts_by_id` of a Codex home, walked once and again only when a rollout asked
    for is not where the last walk found it (a page, once written, stays where it is), or is
    one it did not find while a folder it walked has changed since: an index refresh over many
    paginated threads walks the home once, not once a thread, and a thread whose page or
    reference is found nowhere is read again without a walk.

    >>> RolloutsById(Path("/nonexistent")).find("0197c000-0000-7000-8000-000000000001") is None
    True
    """

    def __init__(self, home: Path) -> None:
        self.home = home
        self._walk: _Walk | None = None

    def find(self, rollout: str) -> Path | None:
        """The rollout of id ``rollout`` in the home, if there is one."""
        walk = self._walk
        path = None if walk is None else walk.found.get(rollout)
        if path is not None and path.exists():
            return path
        if walk is not None and path is None and walk.is_current():
            return None
        self._walk = walk = self._walked()
        return walk.found.get(rollout)

    def _walked(self) -> _Walk:
        states: dict[Path, FolderState] = {}
        started = time.time_ns()
        found = rollouts_by_id(self.home, states)
        racy = any(state[1] > started - RACY_NS for state in states.values() if state is not None)
        return _Walk(found, states, racy)
