"""A Claude Code transcript file to a :class:`~sessionref.transcript.Transcript`
(docs/harnesses.md §Claude Code).

The file's committed lines are decoded (lines that are not JSON objects are skipped), the
current chain is found (:mod:`sessionref.claude_code.chain`) and turned into entries
(:mod:`sessionref.claude_code.entries`). The title is the last ``custom-title``, else the
last ``ai-title``, else the last legacy ``summary``, else the first prompt; cwd and createdAt
come from the first line that has them.
"""

from __future__ import annotations

from sessionref.claude_code.chain import current_chain
from sessionref.claude_code.entries import chain_entries
from sessionref.claude_code.records import Line, decode_all
from sessionref.log.jsonl import iso_millis
from sessionref.log.structs import SessionLog
from sessionref.log.synthetic import surface_log
from sessionref.transcript import Transcript, prompt_title

_TITLE_FIELDS = {"custom-title": "custom_title", "ai-title": "ai_title", "summary": "summary"}
"""The lines that title a session, the first kind winning over the next, by their field."""


def file_title(lines: list[Line | None]) -> str | None:
    """The title the file itself gives, if any: the last ``custom-title``, else the last
    ``ai-title``, else the last ``summary``.

    >>> file_title([Line(type="ai-title", ai_title="b"), Line(type="summary", summary="c"),
    ...             Line(type="ai-title", ai_title="B")])
    'B'
    """
    latest: dict[str, str] = {}
    for line in lines:
        if line is not None and line.uuid is None and line.type in _TITLE_FIELDS:
            title = getattr(line, _TITLE_FIELDS[line.type])
            if type(title) is str:
                latest[line.type] = title
    return next((latest[kind] for kind in _TITLE_FIELDS if kind in latest), None)


def claude_transcript(
    session_id: str, raw_lines: list[bytes], texts_only: bool = False
) -> Transcript:
    """The transcript of a file's committed lines (with ``texts_only``, only the entries a
    snapshot shows: :func:`~sessionref.claude_code.entries.chain_entries`).

    >>> lines = [b'{"type":"user","uuid":"u","parentUuid":null,"cwd":"/p",'
    ...          b'"timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}',
    ...          b'not json',
    ...          b'{"type":"assistant","uuid":"a","parentUuid":"u","message":{"id":"m",'
    ...          b'"content":[{"type":"text","text":"hello"}]}}']
    >>> t = claude_transcript("s", lines)
    >>> t.title, t.cwd, t.created_at, [(e.role, e.text) for e in t.entries]
    ('hi', '/p', 1735689600000, [('user', 'hi'), ('assistant', 'hello')])
    """
    lines = decode_all(raw_lines)
    chain = current_chain(lines)
    entries = chain_entries((lines[index] for index in chain), texts_only)  # type: ignore[misc]
    present = [line for line in lines if line is not None]
    times = (iso_millis(line.timestamp) for line in present)
    return Transcript(
        session_id=session_id,
        harness="claude-code",
        title=file_title(lines) or prompt_title(entries),
        cwd=next((line.cwd for line in present if type(line.cwd) is str), None),
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
