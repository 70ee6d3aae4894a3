"""DSH session log records: decoding lines into records, and records' ``data`` (docs/format.md).

The structs live in :mod:`sessionref.log.structs`, line decoding in :mod:`sessionref.log.lines`;
this module gathers what stages and tools use.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from sessionref.errors import SessionLogError
from sessionref.log.frames import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    decompress_frames,
    line_pieces,
    newline_count,
    zstd_chunks,
)
from sessionref.log.jsvalue import UNDEFINED, JsTypeError, js_get
from sessionref.log.lines import decode_piece, decode_whole
from sessionref.log.structs import (
    PACKED_CHUNK_TYPES,
    DecodedLogRecord,
    LogRecord,
    SessionHeader,
    SessionLog,
    _data_decoder,
    captured_through_seq,
    decode_raw,
    raw_data,
    record_span,
    split_header,
    where,
)

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "PACKED_CHUNK_TYPES",
    "DecodedLogRecord",
    "LogRecord",
    "SessionHeader",
    "SessionLog",
    "captured_through_seq",
    "decode_data",
    "decode_records",
    "decompress_frames",
    "latest_title",
    "line_pieces",
    "raw_data",
    "record_span",
    "split_header",
    "where",
    "zstd_chunks",
]

T = TypeVar("T")


def decode_records(buffer: bytes | bytearray, start: int = 0) -> list[LogRecord]:
    """The records of the whole lines of ``buffer[start:]`` (a last line without its newline is
    left out); a line the harness cannot parse is left out too. No seq or shape is checked:
    that is the reader's work (:mod:`sessionref.log.reader`).

    >>> [r.type for r in decode_records(b'{"type":"a","seq":0}\\nnot json\\n{"type":"b","se')]
    ['a']
    """
    end = buffer.rfind(b"\n", start) + 1
    if end <= start:
        return []
    piece = buffer[start:end]
    records = decode_whole(piece, newline_count(piece))  # as the reader's fast path takes it
    if records is not None:
        return records
    return [line for line in decode_piece(piece) if line is not None]


def decode_data(record: LogRecord, kind: type[T]) -> T:
    """Decode a record's ``data`` as ``kind``; raises :class:`SessionLogError` on a mismatch.

    >>> decode_data(LogRecord("x", seq=0, data=msgspec.Raw(b'{"turn":1}')), dict)
    {'turn': 1}
    """
    try:
        if type(record) is not LogRecord:
            return msgspec.convert(record.data, kind)
        result: T = decode_raw(_data_decoder(kind), record.data)
        return result
    except (ValueError, RecursionError) as exc:
        raise SessionLogError(f"bad data in {where(record)}: {exc}") from None


def latest_title(log: SessionLog) -> Any:
    """The harness's title fold: the *last* ``session/title`` event only, and only when its
    ``data.messageSeqs`` is iterable and its ``data.source.kind`` is ``fallback``,
    ``provider`` or ``user`` (docs/format.md §Titles). ``None`` when there is no title; the
    title otherwise, whatever JSON value the log holds there (the harness labels a candidate
    with it as it is: ``""`` and ``7`` are labels too).

    >>> def titled(*datas):
    ...     return SessionLog(SessionHeader("s", 0), [DecodedLogRecord("session/title", seq=i,
    ...         data=d) for i, d in enumerate(datas)])
    >>> ok = {"title": "a", "messageSeqs": [], "source": {"kind": "user"}}
    >>> latest_title(titled(ok)), latest_title(titled(ok, {"title": "b"}))
    ('a', None)
    >>> latest_title(titled({**ok, "title": 7}))
    7
    """
    for record in reversed(log.records):
        if record.type == "session/title":
            return _title_of(raw_data(record))
    return None


def title_label(session_id: str, title: T | None) -> str | T:
    """The label of a session whose latest title is ``title``: the title (``""`` and ``7``
    included, as the harness labels a candidate), or the session's id when it has none.

    >>> title_label("s", None), title_label("s", ""), title_label("s", 7)
    ('s', '', 7)
    """
    return session_id if title is None else title


def _title_of(data: Any) -> Any:
    """The title a ``session/title`` event's data folds to, ``None`` if the fold fails."""
    try:
        title = js_get(data, "title")
        seqs = js_get(data, "messageSeqs")
        kind = js_get(js_get(data, "source"), "kind")
    except JsTypeError:
        return None
    if not isinstance(seqs, (list, str)) or kind not in ("fallback", "provider", "user"):
        return None
    return None if title is UNDEFINED else title
