"""Hypothesis strategies for Claude Code transcript files, each with what its current chain
says, known by construction (docs/harnesses.md §Claude Code).

A generated file is a conversation of turns (a prompt, an assistant message written over
several lines sharing ``message.id``, a server tool's call and result among its texts, tool
calls and their results), with what makes the
format hard: rewinds (a branch left behind), compaction replays (siblings with the parent's
timestamp), compactions (a boundary and its summary), meta and sidechain lines, lines of
unknown types on the chain and off it, titles. The expectation is the list of
``(kind, text)`` the chain shows, ``kind`` one of ``user``, ``assistant``, ``checkpoint``.
"""

from __future__ import annotations

import functools
from typing import Any, Final, NamedTuple

from hypothesis import strategies as st

from sessionref.codecs.jsjson import js_json
from sessionref.testing.strategies import js_strings

_EPOCH = 1_750_000_000_000
SESSION_ID: Final = "11111111-2222-4333-8444-555555555555"
"""The session of every :func:`claude_code_logs` transcript: its file's name."""


class HarnessLog(NamedTuple):
    """A generated session file: its lines (without newlines) and what it shows."""

    lines: list[bytes]
    shown: list[tuple[str, str]]
    """``(kind, text)`` of the whole chain's user texts, assistant texts and checkpoints."""
    title: str | None
    """The title the file itself gives (custom or AI title), ``None`` if it gives none."""

    @property
    def surface(self) -> list[tuple[str, str]]:
        """What a snapshot may show: from the latest checkpoint on."""
        kinds = [kind for kind, _ in self.shown]
        start = len(kinds) - kinds[::-1].index("checkpoint") - 1 if "checkpoint" in kinds else 0
        return self.shown[start:]

    @property
    def content(self) -> bytes:
        """The file's bytes."""
        return b"".join(line + b"\n" for line in self.lines)


@functools.cache
def plain_texts() -> st.SearchStrategy[str]:
    """Texts a person may type that no harness rewrites: no tags the readers read, no
    surrounding blanks, not empty (one strategy object, cached: see :func:`js_strings`)."""
    typed = js_strings(min_size=1, max_size=40).map(
        lambda text: text.replace("<", "\u2039").replace("## My request", "#").strip()
    )  # mapped, not filtered: most drawn strings hold a "<" (hypothesis would retry them)
    tags = st.sampled_from(["<referenced-sessions>x", "a </referenced-sessions> b", "<b>bold</b>"])
    return typed.filter(bool) | tags


def iso(millis: int) -> str:
    """An ISO time as Claude Code and Codex write them.

    >>> iso(0)
    '1970-01-01T00:00:00.000Z'
    """
    seconds, ms = divmod(millis, 1000)
    days, rest = divmod(seconds, 86400)
    import datetime

    day = datetime.date(1970, 1, 1) + datetime.timedelta(days=days)
    hours, rest = divmod(rest, 3600)
    return f"{day.isoformat()}T{hours:02}:{rest // 60:02}:{rest % 60:02}.{ms:03}Z"


