"""What redaction costs: ``prepare`` with ``redact=True`` against without, per profile.

Run from the repository root::

    python -m benchmarks.redact_bench [--turns 1600] [--profiles chat,tools] [--repeat 21]

For the 1600-turn session of each profile (generated into ``--stores`` when missing, as
``benchmarks.run`` generates them) it times ``prepare`` of one reference at
``max_reference_bytes`` 65536 with and without redaction, taking turns round by round (after a
warm-up round, which also builds the detectors once, as a long-lived host does), in wall and
CPU time, and checks the target of the redaction issue on the median of the rounds' ratios,
both of them: redaction adds at most 30%. In the same rounds it times the transform alone on the
log's units (its share of ``prepare``'s CPU time moves least with the machine's load). It also
prints what redaction found. Exit status 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.generate import size_session_id
from benchmarks.measure import median_ratio
from benchmarks.options import at_least_one, profile_list
from benchmarks.run import TARGET, ensure_stores
from sessionref import DirectoryStore, SessionReferenceResolver
from sessionref.pipeline.messages import SourceData
from sessionref.redact import Redaction
from sessionref.snapshot import project_units

HERE = Path(__file__).resolve().parent
BUDGET = 65536
TARGET_RATIO = 1.30
"""Redaction may add at most 30% to ``prepare`` of a 1600-turn log at a 64 KiB budget."""


def wall_and_cpu(
    works: Sequence[Callable[[], object]], repeat: int
) -> tuple[list[list[float]], list[list[float]]]:
    """Wall and CPU (this process, every thread) seconds of each of ``works`` over ``repeat``
    rounds in which they take turns, after one warm-up round. CPU time is what another
    process's load moves least: 7 other helpers share this machine's 2 cores.

    >>> [len(w) for w in wall_and_cpu([lambda: None, lambda: None], 2)[1]]
    [2, 2]
    """
    wall: list[list[float]] = [[] for _ in works]
    cpu: list[list[float]] = [[] for _ in works]
    for round_number in range(repeat + 1):
        for index, work in enumerate(works):
            start, start_cpu = time.perf_counter(), time.process_time()
            work()
            if round_number:
                wall[index].append(time.perf_counter() - start)
                cpu[index].append(time.process_time() - start_cpu)
    return wall, cpu


def measure(store: DirectoryStore, session_id: str, repeat: int) -> dict[str, object]:
    """Medians of ``prepare`` without and with redaction, the medians of the rounds' ratios
    in wall and CPU time, and the kinds redaction found."""
    reference = [{"sessionId": session_id}]
    plain = SessionReferenceResolver(store, max_reference_bytes=BUDGET)
    redacting = SessionReferenceResolver(store, max_reference_bytes=BUDGET, redact=True)
    works: list[Callable[[], object]] = [
        functools.partial(r.prepare, TARGET, [], reference) for r in (plain, redacting)
    ]
    units = list(project_units(store.read(session_id).records))
    source = SourceData(session_id, session_id, None, 0)
    works.append(lambda: Redaction().transform()(units, source, BUDGET))  # the transform alone
    (off, on, _), (off_cpu, on_cpu, alone_cpu) = wall_and_cpu(works, repeat)
    context = redacting.prepare(TARGET, [], reference).additional_context
    assert context is not None
    return {
        "session": session_id,
        "off_s": statistics.median(off),
        "on_s": statistics.median(on),
        "ratio": median_ratio(on, off),
        "cpu_ratio": median_ratio(on_cpu, off_cpu),
        "alone_cpu_share": median_ratio(alone_cpu, off_cpu),
        "rounds": [round(a / b, 3) for a, b in zip(on, off, strict=True)],
        "cpu_rounds": [round(a / b, 3) for a, b in zip(on_cpu, off_cpu, strict=True)],
        "redacted": context.source.references[0].redacted,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.redact_bench", description=__doc__)
    parser.add_argument("--stores", type=Path, default=HERE / "stores")
    parser.add_argument("--turns", type=at_least_one, default=1600)
    parser.add_argument("--profiles", type=profile_list, default="chat,tools")
    parser.add_argument("--repeat", type=at_least_one, default=21)
    args = parser.parse_args(argv)
    profiles = args.profiles
    ensure_stores(args.stores, profiles, [args.turns])
    store = DirectoryStore(args.stores / "sizes")
    missed = False
    for profile in profiles:
        row = measure(store, size_session_id(args.turns, profile), args.repeat)
        ratio, cpu_ratio = float(row["ratio"]), float(row["cpu_ratio"])  # type: ignore[arg-type]
        met = max(ratio, cpu_ratio) <= TARGET_RATIO
        missed = missed or not met
        print(
            f"{profile.name:6} {args.turns} turns, {BUDGET} B: prepare {row['off_s']:.3f} s, "
            f"redacting {row['on_s']:.3f} s; ratio (median of {args.repeat} rounds) "
            f"wall {ratio:.3f}, CPU {cpu_ratio:.3f} (target ≤ {TARGET_RATIO}: "
            f"{'met' if met else 'MISSED'}); found {row['redacted']}"
        )
        print(f"       the transform alone: {float(row['alone_cpu_share']):.3f} of prepare's CPU")  # type: ignore[arg-type]
        print(f"       rounds, wall: {row['rounds']}")
        print(f"       rounds, CPU:  {row['cpu_rounds']}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
