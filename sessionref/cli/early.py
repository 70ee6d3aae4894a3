"""What the command line sets up before it imports anything else: while it loads, SIGINT and
SIGTERM end the process at once with one line (:func:`exit_on_signals`), the first to come
deciding (:func:`first_arrived`); in the interpreter's own teardown they are ignored
(:func:`ignore_signals_at_teardown`).

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
    from collections.abc import Callable
    from types import FrameType
    from typing import Final

    Action = Callable[[int, FrameType | None], object]
    """What a signal does: called with its number and the frame it came in, as a handler."""

INTERRUPTED_STATUS: Final = 128 + signal.SIGINT
TERMINATED_STATUS: Final = 128 + signal.SIGTERM


SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)
"""The signals a command stops on."""

_said: int | None = None
"""The status of the interruption the command has said, once its line is written."""


def interruption_said(status: int) -> None:
    """The command has written its one line saying it was interrupted, and exits with
    ``status``: a further signal ends the process at once with that status, and writes
    nothing (a second line, a status of its own: in a trial, a Ctrl-C just after a SIGTERM's
    line added ``interrupted`` and made the status 130)."""
    global _said
    _said = status


def exit_if_said() -> None:
    """End the process at once with the status of the interruption the command has said
    (:func:`interruption_said`), if it has said one."""
    if _said is not None:
        os._exit(_said)


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    """A signal ends the process at once, with one line and no traceback (none when the
    command has said it was interrupted: its line and status stand)."""
    exit_if_said()
    os.write(2, b"interrupted\n")
    os._exit(TERMINATED_STATUS if signum == signal.SIGTERM else INTERRUPTED_STATUS)


_action: Action = _exit_at_once
"""What SIGINT and SIGTERM do now in the process's own command line (:func:`act_on_signals`)."""


_arrivals: tuple[int, int] | None = None
"""The pipe (read end, write end) that the interpreter's C-level handler writes each signal's
number to as the signal comes (``signal.set_wakeup_fd``): the order in which they came."""


def first_arrived(signum: int) -> int:
    """Of the signals that came since the handler last ran, the first to come (``signum``
    when the arrivals say nothing): signals that wait together for the main thread have their
    Python handlers run in the order of their numbers, SIGINT's before SIGTERM's whichever
    came first; the pipe of :data:`_arrivals` has them in the order they came. (Code that
    sets a wakeup descriptor of its own, as asyncio's ``add_signal_handler`` does, takes the
    interpreter's writes from this pipe: then the handler's own ``signum`` decides.)

    >>> first_arrived(15)  # nothing came before it
    15
    """
    if _arrivals is None:
        return signum
    came = bytearray()
    while True:
        try:
            chunk = os.read(_arrivals[0], 512)
        except BlockingIOError:
            break
        came += chunk
    return next((number for number in came if number in SIGNALS), signum)


def _watch_arrivals() -> None:
    """Have the interpreter write each signal's number to a pipe of :data:`_arrivals` as it
    comes; a forked child forgets the pipe (:func:`_forget_arrivals`)."""
    global _arrivals
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    _arrivals = (read, write)
    os.register_at_fork(after_in_child=_forget_arrivals)


def _forget_arrivals() -> None:
    """In a forked child (a pool's worker): its signals are its own, and written to no pipe
    of its parent's."""
    global _arrivals
    if _arrivals is not None:
        signal.set_wakeup_fd(-1)
        for descriptor in _arrivals:
            os.close(descriptor)
        _arrivals = None


def _on_signal(signum: int, frame: FrameType | None) -> None:
    """The one Python handler of SIGINT and SIGTERM: it does what the command line has them
    do now (:data:`_action`), for the signal that came first (:func:`first_arrived`)."""
    _action(first_arrived(signum), frame)


def set_handlers(handlers: dict[int, Action | int | None]) -> dict[int, Action | int | None]:
    """Set each signal's handler (``None``: the default action) and return the ones they had,
    with both signals blocked in this thread meanwhile: one that comes as they change waits
    for both to be set (a Python handler runs in the main thread only, and a signal taken
    between two changes met one signal's new handler and the other's old one).

    >>> old = set_handlers({signal.SIGINT: signal.SIG_IGN})
    >>> signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    True
    >>> set_handlers(old)[signal.SIGINT] is signal.SIG_IGN  # what it had is back
    True
    """
    held = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        return {
            signum: signal.signal(signum, signal.SIG_DFL if handler is None else handler)
            for signum, handler in handlers.items()
        }
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def acting_on_signals() -> bool:
    """Whether SIGINT and SIGTERM do what :func:`act_on_signals` says: in the process's own
    command line, not in a caller's process."""
    return all(signal.getsignal(signum) is _on_signal for signum in SIGNALS)


def act_on_signals(action: Action) -> Action:
    """From now on SIGINT and SIGTERM do ``action``; returns what they did. Both change at
    once, in one assignment (a signal meets the old action or the new one, never one of each:
    the command stops, or says it stopped, on the first it meets). The first call sets the
    handlers (:func:`set_handlers`), and watches the order signals come in
    (:func:`first_arrived`)."""
    global _action
    previous, _action = _action, action
    if not acting_on_signals():
        if _arrivals is None:
            _watch_arrivals()
        set_handlers(dict.fromkeys(SIGNALS, _on_signal))
    return previous


def current_action() -> Action:
    """What SIGINT and SIGTERM do now in the process's own command line.

    >>> current_action().__name__
    '_exit_at_once'
    """
    return _action


def put_back_action(action: Action, previous: Action) -> None:
    """Have SIGINT and SIGTERM do ``previous`` again if they still do ``action``: not if a
    signal changed it meanwhile (the command stops on it, and a signal now adds nothing)."""
    global _action
    if _action is action:
        _action = previous


def exit_on_signals() -> None:
    """While the command line loads (and after a usage error): a signal exits at once with
    one line."""
    act_on_signals(_exit_at_once)


def _ignore_signals() -> None:
    """From now on, SIGINT and SIGTERM do nothing."""
    set_handlers(dict.fromkeys(SIGNALS, signal.SIG_IGN))


def ignore_signals_at_teardown() -> None:
    """Once the interpreter has joined its threads and run its exit functions (this one the
    last of those registered after it), SIGINT and SIGTERM are ignored, and the process exits
    with the status its command chose, its line already written.

    What follows is the interpreter's own teardown, where no Python handler runs: it puts back
    each signal's default action, so a signal there (a second Ctrl-C after the one the command
    reported, or a first just after it finished) killed the process, status -2 and no line
    (in a trial, 35 runs of 160 with two signals near a batch's end). Python keeps a signal
    ignored through its teardown. Called once, as early as possible: exit functions run in
    the reverse order of their registration.
    """
    import atexit  # built in: nothing is read from disk

    atexit.register(_ignore_signals)
