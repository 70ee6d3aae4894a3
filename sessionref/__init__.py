"""sessionref: bounded, tag-safe snapshots of coding-agent sessions (DSH, Claude Code, Codex).

>>> from sessionref import encode_session_reference_uri
>>> encode_session_reference_uri("s-beta")
'dsh-session:InMtYmV0YSI'

Each name is imported from its module when first used, so ``import sessionref`` (and the
command line's start-up) costs nothing until the library is used.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: the command line's start-up
if TYPE_CHECKING:
    from typing import Any, Final

__version__ = "0.1.0"

_HOMES: Final = {
    "sessionref.codecs.uri": (
        "ParsedText",
        "Reference",
        "decode_session_reference_uri",
        "encode_session_reference_uri",
        "format_session_reference_mention",
        "parse_session_reference_text",
    ),
    "sessionref.codecs.jsjson": ("tag_safe_json",),
    "sessionref.codecs.jsstring": ("utf8_length",),
    "sessionref.errors": ("SessionLogError", "SessionReferenceError"),
    "sessionref.log.records": ("SessionHeader", "SessionLog"),
    "sessionref.log.store": (
        "DirectoryStore",
        "MemoryStore",
        "SessionNotFound",
        "SessionStore",
        "Store",
        "StoreProblem",
    ),
    "sessionref.log.multi": ("MultiStore",),
    "sessionref.resolver": ("SessionReferenceResolver",),
    "sessionref.types": (
        "Candidate",
        "ContextMessage",
        "MentionCandidate",
        "PreparedContent",
        "SourceStats",
        "Target",
        "TextBlock",
        "to_builtins",
    ),
}
_HOME_OF: Final = {name: module for module, names in _HOMES.items() for name in names}

if TYPE_CHECKING:
    from sessionref.codecs.jsjson import tag_safe_json
    from sessionref.codecs.jsstring import utf8_length
    from sessionref.codecs.uri import (
        ParsedText,
        Reference,
        decode_session_reference_uri,
        encode_session_reference_uri,
        format_session_reference_mention,
        parse_session_reference_text,
    )
    from sessionref.errors import SessionLogError, SessionReferenceError
    from sessionref.log.multi import MultiStore
    from sessionref.log.records import SessionHeader, SessionLog
    from sessionref.log.store import (
        DirectoryStore,
        MemoryStore,
        SessionNotFound,
        SessionStore,
        Store,
        StoreProblem,
    )
    from sessionref.resolver import SessionReferenceResolver
    from sessionref.types import (
        Candidate,
        ContextMessage,
        MentionCandidate,
        PreparedContent,
        SourceStats,
        Target,
        TextBlock,
        to_builtins,
    )


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use (PEP 562)."""
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module 'sessionref' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names and every public one, each once (a name used is in both)."""
    return sorted({*globals(), *_HOME_OF})


__all__ = [
    "Candidate",
    "ContextMessage",
    "DirectoryStore",
    "MemoryStore",
    "MentionCandidate",
    "MultiStore",
    "ParsedText",
    "PreparedContent",
    "Reference",
    "SessionHeader",
    "SessionLog",
    "SessionLogError",
    "SessionNotFound",
    "SessionReferenceError",
    "SessionReferenceResolver",
    "SessionStore",
    "SourceStats",
    "Store",
    "StoreProblem",
    "Target",
    "TextBlock",
    "decode_session_reference_uri",
    "encode_session_reference_uri",
    "format_session_reference_mention",
    "parse_session_reference_text",
    "tag_safe_json",
    "to_builtins",
    "utf8_length",
]
