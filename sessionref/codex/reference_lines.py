"""What a ``rollout_reference`` line of a Codex rollout names, and how a fork's inherited
history is cut (docs/harnesses.md §Codex §References): pure functions of lines and names,
which :class:`~sessionref.codex.references.Expansion` uses to follow references.

A reference names a thread, a segment and maybe a rollout, as Codex's ``reference_identity``
has it (openai/codex ``codex-rs/rollout/src/reference.rs``), the ids a path's name carries
read as ``thread_id_from_path`` and ``rollout_id_from_path`` read them
(``codex-rs/rollout/src/metadata.rs``); the cut is ``truncate_before_nth_user_message``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Final, NamedTuple

import msgspec

from sessionref.codex.names import canonical_id, rollout_ids
from sessionref.codex.pages import LinePayload, RolloutLine, decoded
from sessionref.codex.records import turn_item

INITIAL: Final = "initial"
"""The segment folder of a thread's rollout from before segments had ids."""
_REFERENCE: Final = b"rollout_reference"
"""What every line holding a reference spells (:func:`reference_of`)."""


class Identity(NamedTuple):
    """What a reference names: a thread, one of its segments (``None``: the thread's one
    rollout from before segments had ids, the ``initial`` one), and, when the reference says
    which, the rollout: the id the name of its file carries (Codex's ``ReferenceIdentity``)."""

    thread: str
    segment: str | None
    rollout: str | None = None

    def __str__(self) -> str:
        """The thread and segment, as an error names the rollout reference.

        >>> str(Identity("t", "s")), str(Identity("t", None))
        ('t/s', 't/initial')
        """
        return f"{self.thread}/{self.segment or INITIAL}"

    def is_of(self, path: Path, first_lines: list[bytes]) -> bool:
        """Whether the rollout at ``path``, whose first lines are ``first_lines``, is the one
        named: its ``session_meta`` is of this thread and segment, and its name carries this
        rollout id when one is named (Codex's ``validated_candidate``).

        >>> t = "0197a000-0000-7000-8000-0000000000aa"
        >>> meta = [b'{"type":"session_meta","payload":{"id":"%s"}}' % t.encode()]
        >>> named, other = Path(f"rollout-2025-06-01T10-00-00-{t}.jsonl"), Path("x.jsonl")
        >>> Identity(t, None).is_of(other, meta), Identity(t, "s").is_of(named, meta)
        (True, False)
        >>> Identity(t, None, t).is_of(named, meta), Identity(t, None, t).is_of(other, meta)
        (True, False)
        """
        if identity_of(first_lines) != Identity(self.thread, self.segment):
            return False
        return self.rollout is None or ids_named(path)[1] == self.rollout


def _id_of(value: object) -> str | None:
    """A thread, segment or rollout id a reference records, as Codex reads one (a UUID:
    :func:`~sessionref.codex.names.canonical_id`); ``None`` for anything else.

    >>> _id_of("0197A000-0000-7000-8000-0000000000AA"), _id_of("../x"), _id_of(7)
    ('0197a000-0000-7000-8000-0000000000aa', None, None)
    """
    return canonical_id(value) if type(value) is str else None


def ids_named(path: Path | str) -> tuple[str | None, str | None]:
    """The thread and rollout ids the name of ``path`` carries (``None`` for a name of
    another shape), as Codex's ``thread_id_from_path`` and ``rollout_id_from_path`` read
    them: only the name counts, not the folders it is in.

    >>> t = "0197a000-0000-7000-8000-0000000000aa"
    >>> ids_named(f"../a/rollout-2025-06-01T10-00-00-{t}.jsonl.zst") == (t, t)
    True
    >>> ids_named(f"/a/{t}.jsonl")
    (None, None)
    """
    return rollout_ids(Path(path).name) or (None, None)


class Reference(NamedTuple):
    """A ``rollout_reference`` item: what it names, the path Codex wrote it at, the time in
    the rollout's name (to find it in ``sessions/`` or ``archived_sessions/``), the user
    message a fork stops before, and the thread it records (``None`` when its thread is
    inferred from the name of its path)."""

    identity: Identity
    path: str
    timestamp: str | None
    nth_user_message: int | None
    recorded_thread: str | None

    def is_fork(self, thread: str | None) -> bool:
        """Whether the reference, in a rollout of ``thread``, is a fork (Codex's
        ``is_fork_boundary_reference``): up to a user message, or to a thread it does not
        record as ``thread`` (one that records no thread always is).

        >>> own = Reference(Identity("t", None), "/r.jsonl", None, None, "t")
        >>> own.is_fork("t"), own.is_fork("u"), own._replace(recorded_thread=None).is_fork("t")
        (False, True, True)
        """
        recorded = self.recorded_thread
        return self.nth_user_message is not None or recorded is None or recorded != thread


