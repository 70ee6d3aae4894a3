"""With redaction on, labels and titles are redacted wherever they reach an output
(docs/redaction.md §Labels): a snapshot's label (from a title or given in a reference or a
mention), batch lines, the resolver's candidates and mentions, the MCP server's resource
names, resource texts, and its tools' labels and mentions. Found by a newcomer's trial: a
title that held a key was printed whole beside the redacted text."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from hypothesis import given
from hypothesis import strategies as st

from sessionref import MemoryStore, SessionReferenceResolver, Target
from sessionref.batch import build_snapshots
from sessionref.cli.common import OpenStore
from sessionref.codecs.jsjson import js_json
from sessionref.codecs.uri import (
    Reference,
    format_session_reference_mention,
    parse_session_reference_text,
)
from sessionref.log.builder import LogBuilder
from sessionref.mcp.catalog import Catalog, index_at
from sessionref.mcp.server import SessionServer, in_memory
from sessionref.mcp.tools import Toolbox
from sessionref.redact import Redaction
from sessionref.testing import write_session_store
from sessionref.transcript import cut_title
from sessionref.types import ContextMessage
from tests.redact_corpus import FRAGMENT, leaked, secrets

SECRET = next(s for s in secrets(seed=41) if s.kind == "github-token")
TITLE = f"deploy with {SECRET.snippet}"
SHOWN = "deploy with [REDACTED:github-token]"
MENTION = "@[deploy with [REDACTED:github-token\\]](dsh-session:InMi)"
"""The mention of session ``s`` labelled :data:`SHOWN`: ``]`` escaped (``"s"`` is ``InMi``)."""
TARGET = Target("t", "/w")


def logs(title: Any = TITLE) -> list[dict[str, Any]]:
    """Session ``s`` (says hello, titled ``title``) and session ``u`` (untitled), both in /w."""
    titled = LogBuilder()
    titled.user("hello")
    titled.assistant("ok")
    titled.title(title)
    plain = LogBuilder()
    plain.user("hello too")
    header = {"version": 0, "createdAt": 1, "cwd": "/w", "delegationDepth": 0}
    return [
        {"header": {**header, "id": "s"}, "events": titled.events},
        {"header": {**header, "id": "u", "createdAt": 2}, "events": plain.events},
    ]


def data_object(context: ContextMessage) -> dict[str, Any]:
    """The one data object of a context message's prompt."""
    prompt = context.prompt
    array = prompt[prompt.index("<referenced-sessions>\n") + 22 : prompt.rindex("\n</")]
    (data,) = json.loads(array)
    assert isinstance(data, dict)
    return data


def snapshot_of(resolver: SessionReferenceResolver, reference: Reference) -> ContextMessage:
    sources = resolver.read_sources([reference], label_from_title=True)
    return resolver.render_sources(sources)


def test_a_label_from_a_title_is_redacted_and_counted() -> None:
    store = MemoryStore(logs())
    context = snapshot_of(SessionReferenceResolver(store, redact=True), Reference("s", "s"))
    (stats,) = context.source.references
    assert (stats.label, data_object(context)["label"]) == (SHOWN, SHOWN)
    assert stats.redacted == {"github-token": 1}  # the label's; the conversation has none
    assert not leaked(SECRET, js_json(context).decode())
    plain = snapshot_of(SessionReferenceResolver(store), Reference("s", "s"))
    assert plain.source.references[0].label == TITLE


def test_a_label_given_in_a_reference_or_a_mention_is_redacted() -> None:
    resolver = SessionReferenceResolver(MemoryStore(logs()), redact=True)
    prepared = resolver.prepare(TARGET, [], [{"sessionId": "u", "label": TITLE}])
    context = prepared.additional_context
    assert context is not None
    assert data_object(context)["label"] == "deploy with [REDACTED:github-token]"
    assert not leaked(SECRET, js_json(context).decode())
    text = f"see {format_session_reference_mention('u', TITLE)}"
    message = {
        "role": "user",
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": text}],
    }
    first, _ = resolver.prepare_direct_messages(TARGET, [message])
    assert isinstance(first, ContextMessage)
    assert first.source.references[0].label == SHOWN
    assert not leaked(SECRET, js_json(first).decode())


