"""The current chain of a Claude Code transcript: the ``parentUuid`` path from the newest
leaf back to a root (docs/harnesses.md §Claude Code §The current chain).

A rewind leaves the old branch in the file; the newest leaf is on the branch the user went on
with, so walking up from it never meets the old one, and a compaction replay (siblings with
new uuids and the parent's timestamp) is passed over the same way. A ``compact_boundary``
starts a new root; its ``logicalParentUuid`` continues the walk into what was compacted. A
uuid written twice (a preserved segment re-parented after a compaction) is resolved to its
latest line before the child, so the walk only ever moves back in the file; a parent written
after its child is taken as it is, and a cycle ends the walk where it closes. The parallel tool
calls of a message on the chain, and their results, which Claude Code writes beside it, are
put back (:func:`with_parallel_calls`). A branch of local commands alone (``/doctor``, ``!ls``
and their output), which Claude Code 1.0 hangs off an older line than the turn before it, is
no leaf of the conversation: it is put back beside the chain it forks off (:func:`current_chain`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from heapq import heappop, heappush
from typing import NamedTuple

from sessionref.claude_code.records import Block, Line, Links
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
    line of one written more than once), the main-line nodes and, for each uuid they
    continue, how many do."""

    last: dict[str, int]
    again: dict[str, list[int]]
    nodes: list[int]
    parents: dict[str, int]


def _tree(lines: Sequence[Links | None]) -> _Tree:
    last: dict[str, int] = {}
    again: dict[str, list[int]] = {}
    nodes: list[int] = []
    parents: dict[str, int] = {}
    counted: set[tuple[str, str]] = set()  # a line written again is the same child
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
            if parent is not None and (uuid, parent) not in counted:
                counted.add((uuid, parent))
                parents[parent] = parents.get(parent, 0) + 1
    return _Tree(last, again, nodes, parents)


def _leaves(lines: Sequence[Links | None], tree: _Tree) -> list[int]:
    """The indexes of the nodes no line on the main line names as its parent, newest first:
    latest time, then latest in the file.

    >>> def at(uuid, parent, second):
    ...     return Links(uuid=uuid, parent_uuid=parent, timestamp=f"2025-01-01T00:00:0{second}Z")
    >>> lines = [at("a", None, 1), at("b", "a", 3), at("c", "a", 2), at("d", "a", 2)]
    >>> _leaves(lines, _tree(lines))
    [1, 3, 2]
    """
    keys = []
    for index in tree.nodes:
        line = lines[index]
        if line.uuid not in tree.parents:  # type: ignore[union-attr]
            time = iso_millis(line.timestamp)  # type: ignore[union-attr]
            keys.append((-1 if time is None else time, index))
    return [index for _, index in sorted(keys, reverse=True)]


def _parent_place(lines: Sequence[Links | None], tree: _Tree, child: int) -> int | None:
    """The index of the line ``child`` continues: its parent's latest line before it (lines
    in file order), else its parent's last line; ``None`` at a root or a dangling parent."""
    parent = _parent_of(lines[child])  # type: ignore[arg-type]
    if parent is None or parent not in tree.last:
        return None
    if parent in tree.again:
        places = tree.again[parent]
        before = bisect_left(places, child)
        if before:
            return places[before - 1]
    return tree.last[parent]


def _command_branch(
    lines: Sequence[Links | None], tree: _Tree, leaf: int, is_command: Callable[[int], bool]
) -> tuple[int, list[int]] | None:
    """Where the branch ending at ``leaf`` forks off (the nearest line above it that more
    than one line continues) and its lines, root first, when every one of them is a local
    command (``is_command``); ``None`` for any other branch, or one that reaches a root
    without a fork (then it is the whole tree)."""
    branch: list[int] = []
    walked: set[int] = set()
    child = leaf
    while is_command(child) and child not in walked:
        branch.append(child)
        walked.add(child)
        place = _parent_place(lines, tree, child)
        if place is None:
            return None
        if tree.parents.get(lines[place].uuid, 0) > 1:  # type: ignore[union-attr]
            branch.reverse()
            return place, branch
        child = place
    return None


def _no_command(index: int) -> bool:
    """No line is a local command (the default of :func:`current_chain`)."""
    return False


def current_chain(
    lines: Sequence[Links | None], is_command: Callable[[int], bool] = _no_command
) -> list[int]:
    """The indexes of the lines on the current chain, root first: the path up from the
    newest leaf whose branch is not of local commands alone (``is_command`` of each of its
    lines' indexes), else from the newest leaf; with the branches of local commands that
    fork off that path, each in file order after the line it forks off.

    >>> lines = [Links(uuid="a"), Links(uuid="b", parent_uuid="a"),
    ...          Links(uuid="c", parent_uuid="a"), Links(uuid="d", parent_uuid="c")]
    >>> current_chain(lines)
    [0, 2, 3]
    >>> current_chain(lines, is_command=lambda index: index >= 2)
    [0, 1, 2, 3]
    >>> current_chain(lines, is_command=lambda index: True)
    [0, 1, 2, 3]
    >>> current_chain([Links(uuid="a", parent_uuid="b"), Links(uuid="b", parent_uuid="a")])
    []
    >>> current_chain([Links(uuid="a", parent_uuid="gone")])
    [0]
    """
    tree = _tree(lines)
    leaves = _leaves(lines, tree)
    if not leaves:
        return []
    chosen: int | None = None
    branches: dict[int, tuple[int, list[int]]] = {}  # by the leaf each ends at
    for candidate in leaves:
        found = _command_branch(lines, tree, candidate, is_command)
        if found is not None:
            branches[candidate] = found
        elif chosen is None:
            chosen = candidate
    leaf = leaves[0] if chosen is None else chosen  # local commands alone: the newest
    branches.pop(leaf, None)
    chain = [leaf]
    seen = {leaf}
    while (place := _parent_place(lines, tree, chain[-1])) is not None and place not in seen:
        seen.add(place)
        chain.append(place)
    chain.reverse()
    beside: dict[int, list[int]] = {}
    for fork, lines_of in branches.values():
        if fork in seen:
            beside.setdefault(fork, []).extend(lines_of)
    return _spliced(chain, beside)


