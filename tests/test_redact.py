"""Redaction (docs/redaction.md): every generated secret of every kind is gone from what the
model gets, in every context and across a cut; ordinary text comes through; the lazy
transform gives what redacting every unit gives; stats count only what the model gets."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionref import MemoryStore, SessionReferenceResolver, Target
from sessionref.batch import build_snapshots
from sessionref.codecs.jsjson import js_json
from sessionref.codecs.jsstring import utf8_length
from sessionref.errors import BUDGET_EXCEEDED, INVALID_CONFIG, SessionReferenceError
from sessionref.log.builder import LogBuilder
from sessionref.pipeline.messages import SourceData, Unit
from sessionref.pipeline.retain_budget import retain_budget
from sessionref.pipeline.truncate import Fitted, truncate
from sessionref.redact import Redaction
from sessionref.transcript import Entry, Transcript
from tests.conftest import examples
from tests.redact_corpus import CONTEXTS, FRAGMENT, MAKERS, leaked, ordinary_lines, secrets

SECRETS = secrets(seed=26)
FALSE_POSITIVE_CEILING = 0.002
"""At most this share of ordinary lines may be changed by redaction (measured: 0 of 5,000)."""
HEADER = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0, "cwd": "/w"}


def store_of(*texts: str, checkpoint: str | None = None) -> MemoryStore:
    """One session ``s`` whose user and assistant messages alternate with ``texts``."""
    log = LogBuilder()
    for index, text in enumerate(texts):
        if index % 2:
            log.assistant(text)
        else:
            log.user(text)
    if checkpoint is not None:
        first = log.surface[0]
        log.checkpoint(checkpoint, first, first)
    return MemoryStore([{"header": HEADER, "events": log.events}])


def conversation(resolver: SessionReferenceResolver) -> tuple[list[str], dict[str, Any]]:
    """The texts the model gets of session ``s``, and the reference's stats."""
    context = resolver.prepare(Target("t"), [], [{"sessionId": "s"}]).additional_context
    assert context is not None
    prompt = context.prompt
    array = prompt[prompt.index("<referenced-sessions>\n") + 22 : prompt.rindex("\n</")]
    texts = [turn["text"] for turn in json.loads(array)[0]["conversation"]]
    return texts, json.loads(js_json(context.source.references[0]))


