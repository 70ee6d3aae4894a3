"""Where ``sessionref batch`` writes its lines: a file (replaced at the end, or appended to
with ``--resume``) or stdout, and what a file to resume already holds."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from types import TracebackType
from typing import IO

import msgspec

from sessionref.cli.common import config_error
from sessionref.cli.process import flush_output, write_bytes


def _result_line(line: bytes, number: int, path: Path) -> tuple[str, bool]:
    """The session id of one complete output line and whether it is an error line."""
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        value = None
    if not isinstance(value, dict) or not isinstance(value.get("sessionId"), str):
        raise config_error(f"{path}: line {number} is not a batch result; cannot --resume")
    return value["sessionId"], "error" in value


class ResumeState(msgspec.Struct, frozen=True):
    """What an existing output file already holds."""

    done: frozenset[str]
    failures: int
    intact_bytes: int


def read_resume_state(path: Path) -> ResumeState:
    """Ids already in ``path`` and where its intact part ends: a torn last line is not counted.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = Path(d, "out.jsonl")
    ...     _ = out.write_bytes(b'{"sessionId":"a","context":{}}\\n{"sessionId":"b","err')
    ...     read_resume_state(out)
    ResumeState(done=frozenset({'a'}), failures=0, intact_bytes=31)
    """
    done: set[str] = set()
    failures = intact = 0
    if not path.exists():
        return ResumeState(frozenset(), 0, 0)
    with path.open("rb") as lines:
        for number, line in enumerate(lines, 1):
            if not line.endswith(b"\n"):
                break
            session_id, failed = _result_line(line, number, path)
            if session_id not in done:
                failures += failed
            done.add(session_id)
            intact += len(line)
    return ResumeState(frozenset(done), failures, intact)


class OutputFile:
    """Where batch lines go: a temporary file renamed over ``path`` at the end, or ``path``
    itself, appended to, when resuming.

    Nothing replaces ``path`` if the batch fails; an interrupted batch (``KeyboardInterrupt``,
    or SIGTERM's :class:`~sessionref.cli.process.Terminated`) that finished some lines puts
    them in ``path``, for ``--resume`` to continue.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with OutputFile(Path(d, "out.jsonl"), resume=False) as out:
    ...         out.write(b"x\\n")
    ...         print(sorted(os.listdir(d)) != ["out.jsonl"])
    ...     print(sorted(os.listdir(d)), Path(d, "out.jsonl").read_bytes())
    True
    ['out.jsonl'] b'x\\n'
    """

    def __init__(self, path: Path, *, resume: bool) -> None:
        self.path = path
        self.resume = resume
        self.state = read_resume_state(path) if resume else ResumeState(frozenset(), 0, 0)
        self.lines = 0
        self.kept = False
        self._temporary: Path | None = None
        self._file: IO[bytes] | None = None

    def __enter__(self) -> OutputFile:
        if self.resume:
            self._file = self.path.open("ab")
            self._file.truncate(self.state.intact_bytes)
            return self
        self._temporary = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex[:12]}.tmp")
        descriptor = os.open(self._temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        self._file = os.fdopen(descriptor, "wb")
        return self

    def where(self) -> str:
        """Where the lines go, for a message."""
        return str(self.path)

    def held(self) -> int:
        """How many complete lines the output holds now."""
        return complete_lines(self.path)

    def write(self, line: bytes) -> None:
        """Write one line; a resumed file is flushed per line so an interruption loses none."""
        assert self._file is not None, "OutputFile used outside its with block"
        self._file.write(line)
        self.lines += 1
        if self.resume:
            self._file.flush()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        assert self._file is not None
        interrupted = kind is not None and issubclass(kind, KeyboardInterrupt)
        keep = kind is None or (interrupted and self.lines > 0)
        self.kept = keep or self.resume
        try:
            if keep and self._temporary is not None:
                self._file.flush()
                os.fsync(self._file.fileno())
        finally:
            self._file.close()
            if self._temporary is not None:
                try:
                    if keep:
                        os.replace(self._temporary, self.path)
                finally:
                    self._temporary.unlink(missing_ok=True)


class StandardOutput:
    """Batch lines written to stdout as they come (``--out -``), each flushed.

    >>> output = StandardOutput()
    >>> output.where(), output.held(), output.kept
    ('stdout', 0, True)
    """

    def __init__(self) -> None:
        self.state = ResumeState(frozenset(), 0, 0)
        self.lines = 0
        self.kept = True

    def __enter__(self) -> StandardOutput:
        return self

    def __exit__(self, *exception: object) -> None:
        return None

    def where(self) -> str:
        """Where the lines go, for a message."""
        return "stdout"

    def held(self) -> int:
        """How many lines were written."""
        return self.lines

    def write(self, line: bytes) -> None:
        """Write one line to stdout, flushed."""
        write_bytes(line)
        flush_output()
        self.lines += 1


Output = OutputFile | StandardOutput


def complete_lines(path: Path) -> int:
    """How many lines of ``path`` end in a newline (a torn last one does not count).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as file:
    ...     _ = file.write(b"a\\nb\\nc")
    ...     file.flush()
    ...     complete_lines(Path(file.name))
    2
    """
    with path.open("rb") as file:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: file.read(1 << 20), b""))
