"""What ``export --out``, ``show --html`` and ``batch --out`` do to the path they are given:
a link is followed and stays a link, a FIFO or a device is written into and never replaced,
a replaced file keeps its permission bits and owner, a new one gets the mode ``open()``
gives it, and a path that cannot be written is one coded line naming the option and the
path as given."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import json
import os
import queue
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from subprocess import PIPE
from typing import Any

import pytest

from sessionref.cli import main
from sessionref.cli.batch_output import OutputFile
from sessionref.cli.output_file import write_pieces
from sessionref.cli.output_target import OutputTarget, locate
from sessionref.errors import INVALID_CONFIG, SessionReferenceError
from sessionref.log.builder import LogBuilder
from sessionref.testing import write_session_store
from tests.test_cli_robustness import (
    PATIENCE,
    SAMPLE,
    SAMPLE_IDS,
    sessionref,
    store_with_a_corrupt_log,
)
from tests.test_mcp_roots import CLAUDE, claude_session

AUTH = SAMPLE_IDS[0]
COMMANDS = {
    "export --out": ["export", "--root", SAMPLE, AUTH, "--out"],
    "show --html": ["show", "--root", SAMPLE, AUTH, "--html"],
    "batch --out": ["batch", "--root", SAMPLE, "--out"],
}
"""Each command that writes a file, up to the path it is given."""


def looks_whole(command: str, data: bytes) -> bool:
    """Whether ``data`` is all of what ``command`` writes for the sample store."""
    if command == "export --out":
        return data.startswith(b"# Refactor auth middleware to JWT\n") and data.endswith(b"\n")
    if command == "show --html":
        return data.startswith(b"<!DOCTYPE html>") and data.endswith(b"</html>\n")
    return [json.loads(line)["sessionId"] for line in data.splitlines()] == SAMPLE_IDS


def write(
    command: str, path: Path | str, args: tuple[str, ...] = (), **options: Any
) -> subprocess.CompletedProcess[bytes]:
    """``command`` run to write ``path``, with more ``args``; it must succeed."""
    done = sessionref(*COMMANDS[command], str(path), *args, **options)
    assert done.returncode == 0, done.stderr
    return done


@functools.cache  # the sample store never changes: one run per command
def stdout_bytes(command: str) -> bytes:
    """What ``command`` writes with ``-`` (stdout) in place of a file."""
    return write(command, "-").stdout


def listing(*folders: Path) -> list[list[str]]:
    """The names in each folder, hidden ones included."""
    return [sorted(os.listdir(folder)) for folder in folders]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_link_is_followed_and_stays_a_link(tmp_path: Path, command: str) -> None:
    """The file the link names is replaced, beside itself (nothing is left in either folder),
    and keeps its mode; the link is as it was."""
    links, files = tmp_path / "links", tmp_path / "files"
    links.mkdir()
    files.mkdir()
    real = files / "real"
    real.write_bytes(b"keep\n")
    real.chmod(0o640)
    link = links / "link"
    link.symlink_to("../files/real")
    write(command, link)
    assert link.is_symlink() and os.readlink(link) == "../files/real"
    assert real.read_bytes() == stdout_bytes(command) and looks_whole(command, real.read_bytes())
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert listing(links, files) == [["link"], ["real"]]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_dangling_link_makes_the_file_it_names(tmp_path: Path, command: str) -> None:
    link = tmp_path / "link"
    link.symlink_to("new")
    write(command, link)
    assert link.is_symlink() and looks_whole(command, (tmp_path / "new").read_bytes())
    assert listing(tmp_path) == [["link", "new"]]


@pytest.mark.parametrize("held_by", ["the file", "a killed batch's leftover"])
def test_resume_through_a_link_goes_on_in_the_file_it_names(tmp_path: Path, held_by: str) -> None:
    """The first two lines are in the file the link names, or (no file yet) in what a killed
    batch left beside that file; the resumed batch adds the other two there."""
    links, files = tmp_path / "links", tmp_path / "files"
    links.mkdir()
    files.mkdir()
    link = links / "link"
    link.symlink_to("../files/real.jsonl")
    first_two = b"".join(stdout_bytes("batch --out").splitlines(keepends=True)[:2])
    leftover = ".real.jsonl.0123456789ab.tmp"
    (files / ("real.jsonl" if held_by == "the file" else leftover)).write_bytes(first_two)
    done = write("batch --out", link, ("--resume",))
    assert looks_whole("batch --out", (files / "real.jsonl").read_bytes())
    assert link.is_symlink() and listing(links, files) == [["link"], ["real.jsonl"]]
    note = f"note: resuming from the lines a killed batch left ({leftover})\n"
    summary = f"4 sessions: 2 already done, 2 written, 0 failed → {link}\n"
    assert done.stderr.decode() == (summary if held_by == "the file" else note + summary)


def read_through_fifo(fifo: Path, run: Callable[[], Any]) -> tuple[Any, bytes]:
    """What ``run()`` returns, and what a reader of ``fifo`` read meanwhile, to the end."""
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = run()
    with contextlib.suppress(OSError):  # if nothing ever opened the FIFO, let the reader go
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    reader.join(PATIENCE)
    assert not reader.is_alive()
    return result, read[0]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_fifo_is_written_into_as_it_is(tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done, read = read_through_fifo(fifo, lambda: write(command, fifo))
    assert read == stdout_bytes(command) and looks_whole(command, read)
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and listing(tmp_path) == [["fifo"]]
    if command == "batch --out":
        assert done.stderr == f"4 sessions: 4 written, 0 failed → {fifo}\n".encode()


def test_resume_refuses_a_fifo_without_opening_it(tmp_path: Path) -> None:
    """Nothing can be read back from a FIFO; the batch says so at once, instead of waiting
    for a reader."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = sessionref(*COMMANDS["batch --out"], str(fifo), "--resume")
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == (
        f"{INVALID_CONFIG}: --out {fifo}: not a regular file; "
        "--resume reads back what a file holds\n"
    )
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and listing(tmp_path) == [["fifo"]]


