"""The redaction benchmark measures what it says: both sides timed in the same rounds, on a
generated session, and the target read from both ratios."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import redact_bench
from benchmarks.generate import CHAT, generate_store, size_session_id
from sessionref import DirectoryStore


def test_measure_times_both_sides_in_every_round(tmp_path: Path) -> None:
    generate_store(tmp_path / "sizes", [20], profiles=[CHAT])
    row = redact_bench.measure(DirectoryStore(tmp_path / "sizes"), size_session_id(20, CHAT), 3)
    assert len(row["rounds"]) == 3  # type: ignore[arg-type]
    assert float(row["ratio"]) > 0 and float(row["cpu_ratio"]) > 0  # type: ignore[arg-type]
    assert float(row["alone_cpu_share"]) > 0  # type: ignore[arg-type]
    assert row["redacted"] == {}  # generated sessions hold no secrets


def test_main_reads_the_target_from_both_ratios(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rows = iter(
        [
            {
                "off_s": 1.0,
                "on_s": 1.2,
                "ratio": 1.2,
                "cpu_ratio": 1.4,
                "rounds": [],
                "cpu_rounds": [],
                "alone_cpu_share": 0.1,
                "redacted": {},
            }
        ]
    )
    monkeypatch.setattr(redact_bench, "ensure_stores", lambda *args: None)
    monkeypatch.setattr(redact_bench, "measure", lambda *args: next(rows))
    (tmp_path / "sizes").mkdir()  # a store root must exist (an empty one will do here)
    assert redact_bench.main(["--stores", str(tmp_path), "--profiles", "chat"]) == 1
