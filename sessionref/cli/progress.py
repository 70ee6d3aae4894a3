"""The progress bar of the commands that work through a store (``batch``, ``index``)."""

from __future__ import annotations

from typing import IO

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
