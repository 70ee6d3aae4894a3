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
