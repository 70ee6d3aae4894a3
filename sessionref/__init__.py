"""sessionref: bounded, tag-safe snapshots of DeepSeek Harness sessions.

>>> from sessionref import encode_session_reference_uri
>>> encode_session_reference_uri("s-beta")
'dsh-session:InMtYmV0YSI'
"""

from sessionref.codecs import (
    ParsedText,
    Reference,
    decode_session_reference_uri,
    encode_session_reference_uri,
    format_session_reference_mention,
    parse_session_reference_text,
    tag_safe_json,
    utf8_length,
)
from sessionref.errors import SessionLogError, SessionReferenceError
from sessionref.log.records import SessionHeader, SessionLog
from sessionref.log.store import (
    DirectoryStore,
    MemoryStore,
    SessionNotFound,
    SessionStore,
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
)

__all__ = [
    "Candidate",
    "ContextMessage",
    "DirectoryStore",
    "MemoryStore",
    "MentionCandidate",
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
    "StoreProblem",
    "Target",
    "TextBlock",
    "decode_session_reference_uri",
    "encode_session_reference_uri",
    "format_session_reference_mention",
    "parse_session_reference_text",
    "tag_safe_json",
    "utf8_length",
]