def test_the_corpus_holds_at_least_20_kinds() -> None:
    assert len(MAKERS) >= 20
    assert all(len(s.core) >= FRAGMENT for s in SECRETS)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_every_secret_is_redacted_in_every_context(kind: str) -> None:
    cases = [
        (s, name, place(s.snippet))
        for s in SECRETS
        if s.kind == kind
        for name, place in CONTEXTS.items()
    ]
    resolver = SessionReferenceResolver(
        store_of(*(text for _, _, text in cases)), redact=True, max_reference_bytes=1 << 20
    )
    texts, stats = conversation(resolver)
    assert len(texts) == len(cases)
    for (secret, context, _), text in zip(cases, texts, strict=True):
        assert not leaked(secret, text), (context, text)
        assert "[REDACTED:" in text, (context, text)
    assert sum(stats["redacted"].values()) >= len(cases)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_a_secret_straddling_the_cut_is_redacted_before_the_cut(kind: str) -> None:
    """One long message with the secret in its middle, cut at every budget of a sweep that
    moves the head/tail cut point across where the secret is: no budget shows a part of it
    (and without redaction some budget of the sweep does, so the sweep does cross it)."""
    secret = next(s for s in SECRETS if s.kind == kind)
    text = "a" * 400 + " " + secret.snippet + " " + "z" * 400
    store = store_of(text)
    shown_without = False
    size = utf8_length(text)
    for budget in range(size // 2, size + 200, 7):
        for redact in (True, False):
            resolver = SessionReferenceResolver(store, redact=redact, max_reference_bytes=budget)
            (shown,), _ = conversation(resolver)
            if redact:
                assert not leaked(secret, shown), (budget, shown)
            else:
                shown_without = shown_without or bool(leaked(secret, shown))
    assert shown_without


def test_ordinary_text_survives() -> None:
    """Code, logs, commands, commit SHAs, UUIDs, session ids, lockfile integrity hashes:
    the share of lines redaction changes stays under the ceiling."""
    lines = ordinary_lines(seed=7, count=5000)
    redaction = Redaction()
    changed = [line for line in lines if redaction.redact(line)[0] != line]
    assert len(changed) <= FALSE_POSITIVE_CEILING * len(lines), changed[:10]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PASSWORD=Xk9mQ2vL7pR4wZ", "PASSWORD=[REDACTED:secret-assignment]"),
        ('password = "Xk9mQ2vL7pR4wZ"', 'password = "[REDACTED:secret-assignment]"'),
        ("export SECRET=Xk9mQ2vL7pR4wZ", "export SECRET=[REDACTED:secret-assignment]"),
        ('TOKEN="Xk9mQ2vL7pR4wZ"', 'TOKEN="[REDACTED:secret-assignment]"'),
        ("DB_PASSWORD=Xk9mQ2vL7pR4wZ", "DB_PASSWORD=[REDACTED:secret-assignment]"),
        (  # credential's value (up to the escaped quote) is no secret; the one inside it is
            r'{"credential": "db_password=\"Xk9mQ2vL7pR4wZ\""}',
            r'{"credential": "db_password=\"[REDACTED:secret-assignment]\""}',
        ),
        ("password = getpass.getpass()", "password = getpass.getpass()"),
        ("token = tokens[next_index]", "token = tokens[next_index]"),
    ],
)
def test_a_name_that_is_only_a_secret_word_is_an_assignment(text: str, expected: str) -> None:
    """Found by a newcomer's trial: ``PASSWORD=…`` passed while ``DB_PASSWORD=…`` did not."""
    assert Redaction().redact(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "redis://:Sup3rS3cret@cache:6379/0",
            "redis://:[REDACTED:basic-auth-credentials]@cache:6379/0",
        ),
        ("postgres://user:p%40ss@db/x", "postgres://user:[REDACTED:basic-auth-credentials]@db/x"),
        ("see http://example.com:8080/a@b", "see http://example.com:8080/a@b"),
        (  # no URI holds a quote unencoded: not one password running across JSON's quotes
            '{"a":"http://x:y","b":"z@h"}',
            '{"a":"http://x:y","b":"z@h"}',
        ),
    ],
)
def test_a_password_in_a_url_with_or_without_a_user(text: str, expected: str) -> None:
    """Found by a newcomer's trial: ``redis://:password@`` (no user) passed."""
    assert Redaction().redact(text)[0] == expected


ROUTABLE_PAYLOAD = "Zm9vYmFyYmF6cXV4" * 5  # 80 characters: past detect-secrets' 50


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("glpat-abcdefghij0123456789 ok", "[REDACTED:gitlab-token] ok"),
        (f"glpat-{ROUTABLE_PAYLOAD} ok", "[REDACTED:gitlab-token] ok"),
        (f"GITLAB=glpat-{ROUTABLE_PAYLOAD}.01.1b2c3d4e5.", "GITLAB=[REDACTED:gitlab-token]."),
        (f"GR1348941{ROUTABLE_PAYLOAD}", "[REDACTED:gitlab-token]"),
        ("glpat-abcdefghij0123456789. Then", "[REDACTED:gitlab-token]. Then"),
        ("glpat-tooshort", "glpat-tooshort"),
    ],
)
def test_a_gitlab_token_of_any_length_is_replaced_whole(text: str, expected: str) -> None:
    """A token of more than 50 characters after ``glpat-`` (GitLab's routable tokens run to
    310, then ``.<version>.<check>``) passed whole: detect-secrets' pattern takes 20 to 50."""
    assert Redaction().redact(text)[0] == expected


