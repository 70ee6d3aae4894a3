"""Hypothesis strategies that damage valid session logs at the byte level of their on-disk form.

A valid log (by default from :func:`~sessionref.testing.session_logs`) is serialized the way DSH
writes it (:mod:`sessionref.log.writer`) — :func:`log_lines`, one JSON line per record; with
zstd, independent frames of whole lines — and then damaged in up to three layers, in this order:

1. **lines** (:func:`mutate_lines`): drop, duplicate, move or swap lines; flip bytes; tear a line
   in the middle of the file; inject garbage lines, deeply nested JSON (up to 10^5 brackets), huge
   lines, invalid UTF-8 and lone-surrogate escapes; give a field a value of the wrong JSON type
   or remove it (:data:`RECORD_FIELDS`, :data:`HEADER_FIELDS`, and every node of the record);
   put :data:`HOSTILE_STRINGS` (line breaks, terminal escapes, forged error lines) in strings.
2. **frames** (:func:`mutate_frames`, zstd only): flip bytes inside a frame, cut a frame, insert
   garbage frames (random bytes, a zstd magic followed by noise, skippable frames, well-formed
   frames of garbage text, zstd bombs), drop, duplicate or swap frames. Lines are grouped into
   frames by :func:`frame_lines`, which may also pack several lines into one frame or split a
   line across two, as a writer appending in pieces would.
3. **bytes** (:func:`mutate_bytes`): truncate anywhere, flip, insert or delete bytes of the file,
   or append a torn write.

Each step is recorded as a short description in :attr:`MutatedLog.mutations`, so a failing example
says what was done. Nothing here promises that a mutated log is unreadable: many mutations leave a
valid log (swapping two identical lines, flipping a letter inside a text). What a reader must
promise is only that it answers, with a snapshot or with its own error, and in bounded time.

>>> from hypothesis import given, settings
>>> from sessionref.testing import mutated_logs, session_logs
>>> @settings(max_examples=10, deadline=None)
... @given(mutated_logs(session_logs(max_turns=1)))
... def test_something_was_done(mutated):
...     assert mutated.mutations and isinstance(mutated.data, bytes)
>>> test_something_was_done()
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from sessionref.log.writer import log_path
from sessionref.testing.logs import session_logs
from sessionref.testing.mutations.frames import frame_lines, mutate_bytes, mutate_frames
from sessionref.testing.mutations.lines import json_paths, log_lines, mutate_lines, next_seq
from sessionref.testing.mutations.values import (
    _BOMB_SIZES,
    _DEEP_DEPTHS,
    _HUGE_SIZES,
    BAD_ESCAPES,
    DEEP_SHAPES,
    FRAME_MUTATIONS,
    GARBAGE_LINES,
    HEADER_FIELDS,
    HOSTILE_STRINGS,
    INVALID_UTF8,
    LINE_MUTATIONS,
    RECORD_FIELDS,
    WRONG_VALUES,
    deep_json,
    zstd_bomb,
)
from sessionref.testing.store import LogRecords

__all__ = [
    "BAD_ESCAPES",
    "DEEP_SHAPES",
    "FRAME_MUTATIONS",
    "GARBAGE_LINES",
    "HEADER_FIELDS",
    "HOSTILE_STRINGS",
    "INVALID_UTF8",
    "LAYERS",
    "LINE_MUTATIONS",
    "RECORD_FIELDS",
    "WRONG_VALUES",
    "MutatedLog",
    "damages_zstd_only",
    "deep_json",
    "frame_lines",
    "json_paths",
    "log_lines",
    "mutate_bytes",
    "mutate_frames",
    "mutate_lines",
    "mutated_logs",
    "mutated_stores",
    "next_seq",
    "write_mutated_store",
    "zstd_bomb",
]


@dataclass(frozen=True)
class MutatedLog:
    """A damaged log file: the valid log it was made from, its bytes on disk, and what was done."""

    log: LogRecords
    """The valid log before the damage."""
    compress: bool
    """Whether :attr:`data` is a ``session.jsonl.zstd`` file (else ``session.jsonl``)."""
    data: bytes
    """The file's bytes after the damage."""
    mutations: tuple[str, ...]
    """One description per step, in the order they were applied."""

    @property
    def session_id(self) -> str:
        """The id in the header of the valid log (the damage may have changed it in the file)."""
        session_id: str = self.log["header"]["id"]
        return session_id

    def path(self, root: str | os.PathLike[str]) -> Path:
        """Where DSH would keep the log of the valid session below ``root``."""
        return log_path(root, self.log["header"], compress=self.compress)

    def write(self, root: str | os.PathLike[str]) -> Path:
        """Write :attr:`data` at :meth:`path` and return the path."""
        path = self.path(root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.data)
        return path

    def __repr__(self) -> str:
        # Falsifying examples print this; a huge file must not flood the report.
        head = self.data[:160]
        more = f"… ({len(self.data)} bytes)" if len(self.data) > len(head) else ""
        return (
            f"MutatedLog(id={self.session_id!r}, compress={self.compress}, "
            f"mutations={list(self.mutations)!r}, data={head!r}{more})"
        )


