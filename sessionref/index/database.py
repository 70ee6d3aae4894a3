"""The database of an index, whose connection the index owns from the moment it is made.

SQLite removes a database's -wal and -shm files only as its last connection closes, and a
connection nobody owns is never closed: in a cycle with its statement cache, it lives on in the
frames a traceback holds (a Ctrl-C as it was being set up), and past an exit that freezes the
garbage collector (as the CLI does). So the statement that makes a connection stores it on the
index, and it is set up (and checked) there: whatever stops the opening, :meth:`close` closes it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from sessionref.index.refresh import IndexedStore, limits_of
from sessionref.index.schema import (
    check_file,
    check_meta,
    check_schema,
    open_database,
    reader_fingerprint,
    remove_database,
    root_key,
    set_up,
)


class IndexDatabase:
    """The database at ``path`` of an index of ``store``; ``named``: a file the caller named,
    which is used only if sessionref made it (else :class:`~sessionref.index.schema.ForeignFile`).

    >>> import tempfile
    >>> from sessionref.log.store import DirectoryStore
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     database = IndexDatabase(DirectoryStore(folder), Path(folder, "i.sqlite"), False)
    ...     made = database._open() is database._open()
    ...     database.close()
    ...     made, sorted(os.listdir(folder))
    (True, ['i.sqlite'])
    """

    def __init__(self, store: IndexedStore, path: Path, named: bool) -> None:
        self.store, self.path, self._named_file = store, path, named
        self._db: sqlite3.Connection | None = None

    def _open(self) -> sqlite3.Connection:
        """The database, made afresh unless this code built it for this root and read limits;
        a file the caller named that sessionref did not make raises
        :class:`~sessionref.index.schema.ForeignFile`. What stops this (an error, a Ctrl-C)
        leaves no connection :meth:`close` does not close."""
        if self._db is None:
            root = os.fsencode(root_key(self.store.root))
            stamp = (root, reader_fingerprint(), limits_of(self.store))
            named = self._named_file and check_file(self.path)
            self._db = open_database(self.path)
            if named:
                check_schema(self.path, self._db)
            set_up(self._db)
            if not check_meta(self._db, *stamp):
                self._db.close()
                remove_database(self.path)
                self._db = open_database(self.path)
                set_up(self._db)
                check_meta(self._db, *stamp)
        return self._db

    def close(self) -> None:
        """Close the database: the last connection to close removes its -wal, -shm files."""
        if self._db is not None:
            self._db.close()
            self._db = None
