"""Which sessions a store holds: the harness's listing, with sessionref's whole-root rule.

The listing walks ``<root>/<project>/<session>/session.jsonl[.zstd]`` (real directories only)
and reads line 1 of each log: a header it does not take (no ``delegationDepth``, a fractional
``createdAt``, no complete first line, …) means the session is simply not in the store (the
file is reported, so a user can see why).

Where the harness refuses the WHOLE root (a legacy flat ``<project>/<id>.jsonl`` file, logs
of both encodings, a duplicate id, a header whose id or cwd does not name its directory, a
retired header field, a zstd header frame that is damaged or holds more than the header line,
a directory in place of a log; a FIFO, on which it waits forever), sessionref serves every
other session (**[sessionref]**, docs/differences.md). The offending
sessions (every copy of a duplicate id) are not served, and each offending file is reported.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, NamedTuple

import msgspec

from sessionref.codecs.jsjson import js_json
from sessionref.errors import INVALID_CONFIG, SessionLogError, SessionReferenceError, path_text
from sessionref.log.header import listed_header, parse_header_line
from sessionref.log.layout import encode_project_directory, encode_session_directory
from sessionref.log.lookup import Spot, Spots, lookup_conflict
from sessionref.log.structs import SessionHeader

PLAIN_LOG: Final = "session.jsonl"
ZSTD_LOG: Final = "session.jsonl.zstd"
LOG_NAMES: Final = (PLAIN_LOG, ZSTD_LOG)


EMPTY_FILE: Final = "the file is empty (0 bytes)"
"""Why a session file of 0 bytes holds no session, for a message that names it."""


def is_empty(path: str | os.PathLike[str]) -> bool:
    """Whether the file at ``path`` holds no byte (``False`` when it cannot be looked at:
    then whatever reading it said stands).

    >>> is_empty("/nonexistent"), is_empty("/dev/null")
    (False, False)
    """
    try:
        status = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(status.st_mode) and status.st_size == 0


class StoreProblem(msgspec.Struct, frozen=True):
    """A log file the store does not serve, and why: the harness would refuse the whole root
    for it, or its listing skips it (its line 1 is not a header it takes)."""

    path: str
    message: str


class LogFile(NamedTuple):
    """A log file found by the walk: its project and session directory names, its file name
    and how to name it in a message."""

    project: str
    session: str
    name: str
    location: str


class Listing(msgspec.Struct, frozen=True):
    """What a walk found: the sessions served (in walk order), the problems, and why the
    harness's lookup fails the read of some of the sessions served (by id)."""

    headers: list[SessionHeader]
    files: dict[str, LogFile]
    problems: list[StoreProblem]
    conflicts: dict[str, str]


FirstLine = Callable[[LogFile], "bytes | None"]
"""Line 1 of a log without its newline, ``None`` when there is no complete one; raises
:class:`SessionLogError` for a zstd header frame the harness refuses."""


def _encoding(files: list[LogFile]) -> str:
    """The encoding a root is read in: the one most of its logs use; on a tie, the one of
    its first log in walk order (a root of one encoding is simply read in it).

    >>> _encoding([LogFile("p", "a", ZSTD_LOG, "x"), LogFile("p", "b", PLAIN_LOG, "y")])
    'session.jsonl.zstd'
    """
    counts = Counter(file.name for file in files)
    if counts[PLAIN_LOG] == counts[ZSTD_LOG]:
        return files[0].name if files else ZSTD_LOG
    return PLAIN_LOG if counts[PLAIN_LOG] > counts[ZSTD_LOG] else ZSTD_LOG


def _misplaced(file: LogFile, header: SessionHeader) -> str | None:
    """Why a header does not name the directory its log lies in, if it does not. A log under
    another spelling of its path is in place when both spellings lead to the same file (the
    harness compares their real paths: a project directory reached through a link).
    """
    project = encode_project_directory(header.cwd)
    session = encode_session_directory(header.id)
    root = os.path.dirname(os.path.dirname(os.path.dirname(file.location)))
    expected = os.path.join(root, project, session, file.name)
    if (file.project, file.session) != (project, session) and not same_file(
        file.location, expected
    ):
        named = js_json(header.id).decode("utf-8")
        return f"header id {named} and cwd identify {project}/{session}"
    return None


def same_file(path: str, other: str) -> bool:
    """Whether two paths lead to one file (their real paths agree); ``False`` when either
    cannot be resolved.

    >>> same_file("/tmp", "/tmp/."), same_file("/tmp", "/nonexistent")
    (True, False)
    """
    try:
        return os.path.realpath(path, strict=True) == os.path.realpath(other, strict=True)
    except OSError:
        return False


