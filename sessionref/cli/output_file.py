"""A page written whole or not at all: ``--out`` / ``--html`` of ``export`` and ``show``.

The pieces go to a temporary file beside the target, which is renamed over it only once the
last piece is written and synced; any failure or interruption (Ctrl-C, SIGTERM) removes the
temporary file and leaves the target as it was. Without a file, pieces go to stdout.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from pathlib import Path

from sessionref.cli.process import OutputError, write_bytes
from sessionref.codecs.jsstring import utf8_encode


def encoded(pieces: Iterable[str | bytes], gather: int = 1 << 16) -> Iterable[bytes]:
    """The pieces as UTF-8 bytes (a lone surrogate in text as U+FFFD), small pieces of text
    gathered up to ``gather`` characters so that a page of many short pieces is written in
    few writes.

    >>> list(encoded(["a\\ud800", "c", b"b"]))
    [b'a\\xef\\xbf\\xbdc', b'b']
    """
    texts: list[str] = []
    held = 0
    for piece in pieces:
        if isinstance(piece, str):
            texts.append(piece)
            held += len(piece)
            if held < gather:
                continue
        if texts:
            yield utf8_encode("".join(texts))
            texts, held = [], 0
        if isinstance(piece, bytes):
            yield piece
    if texts:
        yield utf8_encode("".join(texts))


def write_pieces(pieces: Iterable[str | bytes], path: str | None) -> None:
    """Write ``pieces`` to ``path`` atomically, or to stdout when ``path`` is ``None``;
    a file that cannot be written is an :class:`OutputError` naming it.

    >>> import tempfile
    >>> def interrupted():
    ...     yield "half"
    ...     raise KeyboardInterrupt
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = os.path.join(folder, "page.md")
    ...     write_pieces(["# a", "\\n"], target)
    ...     try:
    ...         write_pieces(interrupted(), target)
    ...     except KeyboardInterrupt:
    ...         pass
    ...     print(open(target).read().strip(), os.listdir(folder))
    # a ['page.md']
    """
    if path is None:
        for piece in encoded(pieces):
            write_bytes(piece)
        return
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(descriptor, "wb") as file:
            for piece in encoded(pieces):
                file.write(piece)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except OSError as exc:
        raise OutputError(f"{exc.filename or target}: {exc.strerror or exc}") from None
    finally:
        temporary.unlink(missing_ok=True)