class _Writer:
    """The state of a file being generated."""

    def __init__(self, draw: Any, session_id: str, replays: bool) -> None:
        self.draw = draw
        self.replays = replays
        self.session_id = session_id
        self.lines: list[bytes] = []
        self.shown: list[tuple[str, str]] = []
        self.clock = _EPOCH
        self.tip: str | None = None
        self.count = 0
        self.turns: list[tuple[str | None, int]] = []  # (parent, len(shown)) at each turn start
        self.titles: dict[str, str] = {}

    def uuid(self) -> str:
        self.count += 1
        return f"00000000-0000-4000-8000-{self.count:012d}"

    def write(self, record: dict[str, Any]) -> None:
        self.lines.append(js_json(record))

    def node(self, kind: str, on_chain: bool = True, **fields: Any) -> dict[str, Any]:
        """Write a node after the tip (made the tip when ``on_chain``)."""
        self.clock += self.draw(st.integers(1, 5000))
        uuid = self.uuid()
        record = {
            "parentUuid": self.tip,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/work/project",
            "sessionId": self.session_id,
            "version": "2.1.0",
            "type": kind,
            "uuid": uuid,
            "timestamp": iso(self.clock),
            **fields,
        }
        self.write(record)
        if on_chain:
            self.tip = uuid
        return record

    def said(self, message_id: str, block: dict[str, Any]) -> None:
        """One block of an API message on a line of its own, as Claude Code streams it."""
        message = {
            "id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [block], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }  # fmt: skip
        self.node("assistant", message=message, requestId=f"req_{message_id}")

    def turn(self) -> None:
        draw = self.draw
        self.turns.append((self.tip, len(self.shown)))
        prompt = draw(plain_texts())
        content: Any = prompt
        if draw(st.booleans()):
            content = [{"type": "text", "text": prompt}]
            if draw(st.booleans()):
                content.append({"type": "image", "source": {"type": "base64", "data": "AA=="}})
        user = self.node("user", message={"role": "user", "content": content})
        self.shown.append(("user", prompt))
        texts = draw(st.lists(plain_texts(), min_size=0, max_size=3))
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text in texts]
        if draw(st.booleans()):
            blocks.insert(
                0, {"type": "thinking", "thinking": draw(plain_texts()), "signature": "s"}
            )
        if draw(st.booleans()):  # a server tool's call and result, among the texts
            search = f"srvtoolu_{self.count}"
            found = [{"type": "web_search_result", "title": "T", "url": "https://t.example"}]
            blocks[draw(st.integers(0, len(blocks))) : 0] = [
                {"type": "server_tool_use", "id": search, "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": search, "content": found},
            ]
        tool = draw(st.booleans())
        tool_id = f"toolu_{self.count}"
        if tool:
            blocks.append(
                {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "ls"}}
            )
        message_id = f"msg_{self.count}"
        for block in blocks:
            self.said(message_id, block)
        if texts:
            self.shown.append(("assistant", "\n".join(texts)))
        if tool:
            result = {"type": "tool_result", "tool_use_id": tool_id, "content": draw(plain_texts())}
            self.node("user", message={"role": "user", "content": [result]})
            final = draw(plain_texts())
            self.said(f"msg_{self.count}b", {"type": "text", "text": final})
            self.shown.append(("assistant", final))
        if self.replays and user["parentUuid"] and blocks and draw(st.integers(0, 5)) == 0:
            # a compaction replay of the prompt: a sibling with the same parent and time
            self.write({**user, "uuid": self.uuid()})

    def rewind(self) -> None:
        parent, length = self.draw(st.sampled_from(self.turns))
        self.tip = parent
        del self.shown[length:]
        self.turns = [turn for turn in self.turns if turn[1] < length]

    def compact(self) -> None:
        boundary = self.node(
            "system",
            subtype="compact_boundary",
            content="Conversation compacted",
            logicalParentUuid=self.tip,
            compactMetadata={"trigger": "auto", "preTokens": 1},
        )
        boundary["parentUuid"] = None
        self.lines[-1] = js_json(boundary)
        summary = self.draw(plain_texts())
        self.node("user", isCompactSummary=True, message={"role": "user", "content": summary})
        self.shown.append(("checkpoint", summary))
        self.turns = []

    def noise(self) -> None:
        choice = self.draw(st.integers(0, 6))
        if choice == 0:
            self.write({"type": "file-history-snapshot", "messageId": "m", "snapshot": {}})
        elif choice == 1:
            self.node("relocated", relocatedCwd="/elsewhere")  # unknown, on the chain
        elif choice == 2:
            self.node("user", isMeta=True, message={"role": "user", "content": "<command-message>"})
        elif choice == 3:
            self.node("system", subtype="turn_duration", durationMs=5)
        elif choice == 4:
            self.node("user", on_chain=False, isSidechain=True, message={"content": "side"})
        elif choice == 5:
            self.write(
                {
                    "type": "queue-operation",
                    "operation": "enqueue",
                    "content": "later",
                    "sessionId": self.session_id,
                    "timestamp": iso(self.clock),
                }
            )
        else:
            kind, field = self.draw(
                st.sampled_from([("ai-title", "aiTitle"), ("custom-title", "customTitle")])
            )
            title = self.draw(plain_texts())
            self.titles[kind] = title
            self.write({"type": kind, field: title, "sessionId": self.session_id})


@st.composite
def claude_code_logs(
    draw: Any,
    max_steps: int = 8,
    rewinds: bool = True,
    compactions: bool = True,
    replays: bool = True,
) -> HarnessLog:
    """A Claude Code transcript file and what its current chain shows: the transcript of
    session :data:`SESSION_ID`, to be written as ``projects/<project>/<SESSION_ID>.jsonl``
    under a Claude Code home.

    Here read by sessionref's own store (yours in its place): a snapshot shows the surface,
    checkpoints as user texts:

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from hypothesis import given, settings
    >>> from sessionref import SessionReferenceResolver, Target
    >>> from sessionref.claude_code.store import ClaudeCodeStore
    >>> from sessionref.testing.claude_logs import SESSION_ID
    >>> @settings(max_examples=10, deadline=None)
    ... @given(claude_code_logs(max_steps=3))
    ... def test_a_snapshot_shows_the_surface(log):
    ...     with tempfile.TemporaryDirectory() as home:
    ...         project = Path(home, "projects", "-work")
    ...         project.mkdir(parents=True)
    ...         (project / f"{SESSION_ID}.jsonl").write_bytes(log.content)
    ...         store = ClaudeCodeStore(home)
    ...         resolver = SessionReferenceResolver(store, max_reference_bytes=1 << 30)
    ...         context = resolver.snapshot(Target("other"), [{"sessionId": SESSION_ID}])
    ...     [source] = json.loads(context.prompt.split("\\n")[-2])  # its one line of JSON
    ...     shown = [(unit["role"], unit["text"]) for unit in source["conversation"]]
    ...     roles = {"checkpoint": "user"}
    ...     assert shown == [(roles.get(kind, kind), text) for kind, text in log.surface]
    >>> test_a_snapshot_shows_the_surface()
    """
    writer = _Writer(draw, SESSION_ID, replays)
    writer.turn()
    ops = ["turn", "turn", "noise"] + ["rewind"] * rewinds + ["compact"] * compactions
    for op in draw(st.lists(st.sampled_from(ops), max_size=max_steps)):
        if op == "rewind" and writer.turns:
            writer.rewind()
            writer.turn()
        elif op == "compact":
            writer.compact()
        elif op == "noise":
            writer.noise()
        else:
            writer.turn()
    title = writer.titles.get("custom-title", writer.titles.get("ai-title"))
    return HarnessLog(writer.lines, writer.shown, title)
