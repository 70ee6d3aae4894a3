"""A Claude Code transcript file to a :class:`~sessionref.transcript.Transcript`
(docs/harnesses.md §Claude Code).

The file's committed lines are decoded (lines that are not JSON objects are skipped), the
current chain is found (:mod:`sessionref.claude_code.chain`) and turned into entries
(:mod:`sessionref.claude_code.entries`). The title is the last ``custom-title``, else the
last ``ai-title``, else the last legacy ``summary`` naming a line of the file, else the first
prompt; cwd and createdAt come from the first line that has them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sessionref.claude_code.chain import current_chain, with_parallel_calls
from sessionref.claude_code.entries import chain_entries
from sessionref.claude_code.prompts import local_command
from sessionref.claude_code.records import Line, Links, decode, decode_all, decode_links
from sessionref.log.jsonl import iso_millis
from sessionref.log.structs import SessionLog
from sessionref.log.synthetic import surface_log
from sessionref.transcript import Transcript

_TITLE_FIELDS = {"custom-title": "custom_title", "ai-title": "ai_title", "summary": "summary"}
"""The lines that title a session, the first kind winning over the next, by their field."""


def _kind(value: object) -> str | None:
    """A line's ``type`` when it is a string (any other value is an unknown kind of line).

    >>> _kind("summary"), _kind({})
    ('summary', None)
    """
    return value if type(value) is str else None


def file_title(lines: list[Links | None]) -> str | None:
    """The title the file itself gives, if any: the last ``custom-title``, else the last
    ``ai-title``, else the last ``summary`` whose ``leafUuid`` names a line of the file (a
    legacy summary often sits in another session's file than the one it names, which is
    not titled by it).

    >>> file_title([Links(type="ai-title", ai_title="b"), Links(type="summary", summary="c"),
    ...             Links(type="ai-title", ai_title="B"), Links(type={}, summary="d")])
    'B'
    >>> node = Links(type="user", uuid="u")
    >>> [file_title([node, Links(type="summary", summary="s", leaf_uuid=leaf)])
    ...  for leaf in ("u", "elsewhere", None)]
    ['s', None, None]
    """
    uuids = {line.uuid for line in lines if line is not None and type(line.uuid) is str}
    latest: dict[str, str] = {}
    for line in lines:
        if line is None or line.uuid is not None:
            continue
        kind = _kind(line.type)
        if kind == "summary" and (type(line.leaf_uuid) is not str or line.leaf_uuid not in uuids):
            continue
        if kind in _TITLE_FIELDS:
            title = getattr(line, _TITLE_FIELDS[kind])
            if type(title) is str:
                latest[kind] = title
    return next((latest[kind] for kind in _TITLE_FIELDS if kind in latest), None)


def _latest_checkpoint(chain: list[int], lines: list[Links | None]) -> int:
    """Where on ``chain`` the latest compaction starts (its boundary or summary), 0 if none."""
    for place in range(len(chain) - 1, -1, -1):
        line = lines[chain[place]]
        if line is not None and (
            line.subtype == "compact_boundary" or line.is_compact_summary is True
        ):
            return place
    return 0


def _line_at(
    raw_lines: list[bytes], full: list[Line | None] | None
) -> Callable[[int], Line | None]:
    """The line at an index: decoded already (``full``), else decoded from its bytes."""
    if full is not None:
        return full.__getitem__
    return lambda index: decode(raw_lines[index])


def _lines_at(places: list[int], line_at: Callable[[int], Line | None]) -> Iterator[Line]:
    """The lines at ``places``, one at a time (a place on the chain always holds one)."""
    return (line for line in map(line_at, places) if line is not None)


def _is_command(
    links: list[Links | None], line_at: Callable[[int], Line | None]
) -> Callable[[int], bool]:
    """Whether the line at an index records a local command (:func:`local_command`); only a
    ``user`` or ``system`` line is decoded to tell."""

    def is_command(index: int) -> bool:
        link = links[index]
        if link is None or link.type not in ("user", "system"):
            return False
        line = line_at(index)
        return line is not None and local_command(line)

    return is_command


def claude_transcript(
    session_id: str, raw_lines: list[bytes], texts_only: bool = False
) -> Transcript:
    """The transcript of a file's committed lines. With ``texts_only``, only what a snapshot
    shows, from the latest compaction on: the other lines are read only for their links
    (and, for a title, the chain up to its first prompt).

    >>> lines = [b'{"type":"user","uuid":"u","parentUuid":null,"cwd":"/p",'
    ...          b'"timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}',
    ...          b'not json',
    ...          b'{"type":"assistant","uuid":"a","parentUuid":"u","message":{"id":"m",'
    ...          b'"content":[{"type":"text","text":"hello"}]}}']
    >>> t = claude_transcript("s", lines)
    >>> t.title, t.cwd, t.created_at, [(e.role, e.text) for e in t.entries]
    ('hi', '/p', 1735689600000, [('user', 'hi'), ('assistant', 'hello')])
    """
    full = None if texts_only else decode_all(raw_lines)
    links: list[Links | None] = decode_links(raw_lines) if full is None else list(full)
    line_at = _line_at(raw_lines, full)
    chain = current_chain(links, _is_command(links, line_at))
    chain = chain if full is None else with_parallel_calls(chain, full)
    start = _latest_checkpoint(chain, links) if texts_only else 0
    title = file_title(links)
    before = _lines_at(chain[:start], line_at) if title is None else ()  # only for a title
    entries, prompt = chain_entries(_lines_at(chain[start:], line_at), texts_only, before)
    times = (iso_millis(line.timestamp) for line in links if line is not None)
    return Transcript(
        session_id=session_id,
        harness="claude-code",
        title=prompt if title is None else title,
        cwd=next((line.cwd for line in links if line is not None and type(line.cwd) is str), None),
        created_at=next((time for time in times if time is not None), None),
        entries=entries,
    )


def claude_log(session_id: str, raw_lines: list[bytes]) -> SessionLog:
    """The DSH-shaped log a snapshot reads (:func:`~sessionref.log.synthetic.surface_log`);
    ``capturedThroughSeq`` is the index of the file's last committed line.

    >>> claude_log("s", [b'{"type":"user","uuid":"u","message":{"content":"hi"}}']).records[-1].seq
    0
    """
    captured = len(raw_lines) - 1 if raw_lines else None
    return surface_log(claude_transcript(session_id, raw_lines, texts_only=True), captured)
