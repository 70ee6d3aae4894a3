"""Whatever a store raises is a coded error; counts are JavaScript safe integers (docs/api.md).

Wording is the package's (docs/api.md §Errors); the wire cases are in test_api_package_cases.py.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import math
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from sessionref import (
    MemoryStore,
    Reference,
    SessionReferenceError,
    SessionReferenceResolver,
    Target,
    decode_session_reference_uri,
    encode_session_reference_uri,
    format_session_reference_mention,
    parse_session_reference_text,
    tag_safe_json,
    utf8_length,
)
from sessionref.batch.arguments import check_options
from sessionref.errors import INVALID_CONFIG, INVALID_REFERENCE, READ_FAILED, TOO_MANY
from sessionref.log.records import SessionHeader, SessionLog
from tests.logs import header

SESSIONS = [
    {"header": header("a", 2, cwd="/w"), "events": []},
    {"header": header("b", 1, cwd=None), "events": []},
]


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no words")


class FailingStore:
    """Reads of "a" work; reads of "bad" raise ``error``; titles and listing may fail too."""

    def __init__(self, error: BaseException | None = None, title: Any = None, listing: Any = None):
        self.inner = MemoryStore(SESSIONS)
        self.error, self.title_error, self.listing_error = error, title, listing

    def headers(self) -> list[SessionHeader]:
        if self.listing_error is not None:
            raise self.listing_error
        return self.inner.headers()

    def read(self, session_id: str) -> SessionLog:
        if session_id == "bad" and self.error is not None:
            raise self.error
        if session_id == "garbage":
            return SessionLog(SessionHeader("garbage", 1), [42])  # type: ignore[list-item]
        return self.inner.read(session_id)

    def title(self, session_id: str) -> str | None:
        if self.title_error is not None and session_id == "a":
            raise self.title_error
        return "" if session_id == "b" else self.inner.title(session_id)


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def failure(call: Any) -> SessionReferenceError:
    with pytest.raises(SessionReferenceError) as caught:
        call()
    return caught.value


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (KeyError("k"), "'k'"),
        (ValueError("bad value"), "bad value"),
        (TimeoutError("mount hung"), "mount hung"),
        (RuntimeError(), "RuntimeError"),
        (Unprintable(), "Unprintable"),
        (SessionReferenceError("too many", TOO_MANY), "too many"),
    ],
)
@pytest.mark.parametrize("refs", [["bad"], ["a", "bad"]])
def test_every_store_exception_is_read_failed(error: Exception, said: str, refs: list[str]) -> None:
    resolver = SessionReferenceResolver(FailingStore(error))
    caught = failure(lambda: resolver.prepare("t", [], [{"sessionId": s} for s in refs]))
    assert (caught.code, caught.message) == (
        READ_FAILED,
        f"failed to read referenced session: {said}",
    )
    assert caught.__cause__ is error


def test_a_log_the_pipeline_cannot_read_is_read_failed() -> None:
    resolver = SessionReferenceResolver(FailingStore())
    assert failure(lambda: resolver.snapshot("t", [{"sessionId": "garbage"}])).code == READ_FAILED


class NoLogStore(FailingStore):
    """A custom store whose read gives a dict, not a SessionLog."""

    def read(self, session_id: str) -> SessionLog:
        return {"header": {"sessionId": session_id}, "records": []}  # type: ignore[return-value]


@pytest.mark.parametrize("redact", [False, True])
def test_a_read_that_gives_no_session_log_is_read_failed(redact: bool) -> None:
    """With redaction or without, the same error, about the read, not about a call the
    user never made."""
    resolver = SessionReferenceResolver(NoLogStore(), redact=redact)
    caught = failure(lambda: resolver.snapshot("t", [{"sessionId": "a"}]))
    assert (caught.code, caught.message) == (
        READ_FAILED,
        "failed to read referenced session: the store's read gave a dict, not a SessionLog",
    )


def test_titles_that_fail_label_by_id_and_an_empty_title_is_kept() -> None:
    resolver = SessionReferenceResolver(FailingStore(title=OSError("gone")))
    assert [(c.session_id, c.label) for c in resolver.list_candidates("t")] == [
        ("b", ""),
        ("a", "a"),
    ]


def test_a_listing_that_fails_is_read_failed() -> None:
    resolver = SessionReferenceResolver(FailingStore(listing=PermissionError("denied")))
    caught = failure(lambda: resolver.list_candidates("t", "x"))
    assert (caught.code, caught.message) == (READ_FAILED, "failed to list sessions: denied")


@pytest.mark.parametrize(
    "value",
    [
        object(),
        print,
        {"k": object()},
        ["\ud800", object()],
        complex(1, 2),
        {None: 1},
        {True: 1},
        {(1, 2): 1},
        {"\ud800": 1, None: 2},  # the same, once a lone surrogate sent it down the slow path
    ],
)
def test_tag_safe_json_of_a_value_with_no_json_form(value: object) -> None:
    with pytest.raises(TypeError, match=r"^session-reference data is not JSON-serializable$"):
        tag_safe_json(value)


class Colour(enum.Enum):
    RED = "<red>"


@dataclasses.dataclass
class Point:
    x: int
    label: str


TAKEN = [
    ({3}, "[3]"),
    (frozenset(["a"]), '["a"]'),
    (b"<>", '"PD4="'),
    (bytearray(b"\x00"), '"AA=="'),
    (datetime.datetime(2026, 1, 2, 3, 4, 5), '"2026-01-02T03:04:05"'),
    (datetime.date(2026, 1, 2), '"2026-01-02"'),
    (datetime.timedelta(days=1, seconds=1), '"P1DT1S"'),
    (decimal.Decimal("1.50"), '"1.50"'),
    (uuid.UUID(int=255), '"00000000-0000-0000-0000-0000000000ff"'),
    (Colour.RED, '"\\u003cred>"'),
    (Point(1, "p"), '{"x":1,"label":"p"}'),
    (2**64, "18446744073709551616"),
    (math.nan, "null"),
    ({1: "a", 1.5: "b"}, '{"1":"a","1.5":"b"}'),
]
"""What ``tag_safe_json`` writes beyond JSON values, as its docstring says (msgspec's forms)."""


@pytest.mark.parametrize(("value", "expected"), TAKEN)
def test_tag_safe_json_writes_what_msgspec_encodes_as_its_doc_says(
    value: object, expected: str
) -> None:
    assert tag_safe_json(value) == expected.encode()
    # the same with a lone surrogate beside it, which the fast path cannot write
    assert tag_safe_json([value, "\ud800"]) == f'[{expected},"\\ud800"]'.encode()
    assert tag_safe_json({"v": value, "\ud800": 0}) == f'{{"v":{expected},"\\ud800":0}}'.encode()


def test_tag_safe_json_walks_a_set_or_a_dataclass_holding_a_lone_surrogate() -> None:
    """These raised UnicodeEncodeError: the slow path handed them back to msgspec whole."""
    assert tag_safe_json({"\ud800"}) == b'["\\ud800"]'
    assert tag_safe_json(Point(1, "\udfff<")) == b'{"x":1,"label":"\\udfff\\u003c"}'
    assert tag_safe_json({2: "\ud800"}) == b'{"2":"\\ud800"}'


@pytest.mark.parametrize(
    ("options", "config"),
    [
        ({"max_references": 2.0}, (2, 50, 65536)),
        ({"max_references": None, "candidate_limit": None}, (3, 50, 65536)),
        ({"candidate_limit": 2**53 - 1, "max_reference_bytes": 1e3}, (3, 2**53 - 1, 1000)),
    ],
)
def test_counts_are_javascript_numbers(options: dict[str, Any], config: tuple[int, ...]) -> None:
    resolver = SessionReferenceResolver(MemoryStore([]), **options)
    values = (resolver.max_references, resolver.candidate_limit, resolver.max_reference_bytes)
    assert values == config and all(type(value) is int for value in values)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max_references", True),
        ("candidate_limit", math.nan),
        ("candidate_limit", math.inf),
        ("max_reference_bytes", 2**53),
        ("max_reference_bytes", "64"),
        ("max_references", -1.0),
    ],
)
def test_not_a_positive_safe_integer(key: str, value: object) -> None:
    caught = failure(lambda: SessionReferenceResolver(MemoryStore([]), **{key: value}))
    wire = {"max_references": "maxReferences", "candidate_limit": "candidateLimit"}
    name = wire.get(key, "maxReferenceBytes")
    assert (caught.code, caught.message) == (
        INVALID_CONFIG,
        f"session-reference: {name} must be a positive safe integer",
    )


