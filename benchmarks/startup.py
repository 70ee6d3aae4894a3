"""Start-up cost: what a user pays each time the command starts, as whole processes.

Each command runs ``runs`` times, the commands taking turns so that a busy machine slows them
alike; the medians are compared with ``python -c pass`` measured in the same rounds.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from benchmarks.generate import CHAT, generate_session
from sessionref.codecs.uri import encode_session_reference_uri

BASELINE: Final = "python -c pass"
ONE_TURN_ID: Final = "startup-one-turn"
LIMITS: Final = {
    "python -c 'import sessionref'": 0.040,
    "sessionref --help": 0.060,
    "sessionref snapshot (one turn)": 0.100,
}
"""Seconds each command may take above :data:`BASELINE`."""


def ensure_one_turn_store(root: Path) -> Path:
    """A store holding one session of one turn (generated once)."""
    if not root.exists():
        generate_session(root, ONE_TURN_ID, 1, profile=CHAT)
    return root


def cli_command() -> list[str]:
    """How a user starts ``sessionref``: the console script beside this interpreter, when
    installed, else ``python -m sessionref``."""
    script = Path(sys.executable).with_name("sessionref")
    return [str(script)] if script.exists() else [sys.executable, "-m", "sessionref"]


def startup_commands(root: Path) -> dict[str, list[str]]:
    """The baseline and every command :data:`LIMITS` names."""
    cli = cli_command()
    uri = encode_session_reference_uri(ONE_TURN_ID)
    return {
        BASELINE: [sys.executable, "-c", "pass"],
        "python -c 'import sessionref'": [sys.executable, "-c", "import sessionref"],
        "sessionref --help": [*cli, "--help"],
        "sessionref snapshot (one turn)": [*cli, "snapshot", "--root", str(root), uri],
    }


def run_once(argv: Sequence[str]) -> float:
    """Wall time of one whole process; it must succeed."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def measure_startup(stores: Path, runs: int = 10) -> dict[str, float]:
    """Median seconds of each command over ``runs`` rounds (after one warm-up round)."""
    commands = startup_commands(ensure_one_turn_store(stores / "startup"))
    times: dict[str, list[float]] = {name: [] for name in commands}
    for round_number in range(runs + 1):
        for name, argv in commands.items():
            elapsed = run_once(argv)
            if round_number:
                times[name].append(elapsed)
    return {name: statistics.median(values) for name, values in times.items()}


def startup_checks(medians: dict[str, float]) -> list[tuple[str, str, bool]]:
    """Each start-up target: the command's median above the baseline's, against its limit.

    >>> startup_checks({BASELINE: 0.02, "sessionref --help": 0.07})
    [('sessionref --help ≤ 60 ms above python -c pass', '50 ms (70 ms)', True)]
    """
    base = medians[BASELINE]
    checks = []
    for name, limit in LIMITS.items():
        if name in medians:
            above = medians[name] - base
            checks.append(
                (
                    f"{name} ≤ {limit * 1000:.0f} ms above {BASELINE}",
                    f"{above * 1000:.0f} ms ({medians[name] * 1000:.0f} ms)",
                    above <= limit,
                )
            )
    return checks