_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def named_once(message: str, path: str) -> str:
    """``message`` without the ``path: `` (or the ``cannot read path: `` of a file the system
    would not give) a store's message may start with, for a line that names ``path`` itself
    (``message`` as it is when there is no path).

    >>> named_once("/c/r.jsonl: no session_meta line", "/c/r.jsonl")
    'no session_meta line'
    >>> named_once("cannot read /c/r.jsonl: No such file or directory", "/c/r.jsonl")
    'No such file or directory'
    >>> named_once("line 1 is not a header", "/l/session.jsonl"), named_once(": x", "")
    ('line 1 is not a header', ': x')
    """
    if not path:
        return message
    return message.removeprefix(f"cannot read {path}: ").removeprefix(f"{path}: ")


def directory_entries(
    path: str | os.PathLike[str], passed: list[StoreProblem] | None
) -> list[os.DirEntry[str]]:
    """The entries of the directory ``path``, by name; none when it is missing, and none
    when it cannot be listed, which is a problem added to ``passed`` (when given): the
    sessions in it are passed over. (The harness's listing fails on such a directory, EACCES
    for the whole root; sessionref serves the rest, as it does for what SPEC §1 lists.)

    >>> passed = []
    >>> directory_entries("/nonexistent", passed), directory_entries("/dev/null", passed), passed
    ([], [], [])
    """
    try:
        return sorted(os.scandir(path), key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        if passed is not None:
            reason = f"cannot be listed: {exc.strerror or exc}"
            passed.append(StoreProblem(os.fspath(path), reason))
        return []


def leads_to(entry: os.DirEntry[str], directory: bool) -> bool:
    """Whether ``entry``, its link followed, is a directory (``directory``) or a regular file:
    a link that leads nowhere is neither, whether it dangles or loops (``DirEntry.is_file``
    answers ``False`` for a dangling link but raises ELOOP for one that loops).

    >>> [leads_to(entry, True) for entry in os.scandir("/") if entry.name == "tmp"]
    [True]
    """
    try:
        return entry.is_dir() if directory else entry.is_file()
    except OSError:
        return False


def not_a_log(path: str, mode: int) -> StoreProblem:
    """Why an entry named as a log (``session.jsonl``…) but not a regular file is passed
    over: the harness's listing fails on a directory (EISDIR) and waits on a FIFO forever.

    >>> not_a_log("r/p/s/session.jsonl", stat.S_IFIFO | 0o644).message
    'a FIFO in place of a log file'
    """
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return StoreProblem(path, f"{kind} in place of a log file")


class NotALog(SessionLogError):
    """A log that turned out to be no regular file when it was opened (it was replaced after
    the walk looked at it): READ_FAILED naming it, and the ``problem`` a listing reports.

    >>> error = NotALog(not_a_log("s/session.jsonl", stat.S_IFDIR))
    >>> str(error), error.problem.message
    ('s/session.jsonl: a directory in place of a log file', 'a directory in place of a log file')
    """

    def __init__(self, problem: StoreProblem) -> None:
        super().__init__(f"{problem.path}: {problem.message}")
        self.problem = problem

    def __reduce__(self) -> tuple[type[NotALog], tuple[StoreProblem]]:
        """Made again from its problem, as it was made (a batch worker sends it back)."""
        return (type(self), (self.problem,))


def list_sessions(
    files: list[LogFile],
    flat: list[str],
    first_line: FirstLine,
    strays: Sequence[StoreProblem] = (),
    spots: Spots | None = None,
) -> Listing:
    """The listing of a root whose logs are ``files``, whose flat artifacts are ``flat``,
    whose entries named as logs that are no files are ``strays`` (:func:`not_a_log`), and
    whose project folders hold ``spots`` (none but the folders of ``files`` when not given:
    :func:`log_spots`); a session whose read the harness's lookup fails
    (:func:`~sessionref.log.lookup.lookup_conflict`) is served as unreadable, and the entry
    that fails it is a problem.

    >>> line = b'{"type":"session","version":0,"id":"a","createdAt":1,"delegationDepth":0}'
    >>> found = list_sessions([LogFile("_no-cwd", "a", PLAIN_LOG, "x")], [], lambda f: line)
    >>> [h.id for h in found.headers], found.problems
    (['a'], [])
    """
    problems = [StoreProblem(path, "uses the unsupported flat-file layout") for path in flat]
    problems.extend(strays)
    encoding = _encoding(files)
    dirs = Counter((file.project, file.session) for file in files)
    taken: list[tuple[SessionHeader, LogFile]] = []
    for file in files:
        if file.name != encoding:
            problems.append(StoreProblem(file.location, f"a {file.name} log in a {encoding} root"))
            continue
        if dirs[file.project, file.session] > 1:
            problems.append(
                StoreProblem(file.location, "its directory holds logs of both encodings")
            )
            continue
        try:
            line = first_line(file)
            header = None if line is None else listed_header_of(line)
        except NotALog as exc:  # made a FIFO (…) since the walk: said as the walk says it
            problems.append(exc.problem)
            continue
        except SessionLogError as exc:
            problems.append(StoreProblem(file.location, str(exc)))
            continue
        except OSError as exc:  # not the log's fault, and passing: never remembered by an index
            problems.append(StoreProblem(file.location, f"cannot read line 1: {exc.strerror}"))
            continue
        if header is None:  # not a session to the harness; said here so a user sees why
            why = "line 1 is not a header the listing takes"
            if line is None and is_empty(file.location):
                why = EMPTY_FILE
            problems.append(StoreProblem(file.location, why))
            continue
        misplaced = _misplaced(file, header)
        if misplaced is not None:
            problems.append(StoreProblem(file.location, misplaced))
            continue
        taken.append((header, file))
    ids = Counter(header.id for header, _ in taken)
    headers, found = [], {}
    for header, file in taken:
        if ids[header.id] > 1:
            named = js_json(header.id).decode("utf-8")
            problems.append(StoreProblem(file.location, f"duplicate session id {named}"))
            continue
        headers.append(header)
        found[header.id] = file
    spots = log_spots(files) if spots is None else spots
    other = PLAIN_LOG if encoding == ZSTD_LOG else ZSTD_LOG
    conflicts = {}
    for header in headers:
        conflict = lookup_conflict(spots, header.id, (encoding, other), found[header.id].location)
        if conflict is not None:
            conflicts[header.id] = conflict.message
            named = js_json(header.id).decode("utf-8")
            why = f"fails the read of session {named}: {conflict.why}"
            problems.append(StoreProblem(conflict.path, why))
    return Listing(headers, found, problems, conflicts)


def log_spots(files: list[LogFile]) -> dict[str, list[Spot]]:
    """The spots of the session folders of ``files`` (for a store with nothing else in its
    project folders).

    >>> log_spots([LogFile("p", "s", PLAIN_LOG, "p/s/session.jsonl")])["s"][0].logs
    {'session.jsonl': None}
    """
    spots: dict[tuple[str, str], Spot] = {}
    for file in files:
        known = spots.get((file.project, file.session))
        folder = os.path.dirname(file.location)
        logs = {**(known.logs if known else {}), file.name: None}
        spots[file.project, file.session] = Spot(file.project, folder, None, None, logs)
    named: dict[str, list[Spot]] = {}
    for (_, session), spot in spots.items():
        named.setdefault(session, []).append(spot)
    return named


def check_lookup(conflict: str | None) -> None:
    """Raise the read failure ``conflict`` (what :attr:`Listing.conflicts` holds for a
    session), if there is one.

    >>> check_lookup(None)
    >>> check_lookup("duplicate")
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionLogError: duplicate
    """
    if conflict is not None:
        raise SessionLogError(conflict)


def listed_header_of(line: bytes) -> SessionHeader | None:
    """The header the listing takes from line 1 (``None``: the session is not listed).

    >>> line = b'{"type":"session","version":0,"id":"a","createdAt":1,"delegationDepth":0}'
    >>> listed_header_of(line).id
    'a'
    >>> listed_header_of(b'{"type":"session"') is None
    True
    """
    try:
        value = parse_header_line(line)
    except SessionLogError:
        return None
    return listed_header(value)


def check_directory(path: Path, what: str) -> None:
    """Raise ``SESSION_REFERENCE_INVALID_CONFIG``, naming ``what`` ``path`` is, unless it is a
    directory.

    >>> check_directory(Path("/dev/null"), "store root")
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: store root /dev/null: not a directory
    """
    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            return
        problem = "not a directory"
    except OSError as exc:
        problem = _missing(path, exc)
    raise SessionReferenceError(f"{what} {path}: {problem}", INVALID_CONFIG)


def _missing(path: Path, error: OSError) -> str:
    """What ``error``, raised looking at ``path``, says is wrong with it as a directory.

    >>> import errno
    >>> _missing(Path("/loop"), OSError(errno.ELOOP, "Too many levels of symbolic links"))
    'cannot be looked at: Too many levels of symbolic links'
    """
    if error.errno != errno.ENOENT:
        return f"cannot be looked at: {error.strerror or error}"
    return "a link to nothing" if os.path.islink(path) else "no such directory"


def store_directory(root: object, what: str) -> Path:
    """The directory a store serves, named by ``root`` (a path, ``~`` expanded), else
    ``SESSION_REFERENCE_INVALID_CONFIG`` naming ``what`` it is: an empty path (which would
    quietly mean the current directory) or one that is no directory (:func:`check_directory`).

    >>> store_directory("/", "store root").as_posix()
    '/'
    >>> store_directory("", "store root")
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: store root is empty: name a directory
    """
    named = path_text(root, what)
    if not named:
        raise SessionReferenceError(f"{what} is empty: name a directory", INVALID_CONFIG)
    path = Path(named).expanduser()
    check_directory(path, what)
    return path