def test_from_config_takes_the_package_keys_and_ignores_others() -> None:
    resolver = SessionReferenceResolver.from_config(MemoryStore([]), {"maxReferences": 1, "x": 0})
    assert resolver.config == {"maxReferences": 1, "candidateLimit": 50, "maxReferenceBytes": 65536}


def test_candidate_limits() -> None:
    resolver = SessionReferenceResolver(MemoryStore(SESSIONS))
    assert len(resolver.list_candidates("t", limit=1.0)) == 1
    caught = failure(lambda: resolver.list_candidates("t", limit=True))
    assert (caught.code, caught.message) == (
        INVALID_REFERENCE,
        "candidate limit must be a positive safe integer",
    )


def test_batch_options_follow_the_same_rule() -> None:
    assert check_options(2.0, "title", 2.0) == (2, "title", 2)
    assert failure(lambda: check_options(1, "title", True)).code == INVALID_CONFIG
    assert failure(lambda: check_options(0, "title", 1)).code == INVALID_CONFIG


# Arguments of the wrong kind, found by a newcomer's trial: each was a TypeError or an
# AttributeError, or a READ_FAILED in Python's words at the first read; now a coded error
# naming the argument, when the call is made.

REFS = [{"sessionId": "a"}]


@pytest.mark.parametrize(
    ("options", "code", "message"),
    [
        ({"references": None}, INVALID_REFERENCE, "references must be a list, not NoneType"),
        (
            {"references": {"sessionId": "a"}},
            INVALID_REFERENCE,
            "references must be a list, not dict",
        ),
        ({"references": "a"}, INVALID_REFERENCE, "references must be a list, not str"),
        ({"content": None}, INVALID_CONFIG, "content must be a list, not NoneType"),
        ({"content": "text"}, INVALID_CONFIG, "content must be a list, not str"),
        (
            {"cancel": True},
            INVALID_CONFIG,
            "cancel must be a token with is_set(), such as a threading.Event, not True",
        ),
    ],
)
def test_an_argument_of_the_wrong_kind_is_a_coded_error(
    options: dict[str, Any], code: str, message: str
) -> None:
    arguments = {"content": [], "references": REFS, **options}
    with pytest.raises(SessionReferenceError) as raised:
        SessionReferenceResolver(MemoryStore(SESSIONS)).prepare("t", **arguments)
    assert (raised.value.code, raised.value.message) == (code, message)