def run_into(
    command: str, given: str, stdout: int, **options: Any
) -> subprocess.CompletedProcess[bytes]:
    """``command`` run to write ``given`` with ``stdout`` as its standard output."""
    done = sessionref(*COMMANDS[command], given, stdout=stdout, **options)
    assert done.returncode == 0, done.stderr
    return done


OPEN_FILE_PATHS = ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "a link to /dev/stdout"]
"""Ways to name the file the command's stdout is (the file itself is one more)."""


@pytest.mark.parametrize("given", [*OPEN_FILE_PATHS, "the file itself", "/dev/fd/N"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_file_open_as_stdout_is_appended_to_never_replaced(
    tmp_path: Path, command: str, given: str
) -> None:
    """``--out /dev/stdout >> log.md`` (``/dev/fd/N`` is a descriptor passed with
    ``N>> log.md``): what the file held stays, the page follows it, the file is the same."""
    log = tmp_path / "log.md"
    log.write_bytes(b"EARLIER\n")
    before = log.stat().st_ino
    (tmp_path / "link").symlink_to("/dev/stdout")
    paths = {"a link to /dev/stdout": str(tmp_path / "link"), "the file itself": str(log)}
    with log.open("ab") as appending:
        if given == "/dev/fd/N":
            fd = appending.fileno()
            run_into(command, f"/dev/fd/{fd}", subprocess.DEVNULL, pass_fds=(fd,))
        else:
            run_into(command, paths.get(given, given), appending.fileno())
    assert log.read_bytes() == b"EARLIER\n" + stdout_bytes(command)
    assert log.stat().st_ino == before and listing(tmp_path) == [["link", "log.md"]]


@pytest.mark.parametrize("given", OPEN_FILE_PATHS)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_group_writing_one_file_keeps_what_came_before_and_after(
    tmp_path: Path, command: str, given: str
) -> None:
    """``{ echo head; sessionref ... --out /dev/stdout; echo foot; } > f``: the page goes
    where the shared offset stands, between the two."""
    shared = tmp_path / "f"
    (tmp_path / "link").symlink_to("/dev/stdout")
    paths = {"a link to /dev/stdout": str(tmp_path / "link")}
    fd = os.open(shared, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, b"head\n")
        run_into(command, paths.get(given, given), fd)
        os.write(fd, b"foot\n")
    finally:
        os.close(fd)
    assert shared.read_bytes() == b"head\n" + stdout_bytes(command) + b"foot\n"


def test_out_with_a_trailing_slash_is_never_a_file(tmp_path: Path) -> None:
    """``--out new/`` makes no file ``new``: it fails as ``open()`` of that path would."""
    (tmp_path / "file").write_bytes(b"a file\n")
    for given in ("new/", "file/", "missing/new/"):
        with pytest.raises(OSError) as raised:  # Path() would drop the slash
            open(os.path.join(tmp_path, given), "wb").close()
        reason = raised.value.strerror
        for command in COMMANDS:
            done = sessionref(*COMMANDS[command], given, cwd=tmp_path)
            option = COMMANDS[command][-1]
            assert (done.returncode, done.stdout) == (1, b""), done.stderr
            assert done.stderr.decode() == f"{INVALID_CONFIG}: {option} {given}: {reason}\n"
    assert listing(tmp_path) == [["file"]]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_temporary_file_of_a_private_file_is_never_wider_than_0600(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under umask 022, a temporary file opened with 0666 would be readable by all until
    its mode is set: every mode it has from its creation is looked at."""
    out = tmp_path / "private"
    out.write_bytes(b"secret\n")
    out.chmod(0o600)
    seen: list[int] = []
    real_open, real_fchown = os.open, os.fchown

    def watched_open(path: Any, flags: int, *args: Any, **options: Any) -> int:
        descriptor = real_open(path, flags, *args, **options)
        if os.path.basename(path).startswith(".private."):
            seen.append(stat.S_IMODE(os.fstat(descriptor).st_mode))
        return descriptor

    def watched_fchown(descriptor: int, uid: int, gid: int) -> None:
        seen.append(stat.S_IMODE(os.fstat(descriptor).st_mode))
        real_fchown(descriptor, uid, gid)

    monkeypatch.setattr(os, "open", watched_open)
    monkeypatch.setattr(os, "fchown", watched_fchown)
    previous = os.umask(0o022)
    try:
        assert main([*COMMANDS[command], str(out)]) == 0
    finally:
        os.umask(previous)
    assert seen and max(seen) == 0o600 and all(mode & ~0o600 == 0 for mode in seen)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and looks_whole(command, out.read_bytes())


def sparing_dev_null(real: Callable[..., Any]) -> Callable[..., Any]:
    """``real`` (``os.replace``, ``os.unlink``...), refused for ``/dev/null``."""

    def guarded(*args: Any, **options: Any) -> Any:
        for arg in args:
            if isinstance(arg, (str, os.PathLike)):
                assert os.path.realpath(arg) != "/dev/null", f"{real.__name__}{args}"
        return real(*args, **options)

    return guarded


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_device_is_written_into_and_never_replaced(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``/dev/null`` itself, in this process with every way to replace it refused (a test
    run as root must not be able to break the machine's /dev/null)."""
    for name in ("replace", "rename", "unlink", "remove", "chmod", "chown"):
        monkeypatch.setattr(os, name, sparing_dev_null(getattr(os, name)))
    before = os.stat("/dev/null")
    assert main([*COMMANDS[command], "/dev/null"]) == 0
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev, after.st_mode) == (
        before.st_ino,
        before.st_rdev,
        before.st_mode,
    )
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_full_device_is_one_coded_line(tmp_path: Path, command: str) -> None:
    """``/dev/full`` reached through a link (which the command must not replace either)."""
    link = tmp_path / "full"
    link.symlink_to("/dev/full")
    done = sessionref(*COMMANDS[command], str(link))
    option = COMMANDS[command][-1]
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == (
        f"{INVALID_CONFIG}: {option} {link}: {os.strerror(errno.ENOSPC)}\n"
    )
    assert link.is_symlink() and listing(tmp_path) == [["full"]]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_replaced_file_keeps_its_permission_bits(tmp_path: Path, command: str) -> None:
    out = tmp_path / "private"
    out.write_bytes(b"old\n")
    out.chmod(0o600)
    write(command, out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and looks_whole(command, out.read_bytes())


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_file_removed_while_it_is_rewritten_comes_back_with_a_new_files_mode(
    tmp_path: Path, umask: int, mode: int
) -> None:
    """The new file is private while it is written; its mode is taken from the old file
    when it is done, and from the umask (as ``open()`` gives it) when that is gone by then."""
    out = tmp_path / "page.md"
    out.write_bytes(b"old\n")
    out.chmod(0o640)

    def pieces() -> Any:
        yield "half"
        out.unlink()
        yield " and the rest\n"

    previous = os.umask(umask)
    try:
        write_pieces(pieces(), str(out), "--out")
        assert os.umask(umask) == umask  # read, not changed
    finally:
        os.umask(previous)
    assert (stat.S_IMODE(out.stat().st_mode), out.read_bytes()) == (mode, b"half and the rest\n")
    assert listing(tmp_path) == [["page.md"]]


class FailingClose:
    """A file whose closing fails, as a last flush on a full disk does."""

    def __init__(self, file: Any) -> None:
        self.file = file

    def __getattr__(self, name: str) -> Any:
        return getattr(self.file, name)

    def close(self) -> None:
        self.file.close()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_temporary_file_whose_closing_fails_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "page.md"
    out.write_bytes(b"old\n")
    create = OutputTarget.create
    monkeypatch.setattr(OutputTarget, "create", lambda self, t: FailingClose(create(self, t)))

    def interrupted() -> Any:
        yield "half"
        raise KeyboardInterrupt

    # written whole, the failed closing is the error; interrupted, the interruption is
    for pieces, raised in (["new\n"], SessionReferenceError), (interrupted(), KeyboardInterrupt):
        with pytest.raises(raised):
            write_pieces(pieces, str(out), "--out")
        assert listing(tmp_path) == [["page.md"]] and out.read_bytes() == b"old\n"


def test_a_file_rewritten_by_retry_failed_keeps_its_permission_bits(tmp_path: Path) -> None:
    root = store_with_a_corrupt_log(tmp_path / "store")
    out = tmp_path / "private.jsonl"
    batch = ["batch", "--root", str(root), "--out", str(out)]
    first = sessionref(*batch)
    assert first.returncode == 1 and b'"error"' in out.read_bytes(), first.stderr
    out.chmod(0o600)
    again = sessionref(*batch, "--resume", "--retry-failed")
    assert again.returncode == 1 and b", 1 retried, " in again.stderr, again.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert listing(tmp_path) == [["private.jsonl", "store"]]


@pytest.mark.parametrize("umask", [0o022, 0o077])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_new_file_gets_the_mode_open_gives_it(tmp_path: Path, command: str, umask: int) -> None:
    """0666 less the umask, as the shell's ``>`` makes it: neither mkstemp's 0600 nor a
    fixed mode."""
    out = tmp_path / "new"
    write(command, out, umask=umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask


def refuse_all(real: Callable[..., None]) -> Callable[..., None]:
    """``os.fchown`` as a process that may give a file neither owner nor group has it."""

    def refused(*args: object) -> None:
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    return refused


def refuse_the_owner(real: Callable[..., None]) -> Callable[..., None]:
    """``os.fchown`` as a process that is not root has it: a new owner refused, a group of
    the process's own (here any group: the test runs as root) given."""

    def group_alone(descriptor: int, uid: int, gid: int) -> None:
        if uid != -1:
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))
        real(descriptor, uid, gid)

    return group_alone


def owner_cases() -> list[Any]:
    """The cases whose outcome here differs from that of a new file (owned by the process,
    with its group, mode 0666 less the umask): each, old owner and mode, the ``fchown`` the
    process meets (``None``: the real one), and which of the old owner and group the new file
    keeps, and the mode it gets. Only root can own a file as someone else; a user can change
    a file's group only if in two groups."""
    uid, gid = os.geteuid(), os.getegid()
    if uid == 0:
        old = (4321, 4322)
        return [
            pytest.param(old, 0o6750, None, (True, True), 0o6750, id="root: both kept"),
            pytest.param(old, 0o6750, refuse_the_owner, (False, True), 0o750, id="group alone"),
            pytest.param(old, 0o6750, refuse_all, (False, False), 0o750, id="neither"),
        ]
    others = [group for group in os.getgroups() if group != gid]
    if not others:  # the owner cannot differ: the mode is what the case tests
        return [pytest.param((uid, gid), 0o640, None, (True, True), 0o640, id="own file")]
    old = (uid, others[0])
    return [
        pytest.param(old, 0o2750, None, (True, True), 0o2750, id="group kept"),
        pytest.param(old, 0o2750, refuse_all, (True, False), 0o750, id="group refused"),
    ]


@pytest.mark.parametrize(("old", "mode", "fchown", "kept", "expected_mode"), owner_cases())
def test_a_replaced_file_keeps_its_owner_as_far_as_the_process_may(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    old: tuple[int, int],
    mode: int,
    fchown: Callable[[Callable[..., None]], Callable[..., None]] | None,
    kept: tuple[bool, bool],
    expected_mode: int,
) -> None:
    """Root gives the new file the old one's owner and group; a process refused the owner
    keeps the group if it may, and a file that is the process's own (or another group's)
    loses the set-user-id and set-group-id bits that were for the owner (group) it lost."""
    out = tmp_path / "page.md"
    out.write_bytes(b"old\n")
    os.chown(out, *old)
    out.chmod(mode)
    probe = tmp_path / "probe"
    probe.touch()
    fresh = (probe.stat().st_uid, probe.stat().st_gid)  # what a new file here belongs to
    probe.unlink()
    expected = tuple(o if keep else f for o, f, keep in zip(old, fresh, kept, strict=True))
    assert (expected, expected_mode) != (fresh, 0o666 & ~0o022), "the case cannot fail"
    if fchown is not None:
        monkeypatch.setattr(os, "fchown", fchown(os.fchown))
    previous = os.umask(0o022)
    try:
        assert main([*COMMANDS["export --out"], str(out)]) == 0
    finally:
        os.umask(previous)
    status = out.stat()
    assert ((status.st_uid, status.st_gid), stat.S_IMODE(status.st_mode)) == (
        expected,
        expected_mode,
    )
    assert looks_whole("export --out", out.read_bytes())


USER = (4321, 4321, 4322)
"""The user id, group and second group a forked child becomes to write as a user does."""


def as_a_user(action: Callable[[], None]) -> int:
    """Run ``action`` in a child that root made a user of :data:`USER`'s ids (in two groups,
    as ``setgroups`` gives them): the kernel treats its writes as a user's, which no patch
    of ``os`` shows. Its exit status: 0 when ``action`` returned."""
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        status = 1
        try:
            uid, gid, second = USER
            os.setgroups([gid, second])
            os.setgid(gid)
            os.setuid(uid)
            action()
            status = 0
        finally:
            os._exit(status)
    return os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])