def _is_count(value: object) -> bool:
    """Whether Codex reads ``value`` as a count (a ``usize``: an integer from 0 to 2⁶⁴ - 1;
    no float, no boolean).

    >>> _is_count(0), _is_count(2**64 - 1), _is_count(2**64), _is_count(-1), _is_count(True)
    (True, True, False, False, False)
    """
    return type(value) is int and 0 <= value < 1 << 64


def _codex_reads(item: LinePayload) -> bool:
    """Whether Codex reads a reference's fields other than its path as a
    ``RolloutReferenceItem``'s (openai/codex ``codex-rs/protocol/src/protocol.rs``): the
    optional ones absent or ``null``, or of their types (the ids UUIDs, the time a string, the
    user message a count, the filter texts a list of strings); ``max_depth`` absent (it then
    has its default) or a count, never ``null`` (it is no ``Option``).

    >>> _codex_reads(LinePayload(segment_id=7)), _codex_reads(LinePayload(nth_user_message=-1))
    (False, False)
    >>> _codex_reads(LinePayload(thread_id="0197a000-0000-7000-8000-0000000000aa"))
    True
    >>> _codex_reads(LinePayload(max_depth=None)), _codex_reads(LinePayload(max_depth=2))
    (False, True)
    >>> def filtering(texts): return LinePayload(compacted_replacement_history_filter_texts=texts)
    >>> _codex_reads(filtering(["a", 1])), _codex_reads(filtering("a")), _codex_reads(filtering([]))
    (False, False, True)
    """
    ids = (item.thread_id, item.segment_id, item.rollout_id)
    nth, depth = item.nth_user_message, item.max_depth
    texts = item.compacted_replacement_history_filter_texts
    return (
        all(value is None or _id_of(value) is not None for value in ids)
        and (item.rollout_timestamp is None or type(item.rollout_timestamp) is str)
        and (nth is None or _is_count(nth))
        and (depth is msgspec.UNSET or _is_count(depth))
        and (texts is None or (type(texts) is list and all(type(t) is str for t in texts)))
    )


def reference_of(line: bytes) -> Reference | None:
    """The reference a line holds; ``None`` for any other line, and for a reference Codex
    refuses (it cannot read it as a ``RolloutReferenceItem``): one without a path, or without
    a thread id that neither it nor the name of its path gives, or whose ids are no UUIDs, or
    with a field of another type than Codex's (:func:`_codex_reads`: a ``segment_id``,
    ``rollout_timestamp``, ``nth_user_message`` or ``compacted_replacement_history_filter_texts``
    that is neither ``null`` nor a UUID, a string, a count, a list of strings; a ``max_depth``
    that is no count). Its ids are
    read as Codex reads them (:func:`_id_of`: any spelling of a UUID). As Codex's
    ``reference_identity`` has it, a reference with neither a segment id nor a thread id names
    the rollout whose id the name of its path carries (a fork recorded before references had
    either).

    >>> def item(fields): return b'{"type":"rollout_reference","payload":{%s}}' % fields
    >>> t = b"0197a000-0000-7000-8000-0000000000aa"
    >>> reference_of(item(b'"rollout_path":"/r.jsonl","thread_id":"%s"' % t.upper())).identity
    Identity(thread='0197a000-0000-7000-8000-0000000000aa', segment=None, rollout=None)
    >>> reference_of(item(b'"rollout_path":"/r.jsonl","thread_id":"../x"')) is None
    True
    >>> reference_of(item(b'"rollout_path":"/r.jsonl","thread_id":"%s","segment_id":7' % t))
    >>> named = reference_of(item(b'"rollout_path":"rollout-2025-06-01T10-00-00-%s.jsonl"' % t))
    >>> named.identity.rollout == named.identity.thread == t.decode(), named.recorded_thread
    (True, None)
    """
    if _REFERENCE not in line:
        return None
    found = decoded(line)
    item = found.payload
    if found.type != "rollout_reference" or item is None or type(item.rollout_path) is not str:
        return None
    if not _codex_reads(item):  # Codex reads no such line
        return None
    recorded, segment, rollout = map(_id_of, (item.thread_id, item.segment_id, item.rollout_id))
    stamp = item.rollout_timestamp if type(item.rollout_timestamp) is str else None
    nth = item.nth_user_message if type(item.nth_user_message) is int else None
    named_thread, named_rollout = ids_named(item.rollout_path)
    thread = recorded or named_thread
    if thread is None:
        return None
    if rollout is None and segment is None and recorded is None:
        rollout = named_rollout
    return Reference(Identity(thread, segment, rollout), item.rollout_path, stamp, nth, recorded)


