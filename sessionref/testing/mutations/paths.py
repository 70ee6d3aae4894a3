"""Paths into parsed JSON values, for aiming damage at one field of a record."""

from __future__ import annotations

import copy
from collections import deque
from typing import Any, Final

from sessionref.testing.mutations.values import JsonPath

__all__ = ["json_paths"]


def json_paths(value: Any, max_depth: int = 8, limit: int = 512) -> list[JsonPath]:
    """Paths of the nodes of a JSON value (the root excluded), breadth first.

    >>> json_paths({"a": [1, {"b": 2}], "c": 3})
    [('a',), ('c',), ('a', 0), ('a', 1), ('a', 1, 'b')]
    """
    found: list[JsonPath] = []
    queue: deque[tuple[JsonPath, Any]] = deque([((), value)])
    while queue and len(found) < limit:
        path, node = queue.popleft()
        if path:
            found.append(path)
        if len(path) >= max_depth:
            continue
        if isinstance(node, dict):
            queue.extend(((*path, key), child) for key, child in node.items())
        elif isinstance(node, list):
            queue.extend(((*path, index), child) for index, child in enumerate(node))
    return found


def parent_of(root: Any, path: JsonPath) -> Any:
    node = root
    for key in path[:-1]:
        in_object = isinstance(node, dict) and isinstance(key, str) and key in node
        in_array = isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)
        if not (in_object or in_array):
            return None
        node = node[key]
    return node


def applicable(root: Any, path: JsonPath) -> bool:
    """Whether ``path`` can be set in ``root``: its parent exists and takes that key."""
    parent = parent_of(root, path)
    key = path[-1]
    if isinstance(parent, dict):
        return isinstance(key, str)
    return isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent)


def set_path(root: Any, path: JsonPath, value: Any) -> Any:
    changed = copy.deepcopy(root)
    parent_of(changed, path)[path[-1]] = value
    return changed


def remove_path(root: Any, path: JsonPath) -> Any:
    changed = copy.deepcopy(root)
    parent = parent_of(changed, path)
    if isinstance(parent, dict):
        parent.pop(path[-1], None)
    else:
        del parent[path[-1]]
    return changed


MAX_EDIT_DEPTH: Final = 64
"""Values nested deeper than this are not copied for editing."""


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(node, dict):
            stack.extend((child, level + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, level + 1) for child in node)
    return deepest


def get_path(root: Any, path: JsonPath) -> Any:
    return parent_of(root, path)[path[-1]] if has_path(root, path) else None


def has_path(root: Any, path: JsonPath) -> bool:
    parent = parent_of(root, path)
    key = path[-1]
    if isinstance(parent, dict):
        return key in parent
    return isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent)
