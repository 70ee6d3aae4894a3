"""A controlled clock for the index's tests, instead of waiting for real time to pass.

The index does not remember a file modified within 2 s of its clock (``RACY_NS``): a second
change within the same tick of the file system's clock could leave its revision as it was.
Tests give the index a :class:`StoreClock` (``SessionIndex(..., clock=...)``) and say which of
three states the store is in:

- ``racy``: the clock stands still at the moment the store was made, so everything written
  since is racy, whatever the machine's speed;
- ``dated``: files the test touched are dated back (each step one second after the last, a day
  before now), so the files are settled, while a directory is still racy by its ctime (which
  dating back sets to now, and only the kernel may set);
- ``settled``: dated back as above, and the clock a day ahead, so every entry is settled, its
  ctime included: the index takes its paths for a store that did not change (statting what
  it remembers, listing nothing), which real time would only give after a 2 s pause.

Dated entries get a timestamp of their own per step, so two steps never leave an entry as it
was, however fast they follow each other.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Final, Literal

DAY_NS: Final = 86_400 * 10**9
State = Literal["racy", "dated", "settled"]
STATES: Final[tuple[State, ...]] = ("racy", "dated", "settled")


class StoreClock:
    """The index's clock and the timestamps of the store's entries, both set by the test.

    >>> clock = StoreClock("settled")
    >>> clock() - time.time_ns() > DAY_NS // 2
    True
    """

    def __init__(self, state: State) -> None:
        self.state = state
        self.start = time.time_ns()
        self.steps = 0

    def __call__(self) -> int:
        """The time the index sees, in nanoseconds since the epoch."""
        return self.start + DAY_NS if self.state == "settled" else self.start

    def date(self, root: Path) -> None:
        """In the ``dated`` and ``settled`` states: give every entry under ``root`` (three
        levels) touched since the last call a timestamp of this step (a day back)."""
        if self.state == "racy":
            return
        stamp = self.start - DAY_NS + self.steps * 10**9
        self.steps += 1
        for entry in [root, *root.glob("*"), *root.glob("*/*"), *root.glob("*/*/*")]:
            if entry.lstat().st_mtime_ns > self.start - DAY_NS // 2:
                os.utime(entry, ns=(stamp, stamp), follow_symlinks=False)