def test_redaction_off_changes_nothing_and_says_nothing() -> None:
    secret = SECRETS[0]
    store = store_of("hello " + secret.snippet, "ok")
    texts, stats = conversation(SessionReferenceResolver(store))
    assert secret.snippet in texts[0] and "redacted" not in stats
    texts, stats = conversation(SessionReferenceResolver(store, redact=True))
    assert secret.snippet not in texts[0] and stats["redacted"] == {"aws-access-key": 1}


def test_stats_count_only_the_messages_the_model_gets() -> None:
    """Secrets of dropped messages are not counted; a checkpoint's are, wherever it is."""
    github = next(s for s in SECRETS if s.kind == "github-token").snippet
    stripe = next(s for s in SECRETS if s.kind == "stripe-live-key").snippet
    old = ["old " + github + " " + "x" * 500] * 4
    store = store_of(*old, "new " + stripe, "fine", checkpoint="summary " + github)
    resolver = SessionReferenceResolver(store, redact=True, max_reference_bytes=700)
    texts, stats = conversation(resolver)
    assert stats["omittedMessages"] >= 3
    kept_github = sum(("[REDACTED:github-token]" in t) for t in texts)
    assert stats["redacted"] == {"github-token": kept_github, "stripe-access-key": 1}


def test_user_patterns() -> None:
    store = store_of("ticket TK-123456 and password: hunter2 done")
    patterns = [r"TK-\d+", r"password: (?P<secret>\S+)"]
    texts, stats = conversation(
        SessionReferenceResolver(store, redact=True, redact_patterns=patterns)
    )
    assert texts == ["ticket [REDACTED:custom] and password: [REDACTED:custom] done"]
    assert stats["redacted"] == {"custom": 2}


def test_user_patterns_alone_turn_redaction_on() -> None:
    """As ``--redact-pattern`` implies ``--redact``: patterns given without ``redact=True``
    redact (the built-in kinds too), in the resolver and in a batch."""
    secret = SECRETS[0]
    store = store_of(f"ticket TK-123456 and {secret.snippet}")
    texts, stats = conversation(SessionReferenceResolver(store, redact_patterns=[r"TK-\d+"]))
    assert texts[0].startswith("ticket [REDACTED:custom] and ") and not leaked(secret, texts[0])
    assert stats["redacted"] == {"custom": 1, "aws-access-key": 1}
    (result,) = build_snapshots(store, redact_patterns=[r"TK-\d+"])
    (reference,) = result["context"]["source"]["references"]
    assert reference["redacted"] == {"custom": 1, "aws-access-key": 1}
    assert "TK-123456" not in json.dumps(result)


@pytest.mark.parametrize("options", [{}, {"redact_patterns": None}, {"redact": False}])
def test_off_is_off_however_it_is_said(options: dict[str, Any]) -> None:
    secret = SECRETS[0]
    store = store_of("hello " + secret.snippet)
    texts, stats = conversation(SessionReferenceResolver(store, **options))
    assert secret.snippet in texts[0] and "redacted" not in stats


def test_a_redaction_given_with_patterns_keeps_both() -> None:
    store = store_of("TK-1 and PR-2 and XY-3")
    resolver = SessionReferenceResolver(
        store, redact=Redaction(("TK-1",)), redact_patterns=["PR-2"]
    )
    assert conversation(resolver)[0] == ["[REDACTED:custom] and [REDACTED:custom] and XY-3"]


