"""``SessionIndex``: a persistent index of a store of any harness, and a store view over it.

Every use stats the store and reads again exactly the logs that changed, so answers are those
of the store itself. The index is a cache: if it cannot be used, it is rebuilt; if not, one
warning line says so and the store is read directly (search builds a throwaway index).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import sessionref.errors as errors
import sessionref.index.arguments as arguments
import sessionref.index.tables as tables
from sessionref.controls import stderr_line
from sessionref.errors import CancelToken, check_cancel, optional_path, positive_count, string
from sessionref.index.afresh import remove_unused
from sessionref.index.ahead import StatsAhead, stat_ahead
from sessionref.index.candidates import select_candidates
from sessionref.index.database import IndexDatabase
from sessionref.index.failures import (
    StampChanged,
    broken,
    bypass_warning,
    copy_warning,
)
from sessionref.index.harness import refresh_harness
from sessionref.index.redacted import redacted_search
from sessionref.index.refresh import (
    CachedHeaderStore,
    IndexedStore,
    Progress,
    RefreshReport,
    decode_headers,
    limits_of,
)
from sessionref.index.relist import relist
from sessionref.index.reread import reread_logs
from sessionref.index.schema import (
    ForeignFile,
    connect_memory,
    default_index_path,
    names_a_file,
)
from sessionref.index.search import (
    DEFAULT_SEARCH_LIMIT,
    SearchHit,
    cancellable,
    search_sessions,
    unread_logs,
)
from sessionref.index.turns import answered, in_turn
from sessionref.index.walk import RACY_NS, tree_of, walk_tree
from sessionref.log.harness_store import HarnessStore
from sessionref.log.records import SessionHeader, SessionLog
from sessionref.log.store import LogUnreadable, SessionNotFound, StoreProblem
from sessionref.transcript import Transcript
from sessionref.types import Target

if TYPE_CHECKING:  # imported when a search asks for redaction
    from sessionref.redact import Redaction

Placed = TypeVar("Placed")
"""What a read of a placed log gives (:meth:`SessionIndex._placed`)."""

WRITE_BATCH: Final = 200


class SessionIndex(IndexDatabase):
    """The index of one store; also a :class:`~sessionref.log.protocol.Store` over it.

    ``headers()`` and ``candidates()`` refresh and answer from the index, ``title()`` answers
    from the last refresh, ``read()`` reads the log itself. ``path`` is the database file (see
    :func:`~sessionref.index.schema.default_index_path`); ``workers`` > 1 reads changed logs
    in that many processes (at most 2 per CPU); ``once``: only the first use refreshes (one
    command's look at the store), the others answer from it; without ``persist``, nothing is
    saved (the store answers, and search builds a throwaway index in memory). ``clock`` is now
    in ns (a file modified within 2 s of it is racy: read, not remembered); tests pass their
    own.

    :meth:`close` closes its database, as do the end of a ``with`` block (which gives the
    index itself) and a refresh stopped by a Ctrl-C or an error; a use opens it again.

    >>> import tempfile
    >>> from sessionref.log.store import DirectoryStore
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     with SessionIndex(DirectoryStore(folder), Path(folder, "i.sqlite")) as index:
    ...         index.refresh(), index.search("anything")
    (RefreshReport(sessions=0, read=0, removed=0), [])
    """

    ahead: StatsAhead | None = None  # the next refresh's look at the store (index/ahead.py)

    def __init__(
        self,
        store: IndexedStore,
        path: str | os.PathLike[str] | None = None,
        *,
        workers: int = 1,
        once: bool = False,
        persist: bool = True,
        progress: Progress | None = None,
        warn: Callable[[str], None] = stderr_line,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        store = arguments.indexed_store(store)
        where = default_index_path(store.root, optional_path(path, "SessionIndex path"))
        super().__init__(store, where, names_a_file(path))
        self.clock = arguments.function(clock, "SessionIndex clock")
        self.workers = positive_count(workers, "SessionIndex workers")
        self.once = arguments.flag(once, "SessionIndex once")
        self._served: int | None = None
        self._progress = arguments.function(progress, "SessionIndex progress", optional=True)
        self._warn = arguments.function(warn, "SessionIndex warn")
        self._bypassed = not arguments.flag(persist, "SessionIndex persist")
        self._headers: list[SessionHeader] | None = None
        self._titles: dict[str, Any] | None = None
        self._problems: list[StoreProblem] | None = None
        self._reader: IndexedStore | None = None
        self._lock = threading.RLock()

    @property
    def harness(self) -> str:
        """The harness of the store indexed."""
        return self.store.harness

    @property
    def bypassed(self) -> bool:
        """Whether nothing a refresh reads is saved: the database could not be used (the
        answers come from the store), or not written where it is (they come from a copy of
        it in memory, brought up to date there)."""
        return self._bypassed or self._copied

    @property
    def copied(self) -> bool:
        """Whether the answers come from a copy of the database in memory, brought up to
        date there and never saved, as the file cannot be written where it is."""
        return self._copied

    @in_turn
    def close(self) -> None:
        """Close the database: the last connection to close removes its -wal, -shm files."""
        super().close()

    def _give_up(self) -> None:
        """Answer from the store from now on, the database having changed under this index,
        saying so once (as a write that finds it changed does: :meth:`_with_database`)."""
        self.close()
        self._warn(bypass_warning(self.path, StampChanged()))
        self._bypassed = True
        self._served = self._headers = self._titles = self._problems = self._reader = None

    def __enter__(self) -> SessionIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _with_database(self, use: Callable[[sqlite3.Connection], RefreshReport]) -> RefreshReport:
        """Run ``use`` on the database; a broken one is deleted (unless another connection
        has it open) and rebuilt once, then bypassed (as is a file sessionref did not make,
        one another process keeps locked past the busy timeout, or one whose place fails it,
        a full disk or a read-only folder: none is touched). Another error (the store's) is
        the caller's."""
        if not self._bypassed:
            for attempt in (1, 2):
                try:
                    db = self._open()
                except ForeignFile as exc:
                    self.close()
                    self._warn(
                        f"sessionref: {self.path} {exc}; leaving it alone and reading the "
                        "store directly"
                    )
                    break
                except (sqlite3.Error, OSError) as exc:
                    failure: Exception = exc
                except BaseException:  # a Ctrl-C as it is opened: closed, as in a refresh
                    self.close()
                    raise
                else:
                    try:
                        return self._used(use(db))
                    except sqlite3.Error as exc:
                        failure = exc
                    except BaseException:  # a Ctrl-C, another error: closed (rolled back)
                        self.close()
                        raise
                self.close()
                self._leave_as_it_was(failure)  # one it made and never filled: none
                rebuilt = broken(failure)  # rebuilt once; busy, full or read-only: never touched
                if rebuilt:  # unless another process has it open: it waits for that one
                    with contextlib.suppress(OSError):
                        remove_unused(self.path)
                if attempt == 2 or not rebuilt:
                    if self._read_as_it_is(failure):  # said once: the copy is used
                        self._warn(copy_warning(self.path, failure))
                        return use(self._open())
                    self._warn(bypass_warning(self.path, failure))
                    break
            self._bypassed = True
        if self._db is None:
            self._db = connect_memory()
        return use(self._db)

    def look_ahead(self) -> None:
        """Stat the store in a child process for the next refresh (index/ahead.py) if saved."""
        if not self.bypassed:
            self.ahead = stat_ahead(self.store.root, self.path, self.clock() - RACY_NS)

    @answered
    def refresh(self, progress: Progress | None = None) -> RefreshReport:
        """Bring the index up to date with the store, reading only logs that changed;
        ``progress`` is called with (logs read, logs to read) as reading goes."""
        return self._with_database(lambda db: self._refresh(db, progress))

    def _refresh(self, db: sqlite3.Connection, progress: Progress | None) -> RefreshReport:
        ahead, self.ahead = self.ahead, None
        racy_after = self.clock() - RACY_NS if ahead is None else ahead.racy_after
        self._titles, self._headers, self._problems = None, None, None  # the reader stays
        stamp, before, changed = tables.stamped_walk(db, self.store.root, racy_after, ahead)
        if changed == {}:  # what the stamped walk saw (never a racy state)
            return RefreshReport(tables.session_count(db), 0, 0)
        if isinstance(self.store, HarnessStore):
            walk = (stamp, before, changed)
            listed = refresh_harness(db, self.store, racy_after, (WRITE_BATCH, progress), walk)
            self._headers, self._problems, self._reader = listed[:3]
            return listed.report
        if before is not None and changed is not None:
            tree = tree_of(self.store.root, {**before, **changed})
        else:
            tree = walk_tree(self.store.root, racy_after, before)
        if tree.entries == before:  # an index made before stats were kept gets them
            tables.keep_walk_stats(db, stamp, before if changed is None else None)
            return RefreshReport(tables.session_count(db), 0, 0)
        if stamp is not None and before is not None and before.keys() == tree.entries.keys():
            done = reread_logs(db, self.store, tree, (stamp, before), racy_after)
            if done is not None:
                self._reader = None  # it placed only the logs read: _store() places every one
                return done
        relisted = relist(db, self.store, (tree, racy_after), self.workers, (WRITE_BATCH, progress))
        self._headers, self._problems, self._reader, report = relisted
        return report

    def _use(self) -> int:
        """Refresh (only the first time, when ``once``): how many sessions are served."""
        if self._served is None or not self.once:
            self._served = self.refresh(self._progress).sessions
        return self._served

    @answered
    def session_count(self) -> int:
        """How many sessions the store serves (refreshes first)."""
        return len(self.store.headers()) if self._bypassed else self._use()

    @answered
    def holds(self, session_id: str) -> bool:
        """Whether the store serves ``session_id`` (refreshes first, as :meth:`headers`)."""
        string(session_id, "SessionIndex.holds session_id")
        if self._bypassed:
            return any(header.id == session_id for header in self.store.headers())
        self._use()
        return tables.holds(self._reading, session_id)

    @answered
    def headers(self) -> list[SessionHeader]:
        """Every stored session's header, as the store lists them (refreshes first)."""
        if self._bypassed:
            return self.store.headers()
        self._use()
        if self._headers is None:
            self._headers = decode_headers(tables.listed_headers(self._reading))
        return list(self._headers)

    @answered
    def candidates(
        self, target: Target, needle: str, limit: int
    ) -> list[tuple[SessionHeader, Any]] | None:
        """The candidates of :func:`sessionref.listing.candidates` (refreshes first), found by
        the database: ``needle`` is the query lower-cased. ``None`` when it cannot answer
        (bypassed, or a lone surrogate in ``needle``): the caller filters the listing.
        """
        target = arguments.target(target, "SessionIndex.candidates target")
        needle = string(needle, "SessionIndex.candidates needle")
        limit = positive_count(limit, "SessionIndex.candidates limit")
        if not self._bypassed:
            self._use()
        if self._bypassed or self._db is None:
            return None
        return select_candidates(self._reading, target, needle, limit)

    @answered
    def title(self, session_id: str) -> Any:
        """The latest title as of the last refresh (the store's answer for ids it did not see)."""
        errors.session_id_of(self, "title", session_id)
        if self._bypassed or self._db is None:
            return self.store.title(session_id)
        if self._titles is None:
            self._titles = tables.titles(self._reading)
        titles = self._titles
        return titles[session_id] if session_id in titles else self.store.title(session_id)

    @answered
    def _store(self) -> IndexedStore:
        if isinstance(self.store, HarnessStore):
            return self._reader or self.store  # the store that listed last
        if self._bypassed or self._db is None:
            return self.store
        if self._reader is None:  # reads each log where the last refresh saw it: no listing
            db = self._reading
            placed = {key: path for key, (path, _) in tables.indexed_revisions(db).items()}
            cache, limits = tables.header_cache(db), limits_of(self.store)
            conflicts = tables.stored_conflicts(db)
            self._reader = CachedHeaderStore(self.store.root, limits, cache, 0, placed, conflicts)
        return self._reader

    def read(self, session_id: str) -> SessionLog:
        """The whole log, read from the store (:meth:`_placed`)."""
        return self._placed(("read", session_id), lambda store: store.read(session_id))

    def transcript(self, session_id: str) -> Transcript:
        """The session as a person reads it, as the store reads it (:meth:`_placed`)."""
        return self._placed(("transcript", session_id), lambda store: store.transcript(session_id))

    def _placed(self, asked: tuple[str, object], read: Callable[[IndexedStore], Placed]) -> Placed:
        """``read`` (of the method and id ``asked``, checked) where the last refresh placed the
        log, without a listing; where that fails (the log was moved, recompressed or removed
        since), ``read`` again after a refresh, which places every log anew: then it is its own."""
        errors.session_id_of(self, *asked)
        store = self._store()
        try:
            return read(store)
        except (LogUnreadable, SessionNotFound):  # not where it was placed; else its own fault
            if store is self.store:  # read by the store itself, which placed nothing
                raise
        self.refresh()
        return read(self._store())

    def path_of(self, session_id: str) -> Path:
        """The log file of a session (its first, for a harness's), as the store places it."""
        store = self._store()
        if isinstance(store, HarnessStore):
            return store.paths_of(session_id)[0]
        return store.path_of(session_id)

    @answered
    def problems(self) -> list[StoreProblem]:
        """What the store's last listing passed over (the last refresh's, into the database or
        a throwaway one in memory; the store's own when it was never refreshed)."""
        if self._problems is None:
            if self._db is None:
                return self.store.problems()
            self._problems = tables.stored_problems(self._reading)
        return list(self._problems)

    @answered
    def unread(self) -> list[StoreProblem]:
        """The logs the last refresh listed but could not read (damaged, too large...), each
        with why: no search finds their sessions (candidates list them, as the store does)."""
        return [] if self._db is None else unread_logs(self._reading)

    @answered
    def search(
        self,
        query: str,
        limit: int | None = DEFAULT_SEARCH_LIMIT,
        cwd: str | os.PathLike[str] | None = None,
        redaction: Redaction | None = None,
        cancel: CancelToken | None = None,
    ) -> list[SearchHit]:
        """Sessions whose conversation matches ``query``, best first (refreshes first, as
        :meth:`headers`), at most ``limit`` (``None``: the default, 10); only those of working
        directory ``cwd`` (a string or an ``os.PathLike``, compared as text, as a target's is)
        when it is given; with ``redaction``, newest first, as it shows them
        (:func:`~sessionref.index.redacted.redacted_search`, docs/redaction.md §Search). A set
        ``cancel`` token stops the search where it is, raising CANCELLED (docs/api.md
        §Cancellation); the refresh before it runs to the end."""
        query = string(query, "SessionIndex.search query")
        limit = positive_count(limit, "SessionIndex.search limit", DEFAULT_SEARCH_LIMIT)
        cwd = optional_path(cwd, "SessionIndex.search cwd")
        redaction = arguments.redaction(redaction, "SessionIndex.search redaction")
        check_cancel(cancel)
        self._use()
        db = self._reading
        with cancellable(db, cancel):
            if redaction is not None:
                return redacted_search(db, query, limit, cwd, redaction, cancel)
            return search_sessions(db, query, limit, cwd)
