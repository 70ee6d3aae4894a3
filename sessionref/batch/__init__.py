"""Batch snapshots of whole stores: the core, the local engine and the Dask engine.

>>> from sessionref.log.store import MemoryStore
>>> header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
>>> [r["sessionId"] for r in build_snapshots(MemoryStore([{"header": header, "events": []}]))]
['s']
"""

from sessionref.batch.core import (
    BatchResult,
    DirectoryRecipe,
    Failed,
    ResultLine,
    Snapshotted,
    context_id,
    listing_order,
)
from sessionref.batch.local import build_result_lines, build_snapshots
from sessionref.errors import ErrorInfo

__all__ = [
    "BatchResult",
    "DirectoryRecipe",
    "ErrorInfo",
    "Failed",
    "ResultLine",
    "Snapshotted",
    "build_result_lines",
    "build_snapshots",
    "context_id",
    "listing_order",
]