@pytest.mark.skipif(
    os.geteuid() != 0,
    reason="only root can become another user; as a user in two groups, the 'group kept' "
    "case of the owner test is this case",
)
def test_a_user_replacing_a_set_group_id_file_keeps_the_bit() -> None:
    """A write by a process that is not root clears the set-group-id bit of the file it
    writes: the replacing file gets the old one's mode after its bytes are written, so a
    user's replaced file of a group of theirs keeps the bit (root's writes keep it anyway)."""
    uid, gid, second = USER
    folder = Path(tempfile.mkdtemp(dir="/tmp"))  # not the tests' folder: only root may enter it
    try:
        os.chown(folder, uid, gid)
        out = folder / "page.md"
        out.write_bytes(b"old\n")
        os.chown(out, uid, second)
        out.chmod(0o2750)
        assert as_a_user(lambda: write_pieces(["new\n"], str(out), "--out")) == 0
        status = out.stat()
        assert (status.st_uid, status.st_gid, stat.S_IMODE(status.st_mode)) == (
            uid,
            second,
            0o2750,
        )
        assert out.read_bytes() == b"new\n"
    finally:
        shutil.rmtree(folder)


UNWRITABLE = {
    "no such folder": ("missing/out", errno.ENOENT),
    "a folder": ("folder", errno.EISDIR),
    "a link to a folder": ("folder-link", errno.EISDIR),
    "a path through a file": ("file/out", errno.ENOTDIR),
    "a loop of links": ("loop", errno.ELOOP),
}
"""Paths (relative to a folder made by :func:`unwritable_paths`) that cannot be written,
and why."""