LAYERS: tuple[str, ...] = ("lines", "frames", "bytes")
"""The layers :func:`mutated_logs` may damage, in the order it damages them."""


def damages_zstd_only(
    layers: Sequence[str], compress: bool | None, min_mutations: int, max_mutations: int
) -> bool:
    """Whether :func:`mutated_logs` with these options must draw zstd logs only: the layers can
    damage nothing else (``"frames"`` alone) and every log must be damaged.

    Options that admit no log are refused, as Hypothesis refuses ``st.integers(3, 1)``: a layer
    it does not know, bounds out of order, or a damage the layers cannot do to the logs asked
    for (a plain log has no frames).

    >>> damages_zstd_only(["frames"], None, 1, 3), damages_zstd_only(["lines"], None, 1, 3)
    (True, False)
    >>> damages_zstd_only(["frames"], False, 1, 3)
    Traceback (most recent call last):
    hypothesis.errors.InvalidArgument: mutated_logs cannot damage a plain log (compress=False) \
in layers ['frames'] alone: a plain log has no frames
    >>> damages_zstd_only(["lines"], None, 3, 1)
    Traceback (most recent call last):
    hypothesis.errors.InvalidArgument: mutated_logs needs 0 <= min_mutations <= max_mutations \
(min_mutations=3, max_mutations=1)
    """
    unknown = sorted(set(layers) - set(LAYERS))
    if unknown:
        raise InvalidArgument(f"mutated_logs: unknown layers {unknown}; choose from {list(LAYERS)}")
    if not 0 <= min_mutations <= max_mutations:
        raise InvalidArgument(
            f"mutated_logs needs 0 <= min_mutations <= max_mutations ({min_mutations=}, "
            f"{max_mutations=})"
        )
    if min_mutations == 0 or set(layers) - {"frames"}:
        return False
    if not layers or compress is False:
        raise InvalidArgument(
            f"mutated_logs cannot damage a plain log (compress={compress}) in layers"
            f" {list(layers)} alone: a plain log has no frames"
            if layers
            else "mutated_logs cannot damage a log in no layers (layers=[])"
        )
    return True