@pytest.mark.parametrize("redact", [True, False])
def test_a_pattern_that_does_not_compile_is_invalid_config(redact: bool) -> None:
    with pytest.raises(SessionReferenceError) as caught:
        SessionReferenceResolver(MemoryStore([]), redact=redact, redact_patterns=["(unclosed"])
    assert caught.value.code == INVALID_CONFIG and "(unclosed" in caught.value.message


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"redact_patterns": "an"}, "redact_patterns must be a list, not str"),
        ({"redact_patterns": [b"an"]}, "each of redact_patterns must be a string, not bytes"),
        ({"redact": "yes"}, "redact must be a bool or a Redaction, not str"),
        ({"redact": 2}, "redact must be a bool or a Redaction, not int"),
        ({"redact": 0}, "redact must be a bool or a Redaction, not int"),
        ({"redact": []}, "redact must be a bool or a Redaction, not list"),
        ({"redact": None}, "redact must be a bool or a Redaction, not NoneType"),
        ({"redact": 0.5}, "redact must be a bool or a Redaction, not float"),
    ],
)
def test_redaction_options_of_the_wrong_kind_are_invalid_config(
    options: dict[str, Any], message: str
) -> None:
    """A string of patterns would be one pattern a character; a truthy non-bool a guess."""
    with pytest.raises(SessionReferenceError) as caught:
        SessionReferenceResolver(MemoryStore([]), **options)
    assert (caught.value.code, caught.value.message) == (INVALID_CONFIG, message)


@pytest.mark.parametrize("redact", [1, [], None])
def test_batch_snapshots_check_redact_as_the_resolver_does(redact: Any) -> None:
    """A newcomer's trial: ``redact=2`` turned redaction on and ``redact=[]`` left it off
    in silence, where ``redact=0.5`` was an error; docs/api.md takes a bool or a Redaction."""
    with pytest.raises(SessionReferenceError) as caught:
        list(build_snapshots(MemoryStore([]), redact=redact))
    expected = f"build_snapshots redact must be a bool or a Redaction, not {type(redact).__name__}"
    assert (caught.value.code, caught.value.message) == (INVALID_CONFIG, expected)


@pytest.mark.parametrize(
    ("patterns", "message"),
    [
        ("TK-1", "Redaction patterns must be a list, not str"),
        (None, "Redaction patterns must be a list, not NoneType"),
        ((b"TK-1",), "each of Redaction patterns must be a string, not bytes"),
        (  # a newcomer's trial: accepted, then refused only when first used
            ["TK-("],
            "redact pattern 'TK-(' is not a regular expression: missing ), unterminated "
            "subpattern at position 3",
        ),
    ],
)
def test_a_redaction_of_patterns_of_the_wrong_kind_is_invalid_config(
    patterns: Any, message: str
) -> None:
    """A newcomer's trial: ``Redaction("TK-1")`` was taken as four one-character patterns,
    redacting every ``T``, ``K``, ``-`` and ``1`` of every text."""
    with pytest.raises(SessionReferenceError) as caught:
        Redaction(patterns)
    assert (caught.value.code, caught.value.message) == (INVALID_CONFIG, message)


def test_a_redaction_takes_its_patterns_as_a_list() -> None:
    """As ``redact_patterns`` does; a list used to fail in the label cache (unhashable)."""
    redaction = Redaction(["TK-1"])
    assert redaction == Redaction(("TK-1",))
    assert redaction.label("fix TK-1 and KT") == ("fix [REDACTED:custom] and KT", Counter(custom=1))
    resolver = SessionReferenceResolver(store_of("TK-1 and KT"), redact=redaction)
    assert conversation(resolver)[0] == ["[REDACTED:custom] and KT"]


# The lazy transform against an independent reading of the rule: redact every unit, then the
# budget. The kept conversation and counts must be the same; omittedBytes follows
# docs/snapshot.md (dropped units as the log holds them, the newest dropped one redacted).

SNIPPETS = st.sampled_from([s.snippet for s in SECRETS[::3]])
TEXTS = st.lists(st.one_of(st.text(min_size=1, max_size=60), SNIPPETS), min_size=1, max_size=4)
UNITS = st.lists(
    st.builds(
        Unit,
        st.sampled_from(["user", "assistant"]),
        TEXTS.map(" ".join),
        st.sampled_from([False, False, False, True]),
    ),
    min_size=1,
    max_size=12,
)


