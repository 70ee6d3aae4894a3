"""The README's library example runs as written (against the shipped sample store)."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sessionref.cli.demo import sample_root
from sessionref.types import ContextMessage, Target
from tests.conftest import per_harness_reader

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
    thread = "0197a000-0000-7000-8000-0000000000aa"
    day = tmp_path / "codex" / "sessions" / "2025" / "06" / "01"
    rollout = day / f"rollout-2025-06-01T10-00-00-{thread}.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_text(
        '{"timestamp":"2025-06-01T10:00:00.000Z","type":"session_meta","payload":{"id":"'
        + thread
        + '","cwd":"/home/dev/app","timestamp":"2025-06-01T10:00:00.000Z",'
        '"originator":"codex_cli_rs","cli_version":"0.40.0"}}\n'
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


def test_index_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer's trial: the example used names it had not imported."""
    text = README.read_text("utf-8")
    section = text[text.index("## Index and search") :]
    [code] = re.findall(r"```python\n(.*?)```", section[: section.index("\n## ", 1)], re.S)
    monkeypatch.setenv("SESSIONREF_INDEX", str(tmp_path / "index.sqlite"))
    code = code.replace('"~/.dsh/sessions"', repr(str(sample_root())))
    scope: dict[str, object] = {}
    exec(compile(code, str(README), "exec"), scope)
    assert scope["target"] == Target("the-session-being-written", "/home/dev/payments-api")


TEXT = README.read_text("utf-8")
REPO = README.parent


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_the_vector_count_is_the_vendored_files() -> None:
    from tests.conftest import load_vectors

    found = re.search(r"all (\d+) conformance\s+vectors", TEXT)
    assert found is not None and int(found.group(1)) == len(load_vectors())


def fuzz_counts() -> tuple[int, int]:
    """Examples ``tox -e fuzz`` and ``.ci/run`` run, from their one setting and the fuzz tests
    themselves: damaged DSH logs (each ``@fuzz`` property, and the one that starts a process, a
    tenth), and damaged Claude Code and Codex files (two and a half times the setting per
    reader)."""
    per_test = int(re.search(r"SESSIONREF_FUZZ_EXAMPLES:(\d+)", (REPO / "tox.ini").read_text())[1])
    in_ci = re.search(r"SESSIONREF_FUZZ_EXAMPLES=(\d+) \S*pytest", (REPO / ".ci/run").read_text())
    assert in_ci is not None and int(in_ci[1]) == per_test
    dsh = (REPO / "tests/test_fuzz.py").read_text()
    harness = (REPO / "tests/test_harness_fuzz.py").read_text()
    in_process = dsh.count("\n@fuzz\n")
    assert "@settings(fuzz, max_examples=SUBPROCESS_EXAMPLES)" in dsh
    per_reader = per_harness_reader(per_test)
    return in_process * per_test + max(5, per_test // 10), harness.count("\n@fuzz\n") * per_reader


def test_every_fuzz_count_is_the_one_tox_runs() -> None:
    dsh, harness = fuzz_counts()
    total = f"{dsh + harness:,} examples"
    for where in (TEXT, (REPO / "tox.ini").read_text(), (REPO / ".ci/run").read_text()):
        said = one_line(where)
        assert total in said and f"{dsh:,} damaged DSH logs" in said
        assert f"{harness:,} damaged Claude Code and Codex files" in said
        assert "about 10,000" not in said and ">= 10,000" not in said


def test_the_verbose_snapshot_line_is_the_one_printed(capsys: pytest.CaptureFixture[str]) -> None:
    from sessionref.cli import main

    shown = re.search(
        r"`(note: LABEL: kept \d+ of \d+ messages, omitted \d+ bytes)`", one_line(TEXT)
    )
    assert shown is not None
    pattern = re.escape(shown.group(1)).replace("LABEL", ".+")
    pattern = re.sub(r"\d+", r"\\d+", pattern) + r"(, compacted)?\n"
    root = str(sample_root())
    argv = ["snapshot", "--root", root, "--verbose", "--max-bytes", "250"]
    assert main([*argv, "c2e8a7d5-docs-dark-mode"]) == 0
    assert re.fullmatch(pattern, capsys.readouterr().err)


def test_the_batch_summary_is_the_one_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sessionref.cli import main

    said = one_line(TEXT)
    first = "`N sessions: W written, F failed → FILE`"
    resumed = "`--resume` `N sessions: D already done, W written, F failed → FILE`"
    assert first in said and resumed in said
    out = str(tmp_path / "o.jsonl")
    argv = ["batch", "--root", str(sample_root()), "--out", out]
    assert main(argv) == 0
    assert capsys.readouterr().err == f"4 sessions: 4 written, 0 failed → {out}\n"
    assert main([*argv, "--resume"]) == 0
    assert capsys.readouterr().err == f"4 sessions: 4 already done, 0 written, 0 failed → {out}\n"


#: A dotted name the docs give in backticks: ``sessionref.x.y`` and what it names in it.
DOTTED = re.compile(r"`(sessionref(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")


def test_every_dotted_name_the_docs_give_exists() -> None:
    """A newcomer's trial: docs/roots.md named ``sessionref.claude_code.ClaudeCodeStore``,
    which does not import (the class is in ``sessionref.claude_code.store``)."""
    names = {
        name
        for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
        for name in DOTTED.findall(doc.read_text(encoding="utf-8"))
    }
    assert len(names) > 10
    missing = []
    for name in sorted(names):
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):  # the longest module, then attributes in it
            try:
                found: object = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            try:
                for attribute in parts[cut:]:
                    found = getattr(found, attribute)
            except AttributeError:
                missing.append(name)
            break
    assert missing == []


