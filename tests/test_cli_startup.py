"""Start-up imports only what is used: ``import sessionref`` and ``sessionref --help`` stay light.

Checked on fresh processes through ``sys.modules`` once they are done; how fast they start is
measured by the benchmarks, not here.
"""

from __future__ import annotations

import ast

import pytest

from sessionref.cli.demo import sample_root
from tests.conftest import run_script

HEAVY = {"sessionref.batch", "sessionref.batch.dask", "multiprocessing", "hypothesis", "dask"}
LIBRARY = {"msgspec", "zstandard", "sessionref.resolver", "sessionref.log.store"}


REPORT = (
    "import atexit, sys; atexit.register(lambda: sys.__stderr__.write(repr(sorted(sys.modules))))"
)


def imported_by(*args: str, prelude: str = "", check: bool = False) -> set[str]:
    """Every module a fresh ``python ARGS`` process has imported when it exits, ``prelude``
    run first (after the report is installed); with ``check``, the process must succeed."""
    if args[0] == "-c":
        script = f"{REPORT}\n{prelude}\n{args[1]}"
    else:  # -m MODULE ARGS: run the module as -m would, after installing the report
        argv = f"sys.argv = {list(args[1:])!r}"
        run = f"import runpy; runpy.run_module({args[1]!r}, run_name='__main__')"
        script = f"{REPORT}\n{prelude}\n{argv}\n{run}"
    done = run_script(script, capture_output=True, check=check)
    last = done.stderr.decode().rsplit("\n", 1)[-1]
    return set(ast.literal_eval(last[last.index("[") :]))


@pytest.mark.parametrize(
    "code",
    [
        "import sessionref",
        "from sessionref import SessionReferenceResolver, DirectoryStore, Target",
        "import sessionref.cli",
    ],
)
def test_the_library_does_not_import_batch_engines_or_test_tools(code: str) -> None:
    modules = imported_by("-c", code)
    assert "sessionref" in modules
    assert not modules & HEAVY, sorted(modules & HEAVY)


def test_import_sessionref_loads_nothing_until_used() -> None:
    modules = imported_by("-c", "import sessionref")
    assert not modules & LIBRARY, sorted(modules & LIBRARY)
    used = imported_by("-c", "import sessionref; sessionref.DirectoryStore")
    assert {"sessionref.log.store", "msgspec"} <= used


@pytest.mark.parametrize("argv", [["--help"], ["--version"], []])
def test_help_loads_no_command(argv: list[str]) -> None:
    modules = imported_by("-m", "sessionref", *argv)
    assert not modules & (LIBRARY | HEAVY), sorted(modules & (LIBRARY | HEAVY))
    assert not {name for name in modules if name.startswith("sessionref.cli.")} - {
        "sessionref.cli.app",
        "sessionref.cli.early",  # the signal handlers: set before anything else
        "sessionref.cli.process",  # stdout and stderr: set up before the parser
    }


def test_a_command_loads_its_own_module_only() -> None:
    modules = imported_by("-m", "sessionref", "candidates", "--help")
    assert "sessionref.cli.candidates" in modules
    assert not {"sessionref.cli.batch", "sessionref.cli.demo"} & modules
    assert not modules & HEAVY, sorted(modules & HEAVY)


SNAPSHOT_NEEDS_NOT = {
    "sessionref.redact",  # its detectors and patterns: for --redact only
    "sessionref.listing",  # candidates and mentions, and their collation
    "sessionref.codecs.collation",
    "copy",  # prepare's deep copy of a host's content
    "shutil",  # argparse's way to the terminal's width (cli.app.help_width), with bz2 and lzma
    "sessionref.log.harness_store",  # the Claude Code and Codex stores, for a DSH root
    "sessionref.codex.rollouts",  # what telling a Codex home by its names must not import
}


def test_a_snapshot_loads_neither_redaction_nor_the_listing() -> None:
    sample = sample_root()
    argv = ["snapshot", "--root", str(sample), "b91d04f0-flaky-ci"]
    modules = imported_by("-m", "sessionref", *argv)
    assert "sessionref.snapshot" in modules
    assert not modules & SNAPSHOT_NEEDS_NOT, sorted(modules & SNAPSHOT_NEEDS_NOT)
    redacting = imported_by("-m", "sessionref", *argv, "--redact-pattern", "flaky")
    assert "sessionref.redact" in redacting


@pytest.mark.parametrize("columns", ["100", "30", "0", "-3", "x", None])
def test_help_is_as_wide_as_argparse_makes_it(
    columns: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from sessionref.cli.app import help_width

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert help_width() == shutil.get_terminal_size().columns - 2
