"""The progress bar of the commands that work through a store (``batch``, ``index``)."""

from __future__ import annotations

from typing import IO, Final

from tqdm import tqdm


class ProgressBar(tqdm):  # type: ignore[misc]  # tqdm is untyped
    """A tqdm bar without tqdm's monitor thread (which every bar starts, shown or not): a
    parent that runs one thread forks its workers at once
    (:func:`sessionref.pool.process_context`; the index's build forks too). The bar
    redraws as work is done."""

    monitor_interval = 0


def progress_bar(total: int, stream: IO[str], unit: str = "session") -> tqdm[None]:
    """A progress bar on ``stream`` when it is a terminal; silent otherwise.

    >>> import io
    >>> with progress_bar(2, io.StringIO()) as bar:
    ...     bar.update()
    ...     bar.disable
    True
    """
    return ProgressBar(
        total=total,
        file=stream,
        disable=not stream.isatty(),
        unit=unit,
        dynamic_ncols=True,
        smoothing=0.1,
    )


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
