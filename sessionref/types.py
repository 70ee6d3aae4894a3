"""Public data of sessionref: msgspec structs with the camelCase wire form (docs/api.md), and
the check of a target however it is given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from sessionref.errors import INVALID_REFERENCE, optional_path, string, wrong_kind

JsonObject = dict[str, Any]

Cwd = str | bool | int | float | JsonObject | None
"""A header's ``cwd``: a string, ``None`` when there is none, or (in a header the harness lists
but cannot load, filed under ``--root--``) another JSON value (docs/format.md §Discovery)."""


class Target(msgspec.Struct, frozen=True, rename="camel"):
    """The session a prompt is written in: it never references itself. ``cwd`` (its project,
    which ranks candidates) is compared with each session's as text; every call that takes a
    target checks it (:func:`as_target`)."""

    id: str
    cwd: str | None = None


TargetLike = Target | str | Mapping[str, Any]
"""A target as a call takes it: a :class:`Target`, its id, or ``{"id", "cwd"?}``."""


def as_target(target: object) -> Target:
    """A checked :class:`Target` from a target, an id, or ``{"id", "cwd"?}``: the id a string,
    the cwd a string, an ``os.PathLike`` (its ``os.fspath``) or ``None``; else
    ``SESSION_REFERENCE_INVALID_REFERENCE`` naming what was wrong. A :class:`Target` is checked
    as a mapping is (its fields are not checked when it is made), so every store gives the
    same answer for it.

    >>> from pathlib import PurePosixPath
    >>> as_target("s"), as_target({"id": "s", "cwd": PurePosixPath("/w")})
    (Target(id='s', cwd=None), Target(id='s', cwd='/w'))
    >>> as_target(Target(None))
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: target id must be a string, not NoneType
    """
    session_id: object
    cwd: object
    if isinstance(target, str):
        return Target(target)
    if isinstance(target, Target):
        session_id, cwd = target.id, target.cwd
    elif isinstance(target, Mapping):
        session_id, cwd = target.get("id"), target.get("cwd")
    else:
        wanted = 'a Target, a session id or a mapping {"id", "cwd"?}'
        raise wrong_kind("target", wanted, target, INVALID_REFERENCE)
    return Target(
        string(session_id, "target id", INVALID_REFERENCE),
        optional_path(cwd, "target cwd", INVALID_REFERENCE),
    )


class TextBlock(msgspec.Struct, frozen=True, tag_field="type", tag="text"):
    """A text content block: ``{"type": "text", "text": …}``."""

    text: str


class SourceStats(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """What one referenced source contributed to a context message (docs/snapshot.md §Stats).

    ``redacted`` (secrets redacted, by kind) is there only when redaction is on.
    """

    session_id: str
    label: Any
    """A string, or a title, which may be any JSON value (written as JavaScript writes it)."""
    captured_through_seq: int | None
    compacted: bool
    original_messages: int
    retained_messages: int
    omitted_messages: int
    omitted_bytes: int
    truncated: bool
    input_index: int
    redacted: dict[str, int] | None = None


class ReferenceSource(msgspec.Struct, frozen=True, kw_only=True):
    """``source`` of a context message."""

    kind: Literal["session-reference"] = "session-reference"
    form: Literal["recall"] = "recall"
    version: Literal[1] = 1
    references: list[SourceStats]


class ContextMessage(msgspec.Struct, frozen=True, kw_only=True):
    """The user message that carries the snapshots to the model
    (docs/snapshot.md §Context message)."""

    id: str
    role: Literal["user"] = "user"
    content: list[TextBlock]
    source: ReferenceSource

    @property
    def prompt(self) -> str:
        """The prompt text of the message."""
        return self.content[0].text


class PreparedContent(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """``prepare``'s answer: the (copied) content and the context message, if any. Its wire
    form is the package's ``{content, additionalContext?}``: no ``additionalContext`` key
    without one.

    >>> to_builtins(PreparedContent([{"type": "text", "text": "hi"}]))
    {'content': [{'type': 'text', 'text': 'hi'}]}
    """

    content: list[Any]
    additional_context: ContextMessage | None = None


class Candidate(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """A session a user may reference: ``{sessionId, label, cwd?, createdAt}``."""

    session_id: str
    label: Any
    """The title (any JSON value a log holds there, written as JavaScript writes it), else
    the id."""
    cwd: Cwd = None
    created_at: int | float


class MentionCandidate(Candidate, frozen=True, kw_only=True):
    """A :class:`Candidate` with the mention a user would type for it."""

    mention: str


def to_builtins(value: object) -> Any:
    """What sessionref answers, as plain JSON values (dicts, lists, strings, numbers, booleans,
    ``None``) that ``json.dumps`` takes: every struct at any depth becomes its wire form, with
    the package's camelCase keys. ``prepare_direct_messages`` gives your message dicts and
    :class:`ContextMessage` structs in one list; this turns the whole list into JSON values.

    >>> message = ContextMessage(id="c", content=[TextBlock("hi")], source=ReferenceSource(
    ...     references=[]))
    >>> to_builtins([{"id": "m1", "content": []}, message])  # doctest: +NORMALIZE_WHITESPACE
    [{'id': 'm1', 'content': []}, {'id': 'c', 'role': 'user', 'content':
     [{'type': 'text', 'text': 'hi'}], 'source': {'kind': 'session-reference', 'form': 'recall',
     'version': 1, 'references': []}}]
    """
    return msgspec.to_builtins(value)
