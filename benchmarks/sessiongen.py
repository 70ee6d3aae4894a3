"""Generation of the events of one realistic DSH session.

A session is a run of turns: ``turn/start``, a direct ``user/message``, one or
more steps (reasoning/text/tool-call delta streams, ``assistant/message``,
``tool/call``, ``tool/result``) and ``turn/end``. Between turns come occasional
``session/title`` events, tool-result prunes and compactions, all kept valid
against a :class:`~benchmarks.dshlog.SurfaceModel`.
"""

from __future__ import annotations

import random
from typing import Any

from benchmarks.dshlog import LogWriter, StreamKey, SurfaceModel
from benchmarks.profiles import CHAT, PROFILES, SURROGATES, TOOLS, Profile
from benchmarks.textgen import TextFactory
from sessionref.codecs.jsjson import js_json

__all__ = ["CHAT", "PROFILES", "SURROGATES", "TOOLS", "Profile", "SessionGenerator"]

_TOOLS = ("bash", "read_file", "edit_file", "grep", "list_dir")


class SessionGenerator:
    """Generates the events of one session into a :class:`LogWriter`."""

    def __init__(
        self,
        writer: LogWriter,
        rng: random.Random,
        start_time: int,
        *,
        profile: Profile = TOOLS,
        lone_surrogate_rate: float = 0.0,
        lone_rng: random.Random | None = None,
    ) -> None:
        """Draw from ``rng``, and where lone surrogates go from ``lone_rng`` (see
        :class:`TextFactory`); ``profile`` sets text lengths and rates."""
        self.w = writer
        self.rng = rng
        rate = max(lone_surrogate_rate, profile.lone_surrogate_rate)
        self.text = TextFactory(rng, rate, lone_rng)
        self.surface = SurfaceModel()
        self.now = start_time
        self.profile = profile
        self.compactions = 0
        self.prunes = 0
        self.first_user_seq: int | None = None

    # -- helpers

    def _uid(self, prefix: str) -> str:
        """Return a deterministic pseudo-random identifier."""
        return f"{prefix}{self.rng.getrandbits(64):016x}"

    def _tick(self, low: int, high: int) -> int:
        """Advance the clock by ``low``..``high`` ms and return the new time."""
        self.now += self.rng.randint(low, high)
        return self.now

    def _chars(self, low: int, high: int) -> int:
        """Return a scaled, log-uniformly distributed text length."""
        lo = max(1, int(low * self.profile.text_scale))
        hi = max(lo, int(high * self.profile.text_scale))
        return int(lo * (hi / lo) ** self.rng.random())

    def _times(self, n: int, low: int = 4, high: int = 45) -> list[int]:
        """Return ``n`` non-decreasing stream timestamps starting after now."""
        return [self._tick(low, high) for _ in range(n)]

    # -- session

    def run(self, turns: int) -> None:
        """Generate ``turns`` turns with interleaved titles, prunes and compactions."""
        for turn in range(1, turns + 1):
            self._turn(turn)
            if turn == 1 or self.rng.random() < 0.02:
                self._title()
            if turn > 3 and self.rng.random() < 0.04:
                self._prune()
            if len(self.surface.nodes) >= 40 and self.rng.random() < 0.012:
                self._compact()
            self._tick(3_000, 300_000)

    def _turn(self, turn: int) -> None:
        """Generate one complete turn."""
        w, rng = self.w, self.rng
        w.event("turn/start", self._tick(1, 20), {"turn": turn})
        if turn == 1 and rng.random() < 0.7:
            self._user_message(
                self._agent_instructions(), {"kind": "plugin", "plugin": "agent-instructions"}
            )
        seq = self._user_message(
            self.text.text(self._chars(*self.profile.user_chars)), {"kind": "user"}
        )
        if self.first_user_seq is None:
            self.first_user_seq = seq
        if rng.random() < 0.01:
            self._user_message(
                self.text.text(self._chars(200, 3000)),
                {"kind": "session-reference", "form": "recall", "version": 1, "references": []},
            )
        steps = rng.choices((1, 2, 3, 4, 5, 6, 8), (20, 28, 22, 13, 8, 6, 3))[0]
        for step in range(1, steps + 1):
            self._step(turn, step, last=step == steps)
        reason: dict[str, Any] = {"kind": "completed"}
        if rng.random() < 0.02:
            reason = {"kind": "aborted", "reason": {"kind": "user"}}
        w.event("turn/end", self._tick(1, 50), {"turn": turn, "reason": reason})

    def _agent_instructions(self) -> str:
        """Return a plugin-injected AGENTS.md style message."""
        return (
            "<agent-instructions>\n"
            + self.text.text(self._chars(300, 1500), "english")
            + "\n</agent-instructions>"
        )

    def _user_message(self, text: str, source: dict[str, Any]) -> int:
        """Append a user/message with one text block and return its seq."""
        data = {
            "id": self._uid("msg_"),
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": source,
        }
        seq = self.w.event("user/message", self._tick(1, 40), data, surface_op="append")
        self.surface.append(seq)
        return seq

    def _step(self, turn: int, step: int, *, last: bool) -> None:
        """Generate one step: streams, assistant message, tool calls and results."""
        w, rng = self.w, self.rng
        w.event("step/start", self._tick(1, 30), {"turn": turn, "step": step})
        if turn == 1 and step == 1:
            self._request_header()
        self._tick(200, 2_500)  # time to first token
        sources: list[int] = []
        content = [self._reasoning(StreamKey("reasoning", turn, step, 0), sources)]
        if last or rng.random() < self.profile.narration_rate:
            n = self._chars(*(self.profile.answer_chars if last else self.profile.narration_chars))
            content += self._text(StreamKey("text", turn, step, 1), n, sources)
        calls = []
        if not last:
            for k in range(1 if rng.random() < 0.85 else 2):
                calls.append(self._tool_call(turn, step, 2 + k, sources))
        content += calls
        message = {
            "id": self._uid("msg_"),
            "role": "assistant",
            "content": content,
            "source": {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"},
        }
        usage = {
            "inputTokens": rng.randint(2_000, 120_000),
            "outputTokens": rng.randint(20, 4_000),
            "cacheReadTokens": rng.randint(0, 100_000),
        }
        data = {"turn": turn, "step": step, "message": message, "usage": usage}
        seq = w.event(
            "assistant/message", self._tick(1, 20), data, surface_op="append", sources=sources
        )
        self.surface.append(seq)
        for call in calls:
            self._tool_result(turn, step, call["id"], call["name"], call["arguments"])
        w.event("step/end", self._tick(1, 30), {"turn": turn, "step": step})

    def _reasoning(self, key: StreamKey, sources: list[int]) -> dict[str, Any]:
        """Stream reasoning deltas; return the message's reasoning block."""
        deltas = self.text.chunk(
            self.text.tokens(self._chars(*self.profile.reasoning_chars), "english")
        )
        sources += self.w.stream(key, self._times(len(deltas)), deltas)
        return {"type": "reasoning", "text": "".join(deltas)}

    def _text(self, key: StreamKey, n: int, sources: list[int]) -> list[dict[str, Any]]:
        """Stream about ``n`` characters of text; return the message's text block(s).

        One time in ten the text is split at its first newline into two blocks
        (the projection joins blocks with a newline, so the text is unchanged).
        """
        deltas = self.text.chunk(self.text.tokens(n))
        sources += self.w.stream(key, self._times(len(deltas)), deltas)
        text = "".join(deltas)
        if self.rng.random() < 0.1 and "\n" in text:
            head, _, tail = text.partition("\n")
            return [{"type": "text", "text": head}, {"type": "text", "text": tail}]
        return [{"type": "text", "text": text}]

    def _tool_call(self, turn: int, step: int, index: int, sources: list[int]) -> dict[str, Any]:
        """Stream one tool call's arguments; return the message's tool-call block."""
        rng = self.rng
        call_id = self._uid("call_")
        name = rng.choice(_TOOLS)
        with self.text.without_lone_surrogates():  # the pieces' count draws from its length
            args = js_json(self._tool_args(name)).decode("utf-8")
        pieces = []
        i = 0
        while i < len(args):
            k = rng.randint(2, 14)
            pieces.append(args[i : i + k])
            i += k
        if rng.random() < 0.2:  # the provider repeats the name on every delta
            key = StreamKey("tool-call", turn, step, index, call_id, name)
            sources += self.w.stream(key, self._times(len(pieces)), pieces)
        else:  # the name is only on the opening empty delta, which never packs with the rest
            opening = StreamKey("tool-call", turn, step, index, call_id, name)
            sources += self.w.stream(opening, self._times(1), [""])
            key = StreamKey("tool-call", turn, step, index, call_id)
            sources += self.w.stream(key, self._times(len(pieces)), pieces)
        return {"type": "tool-call", "id": call_id, "name": name, "arguments": args}

    def _tool_args(self, name: str) -> dict[str, Any]:
        """Return realistic arguments for tool ``name``."""
        rng, text = self.rng, self.text
        path = rng.choice(("src/", "lib/", "tests/", "docs/")) + text.text(
            8, "english"
        ).strip().replace(" ", "_")
        if name == "bash":
            return {"command": text.text(self._chars(10, 200), "code").strip(), "timeout": 120}
        if name == "edit_file":
            return {
                "path": path,
                "old": text.text(self._chars(20, 600), "code"),
                "new": text.text(self._chars(20, 900), "code"),
            }
        if name == "grep":
            return {"pattern": text.text(12, "english").strip(), "path": path}
        return {"path": path}

    def _tool_result(self, turn: int, step: int, call_id: str, name: str, args: str) -> None:
        """Append tool/call and its tool/result."""
        w = self.w
        w.event(
            "tool/call",
            self._tick(1, 10),
            {
                "turn": turn,
                "step": step,
                "callId": call_id,
                "name": name,
                "arguments": args,
            },
        )
        script = "code" if name in ("read_file", "edit_file") else "mixed"
        output = self.text.text(self._chars(*self.profile.tool_output_chars), script)
        is_error = self.rng.random() < 0.05
        block: dict[str, Any] = {
            "type": "tool-result",
            "toolCallId": call_id,
            "content": [{"type": "text", "text": output}],
        }
        if is_error:
            block["isError"] = True
        data = {
            "turn": turn,
            "step": step,
            "message": {
                "id": self._uid("msg_"),
                "role": "user",
                "content": [block],
                "source": {"kind": "tool", "callId": call_id},
            },
        }
        seq = w.event("tool/result", self._tick(30, 20_000), data, surface_op="append")
        self.surface.append(seq, data)

    def _request_header(self) -> None:
        """Append the log-only request header and context of the first request."""
        tools = [
            {
                "name": name,
                "description": self.text.text(300, "english"),
                "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
            }
            for name in _TOOLS
        ]
        header = {
            "config": {"provider": "deepseek", "model": "deepseek-chat", "reasoningEffort": "high"},
            "system": self.text.text(4_000, "english"),
            "tools": tools,
        }
        self.w.event("request/header", self._tick(1, 5), {"header": header, "reason": "initial"})
        self.w.event(
            "request/context",
            self._tick(1, 5),
            {
                "provider": "deepseek",
                "model": "deepseek-chat",
                "contextWindow": 128_000,
            },
        )

    def _title(self) -> None:
        """Append a session/title event."""
        seqs = [self.first_user_seq] if self.first_user_seq is not None else []
        self.w.event(
            "session/title",
            self._tick(100, 3_000),
            {
                "title": self.text.title(),
                "messageSeqs": seqs,
                "source": {"kind": "fallback"},
            },
        )

    def _prune(self) -> None:
        """Prune 1–3 older tool results (replace each by a cleared copy)."""
        candidates = list(self.surface.tool_results)
        if len(candidates) < 4:
            return
        older = candidates[: len(candidates) * 3 // 4]
        for seq in self.rng.sample(older, min(len(older), self.rng.randint(1, 3))):
            self._prune_one(seq)

    def _prune_one(self, target: int) -> None:
        """Replace tool result ``target`` by a copy whose first block content is cleared."""
        w = self.w
        original = self.surface.tool_results[target]
        w.event(
            "compaction/prune",
            self._tick(1, 20),
            {
                "shadowedRange": {"start": target, "end": target},
                "shadowedSeqs": [target],
                "shadowedTokenCount": self.rng.randint(50, 5_000),
            },
        )
        message = dict(original["message"])
        first = dict(message["content"][0])
        first["content"] = [{"type": "text", "text": "[Old tool result content cleared]"}]
        message["content"] = [first, *message["content"][1:]]
        data = {**original, "message": message}
        op = {"op": "replace", "start": target, "end": target}
        seq = w.event("tool/result", self._tick(1, 5), data, surface_op=op, sources=[target])
        replaced = self.surface.replace(target, target, seq)
        assert replaced == [target]
        self.prunes += 1

    def _compact(self) -> None:
        """Replace a contiguous range of older surface nodes by a compact checkpoint."""
        w, rng = self.w, self.rng
        nodes = self.surface.nodes
        n = len(nodes)
        a = 0 if rng.random() < 0.5 else rng.randrange(0, n // 2)
        b = min(a + rng.randint(5, 60) - 1, n - 10)
        if b < a:
            return
        start, end = nodes[a], nodes[b]
        replaced = sorted(nodes[a : b + 1])
        compaction_id = self._uid("cmp-")
        w.event(
            "compaction/start", self._tick(1, 20), {"compactionId": compaction_id, "turn": None}
        )
        summary = self.text.text(self._chars(300, 2500))
        self._tick(2_000, 30_000)
        w.event(
            "compaction/summary",
            self._tick(1, 20),
            {
                "compactionId": compaction_id,
                "summary": [{"type": "text", "text": summary}],
                "shadowedRange": {"start": start, "end": end},
                "shadowedSeqs": replaced,
                "shadowedTokenCount": rng.randint(1_000, 60_000),
                "provider": "deepseek",
                "model": "deepseek-chat",
                "rawOutput": summary,
            },
        )
        data = {
            "id": self._uid("msg_"),
            "role": "user",
            "content": [
                {"type": "text", "text": f"<compacted-summary>\n{summary}\n</compacted-summary>"}
            ],
            "source": {"kind": "plugin", "plugin": "compact", "compactionId": compaction_id},
        }
        op = {"op": "replace", "start": start, "end": end}
        seq = w.event("user/message", self._tick(1, 5), data, surface_op=op, sources=replaced)
        got = self.surface.replace(start, end, seq)
        assert sorted(got) == replaced
        w.event("compaction/end", self._tick(1, 20), {"compactionId": compaction_id, "turn": None})
        self.compactions += 1
