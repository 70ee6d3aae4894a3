"""What a file option (``--out`` of ``export`` and ``batch``, ``--html`` of ``show``) names,
and how its bytes get there.

- A regular file, or none yet, is replaced whole: the bytes go to a hidden temporary file
  beside it (``.NAME.<hex>.tmp``), which is renamed over it once complete. The new file has
  the old one's permission bits (and owner, where the process may give it away); a file
  that did not exist gets the mode ``open()`` would give it (0666 less the umask).
- A symbolic link is followed: the file it leads to is the one replaced, beside itself, so
  the link stays a link.
- Anything else that exists (a FIFO, a character device such as ``/dev/null``) is written
  into as it is, as the shell's ``>`` would: nothing can be renamed over it.
- A directory is refused.

Every failure is one ``SESSION_REFERENCE_INVALID_CONFIG`` error naming the option and the
path as the user gave it (``--out x.md: No such file or directory``), never the temporary
file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import uuid
from pathlib import Path
from typing import IO, Final

import msgspec

from sessionref.cli.common import config_error
from sessionref.errors import SessionReferenceError

TEMPORARY: Final = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{12}\.tmp", re.DOTALL)
"""The name of a temporary file: ``.`` + the target's name + 12 hex digits."""


class OutputTarget(msgspec.Struct, frozen=True):
    """The file an option names: ``given`` as typed after ``option``, ``file`` the path it
    leads to (symbolic links followed), and the ``mode`` of what is there, if anything."""

    option: str
    given: str
    file: Path
    mode: int | None = None

    @property
    def streamed(self) -> bool:
        """Whether the bytes are written straight into it: it exists and is no regular file.

        >>> locate("/dev/null", "--out").streamed, locate("new.md", "--out").streamed
        (True, False)
        """
        return self.mode is not None and not stat.S_ISREG(self.mode)

    def failure(self, cause: OSError | str) -> SessionReferenceError:
        """The error of writing it, naming the option and the path as given.

        >>> locate("x.md", "--html").failure(OSError(errno.ENOSPC, "No space left on device"))
        SessionReferenceError('--html x.md: No space left on device')
        """
        return write_failure(self.option, self.given, cause)

    def temporary(self) -> Path:
        """A new name for a temporary file beside the file (:data:`TEMPORARY`).

        >>> name = locate("/no/such/dir/o.jsonl", "--out").temporary()
        >>> name.parent, TEMPORARY.fullmatch(name.name)["name"]
        (PosixPath('/no/such/dir'), 'o.jsonl')
        """
        return self.file.with_name(f".{self.file.name}.{uuid.uuid4().hex[:12]}.tmp")

    def create(self, temporary: Path) -> IO[bytes]:
        """Create ``temporary`` (:meth:`temporary`), open for writing, with the permission
        bits that the file it is to replace has now and, as far as the process may, its
        owner and group; with ``open()``'s mode when there is no file. Removed again if
        that fails.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     private = Path(folder, "private.md")
        ...     private.touch(mode=0o600)
        ...     target = locate(str(private), "--out")
        ...     with target.create(target.temporary()) as file:
        ...         oct(os.stat(file.fileno()).st_mode & 0o777)
        '0o600'
        """
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with contextlib.suppress(FileNotFoundError):
                _take_over(descriptor, os.stat(self.file))
            return os.fdopen(descriptor, "wb")
        except BaseException:
            os.close(descriptor)
            temporary.unlink(missing_ok=True)
            raise

    def open_stream(self) -> IO[bytes]:
        """Open a :attr:`streamed` target for writing as it is, by the path given (which the
        kernel follows, even through ``/dev/stdout``); a FIFO waits for its reader.

        >>> with locate("/dev/null", "--out").open_stream() as null:
        ...     null.write(b"gone")
        4
        """
        return open(self.given, "wb")


def locate(given: str, option: str) -> OutputTarget:
    """What ``given`` (the value of ``option``) names; a directory, or a path that cannot be
    looked at, is a coded error naming it.

    >>> locate("/tmp", "--out")
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: --out /tmp: Is a directory
    >>> locate("/dev/null", "--out").file
    PosixPath('/dev/null')
    """
    target = OutputTarget(option, given, Path(os.path.realpath(given)))
    try:
        status = os.stat(given)
    except FileNotFoundError:  # a new file, or no such directory: said when it is created
        return target
    except OSError as exc:  # a loop of links, a path through a file, no permission
        raise target.failure(exc) from None
    if stat.S_ISDIR(status.st_mode):
        raise target.failure(os.strerror(errno.EISDIR))
    return msgspec.structs.replace(target, mode=status.st_mode)


def write_failure(option: str, given: str, cause: OSError | str) -> SessionReferenceError:
    """The one error of an output file: ``OPTION PATH: reason``, the reason ``cause`` or the
    system's words for it.

    >>> write_failure("--out", "o.jsonl", PermissionError(errno.EACCES, "Permission denied"))
    SessionReferenceError('--out o.jsonl: Permission denied')
    >>> write_failure("--out", "o.jsonl", "not yours")
    SessionReferenceError('--out o.jsonl: not yours')
    """
    reason = cause if isinstance(cause, str) else cause.strerror or str(cause)
    return config_error(f"{option} {given}: {reason}")


def _take_over(descriptor: int, old: os.stat_result) -> None:
    """Give the file open as ``descriptor`` the owner, group and permission bits of ``old``,
    the file it is to replace; the owner only as far as the process may (only root may give
    a file away: another user's file becomes the process's, as any editor's save makes it).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as old, tempfile.TemporaryFile() as new:
    ...     os.chmod(old.name, 0o640)
    ...     _take_over(new.fileno(), os.stat(old.name))
    ...     oct(os.stat(new.fileno()).st_mode & 0o7777)
    '0o640'
    """
    new = os.fstat(descriptor)
    if (old.st_uid, old.st_gid) != (new.st_uid, new.st_gid):
        with contextlib.suppress(PermissionError):
            os.fchown(descriptor, old.st_uid, old.st_gid)
    os.fchmod(descriptor, stat.S_IMODE(old.st_mode))  # after the owner: a chown clears set-id