def unwritable_paths(folder: Path) -> None:
    """What :data:`UNWRITABLE`'s paths meet in ``folder``."""
    (folder / "folder").mkdir()
    (folder / "folder-link").symlink_to("folder")
    (folder / "file").write_bytes(b"a file\n")
    (folder / "loop").symlink_to("loop")


@pytest.mark.parametrize("case", list(UNWRITABLE))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_path_that_cannot_be_written_is_one_line_naming_it_as_given(
    tmp_path: Path, command: str, case: str
) -> None:
    """``CODE: OPTION PATH: reason``, the path as typed (relative here), never the hidden
    temporary file; nothing is written anywhere, and a batch says so before any work."""
    given, reason = UNWRITABLE[case]
    unwritable_paths(tmp_path)
    before = listing(tmp_path, tmp_path / "folder")
    done = sessionref(*COMMANDS[command], given, cwd=tmp_path)
    option = COMMANDS[command][-1]
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == f"{INVALID_CONFIG}: {option} {given}: {os.strerror(reason)}\n"
    assert listing(tmp_path, tmp_path / "folder") == before


def big_session_store(root: Path) -> Path:
    """A store of one session, ``big``, whose page takes a while to write."""
    b = LogBuilder()
    for turn in range(3000):
        b.user(f"question {turn} " + "x" * 2000)
        b.assistant(f"answer {turn}")
    header = {"version": 0, "id": "big", "createdAt": 1, "delegationDepth": 0}
    write_session_store(root, [{"header": header, "events": b.events}])
    return root


