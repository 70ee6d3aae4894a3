"""The benchmark commands as a user runs them: a bad flag is one usage line (exit 2) before
anything is generated or timed, and ``--help`` says what each flag does.

A newcomer's trial: ``python -m benchmarks.run --sizes abc`` ended in a ``ValueError``
traceback, ``--sizes 0`` and ``--sizes -5`` ran and reported "0 turns" targets, ``--repeat 0``
went on to generate every default store (gigabytes, minutes) before it could fail, and
``--stores``, ``--sizes``, ``--repeat``, ``--no-js`` and ``--plot`` had no help.
"""

from __future__ import annotations

import doctest
import importlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from benchmarks import (
    generate,
    harness_bench,
    index_bench,
    mixed_bench,
    redact_bench,
    run,
    views_bench,
)

Main = Callable[[Sequence[str] | None], int]

BAD_FLAGS: list[tuple[str, Main, list[str], str, str]] = [
    ("run", run.main, ["--sizes", "abc"], "--sizes", "abc"),
    ("run", run.main, ["--sizes", "100,"], "--sizes", "100,"),
    ("run", run.main, ["--sizes", "0"], "--sizes", "0"),
    ("run", run.main, ["--sizes", "100,-5"], "--sizes", "100,-5"),
    ("run", run.main, ["--repeat", "0"], "--repeat", "0"),
    ("run", run.main, ["--repeat", "abc"], "--repeat", "abc"),
    ("run", run.main, ["--js-sizes", "abc"], "--js-sizes", "abc"),
    ("run", run.main, ["--profiles", "tool"], "--profiles", "tool"),
    ("generate", generate.main, ["--sizes", "1.5"], "--sizes", "1.5"),
    ("generate", generate.main, ["--profiles", "chat,nope"], "--profiles", "nope"),
    ("index_bench", index_bench.main, ["--sessions", "0"], "--sessions", "0"),
    ("mixed_bench", mixed_bench.main, ["--sessions", "-1"], "--sessions", "-1"),
    ("harness_bench", harness_bench.main, ["--records", "0"], "--records", "0"),
    ("redact_bench", redact_bench.main, ["--profiles", "tool"], "--profiles", "tool"),
    ("views_bench", views_bench.main, ["--repeat", "0"], "--repeat", "0"),
]


@pytest.mark.parametrize(
    ("main", "flags", "named", "culprit"),
    [case[1:] for case in BAD_FLAGS],
    ids=[f"{case[0]} {' '.join(case[2])}" for case in BAD_FLAGS],
)
def test_a_bad_flag_is_one_usage_line_before_any_work(
    capsys: pytest.CaptureFixture[str],
    main: Main,
    flags: list[str],
    named: str,
    culprit: str,
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(flags)
    assert stopped.value.code == 2
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if ": error: " in line]
    assert len(errors) == 1, captured.err
    assert f"argument {named}: " in errors[0]
    assert repr(culprit) in errors[0]  # it quotes what is wrong
    assert "Traceback" not in captured.err and captured.out == ""


def test_the_runner_help_describes_every_flag_and_gives_examples(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        run.main(["--help"])
    assert stopped.value.code == 0
    text = capsys.readouterr().out
    flags = ["--stores", "--sizes", "--profiles", "--repeat", "--js-sizes", "--no-js", "--batch"]
    for flag in [*flags, "--no-startup", "--plot", "--out"]:
        described = re.compile(rf"^  {flag}( \S+)?  +\w", re.MULTILINE)
        assert described.search(text), flag
    # the docstring's usage block stays a block, not run into the prose around it
    assert "\n    python -m benchmarks.run [--sizes" in text
    examples = text.split("examples:\n", 1)[1].replace("\\\n", "").splitlines()
    assert examples and all(line.startswith("  python -m benchmarks.run ") for line in examples)


@pytest.mark.parametrize("module", ["benchmarks.options", "benchmarks.report"])
def test_docstring_examples(module: str) -> None:
    """``testpaths`` leaves ``benchmarks/`` out of the doctest run; these are run here."""
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_the_results_go_to_out_leaving_the_quoted_file_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A newcomer's trial: the smallest documented run rewrote benchmarks/results.json, the
    file the README quotes, with its few noisy rounds; ``--out`` says where they go."""
    quoted = run.HERE / "results.json"
    before = quoted.read_bytes()
    row = {"profile": "tools", "turns": 100, "log_bytes": 1e6, "floor_s": 0.01, "peak_bytes": 1e6}
    row |= {"read_vs_floor": 2.0, "prepare_65536_s": 0.02, "vs_floor_65536": 2.0}
    row |= {"prepare_1048576_s": 0.02, "vs_floor_1048576": 2.0}
    monkeypatch.setattr(run, "ensure_stores", lambda *args: None)
    monkeypatch.setattr(run, "measure_size", lambda *args: dict(row))
    monkeypatch.setattr(run, "add_growth", lambda *args: None)
    monkeypatch.setattr(run, "check_targets", lambda rows: [])
    out = tmp_path / "small.json"
    flags = ["--sizes", "100", "--profiles", "tools", "--no-js", "--no-startup", "--repeat", "1"]
    run.main([*flags, "--out", str(out)])
    assert json.loads(out.read_text("utf-8"))["sizes"] == [row]
    assert quoted.read_bytes() == before
    assert "floor:" in capsys.readouterr().out  # the table says what its columns are
