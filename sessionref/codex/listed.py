"""Which threads Codex's listing shows (docs/harnesses.md §Codex §Listed): one whose rollout
says who the person is talking to and what they asked. Codex's picker reads a rollout's head
and lists the thread only when it saw a ``session_meta`` and either a preview (a user message,
or a goal) or a compacted history holding a user message (openai/codex
``codex-rs/rollout/src/list.rs``: ``build_thread_item``, ``read_head_summary_with_references``,
``event_msg_preview``; ``user_message_preview`` in ``codex-rs/state/src/extract.rs``). A thread
holding only its ``session_meta`` (started, never prompted) is not listed; Codex still reads
it by its id, which looks at file names alone.

The head is scanned line by line: blank lines are passed over, every other line counts,
whether it reads or not; with no ``session_meta`` among the first :data:`HEAD_RECORDS` the
scan stops, and once one is seen it goes on, up to :data:`HEAD_RECORDS` +
:data:`USER_SCAN` lines, until it has both a preview and a first user message. A line counts
only when Codex reads it as a ``RolloutLine`` (with its ``timestamp``; a ``session_meta`` read
whole, :func:`~sessionref.codex.meta.codex_meta`), and a line it reads that is not UTF-8 hides
the thread (Codex's line reader errs, and ``build_thread_item`` takes the failed summary as an
empty one). A ``rollout_reference`` in the head is scanned the same way for what it adds (a
preview, a compacted user message, a first user message), at most
:data:`MAX_REFERENCE_DEPTH` deep and :data:`MAX_REFERENCE_FILES` files in all, never a fork at
its first message.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from contextlib import closing
from itertools import chain, islice
from pathlib import Path
from typing import Final, NamedTuple

import msgspec

from sessionref.codex.meta import codex_meta
from sessionref.codex.names import IDE_REQUEST, RUST_WHITESPACE
from sessionref.codex.records import decode, item_said, turn_item
from sessionref.codex.reference_lines import Reference, reference_of
from sessionref.codex.rollouts import OverLimit, rollout_stream
from sessionref.errors import SessionLogError
from sessionref.log.jsonl import decode_line

HEAD_RECORDS: Final = 10
"""Codex's ``HEAD_RECORD_LIMIT``: the lines in which a ``session_meta`` must be."""
USER_SCAN: Final = 200
"""Codex's ``USER_EVENT_SCAN_LIMIT``: how many lines more it reads for a user message."""
MAX_REFERENCE_DEPTH: Final = 8
"""Codex's ``MAX_SUMMARY_REFERENCE_DEPTH``."""
MAX_REFERENCE_FILES: Final = 2
"""Codex's ``MAX_SUMMARY_REFERENCE_FILES``: referenced rollouts read for one listing."""

Follow = Callable[[Reference], Generator[bytes, None, None] | None]
"""The lines of the rollout a reference names, read as far as they are taken (``None`` when
it is found nowhere)."""


class _Payload(msgspec.Struct, frozen=True, gc=False):
    type: object = None
    id: object = None
    message: object = None
    images: object = None
    local_images: object = None
    item: object = None
    goal: object = None
    replacement_history: object = None


class _Line(msgspec.Struct, frozen=True, gc=False):
    timestamp: object = None
    type: object = None
    payload: _Payload | None = None


_LINE: Final = msgspec.json.Decoder(_Line)


class Summary(NamedTuple):
    """What a head scan found: a ``session_meta`` that Codex reads, a preview, a compacted
    history holding a user message, a first user message; or a line that is not UTF-8, which
    fails Codex's whole scan (its line reader errs)."""

    meta: bool = False
    preview: bool = False
    compacted_user: bool = False
    first_user: bool = False
    unreadable: bool = False

    @property
    def hidden(self) -> str | None:
        """Why Codex's listing does not show the thread; ``None`` when it shows it.

        >>> Summary(meta=True).hidden, Summary(True, preview=True).hidden
        ('its head holds no user message, goal or compacted user message', None)
        >>> Summary(True, preview=True, unreadable=True).hidden, Summary(preview=True).hidden
        ('a line of its head is not UTF-8', 'no session_meta Codex reads in its first 10 lines')
        """
        if self.unreadable:
            return "a line of its head is not UTF-8"
        if not self.meta:
            return f"no session_meta Codex reads in its first {HEAD_RECORDS} lines"
        if not (self.preview or self.compacted_user):
            return "its head holds no user message, goal or compacted user message"
        return None


