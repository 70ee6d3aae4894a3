"""The ``sessionref`` command line (argparse only)."""

from __future__ import annotations

from sessionref.cli.early import exit_on_signals, ignore_signals_at_teardown

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: nothing but the handlers comes first
    from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``sessionref`` command (:func:`sessionref.cli.app.main`).

    For the process's own command line (``argv`` None), a signal exits at once from here on,
    before the parser loads: only the interpreter's start-up, the console script's first
    lines and ``import sessionref.cli`` (:mod:`sessionref.cli.early`: ``os`` and ``signal``)
    come before; and the interpreter's teardown, after the last exit function, ignores them
    (``ignore_signals_at_teardown``). A standard stream closed at start-up is opened on
    ``/dev/null`` first (:func:`~sessionref.cli.process.open_closed_streams`), and a stderr
    that fails later goes quiet instead of failing the command (``forgiving_stderr``).
    """
    if argv is None:
        exit_on_signals()
        ignore_signals_at_teardown()
    from sessionref.cli.process import forgiving_stderr, open_closed_streams

    open_closed_streams()
    if argv is None:
        forgiving_stderr()
    # Imported now, not above: the signal handling comes first.
    from sessionref.cli.app import main as app_main

    return app_main(argv)
