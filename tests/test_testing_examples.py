"""Every docstring example of ``sessionref.testing`` runs as a user copies it into a test file,
and its failures say what is wrong.

Examples run with the package's public names (``from sessionref.testing import *``), the
public names of the module they document and what they import themselves, nothing the module
imports for its own use.

A newcomer's trial: ``session_ids``' example called ``encode_session_id``, a private alias in
``sessionref/testing/strategies.py`` that ``sessionref.testing`` does not export, and
``zstd_frame_spans``' used ``zstandard`` without importing it; both passed as doctests only
because a doctest runs in its module's namespace.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import sessionref.testing

MODULES = ["sessionref.testing"] + [
    module.name
    for module in pkgutil.walk_packages(sessionref.testing.__path__, "sessionref.testing.")
]


def copied_examples(name: str) -> list[doctest.DocTest]:
    """The module's docstring examples, each with only what a user who copied it would have."""
    module = importlib.import_module(name)
    package = {name: getattr(sessionref.testing, name) for name in sessionref.testing.__all__}
    own = {name: getattr(module, name) for name in getattr(module, "__all__", ())}
    tests = []
    for test in doctest.DocTestFinder().find(module, name, globs={}):
        documented = test.name.removeprefix(name + ".").split(".")[0]
        test.globs = {**package, **own}
        if documented in vars(module):
            test.globs[documented] = vars(module)[documented]
        tests.append(test)
    return [test for test in tests if test.examples]


@pytest.mark.parametrize("name", MODULES)
def test_every_example_runs_as_copied(name: str) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    failed = [test.name for test in copied_examples(name) if runner.run(test).failed]
    assert failed == []


def test_a_surface_message_without_surface_op_is_a_value_error_naming_its_seq() -> None:
    """``projected_units`` promises ``ValueError`` for a log that breaks a rule of
    docs/format.md; a hand-built ``user/message`` without ``surfaceOp`` (every message of the
    surface has one) was a bare ``KeyError: 'surfaceOp'``."""
    header = {"version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0}
    prompt = {"id": "m", "role": "user", "source": {"kind": "user"}, "content": []}
    event = {"type": "user/message", "seq": 0, "time": 0, "data": prompt}
    with pytest.raises(ValueError, match=r"^seq 0: "):
        sessionref.testing.projected_units({"header": header, "events": [event]})


def test_js_strings_says_which_bounds_it_refuses() -> None:
    with pytest.raises(ValueError, match=r"min_size=5, max_size=1"):
        sessionref.testing.js_strings(5, 1)
