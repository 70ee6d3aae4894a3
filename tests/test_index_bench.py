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
