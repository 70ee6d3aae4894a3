"""A persistent index of a session store: instant candidates and full-text search.

Import it explicitly (``from sessionref.index import SessionIndex``): it needs SQLite, which
``import sessionref`` does not load.
"""

from sessionref.index.refresh import IndexedStore, RefreshReport, is_indexed_store
from sessionref.index.schema import default_index_path
from sessionref.index.search import SearchHit
from sessionref.index.store import SessionIndex

__all__ = [
    "IndexedStore",
    "RefreshReport",
    "SearchHit",
    "SessionIndex",
    "default_index_path",
    "is_indexed_store",
]
