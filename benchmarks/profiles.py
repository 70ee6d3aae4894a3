"""The workloads a benchmark session can be: how long each kind of text is, and how often."""

from __future__ import annotations

from dataclasses import dataclass, replace

CharRange = tuple[int, int]


@dataclass(frozen=True)
class Profile:
    """The kind of session to generate: how long each kind of text is, and how often.

    Each ``*_chars`` is a ``(low, high)`` range of characters, drawn
    log-uniformly and then multiplied by ``text_scale`` (as are tool arguments,
    summaries and injected texts). ``narration_rate`` is the chance that a step
    before the last one writes text besides its reasoning and tool call.
    ``lone_surrogate_rate`` is the chance that a text holds a lone UTF-16 surrogate.
    ``draws_like`` names the profile whose size sessions this one's repeat draw for draw
    (apart from lone surrogates, drawn on their own), if any.
    """

    name: str
    text_scale: float
    user_chars: CharRange
    narration_rate: float
    narration_chars: CharRange
    answer_chars: CharRange
    reasoning_chars: CharRange
    tool_output_chars: CharRange
    lone_surrogate_rate: float = 0.0
    draws_like: str | None = None


TOOLS = Profile(
    name="tools",
    text_scale=0.41,  # 1600 turns ≈ 25 MB of JSONL
    user_chars=(60, 2400),
    narration_rate=0.45,
    narration_chars=(20, 500),
    answer_chars=(400, 5000),
    reasoning_chars=(80, 2000),
    tool_output_chars=(60, 9000),
)
"""A tool-heavy coding session: long reasoning and tool output, short prompts.

Conversation text (what a snapshot keeps) is 8% of the log at 1600 turns.
"""

CHAT = Profile(
    name="chat",
    text_scale=0.22,  # 1600 turns ≈ 25 MB of JSONL
    user_chars=(600, 120000),
    narration_rate=1.0,
    narration_chars=(30, 600),
    answer_chars=(600, 6000),
    reasoning_chars=(20, 200),
    tool_output_chars=(30, 600),
)
"""A conversation-heavy session: the user pastes logs, specs and code, the
assistant narrates every step and answers at length, tools are quick lookups.

Conversation text is 38% of the log at 1600 turns (user messages: median 2 KB,
mean 5.7 KB). The ranges were calibrated so that, with 1600 turns ≈ 25 MB, the
published JavaScript package takes what the performance issue reports for its
sessions (0.59 s, 9.3 s and 142 s at 100, 400 and 1600 turns; measured here:
about 0.6 s, 9.4 s and 146 s in two runs). Its cost grows with messages × conversation
bytes, so tool-heavy logs of the same size take it six times less (24 s at
1600 turns).
"""

SURROGATES = replace(CHAT, name="surrogates", lone_surrogate_rate=0.03, draws_like="chat")
"""``chat`` as real logs are not always clean: a streaming model split an emoji across two
deltas and ``JSON.stringify`` wrote each half as a lone ``\\udxxx`` escape. With one text in
33 holding one (tool-call arguments excepted: their JSON length draws how they stream),
about 1% of the log's lines do (0.95% at 100 turns, 1.16% at 400); a reader that cannot
decode those lines in bulk pays for it here. Each size's session is the ``chat`` one of its
size with those surrogates added, so the two compare text for text.
"""

PROFILES = {profile.name: profile for profile in (CHAT, TOOLS, SURROGATES)}