def test_the_budget_measures_the_redacted_label() -> None:
    """A budget of exactly the redacted data object's bytes keeps it whole; one byte less
    cuts. Measured with the label as logged (the token is longer than its marker), the first
    would cut too."""
    expected = (
        '{"sessionId":"s","label":"deploy with [REDACTED:github-token]","cwd":"/w",'
        '"capturedThroughSeq":2,"conversation":[{"role":"user","text":"hello"},'
        '{"role":"assistant","text":"ok"}]}'
    )
    store = MemoryStore(logs())
    for budget, cut in ((len(expected), False), (len(expected) - 1, True)):
        resolver = SessionReferenceResolver(store, redact=True, max_reference_bytes=budget)
        context = snapshot_of(resolver, Reference("s", "s"))
        (stats,) = context.source.references
        assert stats.truncated is cut
        if not cut:
            assert json.dumps(data_object(context), separators=(",", ":")) == expected
            assert (stats.omitted_bytes, stats.omitted_messages) == (0, 0)


def test_candidates_and_mentions_are_redacted_and_mentions_parse_back() -> None:
    store = MemoryStore(logs())
    resolver = SessionReferenceResolver(store, redact=True)
    assert [(c.session_id, c.label) for c in resolver.list_candidates(TARGET)] == [
        ("u", "u"),
        ("s", SHOWN),
    ]
    found = resolver.mention_candidates(TARGET, query="deploy")
    assert [(c.label, c.mention) for c in found] == [(SHOWN, MENTION)]
    assert parse_session_reference_text(MENTION).references == [Reference("s", SHOWN)]
    # a query is looked for in the labels as shown: one that found a session by its title's
    # secret would confirm the secret (a newcomer's trial probed search the same way)
    assert resolver.list_candidates(TARGET, query=SECRET.snippet) == []
    assert resolver.list_candidates(TARGET, query=SECRET.core[:FRAGMENT]) == []
    assert [c.label for c in resolver.list_candidates(TARGET, query="redacted:git")] == [SHOWN]
    plain = SessionReferenceResolver(store).list_candidates(TARGET, query="deploy")
    assert [c.label for c in plain] == [TITLE]


def test_a_redacted_label_is_redacted_alike_again() -> None:
    """A mention copied from a redacted listing names its label redacted: the snapshot
    keeps that label as it is, and counts nothing for it."""
    resolver = SessionReferenceResolver(MemoryStore(logs()), redact=True)
    context = snapshot_of(resolver, Reference("u", SHOWN))
    assert context.source.references[0].label == SHOWN
    assert context.source.references[0].redacted == {}


def test_a_title_that_is_not_a_string_is_redacted_as_its_json_text() -> None:
    store = MemoryStore(logs(title={"notes": [TITLE]}))
    resolver = SessionReferenceResolver(store, redact=True)
    shown = '{"notes":["deploy with [REDACTED:github-token]"]}'
    assert [c.label for c in resolver.list_candidates(TARGET)] == ["u", shown]
    context = snapshot_of(resolver, Reference("s", "s"))
    assert data_object(context)["label"] == shown
    numbered = SessionReferenceResolver(MemoryStore(logs(title=7)), redact=True)
    assert [c.label for c in numbered.list_candidates(TARGET)] == ["u", 7]


def test_batch_lines_carry_the_redacted_label() -> None:
    results = {
        r["sessionId"]: r for r in build_snapshots(MemoryStore(logs()), redact=True, label="title")
    }
    line = results["s"]
    assert line["label"] == SHOWN
    assert line["context"]["source"]["references"][0]["label"] == SHOWN
    assert line["context"]["source"]["references"][0]["redacted"] == {"github-token": 1}
    assert not leaked(SECRET, json.dumps(list(results.values())))


def open_catalog(tmp_path: Path, redaction: Redaction | None) -> Catalog:
    root = tmp_path / "store"
    write_session_store(root, logs())
    opened = OpenStore(root, lister=index_at(tmp_path / "index.sqlite"), live=True)
    return Catalog(opened, cwd="/w", max_bytes=65536, redaction=redaction)


