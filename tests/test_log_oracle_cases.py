"""Every reproduction store of the oracle, answered as the real DSH stack answered it.

``tests/data/oracle-cases/<case>/{root,zroot}`` are the stores of ``shared/oracle/cases``, of
``scripts/oracle_cases.py`` (header and event rules: ``-0`` literals, cwds that are not
strings) and of ``scripts/oracle_layout_cases.py`` (project folders shared by several cwds or
cut to 251 characters, first zstd frames that are not the header line, closers), of
``scripts/oracle_line_cases.py`` (whitespace and byte order marks around a line's JSON,
numbers with an exponent, a header giving a member twice), and
``<sub>.real.json`` the real stack's ``report`` of each (``<root>`` standing for the store's
path). For every session of every case: readable or refused alike, the same prompt bytes
(``capturedThroughSeq`` included) and reference stats; and the same candidates, labels and
order. Where the harness refuses the whole root, sessionref serves every other session as
the same log is served elsewhere, and refuses the offending ones ([sessionref] in
docs/differences.md).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import zstandard

from sessionref import DirectoryStore, SessionReferenceError, SessionReferenceResolver, Target
from sessionref.errors import READ_FAILED

CASES = Path(__file__).parent / "data" / "oracle-cases"
TARGET = Target("oracle-target-session")
OFFENDING = {
    "duplicate-id": {"dup"},
    "flat-artifact": set(),
    "header-cwd-empty-array": {"cwd-empty-array"},
    "header-cwd-null": {"cwd-null"},
    "header-cwd-object-length": {"cwd-object-length"},
    "header-dir-mismatch": {"other-dir", "real-id"},
    "header-wrong-project": {"wrong-project"},
    "header-retired-field": {"header-retired-field"},
    "mixed-encoding": {"other-encoding"},
    "zstd-header-frame-with-events": {"hdr-frame-events"},
    **{
        f"zstd-first-frame-{name}": {f"first-{name}"}
        for name in ("no-newline", "split", "blank-line", "empty", "skippable", "plain")
    },
}
"""The sessions of each whole-root case that sessionref does not serve (from its DESC)."""


def roots() -> Iterator[tuple[str, Path, dict[str, Any]]]:
    for case in sorted(CASES.iterdir()):
        for sub in ("root", "zroot"):
            report = case / f"{sub}.real.json"
            if report.exists():
                yield case.name, case / sub, json.loads(report.read_text(encoding="utf-8"))


ROOTS = list(roots())


def served_elsewhere() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """What the harness answered for a session id wherever a root held it and was not
    refused whole (the answer and the candidate entry); an id answered differently in two
    roots is left out."""
    answers: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for name, _, report in ROOTS:
        if name in OFFENDING:
            continue
        candidates = {c["sessionId"]: c for c in report["candidates"].get("ok", [])}
        for session_id, entry in report["sessions"].items():
            if entry.get("prompt") is not None and session_id in candidates:
                answers.setdefault(session_id, []).append((recorded(entry), candidates[session_id]))
    return {
        session_id: found[0]
        for session_id, found in answers.items()
        if all(other == found[0] for other in found)
    }


def answer(resolver: SessionReferenceResolver, session_id: str) -> dict[str, Any]:
    """sessionref's snapshot of one session, in the report's terms."""
    try:
        context = resolver.snapshot(TARGET, [{"sessionId": session_id}])
    except SessionReferenceError as exc:
        return {"error": exc.code}
    assert context is not None
    wire = msgspec.to_builtins(context)
    return {"prompt": wire["content"][0]["text"], "references": wire["source"]["references"]}


def recorded(entry: dict[str, Any]) -> dict[str, Any]:
    if entry.get("error") is not None:
        return {"error": READ_FAILED}
    return {"prompt": entry["prompt"], "references": entry["references"]}


ELSEWHERE = served_elsewhere()


def store_labels(store: DirectoryStore, resolver: SessionReferenceResolver) -> list[Any]:
    """The candidates as ``[sessionId, label, cwd, createdAt]``: order from the resolver,
    labels by the harness's rule on the store's title (the title, else the id)."""
    out = []
    for candidate in resolver.list_candidates(TARGET, "", 1000):
        title = store.title(candidate.session_id)
        label = candidate.session_id if title is None else title
        out.append([candidate.session_id, label, candidate.cwd, candidate.created_at])
    return out


@pytest.mark.parametrize(
    ("name", "root", "report"), ROOTS, ids=[f"{name}/{root.name}" for name, root, _ in ROOTS]
)
def test_every_session_as_the_harness_answers(
    name: str, root: Path, report: dict[str, Any]
) -> None:
    store = DirectoryStore(root)
    resolver = SessionReferenceResolver(store)
    offending = OFFENDING.get(name)
    for session_id, entry in report["sessions"].items():
        have = answer(resolver, session_id)
        if offending is None:
            want = recorded(entry)
        elif session_id in offending:
            want = {"error": READ_FAILED}
        else:
            assert session_id in ELSEWHERE, f"{session_id!r} is served nowhere else"
            want = ELSEWHERE[session_id][0]
        assert have == want, session_id
    have_candidates = store_labels(store, resolver)
    if offending is None:
        want_candidates = [
            [c["sessionId"], c["label"], c.get("cwd"), c["createdAt"]]
            for c in report["candidates"]["ok"]
        ]
    else:
        want_candidates = []
        for session_id in report["sessions"]:
            if session_id not in offending:
                c = ELSEWHERE[session_id][1]
                want_candidates.append([c["sessionId"], c["label"], c.get("cwd"), c["createdAt"]])
        assert {p.path for p in store.problems()}, "a whole-root refusal is reported"
    assert have_candidates == want_candidates


@pytest.mark.parametrize(
    "name", ["oracle_cases.py", "oracle_layout_cases.py", "oracle_line_cases.py"]
)
def test_the_script_writes_the_stores_of_its_cases_again(tmp_path: Path, name: str) -> None:
    """``scripts/oracle_cases.py`` (and ``oracle_layout_cases.py``, ``oracle_line_cases.py``,
    on its helpers) writes its cases as they are kept here: each plain log byte for byte,
    each zstd log of a case's session the same lines (in frames of the template's batches;
    a case of damaged frames has no plain store). It called ``decompress_frame`` without the
    line bound that function came to take: a ``TypeError`` before it wrote anything."""
    script = Path(__file__).parent.parent / "scripts" / name
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    written = [Path(line) for line in done.stdout.decode().splitlines()]
    assert written and all(case.parent == tmp_path for case in written)
    for case in written:
        for plain in (case / "root").glob("*/*/session.jsonl"):
            relative = plain.relative_to(case)
            assert plain.read_bytes() == (CASES / case.name / relative).read_bytes(), relative
            if relative.parts[1] == "--work-other--":  # the bystander: copied, not written
                continue
            packed = case / "zroot" / relative.relative_to("root").with_suffix(".jsonl.zstd")
            reader = zstandard.ZstdDecompressor().stream_reader(
                io.BytesIO(packed.read_bytes()), read_across_frames=True
            )
            assert reader.read() == plain.read_bytes(), packed
