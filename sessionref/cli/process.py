"""How a command process meets its surroundings: stdout that fails or closes, and signals.

Kept free of the library so that ``main`` can set it up before anything heavy is imported.

- An output error (a full disk, ``/dev/full``) is :class:`OutputError`: one line, exit 1.
- A closed stdout (``sessionref demo | head -1``) ends the command quietly with exit 0,
  whether the reader went before or after the last write (so the status does not depend on
  timing); stdout is pointed at ``/dev/null`` so nothing is printed at interpreter exit.
- A standard stream closed when the process started (``sessionref demo >&-``, ``2>&-``) is
  opened on ``/dev/null`` (:func:`open_closed_streams`): what would go there goes nowhere,
  and no file the command opens can take its number and receive it instead. A stderr whose
  reader goes away (``2> >(head -1)``) becomes ``/dev/null`` at the first failed write
  (:func:`forgiving_stderr`): a note never stops a command nor changes its status.
- Signals: while the command line loads (parser, command module, library), SIGINT and
  SIGTERM exit at once with one line (there is nothing to clean up; and an exception raised
  inside an import can crash the interpreter: msgspec 0.23 segfaults when one interrupts it
  building a decoder). While the command runs, SIGTERM raises :class:`Terminated`, a
  :class:`KeyboardInterrupt`: every command stops on it as on Ctrl-C, and exits
  ``128 + SIGTERM`` (143) instead of ``128 + SIGINT`` (130). Once the command has finished,
  its output written, a signal leaves it as it finished: no line, the command's own status
  (:func:`finished`, :func:`ended`). The first signal decides, in the order signals came
  (:func:`~sessionref.cli.early.first_arrived`): one that comes while the command stops on
  it adds nothing. Both signals have one handler, which does what the command line has it
  do now, so that they change together (:func:`~sessionref.cli.early.act_on_signals`).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import io
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any, Final

from sessionref.cli.early import (
    INTERRUPTED_STATUS,
    SIGNALS,
    TERMINATED_STATUS,
    act_on_signals,
    acting_on_signals,
    current_action,
    exit_if_said,
    interruption_said,
    put_back_action,
    set_handlers,
)
from sessionref.controls import for_a_terminal, one_line


class OutputError(Exception):
    """Stdout could not be written (other than a closed pipe): its reason, e.g. ENOSPC.

    >>> str(OutputError("No space left on device"))
    'No space left on device'
    """


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: stop as on Ctrl-C."""


def interrupted_status(interruption: KeyboardInterrupt) -> int:
    """The exit status of a command stopped by ``interruption``.

    >>> interrupted_status(KeyboardInterrupt()), interrupted_status(Terminated())
    (130, 143)
    """
    return TERMINATED_STATUS if isinstance(interruption, Terminated) else INTERRUPTED_STATUS


def _ignore_unraisable(unraisable: object) -> None:
    """Print nothing for an exception a finalizer raised (see :func:`_raise_interruption`)."""


def _stopping(signum: int, frame: FrameType | None) -> None:
    """A signal while the command stops on an earlier one adds nothing: it goes on stopping,
    then says the first (a second exception, raised as it handles the first, would escape it
    as a traceback: in a trial, a SIGINT just after a SIGTERM, as the command began to say
    it). Once it has said it, the process ends at once (:func:`say_interrupted`)."""
    exit_if_said()


def _raise_interruption(signum: int, frame: FrameType | None) -> None:
    """Raise :class:`KeyboardInterrupt` (SIGINT) or :class:`Terminated` (SIGTERM) where the
    command is; a further signal adds nothing (:func:`_stopping`). It may land inside a
    library and leave it half-done: a half-built object whose finalizer fails later
    (distributed's ``Future``: "Exception ignored in ...", with a traceback), or a callback on
    another thread that fails and logs it (distributed's ``sync``, interrupted before it
    started its future, logs a ``NameError`` through tornado). The command says in one line
    that it was interrupted, so from then on neither is printed.
    """
    exit_if_said()
    act_on_signals(_stopping)
    sys.unraisablehook = _ignore_unraisable
    logging = sys.modules.get("logging")  # not imported: nothing has logged or can log
    if logging is not None:
        logging.disable(logging.CRITICAL)
    raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt


def stop_on_signals() -> None:
    """While a command runs: SIGINT raises :class:`KeyboardInterrupt`, SIGTERM
    :class:`Terminated`, so that the command stops cleanly."""
    act_on_signals(_raise_interruption)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while the block runs, then deliver the first that came
    to what it would have met: for a step that must not stop half-way, such as a finished
    file's sync and rename into place (a Ctrl-C in between would lose all of it). Both are
    held at once, and given back at once (:func:`~sessionref.cli.early.act_on_signals`; in a
    caller's process, their handlers change with both blocked). Outside the main thread,
    where no handler can be set, the block runs as it is.

    >>> with signals_held():
    ...     print(signal.getsignal(signal.SIGINT).__name__)
    hold
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        came.append(signum)

    if not acting_on_signals():  # a caller's handlers
        handlers = set_handlers(dict.fromkeys(SIGNALS, hold))
        try:
            yield
        finally:
            set_handlers(handlers)
            if came:
                signal.raise_signal(came[0])
        return
    previous = act_on_signals(hold)
    try:
        yield
    finally:
        try:
            if came:  # met here, as it is held: a signal now adds nothing once it raised
                previous(came[0], None)
        finally:
            put_back_action(hold, previous)


def say_interrupted(line: str, interruption: KeyboardInterrupt) -> int:
    """Write ``line``, the command's one line saying that ``interruption`` stopped it, and
    return the status it exits with. A further signal then ends the process at once with
    that status and writes nothing; one that comes as the line is written waits for it
    (:func:`signals_held`), and is not a second line. (Only in the process's own command
    line, whose handlers these are: a caller's process is left as it was.)"""
    status = interrupted_status(interruption)
    own = acting_on_signals()
    with signals_held():
        note(line)
        if own:
            interruption_said(status)
    return status


class _Finished:
    """What a signal does once the command's work is done and written (:func:`finished`): the
    first is held, so that the command's last lines are written whole; a further one ends
    the process at once with ``status`` (a line stuck on a stderr nobody reads). Either way
    the command exits as it finished (:func:`ended`)."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.came = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.came:
            os._exit(self.status)
        self.came = True


def finished(status: int) -> None:
    """The command's work is done, and it exits with ``status``: stdout is flushed (a signal
    before its last byte is written stops the command, as it found the output unwritten),
    then a signal no longer makes it "interrupted" (:class:`_Finished`). A command whose
    result stands before its last lines (``batch``: the file in place, then its summary)
    calls this as it stands; ``main`` calls it for every command once it has returned.
    (Only in the process's own command line: a caller's handlers are left as they were.)

    >>> finished(0)  # a caller's process: stdout flushed, nothing else
    """
    flush_output()
    if acting_on_signals() and not isinstance(current_action(), _Finished):
        act_on_signals(_Finished(status))


def _exit_with(status: int, signum: int, frame: FrameType | None) -> None:
    """End the process at once with ``status``, whatever the signal."""
    os._exit(status)


def ended(status: int) -> None:
    """``main`` returns ``status``, the command's or its interruption's: from now on (the
    interpreter joining threads, running exit functions) a signal ends the process at once
    with that status and writes nothing, and one that the finished command held ends it now
    (:func:`finished`). The interpreter's teardown then ignores them
    (:func:`~sessionref.cli.early.ignore_signals_at_teardown`)."""
    held = act_on_signals(functools.partial(_exit_with, status))
    if isinstance(held, _Finished) and held.came:
        os._exit(status)


STANDARD_STREAMS: Final = (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w"))


def open_closed_streams() -> None:
    """Open each standard stream that Python found closed at start-up (``sys.stdout`` is
    ``None`` after ``>&-``) on ``/dev/null``, in its own descriptor (0, 1 or 2) when that is
    still free, so that a file opened later cannot take the number and receive the output.

    >>> open_closed_streams()  # all three are open here: nothing changes
    >>> sys.stdout is not None
    True
    """
    for name, number, mode in STANDARD_STREAMS:
        if getattr(sys, name) is not None:
            continue
        descriptor = os.open(os.devnull, os.O_RDWR)
        if descriptor != number and not _is_open(number):
            os.dup2(descriptor, number)
            os.close(descriptor)
            descriptor = number
        stream = open(  # noqa: SIM115 - the process's stream, open for its life
            descriptor, mode, encoding="utf-8", errors="backslashreplace", closefd=False
        )
        setattr(sys, name, stream)


class ForgivingWriter(io.RawIOBase):
    """Writes to a descriptor until one fails (its reader went away, a full disk): the
    descriptor then points at ``/dev/null``, and the write counts as done.

    >>> read, write = os.pipe()
    >>> os.close(read)  # every write to the pipe fails now (EPIPE)
    >>> ForgivingWriter(write).write(b"lost")
    4
    >>> os.close(write)
    """

    def __init__(self, descriptor: int) -> None:
        super().__init__()
        self.descriptor = descriptor

    def writable(self) -> bool:
        """Always: writes never fail."""
        return True

    def fileno(self) -> int:
        """The descriptor written."""
        return self.descriptor

    def isatty(self) -> bool:
        """Whether the descriptor is a terminal (a progress bar's question)."""
        return os.isatty(self.descriptor)

    def write(self, data: Any) -> int:
        """Write what the descriptor takes of ``data``; all of it once writes fail."""
        try:
            return os.write(self.descriptor, data)
        except OSError:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.descriptor)
            os.close(null)
            return len(data)


