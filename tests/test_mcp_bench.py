"""The MCP benchmark harness runs end to end on a tiny generated store (speed is not checked
here: that is what the benchmark itself reports)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks import mcp_bench


def test_the_mcp_benchmark_measures_every_row_both_ways(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "results.json"
    store = ["--store", str(tmp_path / "store"), "--sessions", "12", "--turns", "1"]
    status = mcp_bench.main([*store, "--big-turns", "4", "--repeat", "3", "--out", str(out)])
    assert status in (0, 1)
    rows = json.loads(out.read_text())
    for way in ("in_process", "stdio"):
        row = rows[way]
        assert row["sessions"] == 13  # the store and the long session
        for key in ("list_first_page", "list_all_pages", "completion", "search"):
            assert 0 < row[key]["p50"] <= row[key]["p90"], (way, key)
        assert row["read_big"] > 0 and row["prepare_big"] > 0 and row["read_ratio"] > 0
    printed = capsys.readouterr().out
    assert "| `completion/complete` |" in printed and "stdio read ≤ 1.2× prepare" in printed


def test_a_missed_target_is_reported() -> None:
    times = {"p50": 0.01, "p90": 0.02}
    row = {"list_first_page": times, "completion": times, "search": times, "read_ratio": 1.1}
    assert all(met for _, _, met in mcp_bench.checks({"stdio": row}))
    slow = row | {"completion": {"p50": 0.031, "p90": 0.05}, "read_ratio": 1.3}
    missed = [name for name, _, met in mcp_bench.checks({"stdio": slow}) if not met]
    assert missed == ["stdio completion p50 ≤ 30 ms", "stdio read ≤ 1.2× prepare"]
