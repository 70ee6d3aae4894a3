"""Where ``sessionref batch`` writes its lines: a file (replaced at the end, or appended to
with ``--resume``, its failed lines replaced with ``--retry-failed``), stdout, or a FIFO or
device, and what a file to resume already holds.

A file (a link followed to it: :mod:`sessionref.cli.output_target`) is written through a
hidden temporary file beside it, or appended to; either way a second batch to the same file
is refused while one runs (:mod:`sessionref.cli.batch_files`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Collection
from pathlib import Path
from typing import IO, Final

import msgspec

from sessionref.batch.core import ResultLine
from sessionref.cli.batch_files import clear_leftovers, guarded, hold, locked_temporary
from sessionref.cli.common import STDOUT, config_error
from sessionref.cli.output_target import OutputTarget, locate
from sessionref.cli.process import flush_output, write_bytes
from sessionref.worker_deaths import WorkerDied


def _result_line(line: bytes, number: int, path: str) -> tuple[str, bool]:
    """The session id of one complete output line and whether it is an error line."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: nested too deep
        value = None
    if not isinstance(value, dict) or not isinstance(value.get("sessionId"), str):
        raise config_error(f"{path}: line {number} is not a batch result; cannot --resume")
    return value["sessionId"], "error" in value


class ResumeState(msgspec.Struct, frozen=True):
    """What an existing output file already holds: its sessions, where the line of each
    session whose (first) line is an error lies (start and end offsets), and where its
    intact part ends."""

    done: frozenset[str]
    failed: dict[str, tuple[int, int]]
    intact_bytes: int

    @property
    def failures(self) -> int:
        """How many sessions of the file failed."""
        return len(self.failed)


def read_resume_state(target: OutputTarget) -> ResumeState:
    """Ids already in ``target`` and where its intact part ends: a torn last line is not
    counted.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = Path(d, "out.jsonl")
    ...     _ = out.write_bytes(b'{"sessionId":"a","error":{}}\\n{"sessionId":"b","err')
    ...     read_resume_state(locate(str(out), "--out"))
    ResumeState(done=frozenset({'a'}), failed={'a': (0, 29)}, intact_bytes=29)
    """
    done: set[str] = set()
    failed: dict[str, tuple[int, int]] = {}
    intact = 0
    if not target.file.exists():
        return ResumeState(frozenset(), {}, 0)
    with target.file.open("rb") as lines:
        for number, line in enumerate(lines, 1):
            if not line.endswith(b"\n"):
                break
            session_id, error = _result_line(line, number, target.given)
            if error and session_id not in done:
                failed[session_id] = (intact, intact + len(line))
            done.add(session_id)
            intact += len(line)
    return ResumeState(frozenset(done), failed, intact)


EMPTY: Final = ResumeState(frozenset(), {}, 0)
"""What a new output holds."""
COPY_CHUNK: Final = 1 << 20
"""Bytes copied at a time from a file whose failed lines are replaced."""