def test_an_export_into_a_fifo_stopped_by_ctrl_c_is_one_line(tmp_path: Path) -> None:
    """What went into the FIFO is the reader's; the command stops with one line, the FIFO
    stays a FIFO and nothing is left beside it."""
    store = big_session_store(tmp_path / "store")
    fifo = tmp_path / "out" / "fifo"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    chunks: queue.Queue[bytes] = queue.Queue()
    signalled = threading.Event()

    def drain() -> None:
        """Read one chunk, then nothing until the signal is sent: the page (megabytes) cannot
        fit in the pipe, so the export is stuck writing it when the signal comes, however
        fast it is; then read the rest, which the stopping command may still flush."""
        with fifo.open("rb") as reader:
            chunks.put(reader.read(1 << 16))
            signalled.wait(PATIENCE)
            while chunk := reader.read(1 << 16):
                chunks.put(chunk)

    reader = threading.Thread(target=drain, daemon=True)  # blocked for good if never written
    reader.start()
    export = [sys.executable, "-m", "sessionref", "export", "--root", str(store), "big"]
    process = subprocess.Popen([*export, "--format", "html", "--out", str(fifo)], stderr=PIPE)
    try:
        first = chunks.get(timeout=PATIENCE)  # the page is being written
        process.send_signal(signal.SIGINT)
        signalled.set()
        _, err = process.communicate(timeout=PATIENCE)
    finally:
        signalled.set()
        process.kill()
        process.wait()
    reader.join(PATIENCE)
    read = first + b"".join(chunks.get() for _ in range(chunks.qsize()))
    assert (process.returncode, err) == (130, b"interrupted\n")
    assert first.startswith(b"<!DOCTYPE html>") and not read.endswith(b"</html>\n")
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and listing(fifo.parent) == [["fifo"]]


