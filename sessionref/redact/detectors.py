"""Which secrets redaction looks for: detect-secrets' plugins, a few formats they lack, and a
cheap test of which lines could hold any of them (docs/redaction.md §What counts as a secret).

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

#: detect-secrets' plugins that are not used: a public IP address is not a secret; a bare
#: high-entropy string is as often a commit SHA, a UUID or a lockfile hash (their entropy
#: measure is used instead by the assignment detector, where a secret's name says what it is);
#: the keyword plugin takes any value after ``password =``, code included.
SKIPPED_PLUGINS: Final = frozenset(
    {
        "IPPublicDetector",
        "Base64HighEntropyString",
        "HexHighEntropyString",
        "KeywordDetector",
    }
)

#: detect-secrets' plugins whose patterns are replaced by wider ones.
#:
#: A password in a URL whose user is empty (``redis://:password@host``), where detect-secrets
#: wants a user, and one that holds what RFC 3986 allows there besides letters and digits
#: (``! $ & ' ( ) * + , ; = :``), which detect-secrets refuses: a password with punctuation
#: passed whole. What a URI never holds unencoded (``" < > \\ ^ ` { | }``) ends it, so that a
#: match never runs across the quotes of JSON (``{"a": "http://x:y", "b": "z@h"}``) and a
#: replacement keeps them.
#:
#: GitLab tokens of more than 50 characters after their prefix: detect-secrets takes 20 to 50
#: and wants no word character after them, so a longer one passed whole, as GitLab's routable
#: tokens do (``glpat-`` and 37 to 310 characters, then ``.<version>.<check>``, taken here
#: with the token). The fixed-length kinds keep detect-secrets' patterns.
WIDENED: Final[dict[str, tuple[str, ...]]] = {
    "BasicAuthDetector": (r'://[^:/?#\[\]@\s"<>\\^`{|}]*:([^/?#\[\]@\s"<>\\^`{|}]+)@',),
    "GitLabTokenDetector": (
        r"(?:glpat|gldt|glft|glsoat|glrt)-[A-Za-z0-9_\-]{20,}(?:\.[0-9A-Za-z]+\.[0-9A-Za-z]+)?",
        r"GR1348941[A-Za-z0-9_\-]{20,}",
        r"glcbt-(?:[0-9a-fA-F]{2}_)?[A-Za-z0-9_\-]{20,}",
        r"glimt-[A-Za-z0-9_\-]{25}(?!\w)",
        r"glptt-[A-Za-z0-9_\-]{40}(?!\w)",
        r"glagent-[A-Za-z0-9_\-]{50,1024}(?!\w)",
        r"gloas-[A-Za-z0-9_\-]{64}(?!\w)",
    ),
}

#: Formats detect-secrets 1.5 does not know, as (secret type, pattern); each pattern's first
#: group, when it has one, is the secret. The plugin of ``"Google API Key"`` is named
#: ``GoogleApiKeyDetector`` (its anchors are keyed by that name).
EXTRA_FORMATS: Final = (
    ("Artifactory API Key", r"AKCp[A-Za-z0-9]{69}"),
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

#: Necessary conditions: a line that matches none of a plugin's anchors cannot hold what that
#: plugin finds (tests/test_redact_detectors.py checks it on every corpus line). Each anchor
#: begins with a literal, so that searching a text for it is fast; ``FOLDED`` anchors are
#: literals searched in the lower-cased text (for plugins that ignore case, or read names).
ANCHORS: Final[dict[str, tuple[str, ...]]] = {
    "ArtifactoryDetector": ("AKC", r"AP[\dA-F]"),
    "ArtifactoryApiKeyDetector": ("AKCp",),
    "AWSKeyDetector": ("A3T", "ABIA", "ACCA", "AKIA", "ASIA"),
    "AzureStorageKeyDetector": ("AccountKey=",),
    "BasicAuthDetector": ("://",),
    "CloudantDetector": ("://",),
    "DiscordBotTokenDetector": (r"M[\w-]{23}", r"N[\w-]{23}", r"O[\w-]{23}"),
    "GitHubTokenDetector": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "GitLabTokenDetector": (r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-", "GR1348941"),
    "JwtTokenDetector": ("eyJ",),
    "MailchimpDetector": (r"-us\d",),
    "NpmDetector": ("_authToken=",),
    "OpenAIDetector": ("T3BlbkFJ",),
    "PrivateKeyDetector": ("PRIVATE KEY", "PuTTY-User-Key-File-2"),
    "PypiTokenDetector": ("pypi-AgE",),
    "SendGridDetector": (r"SG\.",),
    "SlackDetector": ("://",),
    "SoftlayerDetector": ("://",),
    "SquareOAuthDetector": ("sq0csp-",),
    "StripeDetector": ("sk_live_", "rk_live_"),
    "TelegramBotTokenDetector": (r":[0-9A-Za-z_-]{35}",),
    "TwilioKeyDetector": (r"AC[a-z0-9]{32}", r"SK[a-z0-9]{32}"),
    "AnthropicApiKeyDetector": ("sk-ant-",),
    "OpenaiProjectKeyDetector": ("sk-proj-", "sk-svcacct-", "sk-admin-"),
    "GoogleApiKeyDetector": ("AIza",),
    "GoogleOauthClientSecretDetector": ("GOCSPX-",),
    "HuggingFaceTokenDetector": ("hf_",),
    "GithubFineGrainedTokenDetector": ("github_pat_",),
    "NpmAccessTokenDetector": ("npm_",),
    "StripeTestKeyDetector": ("sk_test_", "rk_test_"),
    "StripeWebhookSecretDetector": ("whsec_",),
    "DigitaloceanTokenDetector": ("doo_v1_", "dop_v1_", "dor_v1_"),
    "ShopifyTokenDetector": ("shpat_", "shpca_", "shppa_", "shpss_"),
    "GroqApiKeyDetector": ("gsk_",),
}
FOLDED: Final[dict[str, tuple[str, ...]]] = {
    "AWSKeyDetector": ("aws",),
    "SlackDetector": ("xox",),
    "CloudantDetector": ("key", "pw", "pass", "token"),
    "IbmCloudIamDetector": ("key", "pw", "pass", "token"),
    "IbmCosHmacDetector": ("key",),
    "SoftlayerDetector": ("key", "pw", "pass", "token"),
    "SecretAssignmentDetector": ("key", "token", "secret", "pass", "pw", "credential", "auth"),
    "BearerTokenDetector": ("bearer",),
    "BasicAuthorizationDetector": ("authorization",),
}
EVERY_LINE: Final = (r"[^\n]",)
"""The anchor of a plugin a later detect-secrets may add: every line is scanned with it."""

ASSIGNMENT: Final = (
    r"(?<![\w.-])((?:[A-Za-z_][\w.-]*?)?"
    r"(?i:key|token|secret|passw(?:or)?d|passphrase|pwd|pass|credentials?|auth)[\w.-]*)"
    r"[\"'\]]{0,2}\s*(?:=|:=|:|=>)\s*[\"'`]{0,2}(?=([^\s\"'`,;]{10,}))"
)
"""``NAME=value`` (or ``:``, ``:=``, ``=>``), quoted or not, whose name holds a secret word
(``DB_PASSWORD``) or is one (``PASSWORD``, ``token``). The value is looked ahead at, not
consumed, so that an assignment inside another's value is found too
(``credential: "db_password=…"``)."""


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


_DELIMITERS: Final = "=:\"'" + "".join(c for c in map(chr, range(0x3001)) if c.isspace())
"""What some plugins' matches include around a secret: a quote, ``=``, ``:`` or any white
space ``\\s`` matches (Artifactory's pattern ends with one, so a line end after the key
stays)."""


class Plugin(msgspec.Struct, frozen=True):
    """One detector: its kind, its anchors (:data:`ANCHORS`, :data:`FOLDED`), the
    detect-secrets plugin object and the patterns whose matches it reports."""

    name: str
    kind: str
    anchors: tuple[re.Pattern[str], ...]
    folded: tuple[re.Pattern[str], ...]
    detector: Any
    patterns: tuple[re.Pattern[str], ...]

    def hits(self, line: str) -> bool:
        """Whether one of this plugin's anchors is in ``line``.

        >>> next(p for p in builtin_detectors().plugins if p.name == "AWSKeyDetector").hits("Aws")
        True
        """
        lowered = line.lower()
        return any(a.search(line) for a in self.anchors) or any(
            f.search(lowered) for f in self.folded
        )

    def spans(self, line: str) -> Iterator[tuple[int, int]]:
        """Where in ``line`` the secrets this plugin reports are: each match (its non-empty
        groups, or the whole match) whose text is among what ``analyze_string`` yields."""
        found = {value.strip(_DELIMITERS) for value in self.detector.analyze_string(line)}
        found.discard("")
        if not found:
            return
        for pattern in self.patterns:
            for match in pattern.finditer(line):
                groups = [i for i in range(1, (pattern.groups or 0) + 1) if match.group(i)]
                for index in groups or [0]:
                    start, end = match.span(index)
                    text = match.group(index)
                    lead = len(text) - len(text.lstrip(_DELIMITERS))
                    trail = len(text) - len(text.rstrip(_DELIMITERS))
                    if text.strip(_DELIMITERS) in found:
                        yield start + lead, end - trail


class Anchor(msgspec.Struct, frozen=True):
    """One anchor pattern and the plugins (indexes into :attr:`Detectors.plugins`) it
    anchors; a ``folded`` one is searched in the lower-cased text."""

    pattern: re.Pattern[str]
    folded: bool
    plugins: tuple[int, ...]


class Detectors(msgspec.Struct, frozen=True):
    """Every plugin redaction runs, and every distinct anchor with the plugins it anchors."""

    plugins: tuple[Plugin, ...]
    anchors: tuple[Anchor, ...]


def _require() -> Any:
    """detect-secrets' plugin module, or INVALID_CONFIG saying how to install it."""
    try:
        from detect_secrets.core.plugins import util
    except ImportError as exc:
        raise SessionReferenceError(MISSING, INVALID_CONFIG) from exc
    return util