class CountedReads(MemoryStore):
    """A memory store that remembers which sessions were read."""

    def __init__(self, sessions: list[dict[str, Any]]) -> None:
        super().__init__(sessions)
        self.reads: list[str] = []

    def read(self, session_id: str) -> SessionLog:
        self.reads.append(session_id)
        return super().read(session_id)


def test_a_snapshot_id_of_the_wrong_kind_is_invalid_config_before_any_read() -> None:
    """A newcomer's trial: ``message_id=5`` made a context message whose id was the number 5
    (``"id":5`` on the wire), after reading every source."""
    store = CountedReads(SESSIONS)
    with pytest.raises(SessionReferenceError) as raised:
        SessionReferenceResolver(store).snapshot("t", REFS, message_id=5)  # type: ignore[arg-type]
    message = "snapshot message_id must be a string or None, not int"
    assert (raised.value.code, raised.value.message, store.reads) == (INVALID_CONFIG, message, [])
    context = SessionReferenceResolver(store).snapshot("t", REFS, message_id="m")
    assert context is not None and context.id == "m" and store.reads == ["a"]


def test_content_that_cannot_be_copied_is_invalid_config() -> None:
    """A newcomer's trial: content holding what has no JSON form and cannot be copied (a
    lock) raised the ``TypeError`` of ``copy.deepcopy``; it is a coded error naming where."""
    resolver = SessionReferenceResolver(MemoryStore(SESSIONS))
    with pytest.raises(SessionReferenceError) as raised:
        resolver.prepare("t", [threading.Lock()], REFS)
    assert raised.value.code == INVALID_CONFIG
    assert raised.value.message.startswith("content cannot be copied: ")
    text = {"type": "text", "text": f"@[a]({encode_session_reference_uri('a')})"}
    message = {"role": "user", "source": {"kind": "user"}, "content": [text, threading.Lock()]}
    with pytest.raises(SessionReferenceError) as raised:
        resolver.prepare_direct_messages(
            "t", [{"role": "user", "source": {"kind": "plugin"}, "content": []}, message]
        )
    assert raised.value.code == INVALID_CONFIG
    assert raised.value.message.startswith("messages[1].content cannot be copied: ")


