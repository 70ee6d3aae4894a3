"""Start-up cost: what a user pays each time the command starts, as whole processes.

Each command runs ``runs`` times, the commands taking turns so that a busy machine slows them
alike; the medians are compared with ``python -c pass`` measured in the same rounds.

The processes start as a user's do: from bytecode caches. ``pip install`` writes ``.pyc`` files;
an environment with ``PYTHONDONTWRITEBYTECODE`` set (as this project's development one is)
writes none, so every start would compile every module of sessionref again (some 200 ms on
this machine) and time what no user pays. :func:`measure_startup` therefore compiles the
package's bytecode first (:func:`compile_package`) and runs every command without that
variable (:func:`user_environment`), its warm-up round writing whatever other cache is missing.
"""

from __future__ import annotations

import compileall
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import sessionref
from benchmarks.generate import CHAT, generate_session
from benchmarks.measure import timed
from sessionref.codecs.uri import encode_session_reference_uri

BASELINE: Final = "python -c pass"
NO_CACHE_WRITES: Final = "PYTHONDONTWRITEBYTECODE"
BYTECODE_NOTE: Final = (
    "from bytecode caches, as after pip install (package compiled first, "
    f"{NO_CACHE_WRITES} removed from the commands' environment)"
)
"""What the output says about how the commands start."""
CPU: Final = " (CPU time)"
"""The suffix of a command's name under which :func:`measure_startup` gives its CPU time."""
ONE_TURN_ID: Final = "startup-one-turn"
LIMITS: Final = {
    "python -c 'import sessionref'": 0.040,
    "sessionref --help": 0.060,
    "sessionref snapshot (one turn)": 0.100,
}
"""Seconds each command may take above :data:`BASELINE`."""
COLLECTED: Final = re.compile(r"Collected : (\d+)")
"""How callgrind reports the instructions a run executed."""


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


def user_environment(environ: dict[str, str]) -> dict[str, str]:
    """``environ`` as a user's shell has it: Python may write bytecode caches.

    >>> user_environment({"PYTHONDONTWRITEBYTECODE": "1", "HOME": "/h"})
    {'HOME': '/h'}
    """
    return {name: value for name, value in environ.items() if name != NO_CACHE_WRITES}


def compile_package(package: Path = Path(sessionref.__file__).parent) -> Path:
    """Write the bytecode of every module of ``package`` (by default the sessionref the
    commands import: they inherit this process's path), as ``pip install`` does; its directory."""
    if not compileall.compile_dir(package, quiet=1):
        raise RuntimeError(f"could not compile {package}")
    return package


def run_once(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user and system) of one whole process; it must succeed."""
    wall, _, cpu = timed(
        lambda: subprocess.run(
            argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
        )
    )
    return wall, cpu


def prepared_commands(stores: Path) -> tuple[dict[str, list[str]], dict[str, str]]:
    """The commands :func:`startup_commands` names over the one-turn store under ``stores``,
    and the environment they run in, from bytecode caches (:data:`BYTECODE_NOTE`)."""
    commands = startup_commands(ensure_one_turn_store(stores / "startup"))
    compile_package()
    return commands, user_environment(dict(os.environ))


def measure_startup(stores: Path, runs: int = 10) -> dict[str, float]:
    """Median seconds of each command over ``runs`` rounds (after one warm-up round), each
    started from bytecode caches (:data:`BYTECODE_NOTE`); and each one's median CPU time
    under its name followed by :data:`CPU` (a loaded machine stretches wall times several
    times over, CPU times much less)."""
    commands, env = prepared_commands(stores)
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu_times: dict[str, list[float]] = {name + CPU: [] for name in commands}
    for round_number in range(runs + 1):
        for name, argv in commands.items():
            elapsed, cpu = run_once(argv, env)
            if round_number:
                times[name].append(elapsed)
                cpu_times[name + CPU].append(cpu)
    return {name: statistics.median(values) for name, values in (times | cpu_times).items()}


def startup_checks(medians: dict[str, float]) -> list[tuple[str, str, bool]]:
    """Each start-up target: the command's median above the baseline's, against its limit.

    >>> startup_checks({BASELINE: 0.02, "sessionref --help": 0.07})
    [('sessionref --help ≤ 60 ms above python -c pass', '50 ms (70 ms)', True)]
    >>> startup_checks({BASELINE: 0.02, "sessionref --help": 0.07,
    ...                 BASELINE + CPU: 0.01, "sessionref --help" + CPU: 0.04})[0][1]
    '50 ms (70 ms); CPU time +30 ms'
    """
    base = medians[BASELINE]
    checks = []
    for name, limit in LIMITS.items():
        if name in medians:
            above = medians[name] - base
            measured = f"{above * 1000:.0f} ms ({medians[name] * 1000:.0f} ms)"
            if name + CPU in medians and BASELINE + CPU in medians:
                cpu_above = medians[name + CPU] - medians[BASELINE + CPU]
                measured += f"; CPU time {cpu_above * 1000:+.0f} ms"
            checks.append(
                (f"{name} ≤ {limit * 1000:.0f} ms above {BASELINE}", measured, above <= limit)
            )
    return checks


def count_instructions(argv: Sequence[str], env: dict[str, str]) -> int | None:
    """The instructions one run of ``argv`` executes, as valgrind's callgrind counts them
    (``None`` without valgrind). Unlike its time, no load on the machine moves the count:
    with string hashing seeded, two runs of the same code differ by a few hundred
    instructions in tens of millions, so a change of a start-up shows as it is on a machine
    whose speed moves by a third from one minute to the next. A run takes some 50 times as
    long as it does without valgrind."""
    valgrind = shutil.which("valgrind", path=env.get("PATH"))
    if valgrind is None:
        return None
    done = subprocess.run(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        env={**env, "PYTHONHASHSEED": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    found = COLLECTED.search(done.stderr)
    return int(found.group(1)) if found else None


def measure_instructions(stores: Path) -> dict[str, int]:
    """The instructions of each command :func:`startup_commands` names, one run each, from
    bytecode caches (:data:`BYTECODE_NOTE`); empty without valgrind (nothing is run then)."""
    if shutil.which("valgrind") is None:
        return {}
    commands, env = prepared_commands(stores)
    for argv in commands.values():  # writes whatever cache a first start writes
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    counts = {name: count_instructions(argv, env) for name, argv in commands.items()}
    return {name: count for name, count in counts.items() if count is not None}


def describe_instructions(counts: dict[str, int]) -> str:
    """Each command's instructions above :data:`BASELINE`'s, in millions and in bare starts.

    >>> print(describe_instructions({BASELINE: 90_000_000, "sessionref --help": 135_000_000}))
      python -c pass: 90.0 M instructions
      sessionref --help: +45.0 M (0.50 bare starts)
    """
    base = counts[BASELINE]
    lines = [f"  {BASELINE}: {base / 1e6:.1f} M instructions"]
    for name, count in counts.items():
        if name != BASELINE:
            above = count - base
            lines.append(f"  {name}: {above / 1e6:+.1f} M ({above / base:.2f} bare starts)")
    return "\n".join(lines)
