"""Batch snapshots of whole stores: the core, the local engine and the Dask engine.

>>> from sessionref.log.store import MemoryStore
>>> store = MemoryStore([{"header": {"id": "s", "createdAt": 1}, "events": [
...     {"type": "session/title", "seq": 0, "data": {"title": "Hello"}}]}])
>>> [(r["sessionId"], r["label"]) for r in build_snapshots(store)]
[('s', 'Hello')]
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