def _spliced(chain: list[int], beside: dict[int, list[int]]) -> list[int]:
    """``chain`` with the lines ``beside`` each of its lines, each placed in file order
    after the line it hangs from.

    >>> _spliced([0, 5, 6], {0: [7, 3]})
    [0, 3, 5, 6, 7]
    """
    if not beside:
        return chain
    spliced: list[int] = []
    waiting: list[int] = []
    for index in chain:
        while waiting and waiting[0] < index:
            spliced.append(heappop(waiting))
        spliced.append(index)
        for extra in beside.get(index, ()):
            heappush(waiting, extra)
    return spliced + sorted(waiting)


def _blocks(line: Line, kind: str, key: str) -> list[str] | None:
    """The ``key`` of each block of ``line``'s message when every block is a ``kind`` block
    with a string ``key``, else ``None``.

    >>> from sessionref.claude_code.records import Message
    >>> use = Block("tool_use", id="t1")
    >>> _blocks(Line(message=Message(content=[use])), "tool_use", "id")
    ['t1']
    >>> _blocks(Line(message=Message(content=[use, Block("text", "x")])), "tool_use", "id")
    """
    content = None if line.message is None else line.message.content
    if type(content) is not list or not content:
        return None
    keys: list[str] = []
    for block in content:
        value = getattr(block, key) if isinstance(block, Block) else None
        if not isinstance(block, Block) or block.type != kind or type(value) is not str:
            return None
        keys.append(value)
    return keys


def _beside(line: Line, parent: Line, called: set[str], answered: set[str]) -> bool:
    """Whether ``line``, a child of ``parent`` off the chain, is a parallel call of
    ``parent``'s API message (tool_use blocks alone, of calls not yet seen) or the result
    of calls of the chain not yet answered (tool_result blocks alone); it then counts them.
    A compaction replay repeats calls and results already seen, and is none of these."""
    message, parents = line.message, parent.message
    if line.type == "assistant" and message is not None and parents is not None:
        same = parent.type == "assistant" and type(parents.id) is str and message.id == parents.id
        calls = _blocks(line, "tool_use", "id") if same else None
        if calls and called.isdisjoint(calls) and len(set(calls)) == len(calls):
            called.update(calls)
            return True
    results = _blocks(line, "tool_result", "tool_use_id") if line.type == "user" else None
    if results and set(results) <= called and answered.isdisjoint(results):
        answered.update(results)
        return True
    return False


def with_parallel_calls(chain: list[int], lines: Sequence[Line | None]) -> list[int]:
    """``chain`` with the lines Claude Code wrote beside it for the parallel tool calls of
    its messages: the calls of a message after the one on the chain, and the results that
    the next message does not continue from (claude-code-log's dev-docs/dag.md: recording
    artifacts, not branches), each placed in file order after the line it hangs from.

    >>> from sessionref.claude_code.records import Message
    >>> def said(uuid, parent, kind, *blocks):
    ...     message = Message("m" if kind == "assistant" else None, content=list(blocks))
    ...     return Line(type=kind, uuid=uuid, parent_uuid=parent, message=message)
    >>> lines = [said("a", None, "assistant", Block("tool_use", id="1")),
    ...          said("b", "a", "assistant", Block("tool_use", id="2")),
    ...          said("r2", "b", "user", Block("tool_result", tool_use_id="2")),
    ...          said("r1", "a", "user", Block("tool_result", tool_use_id="1"))]
    >>> current_chain(lines), with_parallel_calls(current_chain(lines), lines)
    ([0, 3], [0, 1, 2, 3])
    """
    kept: dict[object, int] = {}  # the place of each uuid on the chain or beside it
    called: set[str] = set()
    answered: set[str] = set()
    anchor: dict[int, int] = {}  # the line of the chain each kept line hangs from
    for index in chain:  # one pass over the chain
        line = lines[index]
        if line is not None:
            kept[line.uuid] = anchor[index] = index
            called.update(_blocks(line, "tool_use", "id") or ())
            answered.update(_blocks(line, "tool_result", "tool_use_id") or ())
    beside: dict[int, list[int]] = {}
    for index, line in enumerate(lines):
        if line is None or not _is_node(line) or line.uuid in kept:
            continue
        parent = kept.get(_parent_of(line))
        parent_line = None if parent is None else lines[parent]
        if (
            parent is not None
            and parent_line is not None
            and _beside(line, parent_line, called, answered)
        ):
            kept[line.uuid] = index
            anchor[index] = anchor[parent]
            beside.setdefault(anchor[index], []).append(index)
    return _spliced(chain, beside)
