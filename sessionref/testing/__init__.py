"""Hypothesis strategies and reference helpers for property-testing against ``sessionref``.

Importable without pytest; needs ``hypothesis`` (the ``test`` extra).

>>> from hypothesis import given, settings
>>> from sessionref.testing import session_logs, projected_units
>>> @settings(max_examples=20)
... @given(session_logs(max_turns=1))
... def test_units_are_non_empty(log):
...     assert all(unit["text"] for unit in projected_units(log))
>>> test_units_are_non_empty()
"""

try:
    import hypothesis  # noqa: F401  # every strategy below is one
except ImportError:
    raise ImportError(
        'sessionref.testing needs hypothesis: pip install "sessionref[test]"', name="hypothesis"
    ) from None

from sessionref.testing._js import js_normalize, js_stringify
from sessionref.testing.claude_logs import HarnessLog, claude_code_logs
from sessionref.testing.codex_logs import codex_rollouts
from sessionref.testing.harness_damage import damaged_files
from sessionref.testing.logs import session_logs, session_stores
from sessionref.testing.mutations import (
    MutatedLog,
    mutated_logs,
    mutated_stores,
    write_mutated_store,
)
from sessionref.testing.recovery import recovered_events
from sessionref.testing.reference import (
    ReferenceUnit,
    captured_through_seq,
    closers,
    current_surface,
    event_units,
    expand_records,
    projected_units,
)
from sessionref.testing.store import (
    LogRecords,
    record_batches,
    turn_batches,
    write_session_store,
)
from sessionref.testing.strategies import (
    INTERESTING_FRAGMENTS,
    MentionSample,
    js_strings,
    mention_texts,
    session_ids,
    well_formed_mention_texts,
)

__all__ = [
    "INTERESTING_FRAGMENTS",
    "HarnessLog",
    "LogRecords",
    "MentionSample",
    "MutatedLog",
    "ReferenceUnit",
    "captured_through_seq",
    "claude_code_logs",
    "closers",
    "codex_rollouts",
    "current_surface",
    "damaged_files",
    "event_units",
    "expand_records",
    "js_normalize",
    "js_stringify",
    "js_strings",
    "mention_texts",
    "mutated_logs",
    "mutated_stores",
    "projected_units",
    "record_batches",
    "recovered_events",
    "session_ids",
    "session_logs",
    "session_stores",
    "turn_batches",
    "well_formed_mention_texts",
    "write_mutated_store",
    "write_session_store",
]
