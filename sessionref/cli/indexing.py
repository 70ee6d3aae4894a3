"""What a command says while it builds an index: a bar on a terminal, else one line.

Kept apart from :mod:`sessionref.cli.progress` so that a command that finds its index up to
date (most runs) never loads tqdm, which takes a tenth of a warm ``candidates``.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Final, Protocol

from sessionref.cli.common import counted
from sessionref.controls import one_line

if TYPE_CHECKING:
    from tqdm import tqdm


class Saving(Protocol):
    """What a progress asks of the index it tells of (a :class:`~sessionref.index.SessionIndex`)."""

    @property
    def bypassed(self) -> bool:
        """Whether the index saves nothing: ``--no-index``, or a file it cannot use."""
        ...


NOTE_LOGS: Final = 100
"""Off a terminal, a refresh reading this many logs or more says so in one line (it takes
seconds); a terminal shows a bar for any."""


def build_line(root: str, total: int, *, saved: bool) -> str:
    """What a build reading ``total`` logs of ``root`` says off a terminal: with the index
    ``saved``, that later runs read only what changed; otherwise that they read them again.

    >>> build_line("/r", 300, saved=True)
    'sessionref: indexing /r (reading 300 logs; later runs read only what changed)'
    >>> build_line("/r", 1, saved=False)
    'sessionref: reading 1 log of /r (not indexed: later runs read them again)'
    """
    logs = counted(total, "log")
    if saved:
        return f"sessionref: indexing {root} (reading {logs}; later runs read only what changed)"
    return f"sessionref: reading {logs} of {root} (not indexed: later runs read them again)"


class IndexingProgress:
    """Called with (logs read, logs to read) by a refresh of the index of ``root``
    (:meth:`sessionref.index.SessionIndex.refresh`): a bar on ``stream`` when it is a
    terminal, else one line when ``at_least`` logs or more are to be read; nothing when the
    index is up to date. Close it when the refresh is done. Once it follows an index
    (:meth:`follow`), a refresh that saves nothing (``--no-index``, or an index that could
    not be used) promises nothing of later runs.

    >>> import io
    >>> stream = io.StringIO()
    >>> with IndexingProgress("/r", stream, at_least=2) as progress:
    ...     progress(0, 1)
    ...     progress(0, 2)
    ...     progress(2, 2)
    >>> from types import SimpleNamespace
    >>> with IndexingProgress("/r", stream, at_least=2) as progress:
    ...     _ = progress.follow(SimpleNamespace(bypassed=True))
    ...     progress(0, 2)
    >>> print(stream.getvalue(), end="")
    sessionref: indexing /r (reading 2 logs; later runs read only what changed)
    sessionref: reading 2 logs of /r (not indexed: later runs read them again)
    """

    def __init__(
        self,
        root: str,
        stream: IO[str],
        at_least: int = NOTE_LOGS,
    ) -> None:
        self.root = one_line(root)  # a name a terminal shows as it is
        self.stream = stream
        self.at_least = at_least
        self.index: Saving | None = None
        self.bar: tqdm[None] | None = None
        self.said = False

    def __call__(self, done: int, total: int) -> None:
        if self.stream.isatty():
            if self.bar is None:
                from sessionref.cli.progress import progress_bar  # tqdm: only when shown

                self.bar = progress_bar(total, self.stream, unit="log")
                self.bar.set_description(f"{'indexing' if self.saved() else 'reading'} {self.root}")
            self.bar.total = total
            self.bar.update(done - self.bar.n)
        elif not self.said and total >= self.at_least:
            self.said = True
            self.stream.write(build_line(self.root, total, saved=self.saved()) + "\n")
            self.stream.flush()

    def follow(self, index: Saving) -> None:
        """Tell of ``index``'s refreshes as saved or not, as it is."""
        self.index = index

    def saved(self) -> bool:
        """Whether what a refresh reads is kept for later runs."""
        return self.index is None or not self.index.bypassed

    def __enter__(self) -> IndexingProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()
