"""The mixed-store benchmark runs end to end on a tiny generated store: every row measured,
and candidates from the warm indexes printed as --no-index prints them (speed is not checked
here: that is what the benchmark itself reports)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks import mixed_bench
from benchmarks.mixed_store import generate_mixed_store, mixed_roots


def test_the_mixed_benchmark_measures_every_row(tmp_path: Path, capsys: Any) -> None:
    out, store = tmp_path / "results.json", tmp_path / "mixed"
    args = ["--store", str(store), "--sessions", "12", "--repeat", "1", "--query", "the"]
    status = mixed_bench.main([*args, "--out", str(out)])
    assert status in (0, 1)
    row = json.loads(out.read_text())
    assert row["same_as_no_index"] is True
    for key in ("python", "candidates_query", "candidates", "search", "in_process", "appended"):
        assert row[f"{key}_s"] > 0 and row[f"{key}_best_s"] <= row[f"{key}_s"], key
        assert 0 < row[f"{key}_cpu_best_s"] <= row[f"{key}_cpu_s"], key
    printed = capsys.readouterr().out
    assert "after one session appended to" in printed and "load average" in printed
    assert "median CPU s" in printed
    roots = mixed_roots(store)
    assert [
        len(list(roots.dsh.glob("*/*/session.jsonl*"))),
        len(mixed_bench.sessions_of(roots)),
    ] == [4, 4]
    assert len(list(roots.codex.glob("sessions/*/*/*/rollout-*.jsonl"))) == 4


def test_the_mixed_store_is_the_same_for_the_same_seed(tmp_path: Path) -> None:
    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    generate_mixed_store(tmp_path / "a", 6)
    generate_mixed_store(tmp_path / "b", 6)
    assert files(tmp_path / "a") == files(tmp_path / "b") != {}