def test_the_mcp_catalog_and_tools_redact_labels(tmp_path: Path) -> None:
    catalog = open_catalog(tmp_path, Redaction())
    names = {r["uri"]: r["name"] for r in catalog.resources()}
    assert names == {"dsh-session:InUi": "u", "dsh-session:InMi": SHOWN}
    prompt = catalog.prompt(["s"], None)
    assert '"label":"deploy with [REDACTED:github-token]"' in prompt
    toolbox = Toolbox(catalog)
    listed = json.loads(toolbox.call("list_sessions", {}, None).text)
    assert [(s["label"], s["mention"]) for s in listed][1] == (SHOWN, MENTION)
    queried = json.loads(toolbox.call("list_sessions", {"query": "deploy"}, None).text)
    assert [s["label"] for s in queried] == [SHOWN]
    hits = json.loads(toolbox.call("search_sessions", {"query": "hello"}, None).text)
    assert {(h["label"], h["mention"], h["snippet"]) for h in hits} >= {(SHOWN, MENTION, "")}
    everything = json.dumps([names, prompt, listed, queried, hits])
    assert not leaked(SECRET, everything)
    assert catalog.complete("deploy", 5) == (["s"], False)  # ids only, found by the title
    probe = SECRET.core[:FRAGMENT]  # what a client probing for the key would send
    assert json.loads(toolbox.call("list_sessions", {"query": probe}, None).text) == []
    assert json.loads(toolbox.call("search_sessions", {"query": probe}, None).text) == []
    assert catalog.complete(probe, 5) == ([], False)
    unredacted = open_catalog(tmp_path / "plain", None)
    assert unredacted.complete(probe, 5) == (["s"], False)  # without redaction it is found


def test_the_mcp_catalog_without_redaction_names_the_title(tmp_path: Path) -> None:
    catalog = open_catalog(tmp_path, None)
    assert {r["name"] for r in catalog.resources()} == {"u", TITLE}


def test_the_mcp_server_gives_redacted_names_and_texts(tmp_path: Path) -> None:
    catalog = open_catalog(tmp_path, Redaction())

    async def scenario() -> tuple[list[types.Resource], str, str]:
        async with in_memory(SessionServer(catalog, tools=True)) as client:
            resources = (await client.list_resources()).resources
            read = await client.read_resource("dsh-session:InMi")
            called = await client.call_tool("list_sessions", {})
            (contents,) = read.contents
            (block,) = called.content
            assert isinstance(contents, types.TextResourceContents)
            assert isinstance(block, types.TextContent)
            return resources, contents.text, block.text

    resources, text, listed = anyio.run(scenario)
    assert {r.name for r in resources} == {"u", SHOWN}
    assert '"label":"deploy with [REDACTED:github-token]"' in text
    assert [s["label"] for s in json.loads(listed)] == ["u", SHOWN]
    for shown in (json.dumps([r.model_dump() for r in resources]), text, listed):
        assert not leaked(SECRET, shown)


def claude_code_home(root: Path, prompts: dict[str, str]) -> Path:
    """A Claude Code home with one session per id of ``prompts``, each of one prompt: its
    title is that prompt's first line."""
    project = root / "projects" / "-w"
    project.mkdir(parents=True)
    for session_id, prompt in prompts.items():
        record = {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "cwd": "/w",
            "timestamp": "2025-11-21T10:00:00.000Z",
            "message": {"role": "user", "content": prompt},
        }
        (project / f"{session_id}.jsonl").write_text(json.dumps(record) + "\n")
    return root


