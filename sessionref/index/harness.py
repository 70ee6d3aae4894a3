"""Indexing the store of another harness (Claude Code, Codex: a
:class:`~sessionref.log.harness_store.HarnessStore`) in the same tables as a DSH store.

The index remembers, as for DSH, the state of every entry the listing depends on: each
directory whose names it reads (inode, mtime, ctime), each file it lists and each other file
it reads (Codex's ``session_index.jsonl``), by mode, device, inode, size and mtime. While no
state changed, a use stats them and reads nothing (:func:`~sessionref.index.walk.restat_tree`).
When only files changed, each with the head remembered, in a store where a session has one
file (Claude Code), only their sessions are read again (:func:`reread_files`). Otherwise the
store lists again, its file heads answered from the index's ``header_cache`` while each file
is the same, and a session is read again when its revision changed: a digest of its files'
states and of its name where the harness keeps one apart. A file modified in the last 2 s is
read, never trusted: it is read again by the next use.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final, NamedTuple

import msgspec

import sessionref.index.tables as tables
from sessionref.errors import SessionLogError
from sessionref.index.refresh import (
    HeaderEntry,
    Progress,
    RefreshReport,
    decode_header,
    encode_header,
    read_session,
    remembered_line,
    stale_sessions,
)
from sessionref.index.walk import ROOT, entry_state, tree_of
from sessionref.log.discovery import StoreProblem
from sessionref.log.harness_store import HarnessStore, Head
from sessionref.log.records import SessionHeader, SessionLog


def encode_head(head: Head) -> bytes:
    r"""A head as ASCII JSON, as ``header_cache`` keeps it.

    >>> encode_head(Head("s\ud800", 5, None))
    b'["s\\ud800", 5, null, null]'
    """
    return json.dumps(list(head), ensure_ascii=True).encode()


_HEAD: Final = msgspec.json.Decoder(Head)


def decode_head(line: bytes | None) -> Head:
    r"""The head :func:`encode_head` wrote (by msgspec; by ``json`` when it holds a lone
    surrogate, which msgspec refuses).

    >>> decode_head(encode_head(Head("s", None, "/w")))
    Head(session_id='s', created_at=None, cwd='/w', hidden=None)
    >>> decode_head(encode_head(Head("\ud800"))).session_id == "\ud800"
    True
    """
    try:
        return _HEAD.decode(line or b"[null]")
    except msgspec.DecodeError:
        return Head(*json.loads(line or b"[null]"))


class RememberedHeads:
    """The heads of a harness's files (a :data:`~sessionref.log.harness_store.HeadMemory`):
    those in ``known`` (path → entry) while a file is the same, read otherwise; new answers
    collect in ``learned``, the state of each file asked for in ``states`` (by path)."""

    def __init__(self, known: Mapping[bytes, HeaderEntry], racy_after: int) -> None:
        self.known = known
        self.racy_after = racy_after
        self.learned: dict[bytes, HeaderEntry] = {}
        self.states: dict[bytes, str] = {}

    def __call__(self, path: Path, read: Callable[[], Head]) -> Head:
        """The head of the file at ``path``; raises what ``read`` raises."""
        try:
            status = os.stat(path)
        except OSError:  # gone or unreadable since the walk: the store says how
            return read()
        self.states[os.fsencode(path)] = entry_state(status, self.racy_after)
        return decode_head(remembered_line(self, path, lambda: encode_head(read()), status))


def session_revision(memory: RememberedHeads, paths: list[Path], name: str | None) -> str | None:
    """A digest of the states of a session's files (as listed) and of its name; ``None``
    when a file was not statted or is racy (read it again next time).

    >>> memory = RememberedHeads({}, 0)
    >>> memory.states[b"/a"] = "1:2:3:4:5"
    >>> named = session_revision(memory, [Path("/a")], "x")
    >>> len(named), named == session_revision(memory, [Path("/a")], "y")
    (32, False)
    >>> session_revision(memory, [Path("/b")], "x") is None
    True
    """
    states = [memory.states.get(os.fsencode(path), "~") for path in paths]
    if any(state.endswith("~") for state in states):
        return None
    named = f"{states!r}{name!r}".encode("utf-8", "surrogatepass")
    return hashlib.blake2b(named, digest_size=16).hexdigest()


class HarnessReader(NamedTuple):
    """A harness store as the index reads it (a
    :class:`~sessionref.index.refresh.PlacedStore`): each session at its first file, with
    its :func:`session_revision` as the listing saw it."""

    store: HarnessStore
    memory: RememberedHeads

    def place(self, session_id: str) -> tuple[Path, str | None]:
        """The session's first file and its revision."""
        paths = self.store.paths_of(session_id)
        return paths[0], session_revision(self.memory, paths, self.store.named(session_id))

    def read(self, session_id: str) -> SessionLog:
        """The session's log, as the store reads it."""
        return self.store.read(session_id)


def watched_states(store: HarnessStore, racy_after: int) -> dict[bytes, str]:
    """The state of each entry the store watches (:meth:`HarnessStore.watched`) that can be
    statted (one that comes later changes its parent's), by path."""
    states = {}
    for path in store.watched():
        try:
            states[os.fsencode(path)] = entry_state(os.stat(path), racy_after)
        except OSError:
            continue
    return states


