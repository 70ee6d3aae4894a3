"""Which secrets redaction looks for: detect-secrets' plugins, a few formats they lack, and a
cheap test of which lines could hold any of them (docs/redaction.md §Detectors).

detect-secrets is an optional dependency (the ``redact`` extra); it is imported only when a
:class:`Detectors` is built, so nothing else pays for its import.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator, Sequence
from typing import Any, Final

import msgspec

from sessionref.errors import INVALID_CONFIG, SessionReferenceError

MISSING: Final = (
    "redaction needs detect-secrets, which is not installed: pip install 'sessionref[redact]'"
)

#: detect-secrets' plugins that are not used: a public IP address is not a secret, and a bare
#: high-entropy string is as often a commit SHA, a UUID or a lockfile hash (their entropy
#: measure is used instead by the assignment detector, where a secret's name says what it is).
SKIPPED_PLUGINS: Final = frozenset(
    {
        "IPPublicDetector",
        "Base64HighEntropyString",
        "HexHighEntropyString",
        "KeywordDetector",
    }
)

#: Formats detect-secrets 1.5 does not know, as (secret type, pattern); each pattern's first
#: group, when it has one, is the secret.
EXTRA_FORMATS: Final = (
    ("Anthropic API Key", r"sk-ant-[a-z]{3,8}\d{2}-[A-Za-z0-9_-]{32,}"),
    ("OpenAI Project Key", r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}"),
    ("Google API Key", r"AIza[0-9A-Za-z_-]{35}"),
    ("Google OAuth Client Secret", r"GOCSPX-[A-Za-z0-9_-]{28}"),
    ("Hugging Face Token", r"hf_[A-Za-z0-9]{34}"),
    ("GitHub Fine-grained Token", r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}"),
    ("NPM Access Token", r"npm_[A-Za-z0-9]{36}"),
    ("Stripe Test Key", r"(?:sk|rk)_test_[0-9a-zA-Z]{24,}"),
    ("Stripe Webhook Secret", r"whsec_[A-Za-z0-9]{32,}"),
    ("DigitalOcean Token", r"do[opr]_v1_[a-f0-9]{64}"),
    ("Shopify Token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("Groq API Key", r"gsk_[A-Za-z0-9]{48,}"),
    ("Bearer Token", r"(?i:\bbearer)\s+([A-Za-z0-9._~+/-]{16,}=*)"),
    ("Basic Authorization", r"(?i:\bauthorization:\s*basic)\s+([A-Za-z0-9+/]{12,}=*)"),
)

#: Necessary conditions, one or more per plugin: a line that matches none of a plugin's
#: anchors cannot hold what that plugin finds (checked by tests/test_redact_detectors.py).
#: Keys are the plugins' class names; ``*`` anchors the plugins that look for a name.
ANCHORS: Final[dict[str, str]] = {
    "ArtifactoryDetector": r"AKC|AP[\dA-F]",
    "AWSKeyDetector": r"A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA|(?i:aws)",
    "AzureStorageKeyDetector": r"AccountKey=",
    "BasicAuthDetector": r"://",
    "DiscordBotTokenDetector": r"[MNO][a-zA-Z\d_-]{23}",
    "GitHubTokenDetector": r"gh[pousr]_",
    "GitLabTokenDetector": r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941",
    "JwtTokenDetector": r"eyJ",
    "MailchimpDetector": r"-us\d",
    "NpmDetector": r"_authToken=",
    "OpenAIDetector": r"T3BlbkFJ",
    "PrivateKeyDetector": r"PRIVATE KEY|PuTTY-User-Key-File-2",
    "PypiTokenDetector": r"pypi-AgE",
    "SendGridDetector": r"SG\.",
    "SlackDetector": r"(?i:xox[abposr]-)|://",
    "SquareOAuthDetector": r"sq0csp-",
    "StripeDetector": r"[rs]k_live_",
    "TelegramBotTokenDetector": r"\d{8}:",
    "TwilioKeyDetector": r"(?:AC|SK)[a-z0-9]{32}",
    "CloudantDetector": r"(?i:key|pw|pass|token)|://",
    "IbmCloudIamDetector": r"(?i:key|pw|pass|token)",
    "IbmCosHmacDetector": r"(?i:key)",
    "SoftlayerDetector": r"(?i:key|pw|pass|token)|://",
    "SecretAssignmentDetector": r"(?i:key|token|secret|pass|pwd|credential|auth)",
}

_EXTRA_ANCHORS: Final = dict(EXTRA_FORMATS)
"""A format of :data:`EXTRA_FORMATS` is its own anchor."""
EVERY_LINE: Final = r"[^\n]"
"""The anchor of a plugin a later detect-secrets adds: every line is scanned with it."""

ASSIGNMENT: Final = (
    r"(?<![\w.-])([A-Za-z_][\w.-]*?"
    r"(?i:key|token|secret|passw(?:or)?d|passphrase|pwd|pass|credentials?|auth)[\w.-]*)"
    r"[\"'\]]{0,2}\s*(?:=|:=|:|=>)\s*[\"'`]?([^\s\"'`,;]{10,})"
)
"""``NAME=value`` (or ``:``, ``:=``, ``=>``), quoted or not, whose name holds a secret word."""


def slug(secret_type: str) -> str:
    """The kind a secret type is redacted as: lower case, words joined by ``-``.

    >>> slug("AWS Access Key"), slug("JSON Web Token")
    ('aws-access-key', 'json-web-token')
    """
    return "-".join(re.findall(r"[a-z0-9]+", secret_type.lower()))


def looks_random(value: str, entropy: float) -> bool:
    """Whether an assigned value is high-entropy enough to be a secret: at least 10
    characters, letters and digits both, and a Shannon entropy (bits per character, as
    detect-secrets measures it) of at least ``log2(len) - 1``, capped at 3.7.

    >>> looks_random("wJalrXUtnFEMI7K5MDENGbPxRfiCYzEXAMPLEKEY", 4.5)
    True
    >>> looks_random("created_at_desc", 3.3), looks_random("1234567890", 2.9)
    (False, False)
    """
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    floor = min(3.7, math.log2(len(value)) - 1.0)
    return len(value) >= 10 and has_letter and has_digit and entropy >= floor


class Plugin(msgspec.Struct, frozen=True):
    """One detector: its kind, its anchor (a cheap necessary condition on a line), the
    detect-secrets plugin object and the patterns whose matches it reports."""

    name: str
    kind: str
    anchor: re.Pattern[str]
    detector: Any
    patterns: tuple[re.Pattern[str], ...]

    def spans(self, line: str) -> Iterator[tuple[int, int]]:
        """Where in ``line`` the secrets this plugin reports are: each match (its non-empty
        groups, or the whole match) whose text is among what ``analyze_string`` yields."""
        found = {value.strip(" \t=:\"'") for value in self.detector.analyze_string(line)}
        found.discard("")
        if not found:
            return
        for pattern in self.patterns:
            for match in pattern.finditer(line):
                groups = [i for i in range(1, (pattern.groups or 0) + 1) if match.group(i)]
                for index in groups or [0]:
                    start, end = match.span(index)
                    text = match.group(index)
                    lead = len(text) - len(text.lstrip(" \t=:\"'"))
                    trail = len(text) - len(text.rstrip(" \t=:\"'"))
                    if text.strip(" \t=:\"'") in found:
                        yield start + lead, end - trail


class Detectors(msgspec.Struct, frozen=True):
    """Every plugin redaction runs, and one pattern that finds the lines any could hit."""

    plugins: tuple[Plugin, ...]
    lines: re.Pattern[str]


def _require() -> Any:
    """detect-secrets' plugin module, or INVALID_CONFIG saying how to install it."""
    try:
        from detect_secrets.core.plugins import util
    except ImportError as exc:
        raise SessionReferenceError(MISSING, INVALID_CONFIG) from exc
    return util


