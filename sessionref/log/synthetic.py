"""A transcript of another harness as a DSH-shaped log, so the seven stages of
:mod:`sessionref.snapshot` take it unchanged (docs/harnesses.md §The same snapshot).

Only what a snapshot shows becomes a record, from the latest checkpoint on: each user text a
``user/message`` from the user, each checkpoint a ``user/message`` of the ``compact`` plugin,
each assistant text an ``assistant/message``, all appended to the surface in order. The title
follows as a ``session/title`` event, so labelling a source by its title works as for DSH; the
last record's seq is the harness's ``capturedThroughSeq`` (the index of the last line read).
"""

from __future__ import annotations

from typing import Any, Final

from sessionref.log.structs import DecodedLogRecord, LogRecord, SessionHeader, SessionLog
from sessionref.transcript import Entry, Transcript, joined_texts

_USER: Final = {"kind": "user"}
_CHECKPOINT: Final = {"kind": "plugin", "plugin": "compact"}
_MODEL: Final = {"kind": "model"}


def surface_entries(entries: list[Entry]) -> list[Entry]:
    """The entries a snapshot may show: user and assistant texts and checkpoints, from the
    latest checkpoint on; an assistant text and the texts that continue it (other entries
    of its API message between them) are one text (:func:`joined_texts`).

    >>> texts = [Entry("user", "text", "a"), Entry("user", "checkpoint", "sum"),
    ...          Entry("assistant", "text", "b"), Entry("assistant", "tool-call", "{}"),
    ...          Entry("assistant", "text", "c", continues=True)]
    >>> [entry.text for entry in surface_entries(texts)]
    ['sum', 'b\\nc']
    """
    start = 0
    for index, entry in enumerate(entries):
        if entry.kind == "checkpoint":
            start = index
    shown = (
        entry
        for entry in entries[start:]
        if entry.role in ("user", "assistant") and entry.kind in ("text", "checkpoint")
    )
    return list(joined_texts(shown))


def _record(entry: Entry, seq: int) -> LogRecord:
    """The surface event that shows ``entry``, its data built (a text may hold lone
    surrogates, which only a built value carries as JavaScript does)."""
    if entry.role == "assistant":
        kind, source = "assistant/message", _MODEL
    else:
        kind, source = "user/message", _CHECKPOINT if entry.kind == "checkpoint" else _USER
    message: dict[str, Any] = {"content": [{"type": "text", "text": entry.text}], "source": source}
    data = {"message": message} if kind == "assistant/message" else message
    return DecodedLogRecord(kind, seq=seq, data=data, surface_op="append")


def surface_log(transcript: Transcript, captured_through_seq: int | None) -> SessionLog:
    """The DSH-shaped log of ``transcript`` whose last event has seq ``captured_through_seq``
    (``None``: a file with no line, which gives no records).

    >>> t = Transcript("s", "codex", "T", "/p", 5, [Entry("user", "text", "hi")])
    >>> log = surface_log(t, 3)
    >>> [(r.type, r.seq) for r in log.records], log.harness, log.header.cwd
    ([('user/message', 0), ('session/title', 3)], 'codex', '/p')
    """
    header = SessionHeader(transcript.session_id, transcript.created_at or 0, cwd=transcript.cwd)
    if captured_through_seq is None:
        return SessionLog(header, [], harness=transcript.harness)
    records = [_record(entry, seq) for seq, entry in enumerate(surface_entries(transcript.entries))]
    if transcript.title is None:
        records.append(LogRecord("turn/end", seq=captured_through_seq))
    else:
        title = {"title": transcript.title, "messageSeqs": [], "source": _USER}
        records.append(DecodedLogRecord("session/title", seq=captured_through_seq, data=title))
    return SessionLog(header, records, harness=transcript.harness)