@pytest.mark.parametrize("resume", [False, True], ids=["new", "--resume"])
def test_a_fifo_named_like_a_leftover_does_not_hang_a_batch(tmp_path: Path, resume: bool) -> None:
    """No killed batch left it: it is neither opened (which would wait for a writer for
    good), removed nor taken over as the file."""
    fifo = tmp_path / ".o.jsonl.0123456789ab.tmp"
    os.mkfifo(fifo)
    write("batch --out", tmp_path / "o.jsonl", ("--resume",) if resume else ())
    assert looks_whole("batch --out", (tmp_path / "o.jsonl").read_bytes())
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and listing(tmp_path) == [[fifo.name, "o.jsonl"]]


@pytest.mark.parametrize("command", ["export --out", "show --html"])
def test_a_page_sweeps_what_a_killed_writer_left_and_not_a_running_ones(
    tmp_path: Path, command: str
) -> None:
    """Two trials found the temporary file of an ``export --out`` or ``show --html`` killed
    with SIGKILL left for good: unlike ``batch``, no later run removed it. A killed writer's
    goes; one a running writer holds locked stays."""
    out = tmp_path / "page"
    killed, running = (tmp_path / f".page.{name}.tmp" for name in ("0123456789ab", "ba9876543210"))
    killed.write_bytes(b"half a page")
    running.write_bytes(b"")
    with running.open("rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # as the writer of a running one holds it
        assert main([*COMMANDS[command], str(out)]) == 0
        assert listing(tmp_path) == [[running.name, "page"]]
    assert looks_whole(command, out.read_bytes())


def test_a_retry_whose_temporary_file_cannot_be_made_leaves_nothing_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file read for its lines not retried, and the one that locks the output, are closed
    again, though no ``with`` block will close them."""
    out = tmp_path / "o.jsonl"
    out.write_bytes(b'{"sessionId":"a","error":{}}\n')
    before = sorted(os.listdir("/proc/self/fd"))
    output = OutputFile(locate(str(out), "--out"), resume=True)
    assert output.retry({"a"}) == ["a"]

    def full(self: OutputTarget, temporary: Path) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(OutputTarget, "create", full)
    with pytest.raises(OSError, match="No space left"):
        output.__enter__()
    assert sorted(os.listdir("/proc/self/fd")) == before


def tree(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` (links as where they lead), by path, with its bytes."""
    return {
        str(path.relative_to(root)): os.readlink(path).encode()
        if path.is_symlink()
        else path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_symlink() or path.is_file()
    }


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("named", ["as listed", "through a link", "by another name"])
def test_an_output_that_is_a_log_of_the_store_is_refused(
    tmp_path: Path, command: str, named: str
) -> None:
    """``--out`` naming a session's own log replaced the session with the command's output,
    exit 0. However the log is reached, the command is a usage error and writes nothing."""
    root = tmp_path / "store"
    shutil.copytree(SAMPLE, root)
    [log] = root.glob(f"*/{AUTH}*/session.jsonl.zstd")
    given = log
    if named == "through a link":
        given = tmp_path / "link.jsonl"
        given.symlink_to(log)
    elif named == "by another name":
        given = tmp_path / "hard.jsonl"
        os.link(log, given)
    before = tree(tmp_path)
    argv = [str(root) if word == SAMPLE else word for word in COMMANDS[command]]
    done = sessionref(*argv, str(given))
    name, option = command.split()
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f"sessionref {name}: error: {option} {given} is the log of session "
        f'"{AUTH}" in --root {root}: write elsewhere\n'
    )
    assert tree(tmp_path) == before


