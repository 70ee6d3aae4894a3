"""Which stores a command reads: the root rule, each root's harness, and the store of each.

The rule (docs/roots.md), the same for every command: the roots given (``--root``, as often as
wanted), else those of ``$SESSIONREF_ROOT`` (separated by ``os.pathsep``), else every
harness's default location that holds sessions. Each root's harness is recognized from its
layout, unless ``harness`` forces one; a root that does not exist, or holds no sessions of its
harness, is an error naming what was looked for. :func:`open_store` gives the store of a root,
by the harness's store class (those of other harnesses are imported only when used).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final, NamedTuple

import msgspec

from sessionref.controls import stderr_line
from sessionref.errors import INVALID_CONFIG, SessionReferenceError
from sessionref.layouts import (
    claude_code_home,
    claude_code_project,
    codex_home,
    codex_near_miss,
    dsh_home,
    nothing_near,
)
from sessionref.log.discovery import check_directory
from sessionref.log.frames import DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_LINE_BYTES
from sessionref.log.multi import MultiStore
from sessionref.log.protocol import Store

ROOT_ENV: Final = "SESSIONREF_ROOT"
"""The roots used when none is given: paths separated by ``os.pathsep``."""


DEFAULT_LOCATION: Final = "the default location"
"""How a message names a root that is a harness's default location, no variable moving it."""


class Harness(NamedTuple):
    """A harness whose sessions sessionref reads: its name, what it is called, its store
    class (``module:Class``), where its sessions are, and its default location."""

    name: str
    title: str
    store: str
    home: Callable[[Path], Path | None]
    layout: str
    default: Callable[[Mapping[str, str]], Path]
    near_miss: Callable[[Path], str | None] = nothing_near
    """Why a root that holds none of the harness's sessions looks as if it did, if it does."""
    variable: str | None = None
    """The environment variable that moves its default location, if one does."""

    def default_named_by(self, environ: Mapping[str, str]) -> str:
        """What names its default location, for a message: its variable when that is set,
        else that it is the default.

        >>> codex = HARNESSES["codex"]
        >>> codex.default_named_by({"CODEX_HOME": "/c"}), codex.default_named_by({})
        ('$CODEX_HOME', 'the default location')
        """
        if self.variable is not None and environ.get(self.variable):
            return f"${self.variable}"
        return DEFAULT_LOCATION


def _home(environ: Mapping[str, str]) -> Path:
    """The user's home directory: ``$HOME``, else the one the system knows."""
    return Path(environ.get("HOME") or os.path.expanduser("~"))


def _home_dir(environ: Mapping[str, str], variable: str, folder: str) -> Path:
    """``$variable`` when it is set, else ``~/folder``.

    >>> _home_dir({"HOME": "/h"}, "X", ".x"), _home_dir({"X": "/y"}, "X", ".x")
    (PosixPath('/h/.x'), PosixPath('/y'))
    """
    if environ.get(variable):
        return Path(environ[variable]).expanduser()
    return _home(environ) / folder


HARNESSES: Final = {
    harness.name: harness
    for harness in (
        Harness(
            "dsh",
            "DSH",
            "sessionref.log.store:DirectoryStore",
            dsh_home,
            "<project>/<session>/session.jsonl or session.jsonl.zstd",
            lambda environ: _home(environ) / ".dsh" / "sessions",
        ),
        Harness(
            "claude-code",
            "Claude Code",
            "sessionref.claude_code.store:ClaudeCodeStore",
            claude_code_home,
            "projects/<project>/<session>.jsonl",
            lambda environ: _home_dir(environ, "CLAUDE_CONFIG_DIR", ".claude"),
            claude_code_project,
            variable="CLAUDE_CONFIG_DIR",
        ),
        Harness(
            "codex",
            "Codex",
            "sessionref.codex.store:CodexStore",
            codex_home,
            "sessions/YYYY/MM/DD/rollout-*.jsonl, sessions/rollout-*.jsonl or "
            "archived_sessions/rollout-*.jsonl (each maybe .zst)",
            lambda environ: _home_dir(environ, "CODEX_HOME", ".codex"),
            codex_near_miss,
            "CODEX_HOME",
        ),
    )
}
"""Every harness, by the name ``--harness`` takes."""


class Root(msgspec.Struct, frozen=True):
    """A store root: the directory its harness's store reads (``~/.claude`` for a given
    ``~/.claude/projects``), the harness, the root as it was named, and what named it (for
    messages): ``--root``, ``$SESSIONREF_ROOT``, a harness's variable (``$CODEX_HOME``) or
    :data:`DEFAULT_LOCATION`."""

    path: str
    harness: str
    named: str
    named_by: str = "--root"

    @property
    def label(self) -> str:
        """The root as a message names it, with what named it.

        >>> Root("/c", "codex", "/c", "$CODEX_HOME").label
        '$CODEX_HOME /c'
        """
        return f"{self.named_by} {self.named}"

    @staticmethod
    def all_named(roots: Sequence[Root]) -> str:
        """Roots as a message names them (:attr:`label`): as the command line gives them,
        ``--root A --root B``, when they were given so, else one after another.

        >>> Root.all_named([Root("/a", "dsh", "a"), Root("/b", "dsh", "b")])
        '--root a --root b'
        >>> Root.all_named([Root("/d", "dsh", "/d", DEFAULT_LOCATION), Root("/c", "codex", "/c",
        ...                 "$CODEX_HOME")])
        'the default location /d, $CODEX_HOME /c'
        """
        given = all(root.named_by == "--root" for root in roots)
        return (" " if given else ", ").join(root.label for root in roots)