def requested(text: str) -> str:
    """What a user message asks: the text after an IDE's request heading, if any, trimmed as
    Rust trims.

    >>> requested(" # Context\\nx\\n## My request for Codex:\\n fix it \\u3000"), requested("\\n")
    ('fix it', '')
    """
    heading = text.find(IDE_REQUEST)
    return (text[heading + len(IDE_REQUEST) :] if heading >= 0 else text).strip(RUST_WHITESPACE)


def _nonempty_list(value: object) -> bool:
    return type(value) is list and bool(value)


def _user_item(value: object) -> bool:
    """Whether a completed turn item is a user message with a preview: text (its text parts
    joined) that asks something, or an image.

    >>> _user_item({"type": "UserMessage", "content": [{"type": "text", "text": " hi "}]})
    True
    >>> _user_item({"type": "UserMessage", "content": [{"type": "local_image", "path": "p"}]})
    True
    >>> _user_item({"type": "AgentMessage", "content": [{"type": "Text", "text": "hi"}]})
    False
    """
    item = turn_item(value)
    if item.type != "UserMessage":
        return False
    [(_, text)] = item_said(item)
    if requested(text):
        return True
    parts = item.content
    return type(parts) is list and any(
        type(part) is dict and part.get("type") in ("image", "local_image") for part in parts
    )


def previewed(payload: _Payload) -> bool:
    """Whether an ``event_msg`` gives a preview: a ``user_message`` whose request is not
    blank or that carries images, an ``item_completed`` user message the same, or a
    ``thread_goal_updated`` with an objective.

    >>> previewed(_Payload("user_message", message="## My request for Codex: ")), previewed(
    ...     _Payload("user_message", message="", local_images=["/a.png"]))
    (False, True)
    >>> previewed(_Payload("thread_goal_updated", goal={"objective": " ship "}))
    True
    """
    kind = payload.type
    if kind == "user_message":
        text = payload.message
        return (type(text) is str and bool(requested(text))) or any(
            map(_nonempty_list, (payload.images, payload.local_images))
        )
    if kind == "item_completed":
        return _user_item(payload.item)
    if kind == "thread_goal_updated" and type(payload.goal) is dict:
        objective = payload.goal.get("objective")
        return type(objective) is str and bool(objective.strip(RUST_WHITESPACE))
    return False


def _asked(payload: _Payload) -> bool:
    """Whether a previewing event is a user message (Codex's first user message), not a goal.

    >>> _asked(_Payload("user_message")), _asked(_Payload("thread_goal_updated"))
    (True, False)
    """
    return payload.type in ("user_message", "item_completed")


def _compacted_user(history: object) -> bool:
    """Whether a compacted replacement history holds a message of the user."""
    return type(history) is list and any(
        type(item) is dict and item.get("type") == "message" and item.get("role") == "user"
        for item in history
    )


def is_utf8(line: bytes) -> bool:
    """Whether a line is UTF-8, as Codex's line reader (tokio's ``next_line``) requires.

    >>> is_utf8("é".encode()), is_utf8(b"\\xff"), is_utf8(b"\\xed\\xa0\\x80")  # a surrogate's bytes
    (True, False, False)
    """
    try:
        line.decode()
    except UnicodeDecodeError:
        return False
    return True


