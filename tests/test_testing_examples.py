"""Every docstring example of ``sessionref.testing`` runs as a user copies it into a test file:
with the package's public names (``from sessionref.testing import *``), the public names of
the module it documents and what it imports itself, nothing the module imports for its own use.

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
