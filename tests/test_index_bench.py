"""The index benchmark harness runs end to end on a tiny generated store (speed is not checked
here: that is what the benchmark itself reports)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks import index_bench


def test_the_index_benchmark_measures_every_row(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "results.json"
    args = ["--store", str(tmp_path / "store"), "--sessions", "6", "--turns", "2"]
    options = ["--repeat", "1", "--build-rounds", "2", "--out", str(out), "--search", "the"]
    status = index_bench.main([*args, *options])
    assert status in (0, 1)
    row = json.loads(out.read_text())
    assert row["sessions"] == 6 and row["index_bytes"] > 0
    for key in ("floor", "cold_1", "cold_2", "candidates", "search", "refresh_appended"):
        assert row[f"{key}_s"] > 0 and row[f"{key}_cpu"] >= 0, key
    assert row["cold_2_vs_floor"] > 0 and row["cold_1_vs_floor"] > 0
    printed = capsys.readouterr().out
    assert "| index size |" in printed and "cold build, 2 processes" in printed


def test_the_cold_build_target_reads_the_ratio_of_rounds_taking_turns() -> None:
    """Not the ratio of two medians: a slow minute moves only the side timed in it."""
    row = {"refresh_appended_s": 0.2, "refresh_unchanged_s": 0.15, "read_one_s": 0.01}
    row |= {"candidates_s": 0.2, "candidates_cpu": 0.2, "search_s": 0.2, "search_cpu": 0.2}
    apart = row | {"floor_s": 10.0, "cold_2_s": 14.0, "cold_2_vs_floor": 1.6}
    within = row | {"floor_s": 10.0, "cold_2_s": 16.0, "cold_2_vs_floor": 1.4}
    assert index_bench.checks(apart, 2)[0][2] is False
    assert index_bench.checks(within, 2)[0][2] is True


def test_cold_builds_take_the_median_of_the_rounds_ratios(monkeypatch: Any) -> None:
    """Scripted times: the floor 10, 20, 10 s and the build 16, 20, 14 s give round ratios
    1.6, 1.0, 1.4 (median 1.4), where the ratio of the medians would be 16 / 10 = 1.6; the
    1-process build is taken against the floor timed right before it (30 s)."""
    floors = iter([(10.0, 10.0), (20.0, 20.0), (10.0, 10.0), (30.0, 30.0)])
    builds = iter([(16.0, 16.0), (20.0, 20.0), (14.0, 14.0), (60.0, 60.0)])
    monkeypatch.setattr(index_bench, "summed_floor", lambda files: lambda: None)
    monkeypatch.setattr(index_bench, "timed", lambda work: next(floors))
    monkeypatch.setattr(index_bench, "timed_build", lambda root, path, workers: next(builds))
    row = index_bench.cold_builds(Path("r"), [], Path("i"), 2, 3)
    assert row["cold_2_round_ratios"] == [1.6, 1.0, 1.4]
    assert row["cold_2_vs_floor"] == 1.4 and row["cold_2_s"] == 16.0 and row["floor_s"] == 10.0
    assert row["cold_1_vs_floor"] == 2.0
