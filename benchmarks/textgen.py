"""Seeded generator of realistic multi-script text for benchmark session logs.

Texts are built from *tokens* (the unit a model streams), so a message body and
its chunk stream come from the same token list: the stream groups a few tokens
per delta and the message joins them all. Tokens mix English prose, code with
``<``/quotes/backslashes, Chinese/Japanese, Greek and emoji (including ZWJ
sequences and flags), separated by spaces and newlines.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator, Sequence

_ENGLISH_WORDS = """
the of and to in is that it for on with as this was be by are or from at an not have
but we they which one you all will can there if would their what so about when up
out more them some could into other than then these two may only first new way
should because any where most after also how over just like between file function
value return error test module import class request response session event surface
snapshot budget reference config parser buffer stream token chunk message header
compact checkpoint index offset length string bytes install build deploy commit
branch merge rebase patch review cache worker queue timeout retry handler callback
promise async await yield iterator generator
"""
_ENGLISH = tuple(_ENGLISH_WORDS.split())

_CODE = (
    "if (a < b) {",
    "return x;",
    "}",
    "const value = await read(path);",
    'console.log("done");',
    "def fold(events):",
    "    return surface",
    "for i in range(n):",
    '<div class="row">',
    "</div>",
    "<script>",
    "</script>",
    "x <= y && y < z",
    "fn main() -> Result<(), Error> {",
    "let s: Vec<&str> = v.iter().collect();",
    "SELECT * FROM t WHERE a < 3;",
    'raise ValueError(f"bad {name!r}")',
    "path = 'C:\\\\Users\\\\dev\\\\repo'",
    "assert len(out) <= max_bytes",
    '{"key": "value", "n": 42}',
    "git log --oneline | head",
    "npm install --save-exact",
    "<referenced-sessions>",
    "</referenced-sessions>",
    "`code` and *emphasis*",
)

_CJK = (
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对"
    "可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公"
    "同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正"
    "会话快照引用字节预算压缩检查点事件表面读取写入服务测试函数错误结果工具消息内容"
    "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん"
)

_CJK_PUNCT = ("，", "。", "、", "：", "「", "」", "（", "）", "！", "？")

_GREEK_WORDS = """
και το της η ο να σε για με που από στο είναι τα τη δεν θα στην ένα μια αλλά λόγος
κόσμος ψυχή αλήθεια σύστημα αρχείο μήνυμα συνεδρία όριο ακολουθία λάθος
"""
_GREEK = tuple(_GREEK_WORDS.split())

_EMOJI = (
    "😀",
    "🚀",
    "🔥",
    "✅",
    "❌",
    "⚠️",
    "📦",
    "🧪",
    "🐍",
    "🦀",
    "👍🏽",
    "👩‍💻",
    "👨‍👩‍👧‍👦",
    "🇯🇵",
    "🇬🇷",
    "🏳️‍🌈",
    "✨",
    "🎉",
    "💡",
    "🙂",
)

_QUOTES = (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("«", "»"), ("`", "`"))

_SCRIPT_WEIGHTS = {
    "english": 0.62,
    "code": 0.12,
    "cjk": 0.14,
    "greek": 0.05,
    "emoji": 0.03,
    "quote": 0.04,
}


class TextFactory:
    """Deterministic source of token lists and plain strings.

    All randomness comes from the ``random.Random`` passed in, so a factory built
    from the same seed always yields the same sequence of texts.
    """

    def __init__(
        self,
        rng: random.Random,
        lone_surrogate_rate: float = 0.0,
        lone_rng: random.Random | None = None,
    ) -> None:
        """Create a factory drawing from ``rng``.

        ``lone_surrogate_rate`` is the probability that a text gets one lone
        UTF-16 surrogate (as JavaScript strings may hold); 0 disables it. Where
        they go is drawn from ``lone_rng`` (default ``rng``): with a separate one,
        the texts are those of a factory without surrogates, each plus its own.
        """
        self._rng = rng
        self._lone = lone_surrogate_rate
        self._lone_rng = rng if lone_rng is None else lone_rng
        self._kinds = list(_SCRIPT_WEIGHTS)
        self._weights = list(_SCRIPT_WEIGHTS.values())

    def tokens(self, target_chars: int, profile: str = "mixed") -> list[str]:
        """Return tokens whose concatenation is about ``target_chars`` characters.

        ``profile`` biases the script mix: ``mixed`` (default weights),
        ``english``, ``cjk``, ``greek`` or ``code``.
        """
        rng = self._rng
        out: list[str] = []
        size = 0
        line_len = 0
        while size < target_chars:
            kind = self._pick_kind(profile)
            batch = self._run(kind, rng.randint(3, 14))
            for tok in batch:
                out.append(tok)
                size += len(tok)
                line_len += len(tok)
            if line_len > rng.randint(60, 400):
                nl = "\n\n" if rng.random() < 0.3 else "\n"
                out.append(nl)
                size += len(nl)
                line_len = 0
        if out:
            out[0] = out[0].lstrip(" ")
        lone = self._lone_rng
        if self._lone and out and lone.random() < self._lone:
            pos = lone.randrange(len(out))
            out[pos] = out[pos] + chr(lone.choice((0xD800, 0xDBFF, 0xDC00, 0xDFFF)))
        return out

    @contextlib.contextmanager
    def without_lone_surrogates(self) -> Iterator[None]:
        """Texts made meanwhile hold no lone surrogate (where their JSON length draws)."""
        rate, self._lone = self._lone, 0.0
        try:
            yield
        finally:
            self._lone = rate

    def text(self, target_chars: int, profile: str = "mixed") -> str:
        """Return one string of about ``target_chars`` characters."""
        return "".join(self.tokens(target_chars, profile))

    def title(self) -> str:
        """Return a short session title (a few words, sometimes CJK or emoji)."""
        rng = self._rng
        profile = rng.choice(("english", "english", "english", "cjk", "greek"))
        words = self._run("cjk" if profile == "cjk" else profile, rng.randint(2, 7))
        title = "".join(words).strip().replace("\n", " ")[:60]
        if rng.random() < 0.15:
            title += " " + rng.choice(_EMOJI)
        return title or "untitled"

    def chunk(self, tokens: Sequence[str], low: int = 1, high: int = 4) -> list[str]:
        """Group ``tokens`` into stream deltas of ``low``..``high`` tokens each."""
        rng = self._rng
        out: list[str] = []
        i = 0
        n = len(tokens)
        while i < n:
            k = rng.randint(low, high)
            out.append("".join(tokens[i : i + k]))
            i += k
        return out

    def _pick_kind(self, profile: str) -> str:
        """Choose the script of the next run of tokens for ``profile``."""
        rng = self._rng
        if profile == "mixed":
            return rng.choices(self._kinds, self._weights)[0]
        if rng.random() < 0.8:
            return profile
        return rng.choices(self._kinds, self._weights)[0]

    def _run(self, kind: str, n: int) -> list[str]:
        """Return ``n`` tokens of one script ``kind``."""
        rng = self._rng
        if kind == "english":
            words = rng.choices(_ENGLISH, k=n)
            if rng.random() < 0.3:
                words[0] = words[0].capitalize()
            toks = [" " + w for w in words]
            if rng.random() < 0.4:
                toks[-1] += rng.choice((".", ",", ";", ":", "?", "!"))
            return toks
        if kind == "code":
            return ["\n" + line for line in rng.choices(_CODE, k=max(1, n // 3))]
        if kind == "cjk":
            toks = ["".join(rng.choices(_CJK, k=rng.randint(1, 2))) for _ in range(n)]
            toks.append(rng.choice(_CJK_PUNCT))
            return toks
        if kind == "greek":
            return [" " + w for w in rng.choices(_GREEK, k=n)]
        if kind == "emoji":
            return [" " + "".join(rng.choices(_EMOJI, k=rng.randint(1, 3)))]
        left, right = rng.choice(_QUOTES)
        inner = " ".join(rng.choices(_ENGLISH, k=max(1, n // 2)))
        return [" " + left + inner + right]