def test_content_given_as_a_tuple_is_taken_as_a_list() -> None:
    prepared = SessionReferenceResolver(MemoryStore(SESSIONS)).prepare("t", ("x", {"y": 1}), REFS)
    assert prepared.content == ["x", {"y": 1}]


@pytest.mark.parametrize("kind", ["dsh", "claude-code", "codex"])
@pytest.mark.parametrize(
    ("option", "value"),
    [("max_bytes", "x"), ("max_line_bytes", 1.5), ("max_bytes", 0), ("max_bytes", -1)],
)
def test_a_store_limit_is_checked_when_the_store_is_made(
    tmp_path: Path, kind: str, option: str, value: object
) -> None:
    from sessionref.claude_code.store import ClaudeCodeStore
    from sessionref.codex.store import CodexStore
    from sessionref.log.store import DirectoryStore

    store = {"dsh": DirectoryStore, "claude-code": ClaudeCodeStore, "codex": CodexStore}[kind]
    with pytest.raises(SessionReferenceError) as raised:
        store(tmp_path, **{option: value})
    assert raised.value.code == INVALID_CONFIG
    assert raised.value.message == f"{option} must be a positive safe integer, not {value!r}"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (None, 'target must be a Target, a session id or a mapping {"id", "cwd"?}, not NoneType'),
        (5, 'target must be a Target, a session id or a mapping {"id", "cwd"?}, not int'),
        ({"cwd": "/w"}, "target id must be a string, not NoneType"),
        ({"id": "t", "cwd": 5}, "target cwd must be a string, an os.PathLike or None, not int"),
        (Target(None), "target id must be a string, not NoneType"),  # type: ignore[arg-type]
        (Target(5), "target id must be a string, not int"),  # type: ignore[arg-type]
        (Target("t", 5), "target cwd must be a string, an os.PathLike or None, not int"),  # type: ignore[arg-type]
    ],
)
def test_a_target_is_checked_whatever_form_it_is_given_in(target: Any, message: str) -> None:
    """A ``Target`` instance was taken unchecked: ``Target(None)`` prepared a context."""
    with pytest.raises(SessionReferenceError) as raised:
        SessionReferenceResolver(MemoryStore(SESSIONS)).prepare(target, [], REFS)
    assert (raised.value.code, raised.value.message) == (INVALID_REFERENCE, message)


def test_a_target_cwd_may_be_a_path() -> None:
    resolver = SessionReferenceResolver(MemoryStore(SESSIONS))
    found = resolver.list_candidates(Target("t", Path("/w")))
    assert [(c.session_id, c.cwd) for c in found] == [("a", "/w"), ("b", None)]
    found = resolver.list_candidates({"id": "t", "cwd": Path("/elsewhere")})
    assert [(c.session_id, c.cwd) for c in found] == [("b", None), ("a", "/w")]


@pytest.mark.parametrize("method", ["list_candidates", "mention_candidates"])
@pytest.mark.parametrize(("query", "kind"), [(None, "NoneType"), (5, "int"), (b"a", "bytes")])
def test_a_query_that_is_not_a_string_is_invalid_config(
    method: str, query: object, kind: str
) -> None:
    """It was a ``TypeError``; ``SessionIndex.candidates`` said INVALID_CONFIG for the same."""
    resolver = SessionReferenceResolver(MemoryStore(SESSIONS))
    with pytest.raises(SessionReferenceError) as raised:
        getattr(resolver, method)("t", query=query)
    assert (raised.value.code, raised.value.message) == (
        INVALID_CONFIG,
        f"query must be a string, not {kind}",
    )


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        (None, "messages must be a list, not NoneType"),
        ("hi", "messages must be a list, not str"),
        ({"role": "user", "content": []}, "messages must be a list, not dict"),
        (["hello"], "messages[0] must be a mapping, not str"),
        ([{"role": "user", "content": []}, None], "messages[1] must be a mapping, not NoneType"),
    ],
)
def test_direct_messages_of_the_wrong_kind_are_invalid_config(messages: Any, message: str) -> None:
    """They were a ``TypeError`` or an ``AttributeError``; ``content`` of ``prepare`` is
    refused the same way."""
    resolver = SessionReferenceResolver(MemoryStore(SESSIONS))
    with pytest.raises(SessionReferenceError) as raised:
        resolver.prepare_direct_messages("t", messages)
    assert (raised.value.code, raised.value.message) == (INVALID_CONFIG, message)