class OutputFile:
    """Where batch lines go: a temporary file renamed over the target's file at the end, or
    that file itself, appended to, when resuming; when resuming with failed lines to replace
    (:meth:`retry`), a temporary file again, holding the file's bytes with each of those
    lines replaced by its new result, then the new sessions' lines.

    Opening it clears what killed batches left (:func:`clear_leftovers`; resuming with no
    file, the largest leftover becomes the file), and locks the file until the ``with``
    block ends (:func:`hold`): a second batch to the same file is refused meanwhile. Nothing
    replaces the file if the batch fails; an interrupted batch (``KeyboardInterrupt``, or SIGTERM's
    :class:`~sessionref.cli.process.Terminated`) or one stopped by the death of a worker
    (:class:`~sessionref.worker_deaths.WorkerDied`) that finished some lines puts them in the file,
    for ``--resume`` to continue.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with OutputFile(locate(f"{d}/out.jsonl", "--out"), resume=False) as out:
    ...         out.write(ResultLine("s", False, b"x\\n"))
    ...         print(sorted(os.listdir(d)) != ["out.jsonl"])
    ...     print(sorted(os.listdir(d)), Path(d, "out.jsonl").read_bytes())
    True
    ['out.jsonl'] b'x\\n'
    """

    def __init__(self, target: OutputTarget, *, resume: bool) -> None:
        self.target = target
        self.resume = resume
        self.lines = 0
        self.kept = False
        self._replace: dict[str, tuple[int, int]] = {}
        self._copied = 0
        self._old: IO[bytes] | None = None
        self._temporary: Path | None = None
        self._file: IO[bytes] | None = None
        with guarded(target.file):
            self.adopted = clear_leftovers(target, adopt=resume)
            self._held = hold(target, append=resume)
            try:
                if not resume:  # a file not resumed is always written whole, beside it
                    self._create_temporary()
            except BaseException:
                self._release()
                raise
        try:
            self.state = read_resume_state(target) if resume else EMPTY
        except BaseException:
            self._discard()
            raise

    def retry(self, session_ids: Collection[str]) -> list[str]:
        """Replace the failed lines of ``session_ids`` with the next results written (call it
        before the ``with`` block); the sessions whose lines will be replaced, in the order of
        their lines, which is the order their results must come in."""
        chosen = sorted(
            (span, session_id)
            for session_id, span in self.state.failed.items()
            if session_id in session_ids
        )
        self._replace = {session_id: span for span, session_id in chosen}
        return list(self._replace)

    def __enter__(self) -> OutputFile:
        if self.resume and not self._replace:
            self._file = self._held  # open for appending, and locked
            assert self._file is not None
            self._file.truncate(self.state.intact_bytes)
            return self
        try:
            if self._replace:
                self._old = self.target.file.open("rb")
                with guarded(self.target.file):
                    self._create_temporary()
        except BaseException:  # __exit__ is not called to close them
            if self._old is not None:
                self._old.close()
            self._discard()
            raise
        return self

    def _create_temporary(self) -> None:
        """Create the temporary file the lines go to (:func:`locked_temporary`)."""
        self._temporary, self._file = locked_temporary(self.target)

    def _discard(self) -> None:
        """Give up before any line: remove the temporary file, if made, and release the file."""
        try:
            if self._file is not None and self._temporary is not None:
                self.target.settle(self._file, self._temporary, keep=False)
        finally:
            self._release()

    def _release(self) -> None:
        """Let other batches write the file: close the descriptor that locks it."""
        if self._held is not None:
            self._held.close()

    def where(self) -> str:
        """Where the lines go, for a message: the path as given."""
        return self.target.given

    def held(self) -> int:
        """How many complete lines the output holds now: none when there is no file (a stop
        that came before a new file was in place)."""
        try:
            return complete_lines(self.target.file)
        except FileNotFoundError:
            return 0

    def _wrote(self) -> bool:
        """Whether any result's bytes went into the file: a stop can land inside a write,
        after its bytes reached the file and before ``lines`` counted them."""
        assert self._file is not None
        return self.lines > 0 or self._file.tell() > 0

    def _copy_old(self, end: int) -> None:
        """Copy the resumed file's bytes up to ``end`` as they are."""
        assert self._old is not None and self._file is not None
        self._old.seek(self._copied)
        while self._copied < end:
            chunk = self._old.read(min(COPY_CHUNK, end - self._copied))
            self._file.write(chunk)
            self._copied += len(chunk)

    def write(self, result: ResultLine) -> None:
        """Write one result's line: in place of its session's failed line when it replaces
        one, else after every line the file held. A file appended to is flushed per line, so
        an interruption loses none."""
        assert self._file is not None, "OutputFile used outside its with block"
        if self._old is not None:
            span = self._replace.pop(result.session_id, None)
            self._copy_old(self.state.intact_bytes if span is None else span[0])
            if span is not None:
                self._copied = span[1]
        self._file.write(result.line)
        self.lines += 1
        if self.resume and self._temporary is None:
            self._file.flush()

    def __exit__(self, kind: type[BaseException] | None, *exception: object) -> None:
        assert self._file is not None
        interrupted = kind is not None and issubclass(kind, (KeyboardInterrupt, WorkerDied))
        keep = kind is None or (interrupted and (self._wrote() or self._old is not None))
        self.kept = keep or self.resume
        complete = False  # a temporary file replaces the file only once all of it is written
        try:
            if keep and self._old is not None:  # the lines not replaced, as they were
                self._copy_old(self.state.intact_bytes)
            complete = keep
        finally:
            try:
                if self._old is not None:
                    self._old.close()
            finally:
                try:
                    if self._temporary is None:
                        self._file.close()
                    else:
                        self.target.settle(self._file, self._temporary, keep=complete)
                finally:
                    self._release()  # after the rename: no batch sees the file half-done


class StreamOutput:
    """Batch lines written as they come, each flushed: to stdout (``--out -``), or into a
    ``target`` that is no regular file (a FIFO, a device), opened by the ``with`` block.

    >>> output = StreamOutput()
    >>> output.where(), output.held(), output.kept, output.retry({"s"})
    ('stdout', 0, True, [])
    >>> with StreamOutput(locate("/dev/null", "--out")) as null:
    ...     null.write(ResultLine("s", False, b"x\\n"))
    >>> null.where(), null.held()
    ('/dev/null', 1)
    """

    def __init__(self, target: OutputTarget | None = None) -> None:
        self.target = target
        self.state = EMPTY
        self.adopted: Path | None = None
        self.lines = 0
        self.kept = True
        self._file: IO[bytes] | None = None

    def retry(self, session_ids: Collection[str]) -> list[str]:
        """Nothing to replace: a stream holds no earlier lines."""
        return []

    def __enter__(self) -> StreamOutput:
        if self.target is not None:
            self._file = self.target.open_stream()
        return self

    def __exit__(self, *exception: object) -> None:
        if self._file is not None:
            # each line was flushed as it was written, a failure raised then: a closing
            # that fails has nothing to add
            with contextlib.suppress(OSError):
                self._file.close()

    def where(self) -> str:
        """Where the lines go, for a message."""
        return "stdout" if self.target is None else self.target.given

    def held(self) -> int:
        """How many lines were written."""
        return self.lines

    def write(self, result: ResultLine) -> None:
        """Write one result's line, flushed."""
        if self._file is None:
            write_bytes(result.line)
            flush_output()
        else:
            assert self.target is not None
            try:
                self._file.write(result.line)
                self._file.flush()
            except OSError as exc:
                raise self.target.failure(exc) from None
        self.lines += 1


Output = OutputFile | StreamOutput


def output_for(out: str, *, resume: bool) -> Output:
    """Where ``--out OUT`` puts a batch's lines (:mod:`sessionref.cli.output_target`): stdout
    for ``-``, a FIFO or device as it is (which cannot be resumed: nothing can be read back
    from it), else a file.

    >>> output_for("/dev/null", resume=False).where()
    '/dev/null'
    >>> output_for("/dev/null", resume=True)
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: --out /dev/null: not a regular file; \
--resume reads back what a file holds
    """
    if out == STDOUT:
        return StreamOutput()
    target = locate(out, "--out")
    if not target.streamed:
        return OutputFile(target, resume=resume)
    if resume:
        raise target.failure("not a regular file; --resume reads back what a file holds")
    return StreamOutput(target)


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