def forgiving_stderr() -> None:
    """Make ``sys.stderr`` a :class:`ForgivingWriter` of descriptor 2, in the same encoding
    (for the process's own command line: a caller's stderr is left as it is)."""
    stream = sys.stderr  # kept by sys.__stderr__ (or not closing 2: open_closed_streams)
    stream.flush()
    writer = io.BufferedWriter(ForgivingWriter(2))
    sys.stderr = io.TextIOWrapper(
        writer, encoding=stream.encoding, errors=stream.errors, line_buffering=True
    )


def _is_open(descriptor: int) -> bool:
    """Whether a file descriptor is open.

    >>> _is_open(0), _is_open(987654)
    (True, False)
    """
    try:
        os.fstat(descriptor)
    except OSError:
        return False
    return True


def _written(data: bytes) -> None:
    """Write ``data`` to stdout; on a terminal as it may be sent it
    (:func:`~sessionref.controls.for_a_terminal`): whatever a session held, a terminal is never
    sent an escape sequence or a bidi control."""
    try:
        if sys.stdout.isatty():
            data = for_a_terminal(data)
        sys.stdout.buffer.write(data)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc.strerror or str(exc)) from None


def note(text: str) -> None:
    """One line on stderr, in UTF-8 whatever the locale: a hint, a summary, an error line.
    Its control characters (a file name's, a log's) are written as escapes
    (:func:`~sessionref.controls.one_line`): a terminal would obey them, and a line break
    would make it two lines."""
    note_line(one_line(text))


def note_line(line: str) -> None:
    """One line on stderr, in UTF-8 whatever the locale, written as it is: a line already
    made one (:func:`~sessionref.cli.common.error_line`; escaping it again would show each
    of its escapes as the text of one)."""
    sys.stderr.flush()  # what the text layer holds goes first
    sys.stderr.buffer.write(f"{line}\n".encode("utf-8", "replace"))
    sys.stderr.flush()


def write_text(text: str) -> None:
    """Write UTF-8 to stdout whatever the locale. A lone surrogate, which callers escape
    first (:func:`~sessionref.controls.one_line`), would be written as ``?``, never fail."""
    _written(text.encode("utf-8", "replace"))


def write_bytes(data: bytes) -> None:
    """Write bytes to stdout as they are."""
    _written(data)


def flush_output() -> None:
    """Flush stdout, raising :class:`OutputError` (or :class:`BrokenPipeError`) if it fails."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc.strerror or str(exc)) from None


def abandon_output() -> None:
    """Point stdout at ``/dev/null``: what is still buffered goes nowhere, silently."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


def collect_no_more() -> None:
    """Leave the objects alive now to reference counting alone, as the process is about to
    end: the interpreter's teardown runs full collections of the cyclic garbage collector over
    every object the imports made (tens of thousands: 10-40 ms of each command's exit, as much
    as a warm ``candidates`` spends looking at its store), and frozen objects are skipped.
    Reference counting still frees each one, and the standard streams are still flushed.

    >>> collect_no_more(); gc.get_freeze_count() > 0
    True
    >>> gc.unfreeze()
    """
    gc.freeze()