def _blank(line: bytes) -> bool:
    """Whether a line is blank as Rust's ``trim`` has it.

    >>> _blank(b" \\t\\r"), _blank("\\u3000".encode()), _blank(b" {}")
    (True, True, False)
    """
    rest = line.lstrip(b" \t\r\n\x0b\x0c")
    if not rest:
        return True
    return rest[0] >= 0x80 and not rest.decode("utf-8", "replace").strip(RUST_WHITESPACE)


def _done(found: Summary, counted: int) -> bool:
    """Whether the scan stops after ``counted`` lines that are not blank: it found all Codex
    looks for, or it is past the lines Codex reads (:data:`HEAD_RECORDS` without a
    ``session_meta``, :data:`USER_SCAN` more with one).

    >>> _done(Summary(True, True, False, True), 1), _done(Summary(), 10), _done(Summary(True), 10)
    (True, True, False)
    """
    if found.meta and found.preview and found.first_user:
        return True
    return counted >= HEAD_RECORDS and not (found.meta and counted < HEAD_RECORDS + USER_SCAN)


class _Scan:
    """One listing's head scans: the references it may still follow."""

    def __init__(self, follow: Follow) -> None:
        self.follow = follow
        self.files = MAX_REFERENCE_FILES

    def summary(self, lines: Iterator[bytes], depth: int) -> Summary:
        found = Summary()
        counted = 0
        for line in lines:  # no line is taken once the scan is done: it may be over the limit
            if not is_utf8(line):
                return Summary(unreadable=True)  # Codex reads no summary of the rollout
            if _blank(line):
                continue
            counted += 1
            found = self._line(found, line, depth)
            if _done(found, counted):
                break
        return found

    def _line(self, found: Summary, line: bytes, depth: int) -> Summary:
        try:
            item = _LINE.decode(line)
        except (msgspec.DecodeError, RecursionError):
            return found
        payload, kind = item.payload, item.type
        if payload is None or type(item.timestamp) is not str:  # no ``RolloutLine`` to Codex
            return found
        if kind == "session_meta":
            return found._replace(meta=found.meta or codex_meta(line))
        if kind == "event_msg" and previewed(payload):
            return found._replace(preview=True, first_user=found.first_user or _asked(payload))
        if kind == "compacted" and _compacted_user(payload.replacement_history):
            return found._replace(compacted_user=True)
        if kind == "rollout_reference":
            return self._referred(found, line, depth)
        return found

    def _referred(self, found: Summary, line: bytes, depth: int) -> Summary:
        reference = reference_of(line)
        if (
            reference is None
            or depth >= MAX_REFERENCE_DEPTH
            or not self.files
            or reference.nth_user_message == 0
        ):
            return found
        self.files -= 1
        lines = self.follow(reference)
        if lines is None:
            return found
        try:
            with closing(lines):
                there = self.summary(lines, depth + 1)
        except OverLimit:  # sessionref's limit, not Codex's: what it holds is not known
            raise
        except SessionLogError:  # Codex takes a head it cannot read as an empty one
            there = Summary()
        return found._replace(  # one that is not UTF-8 adds nothing (Codex's ``unwrap_or_default``)
            preview=found.preview or there.preview,
            compacted_user=found.compacted_user or there.compacted_user,
            first_user=found.first_user or there.first_user,
        )


def head_summary(lines: Iterator[bytes], follow: Follow) -> Summary:
    """What Codex's listing finds in the head of a rollout whose lines are ``lines`` (taken
    only as far as the scan goes), its references read through ``follow``.

    >>> at, t = b'"timestamp":"2025-06-01T10:00:00Z"', b"0197a000-0000-7000-8000-0000000000aa"
    >>> meta = b'{%s,"type":"session_meta","payload":{"id":"%s",%s,"cwd":"/w","originator":' \\
    ...     b'"codex_cli_rs","cli_version":"0.40.0"}}' % (at, t, at)
    >>> def ask(text): return b'{%s,"type":"event_msg","payload":{"type":"user_message",' \\
    ...     b'"message":"%s"}}' % (at, text)
    >>> def listed(*lines): return head_summary(iter(lines), lambda _: None).hidden is None
    >>> listed(meta), listed(meta, ask(b"hi")), listed(meta, *[b"x"] * 208, b"", ask(b"hi"))
    (False, True, True)
    >>> listed(meta, *[b"x"] * 209, ask(b"hi")), listed(*[b"x"] * 10, meta, ask(b"hi"))
    (False, False)
    """
    return _Scan(follow).summary(lines, 0)