def test_a_key_the_title_cut_falls_in_is_not_shown_in_part(tmp_path: Path) -> None:
    """A newcomer's trial: a first prompt is cut to 80 characters for a title, and a key the
    cut fell in kept its start, which no detector recognises, so ``--redact`` printed most of
    it. Every kind of key, the cut falling at each of several places in it."""
    prompts = {}
    for number, secret in enumerate(secrets(seed=80, per_kind=1)):
        line = secret.snippet.splitlines()[0]
        core = line.find(secret.core[:FRAGMENT])
        for inside in (1, FRAGMENT, len(secret.core) // 2):
            filler = "word " * ((79 - core - inside) // 5)
            prompts[f"{number}-{inside}"] = f"{filler}{'x' * ((79 - core - inside) % 5)}{line} ok"
    from sessionref.claude_code.store import ClaudeCodeStore

    store = ClaudeCodeStore(claude_code_home(tmp_path, prompts))
    for redact in (True, False):
        resolver = SessionReferenceResolver(store, redact=redact)
        labels = [c.label for c in resolver.list_candidates(TARGET, limit=len(prompts))]
        assert len(labels) == len(prompts)
        for secret in secrets(seed=80, per_kind=1):
            assert not leaked(secret, "\n".join(labels)), secret.kind


@given(
    st.lists(
        st.one_of(
            st.text(string.ascii_letters + string.digits + "_-=/+.:@", min_size=1, max_size=60),
            st.text("中文é ", min_size=1, max_size=5),
        ),
        max_size=12,
    )
)
def test_a_cut_title_ends_on_a_whole_run_of_ascii(words: list[str]) -> None:
    """The cut title is a prefix of the line with ``…``, at most 80 characters, and each run
    of printable ASCII in it is a whole run of the line (none is cut short)."""
    line = "".join(words).strip()
    title = cut_title(line)
    if len(line) <= 80:
        assert title == line
        return
    assert title == "" or (title.endswith("…") and len(title) <= 80)
    body = title.removesuffix("…")
    assert line.startswith(body)
    runs = re.finditer(r"[!-~]+", line)
    assert all(run.end() <= len(body) or run.start() >= len(body) for run in runs)


def test_a_search_with_redaction_finds_no_session_by_its_secret(tmp_path: Path) -> None:
    """A newcomer's trial: under ``--redact`` search still matched the stored text, so a
    query for a key's first letters confirmed it (and a client could guess it letter by
    letter). A session is found only by what its redacted conversation says, newest first,
    each scored 0.0 (a review: bm25 over the stored text ranked a session higher the more
    often the word was in its secret); a hit that drops out leaves its place to the next."""
    from sessionref.index import SessionIndex
    from sessionref.log.store import DirectoryStore

    probe = SECRET.core[:FRAGMENT]
    said = f"part {probe} is not a key, and the build is green"
    part = SECRET.core[FRAGMENT : 2 * FRAGMENT]  # in keeper's key, and said by notes
    keeper, twin, notes = LogBuilder(), LogBuilder(), LogBuilder()
    for log in (keeper, twin, notes):
        log.user(said)
    for _ in range(3):
        keeper.user(f"key {SECRET.snippet}")
    notes.user(f"order {part} is a part number")
    header = {"version": 0, "cwd": "/w", "delegationDepth": 0}
    write_session_store(
        tmp_path / "store",
        [
            {"header": {**header, "id": name, "createdAt": at}, "events": log.events}
            for name, at, log in (("notes", 1, notes), ("keeper", 3, keeper), ("twin", 2, twin))
        ],
    )
    redaction = Redaction(())
    with SessionIndex(DirectoryStore(tmp_path / "store"), tmp_path / "index.sqlite") as index:
        assert [hit.session_id for hit in index.search(probe, limit=1)] == ["keeper"]  # bm25
        for query in (probe, "build", f"{probe} build", "key"):
            found = index.search(query, redaction=redaction)
            shown = [(hit.session_id, hit.score, hit.snippet) for hit in found]
            assert shown == [("keeper", 0.0, ""), ("twin", 0.0, ""), ("notes", 0.0, "")], query
            assert not leaked(SECRET, js_json(found).decode())
        assert index.search(f"key {SECRET.snippet}", redaction=redaction) == []
        # keeper, the newest, has the part in its key only: notes takes its place
        assert [hit.session_id for hit in index.search(part, limit=1)] == ["keeper"]
        found = index.search(part, limit=1, redaction=redaction)
        assert [hit.session_id for hit in found] == ["notes"]


def test_a_search_with_redaction_tells_no_secret_by_the_redaction_marker(tmp_path: Path) -> None:
    """A review: a word the marker holds (``act`` in ``[REDACTED:github-token]``) was found in
    the redacted text of exactly the session whose key held it too."""
    from sessionref.index import SessionIndex
    from sessionref.log.store import DirectoryStore

    keys = {"a": "ghp_Act0" + "x" * 32, "b": "ghp_Zzz0" + "y" * 32}
    header = {"version": 0, "cwd": "/w", "delegationDepth": 0}
    logs = []
    for n, (name, key) in enumerate(keys.items()):
        log = LogBuilder()
        log.user(f"my token is {key} ok")
        logs.append({"header": {**header, "id": name, "createdAt": n}, "events": log.events})
    write_session_store(tmp_path / "store", logs)
    redaction = Redaction(())
    with SessionIndex(DirectoryStore(tmp_path / "store"), tmp_path / "index.sqlite") as index:
        assert [hit.session_id for hit in index.search("act")] == ["a"]  # what redaction hides
        for word in ("act", "Act0", "hub", "red", "zzz"):
            assert index.search(word, redaction=redaction) == [], word
        shown = index.search("token", redaction=redaction)
        assert [hit.session_id for hit in shown] == ["b", "a"]