@pytest.mark.parametrize("placement", ["middle", None, ["before"], "Before"])
def test_a_placement_that_is_neither_before_nor_after_names_the_argument(
    placement: Any,
) -> None:
    """A newcomer's trial: ``unknown placement 'middle'`` said neither which call nor which
    values it takes."""
    resolver = SessionReferenceResolver(MemoryStore(SESSIONS))
    with pytest.raises(SessionReferenceError) as raised:
        resolver.prepare_direct_messages("t", [], placement=placement)
    assert (raised.value.code, raised.value.message) == (
        INVALID_CONFIG,
        f"prepare_direct_messages placement must be one of before, after, not {placement!r}",
    )


def test_direct_messages_may_be_any_mappings_in_any_sequence() -> None:
    from types import MappingProxyType

    mention = "see @[a](dsh-session:ImEi)"
    user = MappingProxyType(
        {"id": "m", "source": {"kind": "user"}, "content": [{"type": "text", "text": mention}]}
    )
    other = {"id": "n", "source": {"kind": "assistant"}, "content": []}
    out = SessionReferenceResolver(MemoryStore(SESSIONS)).prepare_direct_messages(
        "t", (other, user), placement="after"
    )
    assert out[0] is other
    readable = [{"type": "text", "text": "see @a"}]
    assert out[1] == {"id": "m", "source": {"kind": "user"}, "content": readable}
    assert [r.session_id for r in out[2].source.references] == ["a"]  # type: ignore[union-attr]


WANTED_STORE = "a store (with headers(), read() and title())"


@pytest.mark.parametrize(
    ("store", "kind"), [("/path/to/store", "str"), (None, "NoneType"), (Path("/s"), "PosixPath")]
)
def test_a_resolver_refuses_what_is_not_a_store_when_it_is_made(store: Any, kind: str) -> None:
    """It was made, and every later call failed as READ_FAILED."""
    for make in (SessionReferenceResolver, SessionReferenceResolver.from_config):
        with pytest.raises(SessionReferenceError) as raised:
            make(store)
        assert (raised.value.code, raised.value.message) == (
            INVALID_CONFIG,
            f"SessionReferenceResolver store must be {WANTED_STORE}, not {kind}",
        )


def test_a_store_needs_only_what_the_resolver_reads() -> None:
    class Minimal:
        def headers(self) -> list[SessionHeader]:
            return []

        def read(self, session_id: str) -> SessionLog:
            raise KeyError(session_id)

        def title(self, session_id: str) -> None:
            return None

    assert SessionReferenceResolver(Minimal()).list_candidates("t") == []  # type: ignore[arg-type]


@pytest.mark.parametrize(("config", "kind"), [("abc", "str"), ([], "list"), (3, "int")])
def test_from_config_takes_a_mapping_or_none(config: Any, kind: str) -> None:
    """``"abc"`` was an AttributeError and ``[]`` was taken as no config."""
    with pytest.raises(SessionReferenceError) as raised:
        SessionReferenceResolver.from_config(MemoryStore([]), config)
    assert (raised.value.code, raised.value.message) == (
        INVALID_CONFIG,
        f"SessionReferenceResolver.from_config config must be a mapping or None, not {kind}",
    )
    defaults = {"maxReferences": 3, "candidateLimit": 50, "maxReferenceBytes": 65536}
    assert SessionReferenceResolver.from_config(MemoryStore([]), None).config == defaults


@pytest.mark.parametrize(
    ("sessions", "message"),
    [
        (SESSIONS[0], "MemoryStore sessions must be a list, not dict"),
        (None, "MemoryStore sessions must be a list, not NoneType"),
        (
            [SESSIONS[0], "b"],
            'MemoryStore sessions[1] must be a {"header", "events"} mapping, not str',
        ),
    ],
)
def test_a_memory_store_takes_a_list_of_session_mappings(sessions: Any, message: str) -> None:
    """One session dict given alone was an AttributeError (its keys were taken as sessions)."""
    with pytest.raises(SessionReferenceError) as raised:
        MemoryStore(sessions)
    assert (raised.value.code, raised.value.message) == (INVALID_CONFIG, message)
    assert [h.id for h in MemoryStore(iter(SESSIONS)).headers()] == ["a", "b"]


