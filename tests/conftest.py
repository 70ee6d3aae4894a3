"""Shared fixtures: the vendored conformance vectors."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"


def load_vectors() -> list[dict[str, Any]]:
    """Every conformance case answered by the published package."""
    with gzip.open(DATA / "vectors.jsonl.gz", "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]