def references_in(lines: list[bytes]) -> Iterator[tuple[int, Reference]]:
    """The references among ``lines`` (:func:`reference_of`), each with its line's index. The
    lines are searched once, joined, for what a reference spells, and only a line that
    spells it is read: a rollout with none, as most are, costs one search in C and no Python
    step per line (testing each line for it cost more than a snapshot's other work on the
    lines of a 10,000-line rollout).

    >>> t = b"0197a000-0000-7000-8000-0000000000aa"
    >>> item = b'{"type":"rollout_reference","payload":{"rollout_path":"/r","thread_id":"%s"}}'
    >>> lines = [b'{"type":"x","note":"rollout_reference"}', item % t, b"", item % t]
    >>> [index for index, _ in references_in(lines)], list(references_in(lines[:1] + [b"{}"]))
    ([1, 3], [])
    """
    text = b"\n".join(lines)
    at = text.find(_REFERENCE)
    if at < 0:
        return
    ends = list(accumulate(len(line) + 1 for line in lines))  # where each line's next begins
    while at >= 0:
        index = bisect_right(ends, at)
        reference = reference_of(lines[index])
        if reference is not None:
            yield index, reference
        at = text.find(_REFERENCE, ends[index])


def identity_of(first_lines: list[bytes]) -> Identity | None:
    """The identity a rollout's first line gives it (a ``session_meta`` with an id), its ids
    read as Codex reads them (:func:`~sessionref.codex.names.canonical_id`; an id of another
    shape as it is, which no reference names); ``None`` for a meta Codex cannot read for its
    ``segment_id`` (neither ``null`` nor a string). It names no rollout id (its file's name
    does).

    >>> identity_of([b'{"type":"session_meta","payload":{"id":"t","segment_id":"s"}}'])
    Identity(thread='t', segment='s', rollout=None)
    >>> identity_of([b'{"type":"event_msg","payload":{"id":"t"}}']), identity_of([])
    (None, None)
    """
    first = decoded(first_lines[0]) if first_lines else RolloutLine()
    meta = first.payload
    if first.type != "session_meta" or meta is None or type(meta.id) is not str:
        return None
    thread, segment = canonical_id(meta.id) or meta.id, meta.segment_id
    if segment is None:
        return Identity(thread, None)
    return Identity(thread, canonical_id(segment) or segment) if type(segment) is str else None


def is_meta(line: bytes) -> bool:
    """Whether a line is a ``session_meta`` with an id (a referenced rollout's are not its
    history).

    >>> is_meta(b'{"type":"session_meta","payload":{"id":"t","segment_id":7}}')
    True
    """
    if b"session_meta" not in line:
        return False
    found = decoded(line)
    return (
        found.type == "session_meta" and found.payload is not None and type(found.payload.id) is str
    )


def before_nth_user_message(lines: list[bytes], nth: int) -> list[bytes]:
    """``lines`` up to the turn of their ``nth`` user message (counted from 0), as a fork
    inherits its parent's history: a turn starts at its ``task_started`` event when it has
    one; the user messages are the ``user_message`` events and the completed ``UserMessage``
    items (a paginated rollout's), or the user response items (among which are context
    fragments) when there are none; a ``thread_rolled_back`` event takes back its turns.

    >>> def event(kind): return b'{"type":"event_msg","payload":{"type":"%s"}}' % kind
    >>> turn = [event(b"task_started"), event(b"user_message"), event(b"task_complete")]
    >>> len(before_nth_user_message(turn * 3, 1)), len(before_nth_user_message(turn, 1))
    (3, 3)
    >>> context = b'{"type":"response_item","payload":{"type":"message","role":"user"}}'
    >>> item = b'{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"%s"}}}'
    >>> lines = [context, item % b"UserMessage", item % b"Plan", context, item % b"UserMessage"]
    >>> len(before_nth_user_message(lines, 1))
    4
    """
    events: list[int] = []
    responses: list[int] = []
    started: int | None = None
    for index, line in enumerate(lines):
        found = decoded(line)
        payload = found.payload
        if payload is None:
            continue
        kind = payload.type
        turn = index if started is None else started
        if found.type == "response_item" and kind == "message" and payload.role == "user":
            responses.append(turn)
        elif found.type != "event_msg":
            continue
        elif kind in ("task_started", "turn_started"):
            started = index
        elif kind == "user_message" or (
            kind == "item_completed" and turn_item(payload.item).type == "UserMessage"
        ):
            events.append(turn)
        elif kind in ("task_complete", "turn_complete", "turn_aborted"):
            started = None
        elif kind == "thread_rolled_back" and type(payload.num_turns) is int:
            for positions in (events, responses):
                del positions[max(0, len(positions) - payload.num_turns) :]
    positions = events or responses
    return lines[: positions[nth]] if 0 <= nth < len(positions) else lines
