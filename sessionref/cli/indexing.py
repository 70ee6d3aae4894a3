"""What a command says while it builds an index: a bar on a terminal, else one line.

Kept apart from :mod:`sessionref.cli.progress` so that a command that finds its index up to
date (most runs) never loads tqdm, which takes a tenth of a warm ``candidates``.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Final

if TYPE_CHECKING:
    from tqdm import tqdm


NOTE_LOGS: Final = 100
"""Off a terminal, a refresh reading this many logs or more says so in one line (it takes
seconds); a terminal shows a bar for any."""


class IndexingProgress:
    """Called with (logs read, logs to read) by a refresh of the index of ``root``
    (:meth:`sessionref.index.SessionIndex.refresh`): a bar on ``stream`` when it is a
    terminal, else one line when ``at_least`` logs or more are to be read; nothing when the
    index is up to date. Close it when the refresh is done.

    >>> import io
    >>> stream = io.StringIO()
    >>> with IndexingProgress("/r", stream, at_least=2) as progress:
    ...     progress(0, 1)
    ...     progress(0, 2)
    ...     progress(2, 2)
    >>> print(stream.getvalue(), end="")
    sessionref: indexing /r (reading 2 logs; later runs read only what changed)
    """

    def __init__(self, root: str, stream: IO[str], at_least: int = NOTE_LOGS) -> None:
        self.root = root
        self.stream = stream
        self.at_least = at_least
        self.bar: tqdm[None] | None = None
        self.said = False

    def __call__(self, done: int, total: int) -> None:
        if self.stream.isatty():
            if self.bar is None:
                from sessionref.cli.progress import progress_bar  # tqdm: only when shown

                self.bar = progress_bar(total, self.stream, unit="log")
                self.bar.set_description(f"indexing {self.root}")
            self.bar.total = total
            self.bar.update(done - self.bar.n)
        elif not self.said and total >= self.at_least:
            self.said = True
            self.stream.write(
                f"sessionref: indexing {self.root} (reading {total} logs; later runs read "
                "only what changed)\n"
            )
            self.stream.flush()

    def __enter__(self) -> IndexingProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()
