"""A transcript as JSON: the :class:`~sessionref.transcript.Transcript` object with the
entries the options show, written entry by entry (JavaScript strings as JavaScript writes
them: a lone surrogate is an escape)."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from sessionref.codecs.jsjson import js_json
from sessionref.transcript import Transcript
from sessionref.views.entries import ViewOptions, shown, view_arguments


def json_chunks(transcript: Transcript, options: ViewOptions) -> Iterator[bytes]:
    """The JSON of ``transcript`` with the entries an export shows, piece by piece.

    >>> from sessionref.transcript import Entry
    >>> t = Transcript("s", "dsh", None, None, 1, [Entry("user", "text", "a\\ud800"),
    ...     Entry("assistant", "thinking", "hm")])
    >>> b"".join(json_chunks(t, ViewOptions()))
    b'{"sessionId":"s","harness":"dsh","title":null,"cwd":null,"createdAt":1,"entries":[{"role":"user","kind":"text","text":"a\\\\ud800"}]}\\n'
    >>> json_chunks(t, None)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: json_chunks options must be a ViewOptions, not NoneType
    """
    return _json_chunks(*view_arguments(transcript, options, "json_chunks"))


def _json_chunks(transcript: Transcript, options: ViewOptions) -> Iterator[bytes]:
    """:func:`json_chunks` once its arguments are checked."""
    empty = js_json(msgspec.structs.replace(transcript, entries=[]))
    yield empty[: -len(b"[]}")] + b"["
    separator = b""
    for entry in transcript.entries:
        if shown(entry, options):
            yield separator + js_json(entry)
            separator = b","
    yield b"]}\n"
