"""Thread names: ``session_index.jsonl`` in the Codex home, one line per rename, the latest
line for an id naming the thread (docs/harnesses.md §Codex; openai/codex
``codex-rs/rollout/src/session_index.rs``).
"""

from __future__ import annotations

import msgspec

from sessionref.codex.names import RUST_WHITESPACE, canonical_id
from sessionref.log.jsonl import decode_line

SESSION_INDEX = "session_index.jsonl"


class _IndexLine(msgspec.Struct, frozen=True, gc=False):
    id: object = None
    thread_name: object = None
    updated_at: object = None


_INDEX_LINE = msgspec.json.Decoder(_IndexLine)


def thread_names(lines: list[bytes]) -> dict[str, str]:
    """Each thread's latest name in the lines of ``session_index.jsonl``, by its id as Codex
    reads it (:func:`~sessionref.codex.names.canonical_id`), trimmed as Rust trims; a blank
    latest name takes the thread's name away. A line counts only when it is a
    ``SessionIndexEntry`` as far as these fields go: a string ``id``, ``thread_name`` and
    ``updated_at`` (openai/codex ``codex-rs/rollout/src/session_index.rs``:
    ``find_thread_names_by_ids`` passes over a line that does not parse as one).

    >>> def line(name, end=b',"updated_at":"t"'):
    ...     return b'{"id":"a","thread_name":"%s"%s}' % (name, end)
    >>> thread_names([line(b"x"), b"oops", line(b"y"), line(b"z", b""), line(b"", b"")])
    {'a': 'y'}
    >>> thread_names([line(b" x "), line(b"\\\\u3000").replace(b'"a"', b'"b"')])
    {'a': 'x'}
    >>> t = "0197a000-0000-7000-8000-0000000000aa"
    >>> thread_names([line(b"x").replace(b'"a"', b'"%s"' % t.upper().encode())]) == {t: "x"}
    True
    """
    names: dict[str, str] = {}
    for raw in lines:
        line = decode_line(_INDEX_LINE, _IndexLine, raw)
        if line is None or type(line.updated_at) is not str:
            continue
        if type(line.id) is str and type(line.thread_name) is str:
            thread = canonical_id(line.id) or line.id
            name = line.thread_name.strip(RUST_WHITESPACE)
            if name:
                names[thread] = name
            else:
                names.pop(thread, None)
    return names
