"""A zstd log's decompression on a thread of its own, a few chunks ahead of the decoding.

zstd lets go of the interpreter lock while it decompresses, and decoding a chunk's lines
(msgspec, the prefix scan) holds it; so on a machine with a second core the two overlap,
and a large log is read in the time of its decoding alone (docs/format.md §Recovery,
reading ahead). The chunks come in order, and so does a failure: the caller meets it where
it would have met it reading the chunks itself, after every chunk before it. Whatever ends
the reading (its end, a failure of the caller's own, Ctrl-C), the thread is stopped and gone
before the caller goes on, so nothing reads the log's buffer after the read returns (a mapped
file is closed then).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Final, TypeVar

T = TypeVar("T")

DEPTH: Final = 2
"""Chunks decompressed ahead at most (and one more on its way): 768 KiB of a log's text
held besides the piece being decoded."""


class _End:
    """Put after the last chunk, with the exception that ended the chunks if one did."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


@contextlib.contextmanager
def prefetched(chunks: Iterator[T], depth: int = DEPTH) -> Iterator[Iterator[T]]:
    """The items of ``chunks``, taken from them on another thread at most ``depth`` ahead;
    an exception ``chunks`` raise is raised by the iterator given, in its place.

    >>> def numbers():
    ...     yield 1
    ...     yield 2
    ...     raise ValueError("torn")
    >>> got = []
    >>> with prefetched(numbers()) as items:
    ...     for item in items:
    ...         got.append(item)
    Traceback (most recent call last):
    ValueError: torn
    >>> got
    [1, 2]
    """
    import queue  # only a log large enough to be read ahead pays for the import

    handoff: queue.Queue[object] = queue.Queue(depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for chunk in chunks:
                if stop.is_set():
                    return
                handoff.put(chunk)
            handoff.put(_End())
        except BaseException as exc:  # the caller's to meet, where it would have
            handoff.put(_End(exc))
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    def consume() -> Iterator[T]:
        while type(item := handoff.get()) is not _End:
            yield item  # type: ignore[misc]  # anything but the end is a chunk
        if item.error is not None:
            raise item.error

    thread = threading.Thread(target=produce, name="sessionref-decompress", daemon=True)
    thread.start()
    try:
        yield consume()
    finally:
        stop.set()
        while thread.is_alive():  # take what it may be waiting to put, until it ends
            with contextlib.suppress(queue.Empty):
                handoff.get_nowait()
            thread.join(0.001)
