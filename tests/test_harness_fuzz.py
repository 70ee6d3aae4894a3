"""Fuzzing the Claude Code and Codex readers with damaged files on disk: answers, never
crashes, never a partial context (docs/harnesses.md §Bad input).

Each example writes one damaged file (:mod:`sessionref.testing.harness_damage`) into a store,
lists it and references every session listed. The store answers or reports a problem; a
reference gives a whole context or a ``SessionReferenceError`` (``READ_FAILED`` naming the
file, or ``BUDGET_EXCEEDED``), and a context is within its budget, tag-safe, and tells the
model the harness.

Examples per reader: two and a half times ``SESSIONREF_FUZZ_EXAMPLES`` when it is set (``tox -e
fuzz`` and ``.ci/run`` set 2,000, so 5,000 damaged files per reader, in ten shards), else as
many times the profile's share of 60 (``tests/conftest.py``), derandomized.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sessionref import SessionReferenceResolver, Target
from sessionref.claude_code.store import ClaudeCodeStore
from sessionref.codex.store import CodexStore
from sessionref.errors import BUDGET_EXCEEDED, READ_FAILED, SessionLogError, SessionReferenceError
from sessionref.log.harness_store import HarnessStore
from sessionref.pipeline.escape_and_serialize import PROMPT_PREFIX, PROMPT_SUFFIX
from sessionref.testing.claude_logs import claude_code_logs
from sessionref.testing.codex_logs import THREAD_ID, codex_rollouts
from sessionref.testing.harness_damage import damaged_files
from tests.conftest import fuzz_examples, fuzz_settings, per_harness_reader

fuzz = fuzz_settings(per_harness_reader(fuzz_examples(60)))


def check_store(store: HarnessStore, file: Path, max_bytes: int) -> None:
    """Every session listed answers as a whole or fails as READ_FAILED naming the file."""
    harness = store.harness
    for header in store.headers():
        resolver = SessionReferenceResolver(store, max_reference_bytes=max_bytes)
        try:
            prepared = resolver.prepare(
                Target("fuzz"), content=[], references=[{"sessionId": header.id}]
            )
        except SessionReferenceError as error:
            assert error.code in (READ_FAILED, BUDGET_EXCEEDED), error
            if error.code == READ_FAILED:
                assert str(file) in error.message or "not found" in error.message
            continue
        context = prepared.additional_context
        assert context is not None
        prompt = context.prompt
        assert prompt.startswith(PROMPT_PREFIX) and prompt.endswith(PROMPT_SUFFIX)
        array = prompt[len(PROMPT_PREFIX) : -len(PROMPT_SUFFIX)]
        assert "<" not in array  # nothing a session says can open or close a tag
        [data] = json.loads(array)
        assert data["harness"] == harness
        assert len(array.encode("utf-8", "surrogatepass")) - 2 <= max_bytes
        try:
            store.transcript(header.id)
        except SessionLogError as error:
            assert str(file) in str(error)
    for problem in store.problems():
        assert problem.message


def write(root: Path, relative: str, content: bytes, as_directory: bool) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    path = root / relative
    path.parent.mkdir(parents=True)
    if as_directory:
        path.mkdir()
    else:
        path.write_bytes(content)
    return path


Store = Callable[..., HarnessStore]
LIMITS = st.sampled_from([{}, {"max_bytes": 300}, {"max_line_bytes": 120}])
BUDGETS = st.sampled_from([300, 2000, 65536])


@fuzz
@given(damaged_files(claude_code_logs()), LIMITS, BUDGETS, st.integers(0, 40))
def test_damaged_claude_code_transcripts(
    scratch: Path, content: bytes, limits: dict[str, int], max_bytes: int, directory: int
) -> None:
    relative = "projects/-work-project/11111111-2222-4333-8444-555555555555.jsonl"
    file = write(scratch, relative, content, directory == 0)
    check_store(ClaudeCodeStore(scratch, **limits), file, max_bytes)


@fuzz
@given(damaged_files(codex_rollouts()), LIMITS, BUDGETS, st.integers(0, 40))
def test_damaged_codex_rollouts(
    scratch: Path, content: bytes, limits: dict[str, int], max_bytes: int, directory: int
) -> None:
    relative = f"sessions/2025/06/15/rollout-2025-06-15T10-00-00-{THREAD_ID}.jsonl"
    file = write(scratch, relative, content, directory == 0)
    check_store(CodexStore(scratch, **limits), file, max_bytes)
