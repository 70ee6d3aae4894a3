"""Damaged logs: a session a snapshot can be made of can be exported too, and one that cannot
be read fails the export with the store's read error, never another exception."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from sessionref.errors import SessionLogError
from sessionref.log.store import DirectoryStore
from sessionref.snapshot import snapshot_source
from sessionref.testing import MutatedLog, mutated_logs, session_logs, write_mutated_store
from sessionref.views.entries import ViewOptions
from sessionref.views.html import export_html_chunks
from sessionref.views.markdown import markdown_chunks
from tests.conftest import examples


@settings(max_examples=examples(120), deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_logs(session_logs(max_turns=2), min_mutations=0, max_mutations=3))
def test_what_a_snapshot_reads_an_export_reads(mutated: MutatedLog) -> None:
    with tempfile.TemporaryDirectory() as folder:
        write_mutated_store(folder, [mutated])
        store = DirectoryStore(Path(folder))
        if mutated.session_id not in {h.id for h in store.headers()}:
            return
        try:
            log = store.read(mutated.session_id)
            snapshot_source(log, "s", 65536)
        except (SessionLogError, RecursionError):
            snapshotted = False
        else:
            snapshotted = True
        try:
            transcript = store.transcript(mutated.session_id)
        except SessionLogError:
            assert not snapshotted, "a snapshot was made of a session the export cannot read"
            return
        options = ViewOptions(tools=True, reasoning=True)
        assert "".join(markdown_chunks(transcript, options)).startswith("# ")
        assert "".join(export_html_chunks(transcript, options)).startswith("<!DOCTYPE html>")
