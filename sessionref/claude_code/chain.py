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

from collections.abc import Sequence

from sessionref.claude_code.records import Line


def _is_node(line: Line | None) -> bool:
    """Whether a line is a node of the tree (it has a uuid) on the main line (no sidechain)."""
    return line is not None and type(line.uuid) is str and line.is_sidechain is not True


def _parent_of(line: Line) -> str | None:
    """The uuid a line continues: its parent, or for a compact boundary the last message
    before the compaction."""
    if type(line.parent_uuid) is str:
        return line.parent_uuid
    if line.subtype == "compact_boundary" and type(line.logical_parent_uuid) is str:
        return line.logical_parent_uuid
    return None


def newest_leaf(lines: Sequence[Line | None], times: Sequence[int | None]) -> int | None:
    """The index of the newest node no line on the main line names as its parent: latest
    time, then latest in the file; ``None`` when there is no node.

    >>> lines = [Line(uuid="a"), Line(uuid="b", parent_uuid="a"), Line(uuid="c", parent_uuid="a")]
    >>> newest_leaf(lines, [1, 3, 2]), newest_leaf(lines, [1, 2, 2])
    (1, 2)
    """
    parents = {_parent_of(line) for line in lines if _is_node(line)}  # type: ignore[arg-type]
    best: tuple[int, int] | None = None
    for index, line in enumerate(lines):
        if _is_node(line) and line.uuid not in parents:  # type: ignore[union-attr]
            time = times[index]
            key = (-1 if time is None else time, index)
            if best is None or key > best:
                best = key
    return None if best is None else best[1]


def current_chain(lines: Sequence[Line | None], times: Sequence[int | None]) -> list[int]:
    """The indexes of the lines on the current chain, root first.

    >>> lines = [Line(uuid="a"), Line(uuid="b", parent_uuid="a"),
    ...          Line(uuid="c", parent_uuid="a"), Line(uuid="d", parent_uuid="c")]
    >>> current_chain(lines, [1, 2, 3, 4])
    [0, 2, 3]
    >>> current_chain([Line(uuid="a", parent_uuid="b"), Line(uuid="b", parent_uuid="a")], [1, 1])
    []
    >>> current_chain([Line(uuid="a", parent_uuid="gone")], [None])
    [0]
    """
    leaf = newest_leaf(lines, times)
    if leaf is None:
        return []
    written: dict[str, list[int]] = {}
    for index, line in enumerate(lines):
        if line is not None and type(line.uuid) is str:
            written.setdefault(line.uuid, []).append(index)
    chain = [leaf]
    seen = {leaf}
    while True:
        parent = _parent_of(lines[chain[-1]])  # type: ignore[arg-type]
        if parent is None or parent not in written:
            break
        places = written[parent]
        before = [place for place in places if place < chain[-1]]
        place = before[-1] if before else places[-1]
        if place in seen:
            break
        seen.add(place)
        chain.append(place)
    chain.reverse()
    return chain
