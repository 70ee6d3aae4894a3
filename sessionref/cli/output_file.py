"""A page written whole or not at all: ``--out`` / ``--html`` of ``export`` and ``show``.

The pieces go to a temporary file beside the target (links followed), which is renamed over
it only once the last piece is written and synced; any failure or interruption (Ctrl-C,
SIGTERM) removes the temporary file and leaves the target as it was. A FIFO or a device is
written into as the pieces come; without a file, they go to stdout.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO

from sessionref.cli.batch_files import guarded, locked_temporary, sweep_leftovers
from sessionref.cli.common import STDOUT
from sessionref.cli.output_target import locate
from sessionref.cli.process import write_bytes
from sessionref.codecs.jsstring import utf8_encode
from sessionref.controls import for_a_terminal


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


def write_pieces(
    pieces: Iterable[str | bytes],
    path: str | None,
    option: str,
) -> None:
    """Write ``pieces`` to ``path`` (the value of ``option``), or to stdout when ``path`` is
    ``None`` or ``-``. A regular file is replaced whole or not at all (a link is followed to it), a
    FIFO or a device is written into as it is (:mod:`sessionref.cli.output_target`); a
    failure is one error naming ``option`` and ``path``. What is written to a terminal (asked
    of the descriptor written to, once open) is written as a terminal may be sent it
    (:func:`~sessionref.controls.for_a_terminal`), stdout's by
    :func:`~sessionref.cli.process.write_bytes`.

    >>> import os, tempfile
    >>> def interrupted():
    ...     yield "half"
    ...     raise KeyboardInterrupt
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = os.path.join(folder, "page.md")
    ...     write_pieces(["# a", "\\n"], target, "--out")
    ...     try:
    ...         write_pieces(interrupted(), target, "--out")
    ...     except KeyboardInterrupt:
    ...         pass
    ...     print(open(target).read().strip(), os.listdir(folder))
    # a ['page.md']
    >>> write_pieces(["x"], "/no/such/dir/page.md", "--html")
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: --html /no/such/dir/page.md: No such file or directory
    """
    if path is None or path == STDOUT:
        for piece in encoded(pieces):
            write_bytes(piece)
        return
    target = locate(path, option)
    try:
        if target.streamed:
            with target.open_stream() as stream:
                shown = for_a_terminal if stream.isatty() else _as_it_is
                _write_all(map(shown, encoded(pieces)), stream)
            return
        with guarded(target.file):  # a killed writer's leftovers go; this one's is held
            sweep_leftovers(target)
            temporary, file = locked_temporary(target)
        written = False
        try:
            _write_all(pieces, file)
            written = True
        finally:
            target.settle(file, temporary, keep=written)
    except OSError as exc:
        raise target.failure(exc) from None


def _as_it_is(piece: bytes) -> bytes:
    """A piece written to what is no terminal."""
    return piece


def _write_all(pieces: Iterable[str | bytes], file: IO[bytes]) -> None:
    """Write the pieces (:func:`encoded`) into ``file`` and flush it.

    >>> import io
    >>> file = io.BytesIO()
    >>> _write_all(["é", b"!"], file)
    >>> file.getvalue()
    b'\\xc3\\xa9!'
    """
    for piece in encoded(pieces):
        file.write(piece)
    file.flush()