@st.composite
def mutated_logs(
    draw: st.DrawFn,
    logs: st.SearchStrategy[LogRecords] | None = None,
    *,
    compress: bool | None = None,
    layers: Iterable[str] = ("lines", "frames", "bytes"),
    min_mutations: int = 1,
    max_mutations: int = 3,
    line_kinds: Sequence[str] | None = None,
    frame_kinds: Sequence[str] | None = None,
    huge_sizes: Sequence[int] = _HUGE_SIZES,
    deep_depths: Sequence[int] = _DEEP_DEPTHS,
    bomb_sizes: Sequence[int] = _BOMB_SIZES,
) -> MutatedLog:
    """Valid logs damaged in their on-disk form, plain or zstd (``compress=None``: either).

    ``layers`` picks which of ``"lines"``, ``"frames"`` (zstd only) and ``"bytes"`` may be
    damaged; between ``min_mutations`` and ``max_mutations`` steps are spread over them. With
    ``min_mutations=0`` some logs stay intact; otherwise every log is damaged: ``["frames"]``
    alone draws zstd logs only (see :func:`damages_zstd_only`). ``logs`` defaults to
    :func:`session_logs` with at most two turns. ``line_kinds`` and ``frame_kinds`` go to
    :func:`mutate_lines` and :func:`mutate_frames` as their ``kinds``.

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=10, deadline=None)
    ... @given(mutated_logs(compress=True, layers=["frames"], bomb_sizes=[1000]))
    ... def test_zstd_frames_only(mutated):
    ...     assert mutated.compress and all("frame" in step for step in mutated.mutations)
    >>> test_zstd_frames_only()
    """
    given = list(layers)
    zstd_only = damages_zstd_only(given, compress, min_mutations, max_mutations)
    log = draw(session_logs(max_turns=2) if logs is None else logs)
    packed = zstd_only or (draw(st.booleans()) if compress is None else compress)
    chosen = [layer for layer in given if packed or layer != "frames"]
    total = draw(st.integers(min_mutations, max_mutations))
    counts = dict.fromkeys(chosen, 0)
    for _ in range(total if chosen else 0):
        counts[draw(st.sampled_from(chosen))] += 1
    steps: list[str] = []
    lines = log_lines(log)
    if counts.get("lines"):
        lines, done = draw(
            mutate_lines(
                lines,
                min_mutations=counts["lines"],
                max_mutations=counts["lines"],
                kinds=line_kinds,
                huge_sizes=huge_sizes,
                deep_depths=deep_depths,
            )
        )
        steps += done
    if packed:
        frames, layout = draw(frame_lines(lines))
        steps += layout
        if counts.get("frames"):
            frames, done = draw(
                mutate_frames(
                    frames,
                    min_mutations=counts["frames"],
                    max_mutations=counts["frames"],
                    kinds=frame_kinds,
                    bomb_sizes=bomb_sizes,
                )
            )
            steps += done
        data = b"".join(frames)
    else:
        data = b"".join(line + b"\n" for line in lines)
    if counts.get("bytes"):
        data, done = draw(
            mutate_bytes(data, min_mutations=counts["bytes"], max_mutations=counts["bytes"])
        )
        steps += done
    return MutatedLog(log, packed, data, tuple(steps))


def mutated_stores(max_sessions: int = 3, **options: Any) -> st.SearchStrategy[list[MutatedLog]]:
    """Lists of :func:`mutated_logs` with distinct session ids, for :func:`write_mutated_store`.

    ``options`` are passed to :func:`mutated_logs`; ``min_mutations`` defaults to 0 here, so a
    store usually mixes damaged and intact logs.

    Damaged stores listed and read by sessionref's own store (yours in its place): a log it
    cannot use is passed over or refused, never a crash:

    >>> import tempfile
    >>> from hypothesis import given, settings
    >>> from sessionref import DirectoryStore, SessionLogError
    >>> @settings(max_examples=10, deadline=None)
    ... @given(mutated_stores(max_sessions=2))
    ... def test_listing_survives(mutated):
    ...     with tempfile.TemporaryDirectory() as root:
    ...         write_mutated_store(root, mutated)
    ...         store = DirectoryStore(root)
    ...         for header in store.headers():
    ...             try:
    ...                 store.read(header.id)
    ...             except SessionLogError:  # the one error a store's read raises
    ...                 pass
    >>> test_listing_survives()
    """
    options.setdefault("min_mutations", 0)
    return st.lists(
        mutated_logs(**options),
        min_size=1,
        max_size=max_sessions,
        unique_by=lambda mutated: mutated.session_id,
    )


def write_mutated_store(root: str | os.PathLike[str], logs: Iterable[MutatedLog]) -> list[Path]:
    """Write each damaged log where DSH would keep its valid original; returns the paths.

    Two logs of the same session (same id and compression) raise ``ValueError``.

    >>> import tempfile
    >>> log = {"header": {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0},
    ...        "events": []}
    >>> with tempfile.TemporaryDirectory() as root:
    ...     [p.name for p in write_mutated_store(root, [MutatedLog(log, False, b"{", ())])]
    ['session.jsonl']
    """
    written: list[Path] = []
    for mutated in logs:
        path = mutated.path(root)
        if path in written:
            raise ValueError(f"two logs share the path {path}")
        written.append(mutated.write(root))
    return written
