"""The README's library example runs as written (against the shipped sample store)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sessionref.cli.demo import sample_root
from sessionref.types import ContextMessage

README = Path(__file__).resolve().parent.parent / "README.md"


def test_library_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    found = re.search(r"## Library\n\n```python\n(.*?)```", README.read_text("utf-8"), re.S)
    assert found is not None
    code = found.group(1).replace('"~/.dsh/sessions"', repr(str(sample_root())))
    scope: dict[str, object] = {}
    exec(compile(code, str(README), "exec"), scope)
    messages = scope["messages"]
    assert isinstance(messages, list) and isinstance(messages[0], ContextMessage)
    assert messages[1]["content"][0]["text"] == "see @auth"
    wire = json.loads(str(scope["wire"]))  # plain JSON, structs in their camelCase wire form
    assert wire[0]["source"]["references"][0]["sessionId"] == "7f3c1e2a-auth-refactor"
    assert wire[0]["content"] == [{"type": "text", "text": messages[0].prompt}]
    assert wire[1] == {**messages[1], "content": [{"type": "text", "text": "see @auth"}]}
    out = capsys.readouterr().out
    assert "Refactor auth middleware to JWT @[Refactor auth middleware to JWT](" in out
    assert out.count("<referenced-sessions>") == 1


def harness_examples() -> list[str]:
    """The Python examples of the README's section on other agents' sessions."""
    text = README.read_text("utf-8")
    section = text[text.index("## Other agents' sessions") :]
    section = section[: section.index("\n## ", 1)]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_other_agents_examples_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claude_code, codex = harness_examples()
    claude = tmp_path / "claude" / "projects" / "-home-dev-app" / "4f1c.jsonl"
    claude.parent.mkdir(parents=True)
    claude.write_text(
        '{"type":"user","uuid":"u1","parentUuid":null,"cwd":"/home/dev/app",'
        '"timestamp":"2025-06-01T10:00:00.000Z","message":{"role":"user","content":"fix <b>"}}\n'
        '{"type":"assistant","uuid":"a1","parentUuid":"u1","timestamp":"2025-06-01T10:00:01.000Z",'
        '"message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"done"}]}}\n'
    )
    rollout = tmp_path / "codex" / "sessions" / "2025" / "06" / "01" / "rollout-2025-06-01-t1.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_text(
        '{"timestamp":"2025-06-01T10:00:00.000Z","type":"session_meta","payload":{"id":"t1",'
        '"cwd":"/home/dev/app","timestamp":"2025-06-01T10:00:00.000Z"}}\n'
        '{"timestamp":"2025-06-01T10:00:01.000Z","type":"event_msg","payload":'
        '{"type":"user_message","message":"add a test"}}\n'
        '{"timestamp":"2025-06-01T10:00:02.000Z","type":"event_msg","payload":'
        '{"type":"agent_message","message":"added"}}\n'
    )
    cases = (
        (claude_code, '"~/.claude"', tmp_path / "claude", "claude-code", "fix \\u003cb>"),
        (codex, '"~/.codex"', tmp_path / "codex", "codex", '"text":"add a test"'),
    )
    for code, home, root, harness, said in cases:
        exec(compile(code.replace(home, repr(str(root))), str(README), "exec"), {})
        out = capsys.readouterr().out
        assert f'"harness":"{harness}"' in out and said in out
        assert out.count("<referenced-sessions>") == 1
