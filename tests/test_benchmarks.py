"""The benchmark harness: its sessions are valid DSH logs, and it checks the targets it states."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import verify
from benchmarks.generate import PROFILES, Profile, generate_store, size_session_id
from benchmarks.run import check_targets
from sessionref import DirectoryStore
from sessionref.snapshot import project_units
from sessionref.testing import projected_units


@pytest.mark.parametrize("profile", PROFILES.values(), ids=list(PROFILES))
def test_generated_sessions_are_valid_and_project_like_the_reference(
    tmp_path: Path, profile: Profile
) -> None:
    (made,) = generate_store(
        tmp_path / "zstd", [40], profiles=[profile], plain_root=tmp_path / "plain"
    )
    assert made.compactions + made.prunes > 0, "the session should exercise the fold"
    assert verify.main([str(tmp_path / "zstd"), str(tmp_path / "plain")]) == 0
    assert made.plain_path is not None
    header, *events = (json.loads(line) for line in Path(made.plain_path).read_text().splitlines())
    expected = projected_units({"header": header, "events": events})
    for root in ("zstd", "plain"):
        log = DirectoryStore(tmp_path / root).read(size_session_id(40, profile))
        units = [
            {"role": u.role, "text": u.text, "checkpoint": u.checkpoint}
            for u in project_units(log.records)
        ]
        assert units == expected


def row(profile: str, turns: int, seconds: float, speedup: float | None = None) -> dict[str, Any]:
    """A measured row: log bytes grow with turns; floor, memory and prompts are fine."""
    measured: dict[str, Any] = {
        "profile": profile,
        "turns": turns,
        "log_bytes": turns * 16_000,
        "floor_s": seconds / 2,
        "prepare_65536_s": seconds,
        "peak_bytes": turns * 32_000,
    }
    if speedup is not None:
        measured |= {"speedup": speedup, "same_prompt_as_js": True}
    return measured


def test_speed_ups_are_targets_on_chat_only() -> None:
    rows = [
        row("chat", 400, 0.05, speedup=149),
        row("chat", 1600, 0.2, speedup=501),
        row("tools", 400, 0.05, speedup=30),
        row("tools", 1600, 0.2, speedup=100),
    ]
    checks = {target: met for target, _, met in check_targets(rows)}
    assert checks["chat ≥ 150× the published package at 400"] is False
    assert checks["chat ≥ 500× the published package at 1600"] is True
    assert not any(target.startswith("tools ≥") for target in checks)
    assert checks["tools 1600 turns: same prompt as the published package"] is True


def test_growth_beyond_a_tenth_over_the_log_fails_linearity() -> None:
    rows = [row("tools", 400, 0.05), row("tools", 1600, 0.05 * 4.5)]
    checks = {target: met for target, _, met in check_targets(rows)}
    assert checks["tools linear 400→1600: time ratio ≤ 1.1 × log ratio"] is False
    assert checks["tools 1600 turns, disk to context ≤ 0.25 s"] is True
