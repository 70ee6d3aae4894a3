"""The files of a running ``sessionref batch`` beside its ``--out``, and the locks that keep
two batches from writing the same output at once.

A batch to a file writes through a hidden temporary file beside it (``.NAME.<hex>.tmp``),
locked while the batch runs; one that no batch holds was left by a killed batch: the next
batch to the same file removes it, or with ``--resume`` and no file yet, takes it over as
the file. The file itself, when there is one, is locked too, for the whole run: a
``--resume`` appends to it directly, and two batches appending to one file would each add
the sessions the other adds. A second batch to the same file, while one runs, is refused
(:data:`BUSY`) before it reads or writes anything. A batch looks for leftovers and takes its
locks while it holds the lock of the folder (:func:`guarded`), so that two batches starting
at once cannot both find nothing held, nor one take the other's new temporary file, not yet
locked, for a leftover. A file written whole by another command (``export --out``, ``show
--html``) goes through a temporary file of the same name, locked too, and sweeps what killed
writers left before it writes (:func:`sweep_leftovers`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Final

from sessionref.cli.output_target import TEMPORARY, OutputTarget

BUSY: Final = "another batch is writing it; run again once that one is done"
"""Why a batch refuses an output another batch is writing."""


def lock(file: IO[bytes]) -> bool:
    """Take the lock of a batch's file, without waiting: whether it was free (a lock is
    released when the file is closed, or the process ends, even killed).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as first, open(first.name, "rb") as second:
    ...     lock(first), lock(second)
    (True, False)
    """
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def guarded(path: Path) -> Iterator[None]:
    """Hold the lock of the folder ``path`` is in, waiting for it, for the ``with`` block: the
    few steps in which a starting batch looks for leftovers and takes its files' locks. A
    folder the process cannot open for reading is not locked (nor can its leftovers be
    listed).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d, guarded(Path(d, "o.jsonl")):
    ...     folder = os.open(d, os.O_RDONLY)
    ...     try:
    ...         fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    ...     except BlockingIOError:
    ...         print("held")
    ...     finally:
    ...         os.close(folder)
    held
    """
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        yield
        return
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        yield
    finally:
        os.close(folder)


def locked_temporary(target: OutputTarget) -> tuple[Path, IO[bytes]]:
    """A new temporary file for ``target`` (:meth:`~OutputTarget.create`), open and locked
    while its writer runs: no one takes it for a leftover. Made while the folder is
    :func:`guarded`.

    >>> import tempfile
    >>> from sessionref.cli.output_target import locate
    >>> with tempfile.TemporaryDirectory() as d:
    ...     temporary, file = locked_temporary(locate(f"{d}/o.md", "--out"))
    ...     with file, temporary.open("rb") as other:
    ...         lock(other)
    False
    """
    temporary = target.temporary()
    file = target.create(temporary)
    lock(file)
    return temporary, file


def temporaries(path: Path) -> list[Path]:
    """The temporary files of batches writing ``path``, running or not, by name.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for name in (".o.jsonl.0123456789ab.tmp", ".o.jsonl.tmp", ".p.jsonl.0123456789ab.tmp"):
    ...         _ = Path(d, name).write_bytes(b"")
    ...     [p.name for p in temporaries(Path(d, "o.jsonl"))]
    ['.o.jsonl.0123456789ab.tmp']
    """
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    found = (TEMPORARY.fullmatch(name) for name in sorted(names))
    return [path.parent / m.group(0) for m in found if m is not None and m["name"] == path.name]


def _open_leftover(candidate: Path) -> IO[bytes] | None:
    """``candidate`` open for reading if it is a regular file, as a batch's temporary file
    is; ``None`` if gone (another batch took it) or else (a FIFO would make ``open()`` wait).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     os.mkfifo(Path(d, "fifo"))
    ...     _open_leftover(Path(d, "fifo")), _open_leftover(Path(d, "gone"))
    (None, None)
    """
    try:
        descriptor = os.open(candidate, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    if stat.S_ISREG(os.fstat(descriptor).st_mode):
        return os.fdopen(descriptor, "rb")
    os.close(descriptor)
    return None


def sweep_leftovers(target: OutputTarget) -> None:
    """Remove the temporary files killed writers left beside ``target``'s file, as a file
    written whole (``export --out``, ``show --html``) does before it writes: those no running
    writer holds locked, which stay.

    >>> import tempfile
    >>> from sessionref.cli.output_target import locate
    >>> with tempfile.TemporaryDirectory() as d:
    ...     left, running = (Path(d, f".o.md.{n}.tmp") for n in ("0123456789ab", "ba9876543210"))
    ...     _ = left.write_bytes(b"half"); _ = running.write_bytes(b"")
    ...     with running.open("rb") as held:
    ...         _ = lock(held)
    ...         sweep_leftovers(locate(f"{d}/o.md", "--out"))
    ...     os.listdir(d)
    ['.o.md.ba9876543210.tmp']
    """
    for candidate in temporaries(target.file):
        file = _open_leftover(candidate)
        if file is not None:
            with file:
                if lock(file):  # no writer holds it: a killed one's
                    candidate.unlink(missing_ok=True)


def clear_leftovers(target: OutputTarget, *, adopt: bool) -> Path | None:
    """Remove the temporary files killed batches left beside ``target``'s file (those no
    running batch holds locked). With ``adopt`` and no file yet, the largest becomes the file
    instead: its complete lines are results, as a resumed file's are. The file taken over, if
    any. A temporary file a running batch holds is a coded error (:data:`BUSY`), and then
    nothing is removed.

    >>> import tempfile
    >>> from sessionref.cli.output_target import locate
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, ".o.jsonl.0123456789ab.tmp").write_bytes(b"{}\\n")
    ...     taken = clear_leftovers(locate(f"{d}/o.jsonl", "--out"), adopt=True)
    ...     taken.name, os.listdir(d)
    ('.o.jsonl.0123456789ab.tmp', ['o.jsonl'])
    """
    path = target.file
    held: list[tuple[int, Path, IO[bytes]]] = []
    taken = None
    try:
        for candidate in temporaries(path):
            file = _open_leftover(candidate)
            if file is None:
                continue
            held.append((os.fstat(file.fileno()).st_size, candidate, file))
            if not lock(file):  # a running batch's
                raise target.failure(BUSY)
        if adopt and held and not path.exists():
            taken = max(held, key=lambda entry: entry[:2])[1]
            os.replace(taken, path)
        for _, candidate, _ in held:
            if candidate != taken:
                candidate.unlink(missing_ok=True)
    finally:
        for _, _, locked in held:
            locked.close()
    return taken


def hold(target: OutputTarget, *, append: bool) -> IO[bytes] | None:
    """``target``'s file, open and locked for this batch alone until it is closed: open for
    appending (created if need be) when ``append``, else for reading, or ``None`` when there
    is no file (or none this process may read: a file replaced whole needs no reading). A
    file another batch holds is a coded error (:data:`BUSY`). The file locked is the one the
    path names once it is locked: one a batch renamed its output over meanwhile is not.

    >>> import tempfile
    >>> from sessionref.cli.output_target import locate
    >>> from sessionref.errors import SessionReferenceError
    >>> with tempfile.TemporaryDirectory() as d:
    ...     target = locate(f"{d}/o.jsonl", "--out")
    ...     print(hold(target, append=False))
    ...     with hold(target, append=True):
    ...         try:
    ...             hold(target, append=False)
    ...         except SessionReferenceError as exc:
    ...             print(str(exc).replace(d, "D"))
    None
    --out D/o.jsonl: another batch is writing it; run again once that one is done
    """
    while True:
        try:
            file = target.file.open("ab" if append else "rb")
        except (FileNotFoundError, PermissionError):
            if append:
                raise
            return None
        if not lock(file):
            file.close()
            raise target.failure(BUSY)
        try:
            named = os.stat(target.file)
        except FileNotFoundError:
            named = None
        opened = os.fstat(file.fileno())
        if named is not None and (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino):
            return file
        file.close()  # replaced or removed while it was being locked: lock what is there now
