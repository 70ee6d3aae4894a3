"""``mutated_logs`` damages every log it is asked to damage, and refuses options that admit none.

A newcomer's trial: ``mutated_logs(layers=["frames"])`` (the layer for zstd frames, with the
default ``min_mutations=1`` and ``compress=None``) gave plain logs half the time, with no damage
at all, so a robustness test ran on intact logs without saying so; ``min_mutations=5,
max_mutations=1`` quietly gave five steps, and ``compress=False, layers=["frames"]`` intact
plain logs. What a layer can damage comes from the module's description: frames exist only in a
zstd log.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from sessionref.testing import MutatedLog, mutated_logs, session_logs
from tests.conftest import examples

small = session_logs(max_turns=1)


LAYOUT = re.compile(r"frames at level |lines \d+\.\.\d+ in one frame$|line \d+ split across ")
"""How the lines were grouped into frames (a zstd log's layout, not damage)."""


def damage(mutated: MutatedLog) -> list[str]:
    """The steps that damaged the log."""
    return [step for step in mutated.mutations if not LAYOUT.match(step)]


@settings(max_examples=examples(40), deadline=None)
@given(mutated_logs(small, layers=["frames"], bomb_sizes=[1000]))
def test_frames_alone_damage_zstd_logs_every_time(mutated: MutatedLog) -> None:
    assert mutated.compress
    assert damage(mutated) and all("frame" in step for step in damage(mutated)), mutated


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_every_log_is_damaged_when_damage_is_asked_for(data: st.DataObject) -> None:
    layers = data.draw(
        st.lists(st.sampled_from(["lines", "frames", "bytes"]), min_size=1, unique=True)
    )
    extremes = {"bomb_sizes": [1000], "huge_sizes": [1000], "deep_depths": [50]}
    mutated = data.draw(mutated_logs(small, layers=layers, **extremes))
    assert damage(mutated), mutated


def draw_one(options: dict[str, Any]) -> None:
    @settings(max_examples=1, database=None, deadline=None)
    @given(mutated_logs(small, **options))
    def draw(mutated: MutatedLog) -> None:
        pass

    draw()


@pytest.mark.parametrize(
    "options",
    [
        {"min_mutations": 5, "max_mutations": 1},
        {"min_mutations": -1},
        {"layers": ["frames"], "compress": False},
        {"layers": []},
        {"layers": ["line"]},
    ],
    ids=repr,
)
def test_options_that_admit_no_damaged_log_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgument):
        draw_one(options)


@pytest.mark.parametrize(
    "options",
    [
        {"layers": [], "min_mutations": 0},
        {"layers": ["frames"], "compress": False, "min_mutations": 0},
    ],
    ids=repr,
)
def test_no_damage_asked_for_is_allowed(options: dict[str, Any]) -> None:
    draw_one(options)