@pytest.mark.parametrize(
    ("codec", "value", "code", "message"),
    [
        (
            encode_session_reference_uri,
            None,
            INVALID_REFERENCE,
            "encode_session_reference_uri session_id must be a string, not NoneType",
        ),
        (
            encode_session_reference_uri,
            5,
            INVALID_REFERENCE,
            "encode_session_reference_uri session_id must be a string, not int",
        ),
        (
            format_session_reference_mention,
            3,
            INVALID_REFERENCE,
            "format_session_reference_mention session_id must be a string, not int",
        ),
        (
            decode_session_reference_uri,
            None,
            INVALID_REFERENCE,
            "decode_session_reference_uri uri must be a string, not NoneType",
        ),
        (
            decode_session_reference_uri,
            b"dsh-session:InMtYmV0YSI",
            INVALID_REFERENCE,
            "decode_session_reference_uri uri must be a string, not bytes",
        ),
        (
            parse_session_reference_text,
            None,
            INVALID_CONFIG,
            "parse_session_reference_text text must be a string, not NoneType",
        ),
        (utf8_length, None, INVALID_CONFIG, "utf8_length text must be a string, not NoneType"),
        (utf8_length, b"abc", INVALID_CONFIG, "utf8_length text must be a string, not bytes"),
    ],
)
def test_a_codec_given_what_is_not_a_string_is_a_coded_error(
    codec: Any, value: object, code: str, message: str
) -> None:
    """They were a TypeError, an AttributeError, or (encoding ``None``) the URI of the id
    ``null``, ``dsh-session:bnVsbA``, which no session has."""
    with pytest.raises(SessionReferenceError) as raised:
        codec(value)
    assert (raised.value.code, raised.value.message) == (code, message)


def test_the_text_of_a_direct_message_that_is_not_a_string_is_a_coded_error() -> None:
    message = {"source": {"kind": "user"}, "content": [{"type": "text", "text": 7}]}
    with pytest.raises(SessionReferenceError) as raised:
        SessionReferenceResolver(MemoryStore(SESSIONS)).prepare_direct_messages("t", [message])
    assert (raised.value.code, raised.value.message) == (
        INVALID_CONFIG,
        "messages[0].content[0].text must be a string, not int",
    )


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ("see @[a](dsh-session:ImEi)", "str"),
        ({"type": "text", "text": "hi"}, "dict"),
        (None, "NoneType"),
    ],
)
def test_a_direct_user_message_whose_content_is_no_list_is_a_coded_error(
    content: object, kind: str
) -> None:
    """The package's ``prepareDirectMessages`` calls ``message.content.map`` on every user
    message, mention or not: the oracle (conform.mjs, a ``direct`` case) throws
    ``message.content.map is not a function`` for a string or an object, and ``Cannot read
    properties of null`` for ``null``. A message that is not the user's is not looked into."""
    user = {"source": {"kind": "user"}, "content": content}
    other = {"source": {"kind": "assistant"}, "content": content}
    resolver = SessionReferenceResolver(MemoryStore(SESSIONS))
    assert resolver.prepare_direct_messages("t", [other]) == [other]
    with pytest.raises(SessionReferenceError) as raised:
        resolver.prepare_direct_messages("t", [other, user])
    assert (raised.value.code, raised.value.message) == (
        INVALID_CONFIG,
        f"messages[1].content must be a list, not {kind}",
    )


NOWHERE = f"see @[n]({encode_session_reference_uri('nowhere')})"  # no such session: a read fails


@pytest.mark.parametrize("source", ["user", 5, 1.5, True, ["user"], {}, {"kind": "plugin"}])
def test_a_message_whose_source_is_no_user_mapping_passes_through_unread(source: object) -> None:
    """Observed of the published package (rc.8), its ``prepareDirectMessages`` called directly
    from Node with a ``readSurface`` that throws for every id: a message whose source is
    ``"user"``, ``5``, ``1.5``, ``true``, ``["user"]`` or ``{}`` comes back as it was, its
    mention unresolved and nothing read (``message.source.kind`` is ``undefined`` there)."""
    message = {"id": "m", "role": "user", "source": source, "content": [text(NOWHERE)]}
    answer = SessionReferenceResolver(MemoryStore(SESSIONS)).prepare_direct_messages("t", [message])
    assert len(answer) == 1 and answer[0] is message


