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
- A file the process already has open as its stdin, stdout or stderr (``/dev/stdout``, or
  ``log.md`` of ``>> log.md``), or whatever a path through ``/dev/fd``, ``/dev/std*`` or
  ``/proc/*/fd`` names, is written into, never replaced: through that descriptor when it is
  one of the process's own (so ``>>`` appends after what the file held, and the text a
  ``{ ...; } > f`` group wrote before and after stays), else opened as ``>`` opens it.
- A directory is refused, and so is a path with a trailing ``/`` that names no directory,
  in the words ``open()`` would use.

Every failure is one ``SESSION_REFERENCE_INVALID_CONFIG`` error naming the option and the
path as the user gave it (``--out x.md: No such file or directory``), never the temporary
file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import uuid
from pathlib import Path
from typing import IO, Final

import msgspec

from sessionref.cli.common import config_error
from sessionref.cli.process import STANDARD_STREAMS, signals_held
from sessionref.errors import SessionReferenceError

DESCRIPTOR_PATH: Final = re.compile(r"/(?:dev/(?:fd/|std(?:in|out|err)$)|proc/[^/]+/fd/)")
"""A path through which the kernel reaches an open descriptor rather than a name."""
STANDARD: Final = {f"/dev/{name}": descriptor for name, descriptor, _ in STANDARD_STREAMS}
"""The descriptors the ``/dev/std*`` names lead to."""
TEMPORARY: Final = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{12}\.tmp", re.DOTALL)
"""The name of a temporary file: ``.`` + the target's name + 12 hex digits."""


class OutputTarget(msgspec.Struct, frozen=True):
    """The file an option names: ``given`` as typed after ``option``, ``file`` the path it
    leads to (symbolic links followed), the ``mode`` of what is there, if anything, whether
    the path leads ``through`` a descriptor (``/dev/stdout``, ``/proc/self/fd/3``), and the
    ``descriptor`` of this process that has it open for writing, if one does."""

    option: str
    given: str
    file: Path
    mode: int | None = None
    through: bool = False
    descriptor: int | None = None

    @property
    def streamed(self) -> bool:
        """Whether the bytes are written straight into it: it exists and is no regular file,
        or it is reached through a descriptor or open as one of this process's.

        >>> locate("/dev/null", "--out").streamed, locate("new.md", "--out").streamed
        (True, False)
        >>> locate("/dev/stderr", "--out").streamed
        True
        """
        if self.through or self.descriptor is not None:
            return True
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
        """Create ``temporary`` (:meth:`temporary`), open for writing: with ``open()``'s mode
        when there is no file yet; else private (0600) until :meth:`settle` gives it the
        file's mode, and with the file's owner and group as far as the process may. Removed
        again if that fails.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     private = Path(folder, "private.md")
        ...     private.touch(mode=0o600)
        ...     target = locate(str(private), "--out")
        ...     with target.create(target.temporary()) as file:
        ...         oct(os.stat(file.fileno()).st_mode & 0o777)
        '0o600'
        """
        try:
            old: os.stat_result | None = os.stat(self.file)
        except FileNotFoundError:
            old = None
        # while it is written, no one but the process may read a file that replaces another:
        # that one may be private; the mode it had comes when it is settled
        private = 0o600 if old is not None else 0o666
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, private)
        try:
            if old is not None:
                _take_owner(descriptor, old)
            return os.fdopen(descriptor, "wb")
        except BaseException:
            os.close(descriptor)
            temporary.unlink(missing_ok=True)
            raise

    def settle(self, file: IO[bytes], temporary: Path, *, keep: bool) -> None:
        """Close ``file``, open on ``temporary`` (:meth:`create`); when ``keep``, first flush
        and sync it, give it the permission bits of the file it replaces (now that it is
        written: a write by a process that is not root clears set-id bits), then rename it
        over the file. ``temporary`` is gone afterwards whatever fails, so the file is either
        replaced whole or left as it was; a SIGINT or SIGTERM that comes while a kept file is
        synced and renamed takes effect once it is in place (:func:`signals_held`).

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     target = locate(os.path.join(folder, "o.md"), "--out")
        ...     for text, keep in ((b"kept", True), (b"dropped", False)):
        ...         temporary = target.temporary()
        ...         file = target.create(temporary)
        ...         _ = file.write(text)
        ...         target.settle(file, temporary, keep=keep)
        ...     os.listdir(folder), target.file.read_bytes()
        (['o.md'], b'kept')
        """
        # a copy of the descriptor keeps a lock the file holds until its name is gone, so
        # that no one takes it for a killed writer's leftover between closing and renaming
        lasting = os.dup(file.fileno())
        try:
            # a signal waits for the file to be in place: once written whole, it is kept
            with signals_held() if keep else contextlib.nullcontext():
                try:
                    if keep:
                        file.flush()
                        _give_mode(file.fileno(), self.file)
                        os.fsync(file.fileno())
                finally:
                    try:
                        file.close()
                    except OSError:
                        if keep:  # else nothing is kept: its closing has nothing to say
                            raise
                if keep:
                    os.replace(temporary, self.file)
        finally:
            try:
                temporary.unlink(missing_ok=True)
            finally:
                os.close(lasting)

    def open_stream(self) -> IO[bytes]:
        """Open a :attr:`streamed` target for writing as it is: a copy of the process's
        :attr:`descriptor` that has it open (its offset and ``O_APPEND`` shared, so nothing
        the file held is lost), else the path given (which the kernel follows); a FIFO waits
        for its reader.

        >>> with locate("/dev/null", "--out").open_stream() as null:
        ...     null.write(b"gone")
        4
        """
        if self.descriptor is not None:
            return os.fdopen(os.dup(self.descriptor), "wb")
        return open(self.given, "wb")


def locate(given: str, option: str) -> OutputTarget:
    """What ``given`` (the value of ``option``) names; a directory, or a path that cannot be
    looked at, is a coded error naming it.

    >>> locate("/tmp", "--out")
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: --out /tmp: Is a directory
    >>> locate("new/", "--out")
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: --out new/: Is a directory
    >>> locate("/dev/null", "--out").file
    PosixPath('/dev/null')
    """
    target = OutputTarget(option, given, Path(os.path.realpath(given)))
    folder = os.path.dirname(given.rstrip(os.sep)) or "."
    if given.endswith(os.sep) and not os.path.isdir(given) and os.path.isdir(folder):
        raise target.failure(os.strerror(errno.EISDIR))  # what open(given, "wb") says
    try:
        status = os.stat(given)
    except FileNotFoundError:  # a new file, or no such directory: said when it is created
        return target
    except OSError as exc:  # a loop of links, a path through a file, no permission
        raise target.failure(exc) from None
    if stat.S_ISDIR(status.st_mode):
        raise target.failure(os.strerror(errno.EISDIR))
    return msgspec.structs.replace(
        target,
        mode=status.st_mode,
        through=_through_descriptor(given),
        descriptor=_open_as(status, given),
    )


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


def _through_descriptor(given: str) -> bool:
    """Whether ``given``, or a symbolic link it leads through at its end, is a path through
    which the kernel reaches an open descriptor (:data:`DESCRIPTOR_PATH`).

    >>> _through_descriptor("/dev/stdout"), _through_descriptor("/proc/self/fd/7")
    (True, True)
    >>> _through_descriptor("/dev/null"), _through_descriptor("notes/dev/fd/1")
    (False, False)
    """
    path = os.path.abspath(given)
    for _ in range(40):  # the kernel's own bound on links followed
        if DESCRIPTOR_PATH.match(path):
            return True
        try:
            link = os.readlink(path)
        except OSError:  # not a link: the end of the chain
            return False
        path = os.path.normpath(os.path.join(os.path.dirname(path), link))
    return False


def _open_as(status: os.stat_result, given: str) -> int | None:
    """The descriptor of this process, open for writing, that has the file ``given`` names
    (whose status is ``status``) open: the one ``/dev/std*`` or ``/dev/fd/N`` names, or
    stdin, stdout or stderr, whichever is the same file; ``None`` if none is.

    >>> import tempfile
    >>> with tempfile.TemporaryFile() as file:
    ...     path = f"/dev/fd/{file.fileno()}"
    ...     _open_as(os.stat(path), path) == file.fileno(), _open_as(os.stat(path), "x")
    (True, None)
    """
    named = STANDARD.get(given)
    found = re.fullmatch(r"/(?:dev|proc/self)/fd/([0-9]+)", given)
    if found is not None:
        named = int(found[1])
    for descriptor in ([] if named is None else [named]) + [0, 1, 2]:
        try:
            opened = os.fstat(descriptor)
            writable = fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY
        except OSError:  # not open
            continue
        if writable and (opened.st_dev, opened.st_ino) == (status.st_dev, status.st_ino):
            return descriptor
    return None


def _take_owner(descriptor: int, old: os.stat_result) -> None:
    """Give the file open as ``descriptor`` the owner and group of ``old``, the file it is to
    replace, as far as the process may: only root may give a file away, so another user's
    file becomes the process's, as any editor's save makes it, but keeps its group if the
    process is in it.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as old, tempfile.TemporaryFile() as new:
    ...     _take_owner(new.fileno(), os.stat(old.name))
    ...     os.stat(new.fileno()).st_gid == os.stat(old.name).st_gid
    True
    """
    new = os.fstat(descriptor)
    if (old.st_uid, old.st_gid) == (new.st_uid, new.st_gid):
        return
    try:
        os.fchown(descriptor, old.st_uid, old.st_gid)
    except PermissionError:  # not root: the group alone, if the process is in it
        with contextlib.suppress(PermissionError):
            os.fchown(descriptor, -1, old.st_gid)


def process_umask() -> int:
    """The process's umask: as Linux reports it (``/proc/self/status``), which leaves it as
    it is; else read by setting it and putting it back at once (which a thread creating a
    file meanwhile would see).

    >>> previous = os.umask(0o027)
    >>> oct(process_umask()), oct(os.umask(previous))
    ('0o27', '0o27')
    """
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o077)
    os.umask(umask)
    return umask


def _give_mode(descriptor: int, replaced: Path) -> None:
    """Give the file open as ``descriptor`` the permission bits of ``replaced``, the file it
    is to replace; a set-user-id or set-group-id bit goes with the owner or group it was for,
    and is dropped when the file did not keep that (:func:`_take_owner`). When ``replaced``
    is gone (removed while the new one was written), the bits of a new file: 0666 less the
    umask, as ``open()`` gives them.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as old, tempfile.TemporaryFile() as new:
    ...     os.chmod(old.name, 0o640)
    ...     _give_mode(new.fileno(), Path(old.name))
    ...     oct(os.stat(new.fileno()).st_mode & 0o7777)
    '0o640'
    """
    try:
        old = os.stat(replaced)
    except FileNotFoundError:
        os.fchmod(descriptor, 0o666 & ~process_umask())
        return
    new = os.fstat(descriptor)
    mode = stat.S_IMODE(old.st_mode)
    if new.st_uid != old.st_uid:
        mode &= ~(stat.S_ISUID | stat.S_ISGID)
    if new.st_gid != old.st_gid:
        mode &= ~stat.S_ISGID
    os.fchmod(descriptor, mode)
