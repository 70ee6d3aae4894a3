"""The current chain of a Claude Code transcript: the ``parentUuid`` path from the newest
leaf back to a root (docs/harnesses.md §Claude Code §The current chain).

A rewind leaves the old branch in the file; the newest leaf is on the branch the user went on
with, so walking up from it never meets the old one, and a compaction replay (siblings with
new uuids and the parent's timestamp) is passed over the same way. A ``compact_boundary``
starts a new root; its ``logicalParentUuid`` continues the walk into what was compacted. A
uuid written twice (a preserved segment re-parented after a compaction) is resolved to its
latest line before the child, so the walk only ever moves back in the file; a parent written
after its child is taken as it is, and a cycle ends the walk where it closes.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import NamedTuple

from sessionref.claude_code.records import Links
from sessionref.log.jsonl import iso_millis


def _is_node(line: Links | None) -> bool:
    """Whether a line is a node of the tree (it has a uuid) on the main line (no sidechain)."""
    return line is not None and type(line.uuid) is str and line.is_sidechain is not True


def _parent_of(line: Links) -> str | None:
    """The uuid a line continues: its parent, or for a compact boundary the last message
    before the compaction."""
    if type(line.parent_uuid) is str:
        return line.parent_uuid
    if line.subtype == "compact_boundary" and type(line.logical_parent_uuid) is str:
        return line.logical_parent_uuid
    return None


class _Tree(NamedTuple):
    """One pass over a file's lines: where each uuid is written (its last line, and every
    line of one written more than once), the main-line nodes and the uuids they continue."""

    last: dict[str, int]
    again: dict[str, list[int]]
    nodes: list[int]
    parents: set[str]


def _tree(lines: Sequence[Links | None]) -> _Tree:
    last: dict[str, int] = {}
    again: dict[str, list[int]] = {}
    nodes: list[int] = []
    parents: set[str] = set()
    for index, line in enumerate(lines):
        if line is None or type(line.uuid) is not str:
            continue
        uuid = line.uuid
        if uuid in last:
            again.setdefault(uuid, [last[uuid]]).append(index)
        last[uuid] = index
        if line.is_sidechain is not True:
            nodes.append(index)
            parent = _parent_of(line)
            if parent is not None:
                parents.add(parent)
    return _Tree(last, again, nodes, parents)


def newest_leaf(lines: Sequence[Links | None], tree: _Tree | None = None) -> int | None:
    """The index of the newest node no line on the main line names as its parent: latest
    time, then latest in the file; ``None`` when there is no node.

    >>> def at(uuid, parent, second):
    ...     return Links(uuid=uuid, parent_uuid=parent, timestamp=f"2025-01-01T00:00:0{second}Z")
    >>> newest_leaf([at("a", None, 1), at("b", "a", 3), at("c", "a", 2)])
    1
    >>> newest_leaf([at("a", None, 1), at("b", "a", 2), at("c", "a", 2)])
    2
    """
    tree = tree or _tree(lines)
    best: tuple[int, int] | None = None
    for index in tree.nodes:
        line = lines[index]
        if line.uuid not in tree.parents:  # type: ignore[union-attr]
            time = iso_millis(line.timestamp)  # type: ignore[union-attr]
            key = (-1 if time is None else time, index)
            if best is None or key > best:
                best = key
    return None if best is None else best[1]


def current_chain(lines: Sequence[Links | None]) -> list[int]:
    """The indexes of the lines on the current chain, root first.

    >>> lines = [Links(uuid="a"), Links(uuid="b", parent_uuid="a"),
    ...          Links(uuid="c", parent_uuid="a"), Links(uuid="d", parent_uuid="c")]
    >>> current_chain(lines)
    [0, 2, 3]
    >>> current_chain([Links(uuid="a", parent_uuid="b"), Links(uuid="b", parent_uuid="a")])
    []
    >>> current_chain([Links(uuid="a", parent_uuid="gone")])
    [0]
    """
    tree = _tree(lines)
    leaf = newest_leaf(lines, tree)
    if leaf is None:
        return []
    chain = [leaf]
    seen = {leaf}
    while True:
        child = chain[-1]
        parent = _parent_of(lines[child])  # type: ignore[arg-type]
        if parent is None or parent not in tree.last:
            break
        place = tree.last[parent]
        if parent in tree.again:  # its latest line before the child (lines in file order)
            places = tree.again[parent]
            before = bisect_left(places, child)
            place = places[before - 1] if before else place
        if place in seen:
            break
        seen.add(place)
        chain.append(place)
    chain.reverse()
    return chain