def _extra_plugins(base: Any, entropy: Any) -> Iterator[Any]:
    """detect-secrets plugin classes for :data:`EXTRA_FORMATS` and ``KEY=value`` assignments."""
    from detect_secrets.filters import heuristic

    for secret_type, pattern in EXTRA_FORMATS:
        name = "".join(w.capitalize() for w in re.findall(r"[A-Za-z]+", secret_type)) + "Detector"
        yield type(name, (base,), {"secret_type": secret_type, "denylist": [re.compile(pattern)]})

    def analyze_string(self: Any, string: str) -> Iterator[str]:
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

    >>> kinds = {p.kind for p in builtin_detectors().plugins}
    >>> len(kinds), {"aws-access-key", "private-key", "secret-assignment"} <= kinds
    (39, True)
    """
    util = _require()
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    classes = [
        widened(cls)
        for cls in util.get_mapping_from_secret_type_to_class().values()
        if issubclass(cls, RegexBasedDetector) and cls.__name__ not in SKIPPED_PLUGINS
    ]
    classes += _extra_plugins(RegexBasedDetector, Base64HighEntropyString())
    plugins = tuple(_plugin(cls) for cls in sorted(classes, key=lambda c: c.__name__))
    anchored: dict[tuple[str, bool], list[int]] = {}
    for index, plugin in enumerate(plugins):
        for folded, patterns in ((False, plugin.anchors), (True, plugin.folded)):
            for pattern in patterns:
                anchored.setdefault((pattern.pattern, folded), []).append(index)
    anchors = (Anchor(re.compile(p), f, tuple(i)) for (p, f), i in sorted(anchored.items()))
    return Detectors(plugins, tuple(anchors))


def widened(cls: Any) -> Any:
    """A detect-secrets plugin class with its :data:`WIDENED` patterns, if it has any: a
    subclass of the same name, so its anchors stay its own.

    >>> from detect_secrets.plugins.basic_auth import BasicAuthDetector
    >>> list(widened(BasicAuthDetector)().analyze_string("redis://:Sup3rS3cret@cache:6379/0"))
    ['Sup3rS3cret']
    >>> list(widened(BasicAuthDetector)().analyze_string("postgres://app:9RB!G1y$K=w:L@db/x"))
    ['9RB!G1y$K=w:L']
    """
    patterns = WIDENED.get(cls.__name__)
    if patterns is None:
        return cls
    return type(cls.__name__, (cls,), {"denylist": [re.compile(p) for p in patterns]})


def _plugin(cls: Any) -> Plugin:
    """A :class:`Plugin` of a detect-secrets class: every regex-based plugin has a denylist."""
    name = cls.__name__
    anchors = ANCHORS.get(name, () if name in FOLDED else EVERY_LINE)
    folded = FOLDED.get(name, ())
    patterns: Sequence[re.Pattern[str]] = cls.denylist
    return Plugin(
        name,
        slug(cls.secret_type),
        tuple(map(re.compile, anchors)),
        tuple(map(re.compile, folded)),
        cls(),
        tuple(patterns),
    )
