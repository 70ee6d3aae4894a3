"""The cyclic garbage collector held off while a log is read and projected.

Reading a log allocates some hundred thousand container objects (lists, messages, units),
none of them in a reference cycle; each 700 of them the collector walks the young ones, and
now and then every tracked object alive. On the 1600-turn benchmark log that took some 13%
of ``prepare`` for nothing. :func:`collection_paused` turns the collector off for the span
of a read or a snapshot and back on after, as it was: the pauses of several threads nest
(the collector is one per process), so it comes back on when the last of them ends, and
only if it was on when the first began. Reference counting frees everything as usual; what
is cyclic garbage meanwhile is collected after.

>>> import gc
>>> with collection_paused():
...     with collection_paused():
...         gc.isenabled()
...     gc.isenabled()
False
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_LOCK = threading.Lock()
_depth = 0
"""How many pauses are under way, in any thread."""
_resume = False
"""Whether the collector was on when the first pause under way began."""


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """The collector off inside, back as it was when the last pause under way ends."""
    global _depth, _resume
    with _LOCK:
        if not _depth:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if not _depth and _resume:
                gc.enable()
