"""What a ``rollout_reference`` line of a Codex rollout names, and how a fork's inherited
history is cut (docs/harnesses.md §Codex §References): pure functions of lines and names,
which :class:`~sessionref.codex.references.Expansion` uses to follow references.

A reference names a thread, a segment and maybe a rollout, as Codex's ``reference_identity``
has it (openai/codex ``codex-rs/rollout/src/reference.rs``), the ids a path's name carries
read as ``thread_id_from_path`` and ``rollout_id_from_path`` read them
(``codex-rs/rollout/src/metadata.rs``); the cut is ``truncate_before_nth_user_message``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, NamedTuple, TypeGuard

from sessionref.codex.names import UUID, rollout_ids
from sessionref.codex.pages import RolloutLine, decoded

INITIAL: Final = "initial"
"""The segment folder of a thread's rollout from before segments had ids."""


class Identity(NamedTuple):
    """What a reference names: a thread, one of its segments (``None``: the thread's one
    rollout from before segments had ids, the ``initial`` one), and, when the reference says
    which, the rollout: the id the name of its file carries (Codex's ``ReferenceIdentity``)."""

    thread: str
    segment: str | None
    rollout: str | None = None

    def __str__(self) -> str:
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


def _is_id(value: object) -> TypeGuard[str]:
    """Whether ``value`` is a thread, segment or rollout id as Codex writes them (a UUID).

    >>> _is_id("0197a000-0000-7000-8000-0000000000aa"), _is_id("../x"), _is_id(7)
    (True, False, False)
    """
    return type(value) is str and UUID.fullmatch(value) is not None


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


def reference_of(line: bytes) -> Reference | None:
    """The reference a line holds; ``None`` for any other line, and for a reference Codex
    refuses: one without a path, or without a thread id that neither it nor the name of its
    path gives, or whose ids are no UUIDs. As Codex's ``reference_identity`` has it, a
    reference with neither a segment id nor a thread id names the rollout whose id the name
    of its path carries (a fork recorded before references had either).

    >>> def item(fields): return b'{"type":"rollout_reference","payload":{%s}}' % fields
    >>> t = b"0197a000-0000-7000-8000-0000000000aa"
    >>> reference_of(item(b'"rollout_path":"/r.jsonl","thread_id":"%s"' % t)).identity
    Identity(thread='0197a000-0000-7000-8000-0000000000aa', segment=None, rollout=None)
    >>> reference_of(item(b'"rollout_path":"/r.jsonl","thread_id":"../x"')) is None
    True
    >>> named = reference_of(item(b'"rollout_path":"rollout-2025-06-01T10-00-00-%s.jsonl"' % t))
    >>> named.identity.rollout == named.identity.thread == t.decode(), named.recorded_thread
    (True, None)
    """
    if b"rollout_reference" not in line:
        return None
    found = decoded(line)
    item = found.payload
    if found.type != "rollout_reference" or item is None or type(item.rollout_path) is not str:
        return None
    named_thread, named_rollout = ids_named(item.rollout_path)
    recorded, segment, rollout = item.thread_id, item.segment_id, item.rollout_id
    thread = named_thread if recorded is None else recorded
    segment = segment if type(segment) is str else None
    if rollout is None and segment is None and recorded is None:
        rollout = named_rollout
    if not (
        _is_id(thread)
        and (segment is None or _is_id(segment))
        and (rollout is None or _is_id(rollout))
    ):
        return None
    timestamp = item.rollout_timestamp if type(item.rollout_timestamp) is str else None
    nth = item.nth_user_message if type(item.nth_user_message) is int else None
    recorded_thread = thread if recorded is not None else None
    return Reference(
        Identity(thread, segment, rollout), item.rollout_path, timestamp, nth, recorded_thread
    )


def identity_of(first_lines: list[bytes]) -> Identity | None:
    """The identity a rollout's first line gives it (a ``session_meta`` with an id); it names
    no rollout id (its file's name does).

    >>> identity_of([b'{"type":"session_meta","payload":{"id":"t","segment_id":"s"}}'])
    Identity(thread='t', segment='s', rollout=None)
    >>> identity_of([b'{"type":"event_msg","payload":{"id":"t"}}']), identity_of([])
    (None, None)
    """
    first = decoded(first_lines[0]) if first_lines else RolloutLine()
    meta = first.payload
    if first.type != "session_meta" or meta is None:
        return None
    if type(meta.id) is not str:
        return None
    return Identity(meta.id, meta.segment_id if type(meta.segment_id) is str else None)


def is_meta(line: bytes) -> bool:
    """Whether a line is a ``session_meta`` (a referenced rollout's are not its history).

    >>> is_meta(b'{"type":"session_meta","payload":{"id":"t"}}')
    True
    """
    return b"session_meta" in line and identity_of([line]) is not None


def before_nth_user_message(lines: list[bytes], nth: int) -> list[bytes]:
    """``lines`` up to the turn of their ``nth`` user message (counted from 0), as a fork
    inherits its parent's history: a turn starts at its ``task_started`` event when it has
    one; the user messages are the ``user_message`` events, or the user response items when
    there are none; a ``thread_rolled_back`` event takes back its turns.

    >>> def event(kind): return b'{"type":"event_msg","payload":{"type":"%s"}}' % kind
    >>> turn = [event(b"task_started"), event(b"user_message"), event(b"task_complete")]
    >>> len(before_nth_user_message(turn * 3, 1)), len(before_nth_user_message(turn, 1))
    (3, 3)
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
        elif kind == "user_message":
            events.append(turn)
        elif kind in ("task_complete", "turn_complete", "turn_aborted"):
            started = None
        elif kind == "thread_rolled_back" and type(payload.num_turns) is int:
            for positions in (events, responses):
                del positions[max(0, len(positions) - payload.num_turns) :]
    positions = events or responses
    return lines[: positions[nth]] if 0 <= nth < len(positions) else lines
