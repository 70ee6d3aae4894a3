"""Shared fixtures (the vendored conformance vectors) and the Hypothesis profiles.

``HYPOTHESIS_PROFILE`` says how hard the property tests look:

- ``dev`` (the default: the README's ``pytest``) runs a fifth of each property test's examples,
  so the whole suite takes minutes;
- ``ci`` (``.ci/run``) runs the counts the tests name;
- ``nightly`` runs ten times those, for a long run now and then.

A property test names its ``ci`` count through :func:`examples`; a test that names none runs
the profile's own count. Every profile drops Hypothesis' deadline and its too-slow check: the
machines the suite runs on are shared, and speed is the benchmarks' business.

``SESSIONREF_FUZZ_EXAMPLES`` (``tox -e fuzz`` and ``.ci/run`` set it) turns the fuzz properties
(``tests/test_fuzz.py``, ``tests/test_harness_fuzz.py``) from a derandomized share of their
count into that many examples each with a random seed, split into :data:`FUZZ_SHARDS` tests so
pytest-xdist spreads one property over every core.

The suite writes tens of thousands of small stores. On a disk mounted with ``discard`` each
removed directory costs milliseconds (3 ms on the CI machine, against 0.015 ms in memory), so
when ``TMPDIR`` is not set and ``/dev/shm`` is a roomy in-memory directory, the tests and the
processes they start keep their temporary files there (:func:`memory_tmpdir`).
"""

from __future__ import annotations

import atexit
import gzip
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, settings

DATA = Path(__file__).parent / "data"

SCALE: Final = {"dev": 0.2, "ci": 1.0, "nightly": 10.0}
"""Examples run in each profile, per example a test names for ``ci``."""
PROFILE: Final = os.environ.get("HYPOTHESIS_PROFILE", "dev")
if PROFILE not in SCALE:
    raise ValueError(f"HYPOTHESIS_PROFILE={PROFILE!r}: not one of {', '.join(SCALE)}")
