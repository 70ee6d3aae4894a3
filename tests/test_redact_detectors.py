"""The cheap part of redaction must never change what it finds: a plugin is run only on the
lines its anchor hits, so every line a plugin finds a secret in is hit by its anchor, and the
gated scan of a text (of each level of its escapes, as ``find_secrets`` scans each) finds
exactly what running every plugin on every line finds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionref.redact.detectors import Plugin, builtin_detectors
from sessionref.redact.scan import (
    MARKER,
    Finding,
    find_secrets,
    level_findings,
    merged,
    scanned_view,
    widen,
)
from tests.conftest import examples
from tests.redact_corpus import CONTEXTS, ordinary_lines, secrets

PLUGINS = builtin_detectors().plugins
TEXTS = [place(s.snippet) for s in secrets(seed=5) for place in CONTEXTS.values()]
TEXTS += ordinary_lines(seed=11, count=2000)
PIECES = st.sampled_from([piece for text in TEXTS[:200] for piece in text.split(" ")])
MIXED = st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=8).map(" ".join)


def every_plugin_on_every_line(text: str) -> list[Finding]:
    """What running each plugin on each line of the text finds, with no anchor at all."""
    found, at = [], 0
    for line in scanned_view(text).split("\n"):
        for plugin in PLUGINS:
            found += [
                widen(text, Finding(at + a, at + b, plugin.kind)) for a, b in plugin.spans(line)
            ]
        at += len(line) + 1
    return merged(found)


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_a_plugin_finds_nothing_where_its_anchor_does_not_hit(plugin: Plugin) -> None:
    lines = [line for text in TEXTS for line in scanned_view(text).split("\n")]
    for line in lines:
        if not plugin.hits(line):
            assert not list(plugin.spans(line)), line


def test_the_corpus_hits_at_least_20_kinds() -> None:
    kinds = {f.kind for text in TEXTS for f in find_secrets(text, builtin_detectors())}
    assert len(kinds) >= 20, kinds


def gated(text: str) -> list[Finding]:
    """What the gated scan of one level finds, widened as every plugin's finds are."""
    return merged([widen(text, f) for f in level_findings(text, builtin_detectors())])


def test_the_gated_scan_finds_what_every_plugin_on_every_line_finds() -> None:
    for text in TEXTS:
        assert gated(text) == every_plugin_on_every_line(text)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(MIXED, min_size=1, max_size=4).map("\n".join))
def test_the_gated_scan_on_mixed_text(text: str) -> None:
    assert gated(text) == every_plugin_on_every_line(text)


def test_every_kind_is_written_as_the_marker_search_looks_past() -> None:
    """Redacted search takes each ``[REDACTED:<kind>]`` for a space (a word the marker holds
    would be found where the secret held it): every kind's replacement must be that marker."""
    kinds = {plugin.kind for plugin in builtin_detectors().plugins} | {"custom"}
    for kind in kinds:
        replacement = Finding(0, 1, kind).replacement
        assert MARKER.fullmatch(replacement), kind
