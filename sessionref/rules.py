"""The package's rules for what a caller passes: config values, limits, targets, references.

Each check fails as the published package fails, in its order and with its wording
(docs/api.md §Configuration, §Errors). Counts are JavaScript numbers there: positive *safe*
integers, integral floats included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, TypeVar

import msgspec

from sessionref.codecs.jsjson import js_json
from sessionref.codecs.uri import Reference
from sessionref.errors import (
    INVALID_CONFIG,
    INVALID_REFERENCE,
    SELF_REFERENCE,
    TOO_MANY,
    SessionReferenceError,
    listed,
    positive_safe_integer,
)
from sessionref.types import Target

T = TypeVar("T")

MAX_REFERENCES_LIMIT: Final = 3
DEFAULT_CANDIDATE_LIMIT: Final = 50
DEFAULT_MAX_REFERENCE_BYTES: Final = 65536


class ResolverConfig(msgspec.Struct, frozen=True, rename="camel"):
    """A resolver's checked settings; the wire form has the package's key names."""

    max_references: int = MAX_REFERENCES_LIMIT
    candidate_limit: int = DEFAULT_CANDIDATE_LIMIT
    max_reference_bytes: int = DEFAULT_MAX_REFERENCE_BYTES


def check_config(
    *,
    max_references: object = None,
    candidate_limit: object = None,
    max_reference_bytes: object = None,
) -> ResolverConfig:
    """Settings a resolver takes, checked as the package checks them; ``None`` is the default.

    Each must be a positive safe integer (checked in this order), then ``maxReferences`` at
    most 3; else ``SESSION_REFERENCE_INVALID_CONFIG``.

    >>> check_config(max_references=2.0)
    ResolverConfig(max_references=2, candidate_limit=50, max_reference_bytes=65536)
    >>> try:
    ...     check_config(max_references=4, candidate_limit=0)
    ... except SessionReferenceError as exc:
    ...     print(exc)
    session-reference: candidateLimit must be a positive safe integer
    """
    defaults = ResolverConfig()
    given = {
        "maxReferences": (max_references, defaults.max_references),
        "candidateLimit": (candidate_limit, defaults.candidate_limit),
        "maxReferenceBytes": (max_reference_bytes, defaults.max_reference_bytes),
    }
    counts = [
        positive_safe_integer(
            default if value is None else value,
            f"session-reference: {key} must be a positive safe integer",
        )
        for key, (value, default) in given.items()
    ]
    if counts[0] > MAX_REFERENCES_LIMIT:
        raise SessionReferenceError(
            f"session-reference: maxReferences must not exceed {MAX_REFERENCES_LIMIT}",
            INVALID_CONFIG,
        )
    return ResolverConfig(*counts)


def as_reference(value: object) -> Reference:
    """A reference from ``{"sessionId", "label"?}`` (label defaults to the id).

    A JSON primitive is not an object; an object (a list too, as in JavaScript) needs a
    string ``sessionId`` and, if it has one, a string ``label``.

    >>> as_reference({"sessionId": "s"})
    Reference(session_id='s', label='s')
    >>> as_reference("s")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: session reference must be an object
    """
    if isinstance(value, Reference):
        return value
    if value is None or isinstance(value, (str, int, float)):
        raise SessionReferenceError("session reference must be an object", INVALID_REFERENCE)
    if isinstance(value, Mapping):
        session_id, label = value.get("sessionId"), value.get("label", value.get("sessionId"))
        if isinstance(session_id, str) and isinstance(label, str):
            return Reference(session_id, label)
    raise SessionReferenceError(
        "session reference must contain a string sessionId and optional string label",
        INVALID_REFERENCE,
    )


def distinct_references(
    target: Target, references: Iterable[object], max_references: int
) -> list[Reference]:
    """Check references in order; drop later duplicates (the first label wins).

    >>> refs = [{"sessionId": "a", "label": "A"}, {"sessionId": "a"}, {"sessionId": "b"}]
    >>> [r.label for r in distinct_references(Target("t"), refs, 3)]
    ['A', 'b']
    >>> distinct_references(Target('say "hi"'), [{"sessionId": 'say "hi"'}], 3)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: session "say \\"hi\\"" cannot reference itself
    """
    kept: dict[str, Reference] = {}
    for value in listed(references, "references", INVALID_REFERENCE):
        reference = as_reference(value)
        if reference.session_id == target.id:
            quoted = js_json(target.id).decode("utf-8")
            raise SessionReferenceError(f"session {quoted} cannot reference itself", SELF_REFERENCE)
        kept.setdefault(reference.session_id, reference)
    if len(kept) > max_references:
        raise SessionReferenceError(
            f"a message may reference at most {max_references} sessions", TOO_MANY
        )
    return list(kept.values())


def is_direct(message: Mapping[str, object], index: int) -> bool:
    """Whether ``message`` (number ``index`` of those given) is a direct user message: its
    ``source`` is a mapping whose ``kind`` is ``"user"``. Any other source passes through, as
    the package reads ``message.source.kind`` off a string, a number or an array as
    ``undefined``; but reading it off a missing or ``None`` source throws there, so that is
    INVALID_CONFIG naming the message.

    >>> is_direct({"source": {"kind": "user"}}, 0), is_direct({"source": "user"}, 0)
    (True, False)
    >>> is_direct({"content": []}, 2)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: messages[2].source is missing (a message needs one)
    """
    source = message.get("source")
    if source is None:
        state = "None" if "source" in message else "missing"
        raise SessionReferenceError(
            f"messages[{index}].source is {state} (a message needs one)", INVALID_CONFIG
        )
    return isinstance(source, Mapping) and source.get("kind") == "user"


def one_of(value: object, choices: tuple[T, ...], name: str) -> T:
    """The one of ``choices`` (strings) that ``value`` is, else INVALID_CONFIG naming
    ``name``, the choices and the value given.

    >>> one_of("after", ("before", "after"), "placement")
    'after'
    >>> one_of("middle", ("before", "after"), "placement")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: placement must be one of before, after, not 'middle'
    """
    chosen = next((known for known in choices if isinstance(value, str) and known == value), None)
    if chosen is None:
        listed_choices = ", ".join(map(str, choices))
        raise SessionReferenceError(
            f"{name} must be one of {listed_choices}, not {value!r}", INVALID_CONFIG
        )
    return chosen