def _config_error(message: str) -> SessionReferenceError:
    return SessionReferenceError(message, INVALID_CONFIG)


def check_root(named: str, harness: str | None = None, option: str = "--root") -> Root:
    """The root ``named`` (by ``option``), its harness recognized from its layout or forced
    by ``harness``, its path made absolute (worker processes may run elsewhere); an error says
    what was looked for when it holds no sessions.

    >>> check_root("/nonexistent")
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: --root /nonexistent: no such directory
    """
    if not named:  # Path("") is the current directory
        raise _config_error(f"{option} is empty: name a directory")
    path = Path(named).expanduser()
    check_directory(path, option)
    candidates = [HARNESSES[harness]] if harness is not None else list(HARNESSES.values())
    for candidate in candidates:
        home = candidate.home(path)
        if home is not None:
            return Root(os.path.abspath(home), candidate.name, str(path), option)
    looked = "; ".join(f"{c.title}: {c.layout}" for c in candidates)
    which = f"{candidates[0].title} sessions" if harness is not None else "sessions"
    near = "".join(f"; {miss}" for c in candidates if (miss := c.near_miss(path)))
    raise _config_error(f"{option} {path}: holds no {which} (looked for {looked}){near}")


def _default_root(harness: Harness, environ: Mapping[str, str]) -> Root | str | None:
    """The root of ``harness``'s default location when it holds its sessions; else, when the
    harness's variable named that location, the warning saying so (the user meant it to be
    read: it is checked as a ``--root`` would be, :func:`check_root`); else ``None``."""
    location, named_by = harness.default(environ), harness.default_named_by(environ)
    if named_by != DEFAULT_LOCATION:
        try:
            return check_root(str(location), harness.name, named_by)
        except SessionReferenceError as exc:
            return f"warning: {exc}; no {harness.title} sessions are read"
    home = harness.home(location) if location.is_dir() else None
    return None if home is None else Root(str(home), harness.name, str(location), named_by)


def default_roots(
    harness: str | None = None,
    environ: Mapping[str, str] = os.environ,
    warn: Callable[[str], None] = stderr_line,
) -> list[Root]:
    """Every harness's default location (only ``harness``'s, when given) that holds its
    sessions; an error naming them all when none does. A harness's variable set where none
    of its sessions are (a typo) is told to ``warn``, one line each, when other roots are
    read.

    >>> default_roots(environ={"HOME": "/nonexistent", "CODEX_HOME": "/typo"})
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: no --root given, $SESSIONREF_ROOT is not set, \
and no default location holds sessions: /nonexistent/.dsh/sessions (DSH), \
/nonexistent/.claude (Claude Code), /typo (Codex)
    """
    harnesses = [HARNESSES[harness]] if harness is not None else list(HARNESSES.values())
    found = [_default_root(candidate, environ) for candidate in harnesses]
    roots = [root for root in found if isinstance(root, Root)]
    if not roots:
        places = ", ".join(f"{c.default(environ)} ({c.title})" for c in harnesses)
        raise _config_error(
            f"no --root given, ${ROOT_ENV} is not set, and no default location holds "
            f"sessions: {places}"
        )
    for warning in found:
        if isinstance(warning, str):
            warn(warning)
    return roots


def chosen_roots(
    given: Sequence[str],
    harness: str | None = None,
    environ: Mapping[str, str] = os.environ,
    warn: Callable[[str], None] = stderr_line,
) -> list[Root]:
    """The root rule: the roots ``given``, else those of ``$SESSIONREF_ROOT``, else the
    default locations (:func:`default_roots`, which tells ``warn`` of a harness's variable
    that names none of its sessions); each checked (:func:`check_root`), each directory once.

    >>> chosen_roots([], environ={"SESSIONREF_ROOT": "/nonexistent"})
    Traceback (most recent call last):
    ...
    sessionref.errors.SessionReferenceError: $SESSIONREF_ROOT /nonexistent: no such directory
    """
    option, named = "--root", list(given)
    if not named:
        option = f"${ROOT_ENV}"
        named = [path for path in environ.get(ROOT_ENV, "").split(os.pathsep) if path]
    if not named:
        return default_roots(harness, environ, warn)
    roots = [check_root(path, harness, option) for path in named]
    return list({os.path.realpath(root.path): root for root in roots[::-1]}.values())[::-1]


def open_store(
    root: Root,
    *,
    max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Store:
    """The store of ``root``, made by its harness's store class, which takes the root and the
    size and line limits (as :class:`~sessionref.log.store.DirectoryStore` does)."""
    harness = HARNESSES[root.harness]
    module_name, class_name = harness.store.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module_name.startswith(exc.name):
            raise
        raise _config_error(
            f"{root.named}: {harness.title} sessions cannot be read by this version of "
            f"sessionref ({module_name} is missing)"
        ) from None
    store: Store = getattr(module, class_name)(
        root.path, max_bytes=max_bytes, max_line_bytes=max_line_bytes
    )
    return store


def open_stores(roots: Sequence[Root], **limits: int) -> Store:
    """The store of one root, or a :class:`MultiStore` over several (named as given)."""
    stores = {root.named: open_store(root, **limits) for root in roots}
    return next(iter(stores.values())) if len(stores) == 1 else MultiStore(stores)
