"""A warm ``candidates`` over DSH, Claude Code and Codex roots loads none of their readers: while
no file changed, the index answers, and a store reads (and decodes) a file only when asked to.
And a command's process leaves its objects to reference counting as it ends.

Checked on a fresh process through ``sys.modules``; how fast it runs is measured by
``benchmarks/mixed_bench.py``, not here.
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path

import pytest

from sessionref.cli import app
from sessionref.cli.demo import sample_root
from tests.conftest import run_script
from tests.test_cli_startup import imported_by
from tests.test_index import small_store
from tests.test_index_harnesses import Settled, claude_store, codex_store

READERS = {
    "sessionref.log.reader",
    "sessionref.log.validate",
    "sessionref.claude_code.records",
    "sessionref.claude_code.reader",
    "sessionref.codex.records",
    "sessionref.codex.reader",
}

AHEAD = "import time\n_now = time.time_ns\ntime.time_ns = lambda: _now() + 86_400 * 10**9"
"""The process's clock a day ahead: the store's directories, made a moment ago, are settled
(else the index lists a store whose directories changed in the last 2 s again)."""


def modules_of_candidates(argv: list[str]) -> set[str]:
    """Every module a fresh ``sessionref candidates ARGV`` process has imported at its exit."""
    return imported_by("-m", "sessionref", "candidates", *argv, prelude=AHEAD, check=True)


def test_a_warm_candidates_loads_no_reader(tmp_path: Path) -> None:
    clock = Settled()
    small_store(tmp_path / "dsh")
    roots = [claude_store(tmp_path / "claude", clock), codex_store(tmp_path / "codex", clock)]
    roots.append(tmp_path / "dsh")
    argv = [arg for root in roots for arg in ("--root", str(root))]
    argv += ["--json", "--index", f"{tmp_path / 'indexes'}/"]
    assert modules_of_candidates(argv) >= READERS  # the first use reads every session
    warm = modules_of_candidates(argv)
    assert "sessionref.index.store" in warm
    assert not warm & READERS, sorted(warm & READERS)


def test_a_command_process_ends_without_collecting_its_objects(tmp_path: Path) -> None:
    """The cyclic collector is done with the command's objects (frozen) once ``main``
    returns, and the command's answer is complete."""
    sample = sample_root()
    listing = ["candidates", "--json", "--root", str(sample)]
    argv = ["sessionref", *listing, "--index", f"{tmp_path}/"]
    report = "atexit.register(lambda: sys.stderr.write(f'frozen {gc.get_freeze_count()}'))"
    code = f"import atexit, gc, sys\n{report}\nsys.argv = {argv!r}\n"
    code += "from sessionref.cli import main\nsys.exit(main())"
    done = run_script(code, capture_output=True, check=True)
    assert int(done.stderr.decode().rsplit("frozen ", 1)[1]) > 0
    plain = subprocess.run(
        [sys.executable, "-m", "sessionref", *listing, "--no-index"],
        capture_output=True,
        check=True,
    )
    assert done.stdout == plain.stdout != b""


def test_a_command_line_loads_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Importing a command's modules makes objects by the thousand and no garbage: the cyclic
    collector waits until they are loaded, and is back on after."""
    paused = []
    build_parser = app.build_parser

    def recording(load: Collection[str] | None = None) -> argparse.ArgumentParser:
        paused.append(not gc.isenabled())
        return build_parser(load)

    monkeypatch.setattr(app, "build_parser", recording)
    sample = sample_root()
    assert app.run_command(["candidates", "--root", str(sample), "--no-index"]) == 0
    assert "b91d04f0-flaky-ci" in capsys.readouterr().out
    assert paused == [True] and gc.isenabled()