@pytest.mark.parametrize(
    ("message", "state"),
    [
        ({"id": "m", "role": "user", "source": None, "content": [text(NOWHERE)]}, "None"),
        ({"id": "m", "role": "user", "content": [text(NOWHERE)]}, "missing"),
        ({"id": "m", "role": "user", "content": None}, "missing"),
    ],
)
def test_a_message_without_a_source_is_a_coded_error(message: dict[str, Any], state: str) -> None:
    """Observed of the published package (rc.8), called directly from Node: a ``null``,
    ``undefined`` or missing source throws (``Cannot read properties of null (reading
    'kind')``, ``... of undefined ...``) before the message's content is looked at, mention or
    not. That is a TypeError there, INVALID_CONFIG naming the message here."""
    other = {"id": "o", "role": "assistant", "source": {"kind": "assistant"}, "content": []}
    resolver = SessionReferenceResolver(MemoryStore(SESSIONS))
    with pytest.raises(SessionReferenceError) as raised:
        resolver.prepare_direct_messages("t", [other, message])
    assert (raised.value.code, raised.value.message) == (
        INVALID_CONFIG,
        f"messages[1].source is {state} (a message needs one)",
    )


SOURCELESS = {"id": "s", "role": "user", "source": None, "content": [text("x")]}
NO_SOURCE = "messages[{}].source is None (a message needs one)"


@pytest.mark.parametrize(
    ("first", "second", "code", "message"),
    [
        (
            f"see @[t]({encode_session_reference_uri('t')})",
            SOURCELESS,
            INVALID_CONFIG,
            NO_SOURCE.format(1),
        ),
        (NOWHERE, SOURCELESS, INVALID_CONFIG, NO_SOURCE.format(1)),
        (None, SOURCELESS, INVALID_CONFIG, "messages[0].content must be a list, not NoneType"),
        (
            "dsh-session:AAAA",
            SOURCELESS,
            INVALID_REFERENCE,
            'invalid session reference URI "dsh-session:AAAA"',
        ),
    ],
)
def test_a_sourceless_message_fails_where_the_packages_synchronous_throws_do(
    first: str | None, second: dict[str, Any], code: str, message: str
) -> None:
    """Observed of the published package (rc.8), called directly from Node with two messages:
    a missing source throws at the start of its message's turn, as a malformed mention or a
    content that is no list does, so the first such message wins, and it beats a self
    reference or a read failure of an earlier message (those settle later). Both orders of
    each pair were run: ``[self, null]`` → null's, ``[null, self]`` → null's; ``[unreadable,
    null]`` → null's, ``[null, unreadable]`` → null's; ``[content null, null]`` → content's,
    ``[null, content null]`` → null's; ``[malformed URI, null]`` → the URI's, ``[null,
    malformed URI]`` → null's."""
    content = None if first is None else [text(first)]
    direct = {"id": "d", "role": "user", "source": {"kind": "user"}, "content": content}
    resolver = SessionReferenceResolver(MemoryStore(SESSIONS))
    forward = failure(lambda: resolver.prepare_direct_messages("t", [direct, second]))
    assert (forward.code, forward.message) == (code, message)
    backward = failure(lambda: resolver.prepare_direct_messages("t", [second, direct]))
    assert (backward.code, backward.message) == (INVALID_CONFIG, NO_SOURCE.format(0))


def test_an_empty_snapshot_id_is_invalid_config_before_any_read() -> None:
    """A newcomer's trial: ``message_id=""`` was replaced by a fresh uuid4 (``message_id or
    uuid4()``). The package has no such argument; the harness refuses a log holding a message
    whose id is empty (``message-empty-id``, docs/format.md §Validation), so the id is neither
    used nor replaced but refused, by ``render_sources`` too."""
    store = CountedReads(SESSIONS)
    resolver = SessionReferenceResolver(store)
    message = "snapshot message_id must not be empty (a message's id is non-empty)"
    with pytest.raises(SessionReferenceError) as raised:
        resolver.snapshot("t", REFS, message_id="")
    assert (raised.value.code, raised.value.message, store.reads) == (INVALID_CONFIG, message, [])
    sources = resolver.read_sources([Reference("a", "a")])
    with pytest.raises(SessionReferenceError) as raised:
        resolver.render_sources(sources, message_id="")
    assert (raised.value.code, raised.value.message) == (INVALID_CONFIG, message)
