"""Whether Codex reads a ``session_meta`` line as one (docs/harnesses.md §Codex §Listed).

Codex's listing counts a ``session_meta`` only when the whole line reads as its
``RolloutLine`` (a ``timestamp`` string beside the item) holding a ``SessionMetaLine``; a line
that does not is a line of no kind to it (openai/codex ``codex-rs/rollout/src/list.rs``:
``read_head_summary_with_references``, ``serde_json::from_str::<RolloutLine>``; the types in
``codex-rs/protocol/src/protocol.rs``: ``RolloutLine``, ``SessionMetaLine``, ``SessionMeta``,
``GitInfo``, ``ThreadHistoryMode``). sessionref checks what those types say of each field it
knows: the required strings, the ids as UUIDs, the optional strings, the history mode, the git
fields; the inner shape of ``source``, ``thread_source`` and ``dynamic_tools`` (whose variants
change from one Codex to the next) is not checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Final

import msgspec

from sessionref.codex.names import canonical_id
from sessionref.errors import SessionLogError
from sessionref.log.jsonl import decode_line

HISTORY_MODES: Final = frozenset({"legacy", "paginated"})
"""The values of ``ThreadHistoryMode`` (``rename_all = "lowercase"``; absent is ``legacy``)."""

_ABSENT: Final = msgspec.UNSET


class _Meta(msgspec.Struct, frozen=True, gc=False):
    id: object = _ABSENT
    timestamp: object = _ABSENT
    cwd: object = _ABSENT
    originator: object = _ABSENT
    cli_version: object = _ABSENT
    segment_id: object = None
    forked_from_id: object = None
    parent_thread_id: object = None
    agent_nickname: object = None
    agent_role: object = None
    agent_type: object = None
    agent_path: object = None
    model_provider: object = None
    memory_mode: object = None
    history_mode: object = _ABSENT
    source: object = _ABSENT
    git: object = None


class _MetaLine(msgspec.Struct, frozen=True, gc=False):
    timestamp: object = None
    type: object = None
    payload: _Meta | None = None


_LINE: Final = msgspec.json.Decoder(_MetaLine)


def _uuid(value: object) -> bool:
    """Whether Codex reads ``value`` as a ``ThreadId`` or ``SegmentId`` (a UUID string)."""
    return type(value) is str and canonical_id(value) is not None


def _known_mode(value: object) -> bool:
    """Whether Codex reads ``value`` as a ``ThreadHistoryMode`` (``null`` is none).

    >>> _known_mode("paginated"), _known_mode("Paginated"), _known_mode(None), _known_mode({})
    (True, False, False, False)
    """
    return type(value) is str and value in HISTORY_MODES


def _git(value: object) -> bool:
    """Whether Codex reads ``value`` as an ``Option<GitInfo>``: ``null``, or an object whose
    ``commit_hash``, ``branch`` and ``repository_url`` are each ``null`` or a string.

    >>> _git(None), _git({"branch": "main", "commit_hash": None}), _git({"branch": 1}), _git([])
    (True, True, False, False)
    """
    if value is None:
        return True
    fields = ("commit_hash", "branch", "repository_url")
    return type(value) is dict and all(type(value.get(f)) in (str, type(None)) for f in fields)


def _reads(meta: _Meta) -> bool:
    """Whether Codex reads a ``session_meta`` payload as a ``SessionMetaLine``."""
    required = (meta.timestamp, meta.cwd, meta.originator, meta.cli_version)
    optional_ids = (meta.segment_id, meta.forked_from_id, meta.parent_thread_id)
    optional_texts = (
        meta.agent_nickname,
        meta.agent_role,
        meta.agent_type,
        meta.agent_path,
        meta.model_provider,
        meta.memory_mode,
    )
    return (
        _uuid(meta.id)
        and all(type(value) is str for value in required)
        and all(value is None or _uuid(value) for value in optional_ids)
        and all(value is None or type(value) is str for value in optional_texts)
        and (meta.history_mode is _ABSENT or _known_mode(meta.history_mode))
        and (meta.source is _ABSENT or type(meta.source) in (str, dict))
        and _git(meta.git)
    )


def codex_meta(line: bytes) -> bool:
    """Whether ``line`` is a ``session_meta`` that Codex reads (see the module): one missing a
    field Codex requires, with an id that is no UUID, or with a ``history_mode`` it does not
    know is none to it.

    >>> t = "0197a000-0000-7000-8000-0000000000aa"
    >>> def line(**fields):
    ...     payload = {"id": t, "timestamp": "2025-06-01T10:00:00Z", "cwd": "/w",
    ...                "originator": "codex_cli_rs", "cli_version": "0.40.0", **fields}
    ...     return msgspec.json.encode({"timestamp": "2025-06-01T10:00:00Z",
    ...                                 "type": "session_meta", "payload": payload})
    >>> codex_meta(line()), codex_meta(line(history_mode="paginated", git={"branch": "main"}))
    (True, True)
    >>> codex_meta(line(history_mode="windowed")), codex_meta(line(id="t"))
    (False, False)
    >>> codex_meta(line(cli_version=None)), codex_meta(line().replace(b'"timestamp"', b'"at"', 1))
    (False, False)
    """
    found = _meta_line(line)
    return found is not None and _read_whole(found)


def _meta_line(line: bytes) -> _MetaLine | None:
    """``line`` decoded when it is a ``session_meta`` line, else ``None``."""
    found = decode_line(_LINE, _MetaLine, line)
    return found if isinstance(found, _MetaLine) and found.type == "session_meta" else None


def _read_whole(found: _MetaLine) -> bool:
    """Whether Codex reads a decoded ``session_meta`` line whole (:func:`codex_meta`)."""
    return type(found.timestamp) is str and found.payload is not None and _reads(found.payload)


def refuse_unknown_mode(path: Path, lines: list[bytes]) -> None:
    """Raise :class:`SessionLogError` naming the rollout at ``path`` and the line when a
    ``session_meta`` among ``lines``, up to the first one Codex reads, has a ``history_mode``
    Codex does not know: Codex refuses to resume such a thread, failing closed on a history it
    cannot tell how to read (openai/codex ``codex-rs/rollout/src/recorder.rs``:
    ``load_rollout_items``, ``reject_unknown_thread_history_mode``), and so does sessionref.

    >>> meta = b'{"type":"session_meta","payload":{"id":"t","history_mode":%s}}'
    >>> refuse_unknown_mode(Path("r.jsonl"), [meta % b'"legacy"', meta % b'"windowed"'])
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: r.jsonl: line 2: its session_meta's history_mode 'windowed' \
is not one Codex knows (legacy, paginated)
    """
    for number, found in _meta_lines(lines):
        mode = _ABSENT if found.payload is None else found.payload.history_mode
        if mode is not _ABSENT and not _known_mode(mode):
            raise SessionLogError(
                f"{path}: line {number}: its session_meta's history_mode {mode!r} is not one "
                "Codex knows (legacy, paginated)"
            )
        if _read_whole(found):  # the first meta Codex reads: the rest does not count
            return


def refuse_without_meta(path: Path, lines: list[bytes]) -> None:
    """Raise :class:`SessionLogError` naming ``path`` and its first ``session_meta`` line when
    no ``session_meta`` among ``lines`` is one Codex reads (:func:`codex_meta`): Codex's
    resume then finds no thread id and refuses the rollout.

    >>> refuse_without_meta(Path("r"), [b'{"type":"event_msg"}', b'{"type":"session_meta"}'])
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: r: line 2: its session_meta is not one Codex reads, and \
Codex refuses to resume a rollout without one
    """
    first = None
    for number, found in _meta_lines(lines):
        if _read_whole(found):
            return
        first = first or number
    where = f"line {first}: its session_meta is not one" if first else "no session_meta"
    raise SessionLogError(
        f"{path}: {where} Codex reads, and Codex refuses to resume a rollout without one"
    )


def _meta_lines(lines: list[bytes]) -> Iterator[tuple[int, _MetaLine]]:
    """The ``session_meta`` lines among ``lines``, numbered from 1, decoded. A line is parsed
    only when it names ``session_meta`` or holds a ``\\u`` escape, which may spell it as
    ``serde_json`` reads it too (``"session\\u005fmeta"``).

    >>> escaped = b'{"type":"session\\\\u005fmeta","payload":{}}'
    >>> [number for number, _ in _meta_lines([b'{"type":"x"}', b'"session_meta"', escaped])]
    [3]
    """
    for number, line in enumerate(lines, 1):
        if b"session_meta" in line or b"\\u" in line:
            found = _meta_line(line)
            if found is not None:
                yield number, found
