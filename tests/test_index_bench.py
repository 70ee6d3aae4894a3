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
    status = index_bench.main([*args, "--repeat", "1", "--out", str(out), "--search", "the"])
    assert status in (0, 1)
    row = json.loads(out.read_text())
    assert row["sessions"] == 6 and row["index_bytes"] > 0
    for key in ("floor", "cold_1", "cold_2", "candidates", "search", "refresh_appended"):
        assert row[f"{key}_s"] > 0 and row[f"{key}_cpu"] >= 0, key
    printed = capsys.readouterr().out
    assert "| index size |" in printed and "cold build, 2 processes" in printed