def test_an_output_that_is_a_file_the_store_passed_over_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "store"
    shutil.copytree(SAMPLE, root)
    [log] = root.glob(f"*/{AUTH}*/session.jsonl.zstd")
    log.write_bytes(b"not a log")
    done = sessionref("batch", "--root", str(root), "--out", str(log))
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f"sessionref batch: error: --out {log} is a log the store passed over in --root "
        f"{root}: write elsewhere\n"
    )
    assert log.read_bytes() == b"not a log"


def test_an_output_that_is_a_claude_code_log_is_refused(tmp_path: Path) -> None:
    """A harness whose session may span files (Claude Code) is asked for all of them."""
    home = tmp_path / "claude"
    claude_session(home, CLAUDE, "Fix the flaky login test", 1)
    [log] = home.glob("projects/*/*.jsonl")
    before = log.read_bytes()
    done = sessionref("batch", "--root", str(home), "--out", str(log))
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f'sessionref batch: error: --out {log} is the log of session "{CLAUDE}" in --root '
        f"{home}: write elsewhere\n"
    )
    assert log.read_bytes() == before


def test_an_output_beside_the_logs_is_written(tmp_path: Path) -> None:
    """Only a log itself is refused: a new file where a log could be is the user's to make."""
    root = tmp_path / "store"
    shutil.copytree(SAMPLE, root)
    [home] = root.glob(f"*/{AUTH}*")
    out = home / "session.jsonl"  # no such log: the session's is .zstd
    done = sessionref("export", "--root", str(root), AUTH, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert looks_whole("export --out", out.read_bytes())


@pytest.fixture
def ctrl_c_while_syncing(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """SIGINT raises ``KeyboardInterrupt`` (as in the command), and comes while the finished
    file is synced: the moment before it is renamed into place. The handlers are restored."""
    fsync = os.fsync

    def interrupted_sync(descriptor: int) -> None:
        signal.raise_signal(signal.SIGINT)
        fsync(descriptor)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    monkeypatch.setattr(os, "fsync", interrupted_sync)
    return lambda: signal.signal(signal.SIGINT, previous)


def test_ctrl_c_while_a_finished_batch_is_synced_keeps_every_line(
    tmp_path: Path, ctrl_c_while_syncing: Callable[[], None], capsys: pytest.CaptureFixture[str]
) -> None:
    """Once every line is written the file goes into place, and then the batch stops: a
    stop in between used to lose the lines and fail on the missing file with a traceback."""
    out = tmp_path / "out.jsonl"
    try:
        status = main(["batch", "--root", SAMPLE, "--out", str(out)])
    finally:
        ctrl_c_while_syncing()
    assert status == 130
    assert looks_whole("batch --out", out.read_bytes()) and listing(tmp_path) == [["out.jsonl"]]
    sessions = len(SAMPLE_IDS)
    said = f"interrupted: {sessions} of {sessions} sessions are in {out}\n"  # no rest to do
    assert capsys.readouterr().err == said


def test_ctrl_c_while_a_finished_page_is_synced_leaves_it_whole(
    tmp_path: Path, ctrl_c_while_syncing: Callable[[], None]
) -> None:
    out = tmp_path / "page.md"
    out.write_bytes(b"old\n")
    try:
        with pytest.raises(KeyboardInterrupt):
            write_pieces(["new\n"], str(out), "--out")
    finally:
        ctrl_c_while_syncing()
    assert out.read_bytes() == b"new\n" and listing(tmp_path) == [["page.md"]]
