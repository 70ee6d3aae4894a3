"""Reproduction stores of how the harness reads the text of a line, beside ``oracle_cases.py``
(same template session, same bystander, same report format); found by a differential trial
against ``real.mjs`` on hand-made stores:

    python scripts/oracle_line_cases.py tests/data/oracle-cases --oracle ../shared/oracle

- whitespace around a line's JSON (``JSON.parse`` skips it);
- a byte order mark in front of an event line (``JSON.parse`` does not: the line does not
  parse), in committed history and after the last ``turn/end``;
- numbers written with an exponent (``1e0``, ``70e-1``, ``1.700001e12``): integers where the
  harness wants integers, as ``1.0`` is;
- a header that gives a member twice, the first of a value the harness refuses.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from oracle_cases import PROJ, Case, Session, both, header, replaced, run

from sessionref.log.writer import zstd_frame

BOM = "\ufeff"


def padded(lines: list[str]) -> list[str]:
    """Every event line with spaces and a tab before its JSON and spaces after it."""
    return [lines[0], *(f" \t{line}  " for line in lines[1:])]


def bom_before(at: int) -> Session:
    """The template with a byte order mark starting line ``at`` (line 0 the header)."""
    name = f"bom-line-{at}"
    return Session(
        PROJ,
        name,
        both(header(name), lambda lines: [*lines[:at], BOM + lines[at], *lines[at + 1 :]]),
    )


def frames_by_line(batches: list[bytes]) -> bytes:
    """The header's frame, then each event line in a frame of its own."""
    events = b"".join(batches[1:]).splitlines(keepends=True)
    return b"".join(zstd_frame(batch) for batch in [batches[0], *events])


EXPONENTS = both(
    header("exponents", created_at="1.700001e12", depth="0e0"),
    replaced('"seq":1,', '"seq":1e0,', 2),
    replaced('"time0":1700000000028', '"time0":1.700000000028E12', 4),
    replaced('"dt":[7,7]', '"dt":[7e0,70e-1]', 11),
    replaced('"seq0":14', '"seq0":1.4e1', 11),
    replaced('"messageSeqs":[1]', '"messageSeqs":[1E0]', 15),
)

CASES = [
    Case(
        "line-whitespace-around",
        "every event line has spaces and a tab before its JSON and spaces after it (loads as "
        "without them)",
        [Session(PROJ, "whitespace-around", both(header("whitespace-around"), padded))],
    ),
    Case(
        "line-bom",
        "a byte order mark starts an event line: the step/start of seq 2, before the last "
        "turn/end (the log is corrupt), and the session/title after it (a plain log ends its "
        "readable prefix there and has no title; in a zstd frame it is corruption)",
        [bom_before(3), bom_before(15)],
    ),
    Case(
        "line-bom-last-frame",
        "the zstd log has one frame per event line; a byte order mark starts the last one, the "
        "session/title after the last turn/end (a complete frame with a bad record: corrupt)",
        [
            Session(
                PROJ,
                "bom-last-frame",
                both(header("bom-last-frame"), lambda lines: [*lines[:15], BOM + lines[15]]),
                frames_by_line,
            )
        ],
        ("zroot",),
    ),
    Case(
        "numbers-exponent",
        "numbers with an exponent where integers belong: the header's createdAt (1.700001e12) "
        "and delegationDepth (0e0), a seq (1e0), a packed row's seq0 (1.4e1), time0 and dt "
        "(7e0, 70e-1), a title's messageSeqs (1E0): all integers to the harness",
        [Session(PROJ, "exponents", EXPONENTS)],
    ),
    Case(
        "header-duplicate-members",
        "a header gives version (1, then 0) and createdAt (1.5, then an integer) twice "
        "(JSON.parse keeps the last: the session is listed and loads)",
        [
            Session(
                PROJ,
                "header-twice",
                both(
                    header("header-twice"),
                    replaced('"version":0,', '"version":1,"createdAt":1.5,"version":0,', 0),
                ),
            )
        ],
    ),
]


def main(argv: Sequence[str] | None = None) -> int:
    return run(CASES, "python scripts/oracle_line_cases.py", __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
