"""Names of sessions on disk in the DSH JSONL layout (docs/format.md §Layout)."""

from __future__ import annotations

import re
from typing import Final

_NOT_LITERAL: Final = re.compile("[^A-Za-z0-9._-]")
_SEPARATORS: Final = re.compile(r"[/\\:]+")
MAX_PROJECT_KEY: Final = 251
NO_CWD_DIRECTORY: Final = "_no-cwd"
MAX_NAME_BYTES: Final = 255
"""The longest file name Linux allows (``NAME_MAX``)."""
FLAT_PROBE_SUFFIX: Final = ".jsonl.zstd"


def _escape_match(match: re.Match[str]) -> str:
    """``~XXXX`` for each UTF-16 code unit of the matched character (two for an astral one)."""
    units = match.group().encode("utf-16-be", "surrogatepass")
    return "".join(f"~{units[i]:02X}{units[i + 1]:02X}" for i in range(0, len(units), 2))


def _escape(text: str) -> str:
    """Each UTF-16 code unit outside ``A-Z a-z 0-9 . _ -`` as ``~XXXX``.

    >>> _escape("a b🙂"), _escape("\\ud800")
    ('a~0020b~D83D~DE42', '~D800')
    """
    return _NOT_LITERAL.sub(_escape_match, text)


def encode_session_directory(session_id: str) -> str:
    """The directory name of a session id.

    >>> encode_session_directory("a/b~c"), encode_session_directory("..")
    ('a~002Fb~007Ec', '~002E~002E')
    >>> encode_session_directory("🙂")
    '~D83D~DE42'
    """
    if session_id in (".", ".."):
        return "~002E" * len(session_id)
    return _escape(session_id)


def encode_project_directory(cwd: object) -> str:
    """The project directory of a working directory (``_no-cwd`` without one). A cwd that is
    not a string (a number, a boolean, an object) has no characters for the harness to name it
    by: ``--root--``.

    >>> encode_project_directory("/work/my proj"), encode_project_directory(None)
    ('--work-my~0020proj--', '_no-cwd')
    >>> encode_project_directory(5), encode_project_directory({})
    ('--root--', '--root--')
    """
    if cwd is None:
        return NO_CWD_DIRECTORY
    if not isinstance(cwd, str):
        return "--root--"
    parts = [_escape(part) for part in _SEPARATORS.split(cwd)]
    key = "-".join(parts).lstrip("-") or "root"
    return f"--{key[:MAX_PROJECT_KEY]}--"


def flat_probe_too_long(directory: str) -> bool:
    """Whether the harness cannot read the session in ``directory`` (its encoded id): before
    reading a session it opens the legacy flat artifact ``<project>/<directory>.jsonl.zstd``,
    which fails with ENAMETOOLONG once that name exceeds 255 bytes. Listing does not probe, so
    such a session is listed but unreadable.

    >>> flat_probe_too_long("x" * 244), flat_probe_too_long("x" * 245)
    (False, True)
    """
    return len(directory.encode("utf-8", "surrogatepass")) + len(FLAT_PROBE_SUFFIX) > MAX_NAME_BYTES
