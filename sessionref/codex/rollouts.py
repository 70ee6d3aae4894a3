"""Codex CLI rollout files, plain or compressed (docs/harnesses.md §Codex §Compressed).

Codex compresses a cold rollout (one untouched for a week) to ``<name>.jsonl.zst`` beside it:
one zstd stream, written to a temporary file, checked, and renamed into place whole, and the
plain file removed; to append to it again it decompresses it back the same way. A plain
``.jsonl`` therefore hides a ``.jsonl.zst`` of the same name in the same folder (one caught
between the two steps), and a compressed rollout that ends inside a frame or does not
decompress is damaged, not torn (openai/codex ``codex-rs/rollout/src/compression.rs``:
``RolloutFile::from_path``, ``existing_rollout_path``, the compression worker).
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Final

from sessionref.codex.names import COMPRESSED_SUFFIX, is_compressed, listed_names
from sessionref.errors import LogUnreadable, SessionLogError
from sessionref.log.discovery import StoreProblem, directory_entries
from sessionref.log.frames import complete_frames, file_chunks
from sessionref.log.harness_store import first_lines, head_lines, real_directories
from sessionref.log.jsonl import committed_lines, file_bytes, file_size, open_regular
from sessionref.log.zstdfile import file_text

PAGES: Final = "rollout_segments"
"""The folder below ``sessions/`` where Codex keeps the older pages of its paginated threads
(:mod:`sessionref.codex.references`)."""


def folders(
    directory: Path, passed: list[StoreProblem] | None = None, skipped: str | None = None
) -> Iterator[Path]:
    """``directory`` and every real directory below it, by name, but the one directly below it
    named ``skipped`` and what it holds (see
    :func:`~sessionref.log.harness_store.real_directories` for ``passed``).

    >>> list(folders(Path("/nonexistent")))
    [PosixPath('/nonexistent')]
    """
    yield directory
    for below in real_directories(directory, passed):
        if below.name != skipped:
            yield from folders(below, passed)


def rollout_files(folder: Path, passed: list[StoreProblem] | None = None) -> list[Path]:
    """The rollouts in ``folder`` that Codex lists, by name (:func:`listed_names`): files, and
    whatever else bears such a name (reading it says what is wrong); a folder that cannot be
    listed is a problem added to ``passed``.

    >>> rollout_files(Path("/nonexistent"))
    []
    """
    names = [entry.name for entry in directory_entries(folder, passed)]
    return [folder / name for name in listed_names(names)]


def existing_rollout(path: Path) -> Path | None:
    """The rollout a path names, as it is on disk: the plain file, else its compressed
    sibling; ``None`` when neither is there.

    >>> existing_rollout(Path("/nonexistent/rollout-1.jsonl")) is None
    True
    """
    plain = path.with_name(path.name.removesuffix(COMPRESSED_SUFFIX))
    for candidate in (plain, plain.with_name(plain.name + COMPRESSED_SUFFIX)):
        if os.path.exists(candidate):
            return candidate
    return None


def _plaintext(location: str, text: Iterator[bytes]) -> Generator[bytes, None, None]:
    """``text``, the text of the compressed rollout at ``location`` in chunks, decompressed as
    far as they are taken: it must end on a frame (Codex renames it into place whole), and a
    damaged one raises :class:`SessionLogError` naming it
    (:func:`~sessionref.log.frames.complete_frames`)."""
    try:
        yield from text
    except SessionLogError as exc:
        raise SessionLogError(f"{location}: {exc}") from None


def rollout_head(path: Path, max_bytes: int, max_line_bytes: int) -> list[bytes]:
    """The committed lines of a rollout's first chunk of text (and of more while its first
    line goes on), plain or compressed: a compressed one no larger than ``max_bytes``,
    decompressed from its file only that far (:func:`_text_chunks`).

    >>> rollout_head(Path("/no/rollout-1.jsonl.zst"), 10, 10)
    Traceback (most recent call last):
    sessionref.errors.LogUnreadable: cannot read /no/rollout-1.jsonl.zst: No such file or directory
    """
    if not is_compressed(path):
        return head_lines(path, max_line_bytes)
    with closing(_text_chunks(path, max_bytes)) as chunks:
        return first_lines(chunks, str(path), max_line_bytes)


def _text_chunks(path: Path, max_bytes: int) -> Generator[bytes, None, None]:
    """A rollout's text in chunks, read (and decompressed) only as far as they are taken: a
    plain one as it is read; a compressed one no larger than ``max_bytes`` decompressed from
    its file (:func:`~sessionref.log.zstdfile.file_text`: its frames located over the whole
    file first, a piece at a time, so a damaged one fails as the whole read fails, and never
    mapped: a file truncated meanwhile is an error, not a SIGBUS), holding no more than a
    piece of it. A file that cannot be read raises :class:`LogUnreadable`; close it when done.

    >>> list(_text_chunks(Path("/no/rollout-1.jsonl.zst"), 10))
    Traceback (most recent call last):
    sessionref.errors.LogUnreadable: cannot read /no/rollout-1.jsonl.zst: No such file or directory
    """
    location = str(path)
    try:
        with open_regular(location) as file:
            if not is_compressed(path):
                yield from file_chunks(file)
                return
            size = file_size(file, location, max_bytes)
            yield from _plaintext(location, file_text(file, size, max_bytes))
    except OSError as exc:
        raise LogUnreadable(f"cannot read {location}: {exc.strerror or exc}") from None


def rollout_text(path: Path, max_bytes: int) -> bytes:
    """The text of a rollout, plain or compressed; neither the file nor its text may be over
    ``max_bytes``. A damaged compressed rollout raises :class:`SessionLogError` naming it.

    >>> rollout_text(Path("/no/rollout-1.jsonl.zst"), 10)
    Traceback (most recent call last):
    sessionref.errors.LogUnreadable: cannot read /no/rollout-1.jsonl.zst: No such file or directory
    """
    location = str(path)
    data = file_bytes(location, max_bytes)
    if not is_compressed(path):
        return data
    return b"".join(_plaintext(location, complete_frames(data, max_bytes, torn_ok=False)))


def rollout_lines(path: Path, max_bytes: int, max_line_bytes: int) -> list[bytes]:
    """The committed lines of a rollout's text (:func:`rollout_text`).

    >>> rollout_lines(Path("/no/rollout-1.jsonl.zst"), 10, 10)
    Traceback (most recent call last):
    sessionref.errors.LogUnreadable: cannot read /no/rollout-1.jsonl.zst: No such file or directory
    """
    return committed_lines(rollout_text(path, max_bytes), max_line_bytes, str(path))


class OverLimit(SessionLogError):
    """A rollout's text goes on past the limit it is read under (the store's ``max_bytes``),
    found where it is read as a stream (:func:`split_lines`): whatever the reader looked for
    past it is not known.

    >>> import pickle
    >>> pickle.loads(pickle.dumps(OverLimit("/r.jsonl", 9))).message
    '/r.jsonl: over the limit of 9 bytes'
    """

    def __init__(self, location: str, limit: int) -> None:
        super().__init__(f"{location}: over the limit of {limit} bytes")
        self.location = location
        self.limit = limit

    def __reduce__(self) -> tuple[type[OverLimit], tuple[str, int]]:
        """Made again from its location and limit, as it was made."""
        return (type(self), (self.location, self.limit))


def _within(chunks: Iterable[bytes], limit: int, location: str) -> Iterator[bytes]:
    """``chunks`` as far as their first ``limit`` bytes; more text raises :class:`OverLimit`
    naming ``location`` once those are given.

    >>> list(_within([b"ab", b"cd"], 4, "f"))
    [b'ab', b'cd']
    >>> chunks = _within([b"ab", b"cd", b"ef"], 3, "f")
    >>> next(chunks), next(chunks)
    (b'ab', b'c')
    >>> next(chunks)
    Traceback (most recent call last):
    sessionref.codex.rollouts.OverLimit: f: over the limit of 3 bytes
    """
    read = 0
    for chunk in chunks:
        if read + len(chunk) > limit:
            yield chunk[: limit - read]
            raise OverLimit(location, limit)
        read += len(chunk)
        yield chunk


def split_lines(
    chunks: Iterable[bytes], limit: int, max_line_bytes: int, location: str
) -> Iterator[bytes]:
    """The committed lines of a text given in ``chunks``, each given as soon as its newline
    is read; the lines within its first ``limit`` bytes are given, and a text that goes on
    past them then raises :class:`OverLimit` naming ``location`` (a reader that stops before
    never learns it: nothing is read past the chunk that holds the limit). A
    committed line longer than ``max_line_bytes`` raises :class:`SessionLogError` naming
    ``location`` and the line, as a whole read does (:func:`~sessionref.log.jsonl.committed_lines`):
    once that much of a line is read it is held no longer, and its newline raises; a torn last
    line of any length is passed over. Codex's own reader has no bound, and would hold a line
    of any length whole.

    >>> list(split_lines([b"a\\nb", b"c\\nd"], 100, 9, "f"))
    [b'a', b'bc']
    >>> lines = split_lines([b"a\\n", b"b\\n"], 2, 9, "f")
    >>> next(lines)
    b'a'
    >>> next(lines)
    Traceback (most recent call last):
    sessionref.codex.rollouts.OverLimit: f: over the limit of 2 bytes
    >>> list(split_lines([b"a\\nbb", b"bbbb"], 100, 5, "f"))  # torn: passed over
    [b'a']
    >>> list(split_lines([b"a\\nbb", b"bbbb", b"b\\n"], 100, 5, "f"))
    Traceback (most recent call last):
    sessionref.errors.SessionLogError: f: line 2 is longer than 5 bytes
    """
    pieces: list[bytes] = []
    held = 0  # the bytes read of the line not yet ended (past the bound: no longer held)
    number = 1
    for chunk in _within(chunks, limit, location):
        *lines, rest = chunk.split(b"\n")
        if lines:
            if held > max_line_bytes:
                raise _too_long(location, number, max_line_bytes)
            lines[0] = b"".join((*pieces, lines[0]))
            pieces.clear()
            held = 0
            for line in lines:
                if len(line) > max_line_bytes:
                    raise _too_long(location, number, max_line_bytes)
                number += 1
                yield line
        held += len(rest)
        if held <= max_line_bytes:
            pieces.append(rest)
        else:
            pieces.clear()


def _too_long(location: str, number: int, max_line_bytes: int) -> SessionLogError:
    """The error of a line longer than ``max_line_bytes``, naming the file and the line."""
    return SessionLogError(f"{location}: line {number} is longer than {max_line_bytes} bytes")


def rollout_stream(path: Path, max_bytes: int, max_line_bytes: int) -> Generator[bytes, None, None]:
    """The committed lines of a rollout's text, plain or compressed, read as far as they are
    taken: a text that goes on past ``max_bytes`` raises :class:`OverLimit` when a line past
    them is taken (a compressed file larger than that raises :class:`SessionLogError` at
    once), none longer than ``max_line_bytes`` (:func:`split_lines`); close
    it when done with it.

    >>> list(rollout_stream(Path("/no/rollout-1.jsonl"), 10, 10))
    Traceback (most recent call last):
    sessionref.errors.LogUnreadable: cannot read /no/rollout-1.jsonl: No such file or directory
    """
    with closing(_text_chunks(path, max_bytes)) as chunks:
        yield from split_lines(chunks, max_bytes, max_line_bytes, str(path))