def _extra_plugins(base: Any, entropy: Any) -> Iterator[Any]:
    """detect-secrets plugin classes for :data:`EXTRA_FORMATS` and ``KEY=value`` assignments."""
    for secret_type, pattern in EXTRA_FORMATS:
        name = "".join(w.capitalize() for w in re.findall(r"[A-Za-z]+", secret_type)) + "Detector"
        yield type(name, (base,), {"secret_type": secret_type, "denylist": [re.compile(pattern)]})

    def analyze_string(self: Any, string: str) -> Iterator[str]:
        from detect_secrets.filters import heuristic

        for name, value in self.denylist[0].findall(string):
            if (
                heuristic.is_templated_secret(value)
                or heuristic.is_prefixed_with_dollar_sign(value)
                or heuristic.is_sequential_string(value)
                or heuristic.is_potential_uuid(value)
                or heuristic.is_indirect_reference(f"{name}={value}")
            ):
                continue
            if looks_random(value, entropy.calculate_shannon_entropy(value)):
                yield value

    yield type(
        "SecretAssignmentDetector",
        (base,),
        {
            "secret_type": "Secret Assignment",
            "denylist": [re.compile(ASSIGNMENT)],
            "analyze_string": analyze_string,
        },
    )


@functools.cache
def builtin_detectors() -> Detectors:
    """The plugins of :data:`ANCHORS`, built once per process (detect-secrets imported here).

    >>> sorted(p.kind for p in builtin_detectors().plugins)[:3]
    ['anthropic-api-key', 'artifactory-credentials', 'aws-access-key']
    """
    util = _require()
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    classes = [
        cls
        for cls in util.get_mapping_from_secret_type_to_class().values()
        if issubclass(cls, RegexBasedDetector) and cls.__name__ not in SKIPPED_PLUGINS
    ]
    classes += _extra_plugins(RegexBasedDetector, Base64HighEntropyString())
    plugins = tuple(_plugin(cls) for cls in sorted(classes, key=lambda c: c.__name__))
    anchors = sorted({p.anchor.pattern for p in plugins})
    return Detectors(plugins, re.compile("|".join(anchors)))


def _plugin(cls: Any) -> Plugin:
    """A :class:`Plugin` of a detect-secrets class: every regex-based plugin has a denylist."""
    name = cls.__name__
    anchor = ANCHORS.get(name, _EXTRA_ANCHORS.get(cls.secret_type, EVERY_LINE))
    patterns: Sequence[re.Pattern[str]] = cls.denylist
    return Plugin(name, slug(cls.secret_type), re.compile(anchor), cls(), tuple(patterns))
