"""What the command line sets up before it imports anything else: while it loads, SIGINT and
SIGTERM end the process at once with one line (:func:`exit_on_signals`).

It imports ``os`` and ``signal`` alone (``typing`` only for the type checker), so that what
comes before the handlers are set is the interpreter's own start-up and the console script's
first lines; ``sessionref.cli`` imports the rest (:mod:`sessionref.cli.process`) after.

>>> INTERRUPTED_STATUS, TERMINATED_STATUS
(130, 143)
"""

from __future__ import annotations

import os
import signal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType
    from typing import Final

INTERRUPTED_STATUS: Final = 128 + signal.SIGINT
TERMINATED_STATUS: Final = 128 + signal.SIGTERM


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    """A signal ends the process at once, with one line and no traceback."""
    os.write(2, b"interrupted\n")
    os._exit(TERMINATED_STATUS if signum == signal.SIGTERM else INTERRUPTED_STATUS)


def exit_on_signals() -> None:
    """While the command line loads, and once the command is done (the interpreter closing
    pools and threads): a signal exits at once with one line."""
    signal.signal(signal.SIGINT, _exit_at_once)
    signal.signal(signal.SIGTERM, _exit_at_once)