def relative(root: Path, states: dict[bytes, str]) -> dict[bytes, str]:
    """Entries by path relative to ``root`` (``b""``: the root itself), as a walk keeps them.

    >>> relative(Path("/r"), {b"/r": "d", b"/r/a/b": "1", b"/c": "2"})
    {b'': 'd', b'a/b': '1', b'../c': '2'}
    """
    base = os.fsencode(root)
    below = base.rstrip(b"/") + b"/"

    def key_of(path: bytes) -> bytes:
        if path.startswith(below):
            return path[len(below) :]
        return ROOT if path == base else os.path.relpath(path, base)

    return {key_of(path): state for path, state in states.items()}


class HarnessListing(NamedTuple):
    """What a refresh of a harness store saw: its headers and problems (``None``: as the
    index holds them), the store that listed them (which reads sessions without listing
    again), and what the refresh did."""

    headers: list[SessionHeader] | None
    problems: list[StoreProblem] | None
    store: HarnessStore
    report: RefreshReport


Walk = tuple[str | None, dict[bytes, str] | None, dict[bytes, str] | None]
"""The stamped tree, its entries, and the files whose state is not the stamped one (``None``
when a directory changed, or no tree is stamped)."""


def refresh_harness(
    db: sqlite3.Connection,
    store: HarnessStore,
    racy_after: int,
    write: tuple[int, Progress | None],
    walk: Walk = (None, None, None),
) -> HarnessListing:
    """Bring the index of a harness store up to date: read again the sessions of the files
    that changed when only they did (:func:`reread_files`), else list the store (heads from
    the index), read the sessions whose revision is not the indexed one, drop those gone;
    remember every entry's state. ``write``: how many sessions to write at once, and whom to
    tell how many are written."""
    stamp, before, changed = walk
    if stamp is not None and before is not None and changed:
        done = reread_files(db, store, racy_after, (stamp, before, changed))
        if done is not None:
            return done
    watched = watched_states(store, racy_after)  # before listing: a change meanwhile shows
    memory = RememberedHeads(tables.header_cache(db), racy_after)
    lister = store.remembering(memory)
    reader = HarnessReader(lister, memory)
    headers = lister.headers()
    problems = lister.problems()
    places = {}
    for header in headers:
        path, revision = reader.place(header.id)
        places[header.id] = (str(path), revision)
    listing = [(header, encode_header(header)) for header in headers]
    tree = tree_of(store.root, relative(store.root, {**watched, **memory.states}))
    stale = stale_sessions(
        ((key, path, revision) for key, (path, revision) in places.items()),
        tables.indexed_revisions(db),
    )
    read = ((session_id, read_session(reader, session_id)) for session_id in stale)
    tables.write_as_read(db, listing, read, write[0], (len(stale), write[1]))
    seen = (listing, problems, set(memory.states), dict[str, str]())
    removed = tables.finish(db, seen, places, memory.learned, tree)
    report = RefreshReport(len(headers), len(stale), removed)
    return HarnessListing(headers, problems, lister, report)


def reread_files(
    db: sqlite3.Connection,
    store: HarnessStore,
    racy_after: int,
    walk: tuple[str, dict[bytes, str], dict[bytes, str]],
) -> HarnessListing | None:
    """When only files changed (``walk``: the stamped tree, its entries, the changed ones),
    in a store where a session has one file, and each one's head is the one the index
    remembers (with a time of its own: else the file dates its session), the listing stands:
    read those files' sessions again, touching only their rows. A racy file's state is kept
    as it is (``~``), so that the next use reads it again until it settles (a session being
    written is read by each use, the store not listed). ``None`` when the store must list
    again (or another refresh changed the index meanwhile)."""
    stamp, before, changed = walk
    if not store.one_file_per_session:
        return None
    root = os.fsencode(store.root)
    paths = {os.path.join(root, key): key for key in changed}
    known = tables.header_entries(db, list(paths))
    memory = RememberedHeads(known, racy_after)
    lister = store.remembering(memory)
    files = {}
    for path in paths:
        same, head = _same_head(lister, Path(os.fsdecode(path)), known.get(path))
        if not same:
            return None
        if head is not None and head.session_id is not None:
            files[head.session_id] = [Path(os.fsdecode(path))]
    placed = tables.sessions_at(db, [str(found[0]) for found in files.values()])
    lister.known_places(files)
    reader = HarnessReader(lister, memory)
    rows = [
        (decode_header(header_json), position, header_json, read_session(reader, session_id))
        for session_id, position, header_json in placed.values()
    ]
    tree = tree_of(store.root, {**before, **changed})  # a racy file's state kept: read again
    if not tables.replace_logs(db, rows, (stamp, tree.stamp), before, changed, memory.learned):
        return None
    return HarnessListing(None, None, lister, RefreshReport(tables.session_count(db), len(rows), 0))


def _same_head(
    store: HarnessStore, path: Path, remembered: HeaderEntry | None
) -> tuple[bool, Head | None]:
    """Whether the head of the file at ``path`` is the one ``remembered`` and says when its
    session began, and the head (``None``: the file is a problem)."""
    head: Head | None = None
    now: tuple[bytes | None, str | None]
    try:
        head = store.head_of(path)
        now = (encode_head(head), None)
    except SessionLogError as exc:
        now = (None, str(exc))
    same = remembered is not None and now == (remembered.line, remembered.error)
    dated = head is None or head.session_id is None or head.created_at is not None
    return same and dated, head
