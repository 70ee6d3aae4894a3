"""Batch snapshots of whole stores: the core, the local engine and the Dask engine.

>>> from sessionref.log.store import MemoryStore
>>> header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
>>> [r["sessionId"] for r in build_snapshots(MemoryStore([{"header": header, "events": []}]))]
['s']
"""

from sessionref.batch.core import BatchResult, DirectoryRecipe, context_id, listing_order
from sessionref.batch.local import build_snapshots

__all__ = ["BatchResult", "DirectoryRecipe", "build_snapshots", "context_id", "listing_order"]