def opens_in_envelope(lines: list[bytes]) -> bool:
    """Whether the first ``session_meta`` among a rollout's ``lines`` is in its envelope
    (``{"type":"session_meta","payload":…}``), as every rollout but the oldest has it: those
    begin with a bare ``{"id", "timestamp", "instructions"}``.

    >>> opens_in_envelope([b'{"type":"session_meta","payload":{"id":"t"}}'])
    True
    >>> opens_in_envelope([b'{"id":"t","timestamp":"2025-04-01T00:00:00Z"}']), opens_in_envelope([])
    (False, False)
    """
    for line in lines:
        item = decode(line)
        if item is not None and item.kind == "session_meta":
            first = decode_line(_LINE, _Line, line)
            return first is not None and first.type == "session_meta"
    return False


def hidden_rollout(
    path: Path, lines: list[bytes], max_bytes: int, max_line_bytes: int, follow: Follow
) -> str | None:
    """Why the thread of the rollout at ``path``, whose first lines are ``lines``, is not
    listed: Codex's listing does not show it (:func:`head_summary`, its text read as far as
    the scan goes, and a committed line over ``max_line_bytes`` fails naming the file and the
    line, as a scan that reads on past ``max_bytes`` there or in a rollout it refers to
    fails naming the limit: :func:`cut_short`); ``None`` when it is listed, as it is when it has no
    envelope (the oldest rollouts: Codex's listing cannot read them, but sessionref reads them
    whole and lists them, as it always has).

    >>> hidden_rollout(Path("/no/rollout-1.jsonl"), [b'{"id":"t"}'], 10, 10, lambda _: None)
    """
    if not opens_in_envelope(lines):
        return None
    rest = _lines_after(path, len(lines), max_bytes, max_line_bytes)
    try:
        with closing(rest):  # opened only when the scan goes past ``lines``
            why = head_summary(chain(lines, rest), follow).hidden
    except OverLimit as exc:
        raise SessionLogError(f"{path}: {cut_short(path, exc)}") from None
    return None if why is None else f"Codex does not list its thread: {why}"


def cut_short(path: Path, exc: OverLimit) -> str:
    """Why the head scan of the rollout at ``path`` cannot say whether Codex lists its thread:
    the rollout, or one its head refers to, goes on past the limit it is read under where the
    scan reads on.

    >>> cut_short(Path("/r.jsonl"), OverLimit("/r.jsonl", 9))
    "its head goes on past the limit of 9 bytes before Codex's listing can tell whether it \
shows the thread"
    >>> cut_short(Path("/r.jsonl"), OverLimit("/s.jsonl", 9))[:49]
    'the rollout its head refers to, /s.jsonl, goes on'
    """
    what = (
        "its head"
        if exc.location == str(path)
        else f"the rollout its head refers to, {exc.location},"
    )
    return (
        f"{what} goes on past the limit of {exc.limit} bytes before Codex's listing can tell "
        "whether it shows the thread"
    )


def _lines_after(
    path: Path, skip: int, max_bytes: int, max_line_bytes: int
) -> Generator[bytes, None, None]:
    """The rollout's committed lines after its first ``skip`` (those its head already
    holds: both split the text at each newline), read only when taken (:func:`rollout_stream`).

    >>> list(_lines_after(Path("/no/rollout-1.jsonl"), 1, 10, 10))
    Traceback (most recent call last):
    sessionref.errors.LogUnreadable: cannot read /no/rollout-1.jsonl: No such file or directory
    """
    with closing(rollout_stream(path, max_bytes, max_line_bytes)) as stream:
        yield from islice(stream, skip, None)
