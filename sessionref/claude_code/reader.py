"""A Claude Code transcript file to a :class:`~sessionref.transcript.Transcript`
(docs/harnesses.md §Claude Code).

The file's committed lines are decoded (lines that are not JSON objects are skipped), the
current chain is found (:mod:`sessionref.claude_code.chain`) and turned into entries
(:mod:`sessionref.claude_code.entries`). The title is the last ``custom-title``, else the
last ``ai-title``, else the last legacy ``summary``, else the first prompt; cwd and createdAt
come from the first line that has them.
"""

from __future__ import annotations

from typing import Any

from sessionref.claude_code.chain import current_chain
from sessionref.claude_code.entries import chain_entries
from sessionref.claude_code.records import Line, decode
from sessionref.log.jsonl import iso_millis
from sessionref.log.structs import SessionLog
from sessionref.log.synthetic import surface_log
from sessionref.transcript import Transcript, prompt_title

_TITLE_FIELDS = (("custom-title", "custom_title"), ("ai-title", "ai_title"), ("summary", "summary"))


def file_title(lines: list[Line | None]) -> str | None:
    """The title the file itself gives, if any: the last ``custom-title``, else the last
    ``ai-title``, else the last ``summary``.

    >>> file_title([Line(type="ai-title", ai_title="b"), Line(type="summary", summary="c"),
    ...             Line(type="ai-title", ai_title="B")])
    'B'
    """
    for kind, field in _TITLE_FIELDS:
        titles = [
            getattr(line, field)
            for line in lines
            if line is not None and line.type == kind and type(getattr(line, field)) is str
        ]
        if titles:
            title: str = titles[-1]
            return title
    return None


def _first(values: list[Any]) -> Any:
    """The first value that is not ``None``, ``None`` if there is none."""
    return next((value for value in values if value is not None), None)


def claude_transcript(session_id: str, raw_lines: list[bytes]) -> Transcript:
    """The transcript of a file's committed lines.

    >>> lines = [b'{"type":"user","uuid":"u","parentUuid":null,"cwd":"/p",'
    ...          b'"timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}',
    ...          b'not json',
    ...          b'{"type":"assistant","uuid":"a","parentUuid":"u","message":{"id":"m",'
    ...          b'"content":[{"type":"text","text":"hello"}]}}']
    >>> t = claude_transcript("s", lines)
    >>> t.title, t.cwd, t.created_at, [(e.role, e.text) for e in t.entries]
    ('hi', '/p', 1735689600000, [('user', 'hi'), ('assistant', 'hello')])
    """
    lines = [decode(raw) for raw in raw_lines]
    times = [None if line is None else iso_millis(line.timestamp) for line in lines]
    chain = current_chain(lines, times)
    entries = chain_entries((lines[index], times[index]) for index in chain)  # type: ignore[misc]
    cwd = _first([line.cwd for line in lines if line is not None and type(line.cwd) is str])
    return Transcript(
        session_id=session_id,
        harness="claude-code",
        title=file_title(lines) or prompt_title(entries),
        cwd=cwd,
        created_at=_first(times),
        entries=entries,
    )


def claude_log(session_id: str, raw_lines: list[bytes]) -> SessionLog:
    """The DSH-shaped log a snapshot reads (:func:`~sessionref.log.synthetic.surface_log`);
    ``capturedThroughSeq`` is the index of the file's last committed line.

    >>> claude_log("s", [b'{"type":"user","uuid":"u","message":{"content":"hi"}}']).records[-1].seq
    0
    """
    captured = len(raw_lines) - 1 if raw_lines else None
    return surface_log(claude_transcript(session_id, raw_lines), captured)