def _fit(units: list[Unit], source: SourceData, budget: int) -> Fitted | str:
    try:
        return truncate(retain_budget(units, source, budget), budget)
    except SessionReferenceError as exc:
        assert exc.code == BUDGET_EXCEEDED
        return exc.code


@settings(max_examples=examples(150), deadline=None)
@given(UNITS, st.integers(100, 3000))
def test_the_lazy_transform_gives_what_redacting_every_unit_gives(
    units: list[Unit], budget: int
) -> None:
    source = SourceData("s", "s", None, 1)
    redaction = Redaction()
    everything = [Unit(u.role, redaction.redact(u.text)[0], u.checkpoint) for u in units]
    expected = _fit(everything, source, budget)
    transform = redaction.transform()
    got = _fit(list(transform(units, source, budget)), source, budget)
    if isinstance(expected, str) or isinstance(got, str):
        assert got == expected
        return
    assert got.data == expected.data
    assert got.omitted_messages == expected.omitted_messages
    pairs = list(zip(units, everything, strict=True))
    droppable = [pair for pair in pairs if not pair[0].checkpoint]
    dropped, kept = droppable[: got.omitted_messages], droppable[got.omitted_messages :]
    as_logged = sum(utf8_length(unit.text) for unit, _ in dropped[:-1])
    newest = utf8_length(dropped[-1][1].text) if dropped else 0
    cut = expected.omitted_bytes - sum(utf8_length(redacted.text) for _, redacted in dropped)
    assert got.omitted_bytes == as_logged + newest + cut
    shown = [unit for unit, _ in pairs if unit.checkpoint] + [unit for unit, _ in kept]
    assert transform.counts == sum((redaction.redact(u.text)[1] for u in shown), Counter())


def test_an_exported_transcript_holds_no_secret_in_any_entry() -> None:
    """docs/redaction.md §Export and show: the title and every entry, a tool's name too
    (a log may name a call anything)."""
    github = next(s for s in SECRETS if s.kind == "github-token")
    entries = [
        Entry("user", "text", github.snippet),
        Entry("user", "checkpoint", github.snippet),
        Entry("assistant", "thinking", github.snippet),
        Entry("assistant", "tool-call", github.snippet, name=github.snippet),
        Entry("tool", "tool-result", github.snippet, name=github.snippet),
    ]
    transcript = Transcript("s", "dsh", github.snippet, None, None, entries)
    redacted, counts = Redaction().transcript(transcript)
    assert not leaked(github, js_json(redacted).decode())
    assert counts == {"github-token": 8}
    names = [entry.name for entry in redacted.entries]
    assert names == [None, None, None, "[REDACTED:github-token]", "[REDACTED:github-token]"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.redact(b"key"), "Redaction.redact text must be a string, not bytes"),
        (lambda r: r.redact(None), "Redaction.redact text must be a string, not NoneType"),
        (
            lambda r: r.snapshot({"header": HEADER}, "s", 100),
            "Redaction.snapshot log must be a SessionLog, not dict",
        ),
        (
            lambda r: r.snapshot(store_of("hi").read("s"), "s", -1),
            "Redaction.snapshot max_bytes must be a positive safe integer, not -1",
        ),
        (
            lambda r: r.transcript("s"),
            "Redaction.transcript transcript must be a Transcript, not str",
        ),
    ],
)
def test_a_redaction_given_an_argument_of_another_kind_says_which(call: Any, message: str) -> None:
    """As every public call: INVALID_CONFIG naming the argument and the kind given (a bytes
    text was a TypeError from inside the regular expressions)."""
    with pytest.raises(SessionReferenceError) as caught:
        call(Redaction())
    assert (caught.value.code, caught.value.message) == (INVALID_CONFIG, message)
