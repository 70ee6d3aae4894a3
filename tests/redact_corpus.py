"""Corpora for the redaction tests: fake secrets of many kinds, generated from a seed (shaped
as the providers document their formats; none is a real credential), and ordinary text that
must come through redaction unchanged."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from collections.abc import Callable
from typing import NamedTuple

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = string.ascii_letters + DIGITS
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"


class Secret(NamedTuple):
    """A secret as it is written (``snippet``, e.g. ``KEY=value``) and its random part
    (``core``), which must never reach the output, whole or in part."""

    kind: str
    snippet: str
    core: str


FRAGMENT = 8
"""A secret leaks if any run of this many characters of its random part reaches the output."""


def leaked(secret: Secret, text: str) -> list[str]:
    """The runs of :data:`FRAGMENT` characters of ``secret``'s random part found in ``text``."""
    core = secret.core
    return [
        core[i : i + FRAGMENT]
        for i in range(len(core) - FRAGMENT + 1)
        if core[i : i + FRAGMENT] in text
    ]


def pick(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` characters drawn from ``alphabet``."""
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(rng: random.Random) -> tuple[str, str]:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": pick(rng, DIGITS, 10), "name": pick(rng, LOWER, 8), "iat": 1700000000}
    payload = _b64url(json.dumps(claims).encode())
    signature = _b64url(rng.randbytes(32))
    token = f"{header}.{payload}.{signature}"
    return token, payload + "." + signature


def _private_key(rng: random.Random, label: str) -> tuple[str, str]:
    body = base64.b64encode(rng.randbytes(192)).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    block = f"-----BEGIN {label}PRIVATE KEY-----\n{lines}\n-----END {label}PRIVATE KEY-----"
    return block, body


Maker = Callable[[random.Random], tuple[str, str]]


def _token(prefix: str, alphabet: str, n: int, suffix: str = "") -> Maker:
    def make(rng: random.Random) -> tuple[str, str]:
        core = pick(rng, alphabet, n)
        return prefix + core + suffix, core

    return make


def _assigned(name: str, maker: Maker, quote: str = "", sign: str = "=") -> Maker:
    def make(rng: random.Random) -> tuple[str, str]:
        value, core = maker(rng)
        return f"{name}{sign}{quote}{value}{quote}", core

    return make


def _password(rng: random.Random) -> tuple[str, str]:
    """A random password of letters and digits, both surely in it."""
    core = pick(rng, ALNUM, 14) + rng.choice(DIGITS) + rng.choice(LOWER)
    return core, core


def _url(rng: random.Random) -> tuple[str, str]:
    password = pick(rng, ALNUM, 14)
    return f"postgres://app_user:{password}@db.internal.example:5432/app", password


def _url_without_user(rng: random.Random) -> tuple[str, str]:
    password = pick(rng, ALNUM, 14)
    return f"redis://:{password}@cache.internal.example:6379/0", password


def _url_with_punctuation(rng: random.Random) -> tuple[str, str]:
    """A password in a URL with what RFC 3986 allows there besides letters and digits: a
    newcomer's trial found ``!`` or ``$`` in it let the whole password through."""
    password = pick(rng, ALNUM, 8) + rng.choice("!$*+,;=:") + pick(rng, ALNUM + "!$*+,;=:", 8)
    return f"postgres://app:{password}@db.internal.example/app", password


def _aws_secret(rng: random.Random) -> tuple[str, str]:
    key = pick(rng, ALNUM + "/+", 40)
    return f'aws_secret_access_key = "{key}"', key


def _slack_webhook(rng: random.Random) -> tuple[str, str]:
    core = pick(rng, ALNUM, 24)
    team, bot = pick(rng, UPPER + DIGITS, 10), pick(rng, UPPER + DIGITS, 10)
    return f"https://hooks.slack.com/services/T{team}/B{bot}/{core}", core


def _discord(rng: random.Random) -> tuple[str, str]:
    core = pick(rng, URLSAFE, 27)
    return f"M{pick(rng, ALNUM, 23)}.{pick(rng, URLSAFE, 6)}.{core}", core


def _telegram(rng: random.Random) -> tuple[str, str]:
    core = pick(rng, URLSAFE, 35)
    return f"{rng.randrange(10**8, 10**9)}:{core}", core


def _bearer(rng: random.Random) -> tuple[str, str]:
    core = pick(rng, ALNUM + "._-", 40)
    return f"Authorization: Bearer {core}", core


MAKERS: dict[str, Maker] = {
    "aws-access-key-id": _token("AKIA", UPPER + DIGITS, 16),
    "aws-secret-access-key": _aws_secret,
    "azure-storage-key": _token("AccountKey=", ALNUM + "+/", 86, "=="),
    "password-in-url": _url,
    "password-in-url-without-user": _url_without_user,
    "discord-bot-token": _discord,
    "github-token": _token("ghp_", ALNUM, 36),
    "github-fine-grained-token": lambda rng: _token(
        "github_pat_" + pick(rng, ALNUM, 22) + "_", ALNUM, 59
    )(rng),
    "gitlab-token": _token("glpat-", URLSAFE, 20),
    "jwt": _jwt,
    "mailchimp-key": _token("", HEX, 32, "-us14"),
    "npm-token": _token("npm_", ALNUM, 36),
    "openai-legacy-key": lambda rng: _token("sk-" + pick(rng, ALNUM, 20) + "T3BlbkFJ", ALNUM, 20)(
        rng
    ),
    "openai-project-key": _token("sk-proj-", URLSAFE, 120),
    "anthropic-key": _token("sk-ant-api03-", URLSAFE, 93, "AA"),
    "google-api-key": _token("AIza", URLSAFE, 35),
    "hugging-face-token": _token("hf_", ALNUM, 34),
    "rsa-private-key": lambda rng: _private_key(rng, "RSA "),
    "openssh-private-key": lambda rng: _private_key(rng, "OPENSSH "),
    "pypi-token": _token("pypi-AgEIcHlwaS5vcmc", URLSAFE, 80),
    "sendgrid-key": lambda rng: _token("SG." + pick(rng, URLSAFE, 22) + ".", URLSAFE, 43)(rng),
    "slack-bot-token": lambda rng: _token(
        f"xoxb-{pick(rng, DIGITS, 12)}-{pick(rng, DIGITS, 13)}-", LOWER + DIGITS, 24
    )(rng),
    "slack-webhook": _slack_webhook,
    "square-oauth-secret": _token("sq0csp-", URLSAFE, 43),
    "stripe-live-key": _token("sk_live_", ALNUM, 99),
    "stripe-test-key": _token("sk_test_", ALNUM, 24),
    "telegram-bot-token": _telegram,
    "twilio-api-key": _token("SK", LOWER + DIGITS, 32),
    "artifactory-api-key": _token("AKCp", ALNUM, 69),
    "digitalocean-token": _token("dop_v1_", HEX, 64),
    "groq-api-key": _token("gsk_", ALNUM, 52),
    "env-assignment": _assigned("PAYMENTS_API_TOKEN", _token("", ALNUM, 32)),
    "quoted-password": _assigned("db_password", _token("", ALNUM + "!#%", 18), '"'),
    "bare-password": _assigned("PASSWORD", _password),
    "bare-password-spaced": _assigned("password", _password, '"', " = "),
    "bare-secret": _assigned("SECRET", _password),
    "bare-token-quoted": _assigned("TOKEN", _password, '"'),
    "bare-key-yaml": _assigned("key", _password, "", ": "),
    "bearer-token": _bearer,
    "password-in-url-with-punctuation": _url_with_punctuation,
}


def secrets(seed: int, per_kind: int = 3) -> list[Secret]:
    """``per_kind`` fake secrets of every kind of :data:`MAKERS`, the same for a seed."""
    rng = random.Random(seed)
    out = []
    for kind, make in MAKERS.items():
        for _ in range(per_kind):
            snippet, core = make(rng)
            out.append(Secret(kind, snippet, core))
    return out


CONTEXTS: dict[str, Callable[[str], str]] = {
    "prose": lambda s: f"I pasted {s} into the settings yesterday; is that the right one?",
    "json": lambda s: json.dumps({"step": 3, "config": {"credential": s}, "ok": True}),
    "shell": lambda s: f"$ env {s} ./deploy.sh --region eu-west-1 && echo done",
    "beside <": lambda s: f"<code>{s}</code> and <{s}>",
}


def ordinary_lines(seed: int, count: int) -> list[str]:
    """Lines of what sessions are mostly made of (code, logs, commands, hashes, ids, UUIDs,
    commit SHAs, lockfile integrity hashes): none holds a secret."""
    rng = random.Random(seed)

    def sha() -> str:
        return hashlib.sha1(rng.randbytes(8)).hexdigest()

    def integrity() -> str:
        return base64.b64encode(hashlib.sha512(rng.randbytes(8)).digest()).decode()

    def ident() -> str:
        return "_".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))

    templates: list[Callable[[], str]] = [
        lambda: f"commit {sha()}",
        lambda: f"{sha()[:7]} {' '.join(rng.choice(WORDS) for _ in range(6))}",
        lambda: f"Merge: {sha()[:12]} {sha()[:12]}",
        lambda: f'session_id = "{uuid.UUID(int=rng.getrandbits(128))}"',
        lambda: f"request {uuid.UUID(int=rng.getrandbits(128))} took {rng.randint(1, 900)} ms",
        lambda: f'  "integrity": "sha512-{integrity()}",',
        lambda: (
            f'  resolved "https://registry.yarnpkg.com/{ident()}/-/{ident()}-1.2.3.tgz#{sha()}"'
        ),
        lambda: f'hash = "sha256:{hashlib.sha256(rng.randbytes(8)).hexdigest()}"',
        lambda: f"  integrity sha512-{integrity()}",
        lambda: f"def {ident()}(self, {ident()}: int) -> str:",
        lambda: f"    return self.{ident()}[{ident()}] if {ident()} else None",
        lambda: (
            f"const {ident()} = await {ident()}({ident()}, {{ timeout: {rng.randint(1, 99)} }});"
        ),
        lambda: f"2024-05-0{rng.randint(1, 9)}T12:{rng.randint(10, 59)}:03Z INFO {ident()} ok",
        lambda: f"ERROR {ident()}: connection reset by peer (attempt {rng.randint(1, 5)})",
        lambda: f"$ git checkout -b {ident().replace('_', '-')} && git push -u origin HEAD",
        lambda: f"$ docker run --rm -v $PWD:/src {ident()}:latest",
        lambda: f'cache_key = f"{ident()}:{{user_id}}"',
        lambda: f'api_key = os.environ["{ident().upper()}_API_KEY"]',
        lambda: "token_count = len(tokenizer.encode(text))",
        lambda: 'password = getpass.getpass("Password: ")',
        lambda: f"token = tokens[{ident()}_index]",
        lambda: f"key: {ident()}",
        lambda: f'secret = vault.read("{ident()}/{ident()}")',
        lambda: f"auth: {rng.choice(['required', 'optional', 'none'])}",
        lambda: f"TOKEN={rng.choice(['', '$GITHUB_TOKEN', '${{ secrets.TOKEN }}'])}",
        lambda: f"SECRET_KEY_FILE=/etc/{ident()}/secret.key",
        lambda: f"primary_key: {ident()}_id",
        lambda: f"see https://github.com/{ident()}/{ident()}/pull/{rng.randint(1, 9999)}",
        lambda: (
            f"docker pull ghcr.io/{ident()}@sha256:{hashlib.sha256(rng.randbytes(4)).hexdigest()}"
        ),
        lambda: f"{' '.join(rng.choice(WORDS) for _ in range(12)).capitalize()}.",
        lambda: f"| {ident()} | {rng.randint(1, 10**6)} | {rng.random():.4f} |",
        lambda: (
            f'File "/home/dev/{ident()}/{ident()}.py", line {rng.randint(1, 999)}, in {ident()}'
        ),
        lambda: f"base64 of the logo: {base64.b64encode(rng.randbytes(24)).decode()}",
        lambda: f"listening on 10.0.{rng.randint(0, 255)}.{rng.randint(1, 254)}:8080",
        lambda: f"x < y && {ident()} <= {rng.randint(1, 99)}",
    ]
    return [rng.choice(templates)() for _ in range(count)]


WORDS = tuple(
    [
        "auth",
        "refactor",
        "session",
        "token",
        "key",
        "value",
        "cache",
        "index",
        "build",
        "merge",
        "review",
        "parser",
        "stream",
        "budget",
        "snapshot",
        "reference",
        "handler",
        "config",
        "deploy",
        "queue",
        "worker",
        "retry",
        "offset",
        "chunk",
        "module",
        "password",
        "reset",
        "secret",
        "manager",
        "keyboard",
        "layout",
        "monkey",
        "patch",
        "author",
        "credential",
        "store",
    ]
)
