"""Claude Code's sessions on disk: ``<root>/projects/<project>/<session>.jsonl``
(docs/harnesses.md §Claude Code §Store).

``root`` is the config directory (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``) or its
``projects/`` directory. A session's id is its file's name; subagent transcripts
(``agent-*.jsonl``, and everything in ``<session>/subagents/``) are not sessions of their own,
and a file whose first 64 KiB hold no message (an empty file) holds no session.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from sessionref.log.discovery import StoreProblem, is_empty
from sessionref.log.harness_store import HarnessStore, Head, jsonl_files, real_directories
from sessionref.log.jsonl import iso_millis
from sessionref.transcript import Harness, Transcript

SUBAGENT_PREFIX = "agent-"


class ClaudeCodeStore(HarnessStore):
    """The sessions of a Claude Code config directory.

    >>> ClaudeCodeStore("/nonexistent")
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: claude-code store root /nonexistent: no such directory
    """

    harness: Harness = "claude-code"

    @property
    def projects(self) -> Path:
        """The directory holding one directory per project."""
        projects = self.root / "projects"
        return projects if projects.is_dir() else self.root

    def files(self, passed: list[StoreProblem]) -> Iterator[Path]:
        """Every ``<project>/<session>.jsonl`` that is not a subagent's."""
        for project in real_directories(self.projects, passed):
            for path in jsonl_files(project, passed=passed):
                if not path.name.startswith(SUBAGENT_PREFIX):
                    yield path

    def watched(self) -> list[Path]:
        """The root, the projects directory and each project's."""
        projects = self.projects
        return list(dict.fromkeys([self.root, projects, *real_directories(projects)]))

    @staticmethod
    def named_by(path: Path) -> str | None:
        """A session file's name without ``.jsonl``, its session's id.

        >>> ClaudeCodeStore.named_by(Path("/p/-w/0b7c.jsonl"))
        '0b7c'
        """
        name = path.name
        if name.endswith(".jsonl") and not name.startswith(SUBAGENT_PREFIX):
            return name[: -len(".jsonl")]
        return None

    def empty_file(self, session_id: str) -> Path | None:
        """The ``<project>/<session_id>.jsonl`` of 0 bytes, if one is there (an empty file
        holds no session and is not listed). Only a plain file name is looked for, so an id
        such as ``../x`` names no file.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as root:
        ...     (Path(root) / "-w").mkdir()
        ...     (Path(root) / "-w" / "s1.jsonl").touch()
        ...     store = ClaudeCodeStore(root)
        ...     [store.empty_file(i) is not None for i in ("s1", "s2", "../-w/s1", "-w/s1")]
        [True, False, False, False]
        """
        if session_id in ("", ".", "..") or any(c in session_id for c in ("/", "\\", "\0")):
            return None
        for project in real_directories(self.projects):
            path = project / f"{session_id}.jsonl"
            if self.named_by(path) == session_id and is_empty(path):
                return path
        return None

    def head(self, path: Path, lines: list[bytes]) -> Head:
        """The session of a file (its name: :meth:`named_by`), with the first cwd and time of
        its first lines."""
        from sessionref.claude_code.records import decode  # read only when a file changed

        records = [record for record in map(decode, lines) if record is not None]
        if not any(type(record.uuid) is str for record in records):
            return Head(None)
        times = (iso_millis(record.timestamp) for record in records)
        cwds = (record.cwd for record in records if type(record.cwd) is str)
        created = next((time for time in times if time is not None), None)
        return Head(self.named_by(path), created, next(cwds, None))

    def transcript_of(
        self, session_id: str, lines: list[bytes], texts_only: bool = False
    ) -> Transcript:
        """The transcript of a session file's lines."""
        from sessionref.claude_code.reader import claude_transcript  # as head()

        return claude_transcript(session_id, lines, texts_only)