for _name, _scale in SCALE.items():
    settings.register_profile(
        _name,
        max_examples=round(100 * _scale),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
settings.load_profile(PROFILE)


def examples(ci: int) -> int:
    """How many examples a property test runs in this profile, ``ci`` being its count in
    ``ci`` (at least 5, or ``ci`` if that is fewer, so each still looks a little).

    >>> examples(100) == round(100 * SCALE[PROFILE]), examples(3) >= 3
    (True, True)
    """
    return max(min(ci, 5), round(ci * SCALE[PROFILE]))


FUZZING: Final = "SESSIONREF_FUZZ_EXAMPLES" in os.environ
FUZZ_SHARDS: Final = 10 if FUZZING else 1
"""Tests each fuzz property is split into: ten when fuzzing, so no one property runs alone on
one core at the end of the run."""


def fuzz_examples(ci: int) -> int:
    """Examples a fuzz property runs in all: ``SESSIONREF_FUZZ_EXAMPLES`` when it is set, else
    :func:`examples` of ``ci``.

    >>> fuzz_examples(60) >= 5
    True
    """
    return int(os.environ["SESSIONREF_FUZZ_EXAMPLES"]) if FUZZING else examples(ci)


def per_harness_reader(per_property: int) -> int:
    """Damaged files each harness reader's fuzz property runs for ``per_property`` examples of
    a DSH one: two and a half times as many (issue 23 asks 5,000 a reader in CI).

    >>> per_harness_reader(2000)
    5000
    """
    return per_property * 5 // 2


def fuzz_settings(total: int) -> settings:
    """Settings of one shard of a fuzz property that runs ``total`` examples in all (each of
    the :data:`FUZZ_SHARDS` shards a share, rounded up), with a random seed when fuzzing and
    derandomized otherwise, so the normal suite is repeatable.

    >>> fuzz_settings(FUZZ_SHARDS * 7).max_examples
    7
    """
    return settings(
        max_examples=math.ceil(total / FUZZ_SHARDS),
        deadline=None,  # speed is the benchmarks' business; a busy machine must not fail a test
        derandomize=not FUZZING,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
    )


@pytest.fixture(scope="module", params=range(FUZZ_SHARDS))
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory for the stores of every example of a fuzz property (function-scoped tmp_path
    would be shared by them); one per shard, so each property runs as FUZZ_SHARDS tests."""
    return tmp_path_factory.mktemp("fuzz")


def memory_tmpdir(candidate: str = "/dev/shm", room: int = 2 << 30) -> str | None:
    """The directory the suite keeps its temporary files in when ``TMPDIR`` is not set:
    ``candidate`` if it is a writable directory with ``room`` bytes free, else ``None`` (the
    system's default stays).

    >>> memory_tmpdir("/no/such/directory") is None
    True
    """
    if "TMPDIR" in os.environ or not os.path.isdir(candidate) or not os.access(candidate, os.W_OK):
        return None
    return candidate if shutil.disk_usage(candidate).free >= room else None


_MEMORY = memory_tmpdir()
if _MEMORY is not None:
    os.environ["TMPDIR"] = _MEMORY
    tempfile.tempdir = None  # computed again from TMPDIR


_CACHE_MADE: Final = "SESSIONREF_TEST_CACHE"
"""Names the cache :func:`private_cache_home` made, for the processes this one starts."""


def private_cache_home() -> str:
    """A cache directory for this test run and the commands it runs, removed when the process
    that made it ends: the index of every store a test writes goes to the user cache
    directory by default, and the suite had left thousands of them in ``~/.cache/sessionref``.
    Made once: pytest loads this file as ``conftest`` and the tests import it as
    ``tests.conftest``, and xdist's workers inherit the controller's.

    >>> private_cache_home() == os.environ["XDG_CACHE_HOME"] == CACHE
    True
    """
    made = os.environ.get(_CACHE_MADE)
    if made is not None:
        return made
    cache = tempfile.mkdtemp(prefix="sessionref-test-cache-")
    atexit.register(shutil.rmtree, cache, ignore_errors=True)
    os.environ[_CACHE_MADE] = cache
    return cache


CACHE: Final = private_cache_home()
"""Where the commands the tests run keep their indexes: ``XDG_CACHE_HOME`` (platformdirs'
user cache on Linux), set here for every command and given to those run with an environment
of their own."""
os.environ["XDG_CACHE_HOME"] = CACHE


def load_vectors() -> list[dict[str, Any]]:
    """Every conformance case answered by the published package."""
    with gzip.open(DATA / "vectors.jsonl.gz", "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _ctrl_c_state() -> tuple[object, bool]:
    """This process's SIGINT handler and whether SIGINT is blocked in this thread.

    >>> _ctrl_c_state() == _ctrl_c_state()
    True
    """
    blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    return signal.getsignal(signal.SIGINT), blocked


@pytest.fixture(autouse=True)
def _keeps_ctrl_c() -> Iterator[None]:
    """Fail the test that leaves the test process taking Ctrl-C otherwise than it found it:
    a child started later inherits an ignored or blocked SIGINT, and a test that interrupts
    one would wait for it forever. The state is put back, so only the culprit fails."""
    before = _ctrl_c_state()
    yield
    after = _ctrl_c_state()
    if after != before:
        signal.signal(signal.SIGINT, before[0])  # type: ignore[arg-type]
        signal.pthread_sigmask(
            signal.SIG_UNBLOCK if not before[1] else signal.SIG_BLOCK, {signal.SIGINT}
        )
        pytest.fail(f"the test changed Ctrl-C handling: {before} -> {after}")


def run_script(script: str, *args: str, **options: Any) -> subprocess.CompletedProcess[Any]:
    """``python -c SCRIPT ARGS`` in a fresh interpreter, run to its end as
    :func:`subprocess.run` runs it with ``options``: how a test runs code that needs a process
    of its own (signals, what start-up imports, a process killed half way)."""
    return subprocess.run([sys.executable, "-c", script, *args], **options)


def script_output(script: str, *args: str) -> str:
    """What ``python -c SCRIPT ARGS`` (:func:`run_script`) wrote to stdout, once it ended with
    status 0 (within a minute): for a script that must not die of what it tries."""
    done = run_script(script, *args, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, (done.returncode, done.stderr)
    return str(done.stdout.decode())
