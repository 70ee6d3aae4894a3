"""Shared fixtures (the vendored conformance vectors) and the Hypothesis profiles.

``HYPOTHESIS_PROFILE`` says how hard the property tests look:

- ``dev`` (the default: the README's ``pytest``) runs a fifth of each property test's examples,
  so the whole suite takes minutes;
- ``ci`` (``.ci/run``) runs the counts the tests name;
- ``nightly`` runs ten times those, for a long run now and then.

A property test names its ``ci`` count through :func:`examples`; a test that names none runs
the profile's own count. Every profile drops Hypothesis' deadline and its too-slow check: the
machines the suite runs on are shared, and speed is the benchmarks' business.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any, Final

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


def load_vectors() -> list[dict[str, Any]]:
    """Every conformance case answered by the published package."""
    with gzip.open(DATA / "vectors.jsonl.gz", "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]