#: A module-and-name reference the docs give in backticks: ``log/surface.py:current_surface``.
FILE_NAME = re.compile(r"`((?:[a-z_]+/)*[a-z_]+\.py):([A-Za-z_][A-Za-z0-9_]*)`")


def test_every_file_and_name_the_docs_give_is_defined_there() -> None:
    """A newcomer's trial: docs/views.md put the store protocol at ``log/store.py:SessionStore``,
    a name that file only imports (the protocol is ``log/protocol.py:Store``)."""
    references = {
        found
        for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
        for found in FILE_NAME.findall(doc.read_text(encoding="utf-8"))
    }
    assert len(references) > 3
    missing = []
    for path, name in sorted(references):
        source = REPO / "sessionref" / path
        if not source.is_file():
            source = REPO / path
        defined = re.compile(rf"^(?:class|def) {name}\b|^{name}\b.*=", re.M)
        if not (source.is_file() and defined.search(source.read_text(encoding="utf-8"))):
            missing.append(f"{path}:{name}")
    assert missing == []


def python_examples() -> list[tuple[str, str]]:
    """Every Python example of the README and docs/*.md: (where, code)."""
    examples = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for found in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            line = text.count("\n", 0, found.start()) + 1
            examples.append((f"{doc.relative_to(REPO)}:{line}", found.group(1)))
    return examples


def test_every_python_example_type_checks(tmp_path: Path) -> None:
    """A newcomer's trial: a user who copies an example into a project checked with
    ``mypy --strict`` gets no error (``prepared.additional_context`` is ``None`` when no
    references are given, so printing its prompt did not type-check; a fragment used names it
    never imported)."""
    examples = python_examples()
    assert len(examples) >= 5
    files = []
    for index, (where, code) in enumerate(examples):
        files.append(tmp_path / f"example_{index}.py")
        files[-1].write_text(f"# {where}\n{code}", encoding="utf-8")
    command = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent"]
    command += ["--config-file", str(REPO / "pyproject.toml"), "--cache-dir", str(tmp_path)]
    env = {**os.environ, "MYPYPATH": str(REPO)}  # found as source, however it is installed
    done = subprocess.run([*command, *map(str, files)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_redaction_example_runs() -> None:
    """docs/redaction.md's example, against the sample store (it was a fragment)."""
    [code] = [code for where, code in python_examples() if where.startswith("docs/redaction")]
    scope: dict[str, object] = {}
    code = code.replace('"~/.dsh/sessions"', repr(str(sample_root())))
    exec(compile(code, "docs/redaction.md", "exec"), scope)
    lines = scope["lines"]
    assert isinstance(lines, list) and len(lines) == 4
    assert all("redacted" in line["context"]["source"]["references"][0] for line in lines)


def test_the_property_test_example_runs() -> None:
    """docs/api.md's property test against the reference model runs and passes as written (a
    newcomer's trial: docs/api.md, the library's reference, did not say sessionref.testing
    existed)."""
    [code] = [
        code
        for where, code in python_examples()
        if where.startswith("docs/api") and "projected_units" in code
    ]
    scope: dict[str, object] = {"__name__": "docs_api_example"}
    exec(compile(code, "docs/api.md", "exec"), scope)
    test = scope["test_the_conversation_is_the_reference_projection"]
    assert callable(test)
    test()


def test_every_function_of_the_testing_package_has_an_example() -> None:
    """docs/api.md: each function of ``sessionref.testing`` "has an example that runs as
    written" (pytest runs them as doctests). A newcomer's trial found five without one, among
    them the Claude Code and Codex generators, whose files a user could not place: a
    transcript's name is its session's id, which no docstring gave."""
    import doctest
    import inspect

    import sessionref.testing as testing

    functions = {
        name: value
        for name in testing.__all__
        if inspect.isfunction(value := getattr(testing, name))
    }
    finder = doctest.DocTestFinder(recurse=False)
    without = [
        name
        for name, function in functions.items()
        if not any(test.examples for test in finder.find(function, name, globs={}))
    ]
    assert without == []
