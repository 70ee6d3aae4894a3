"""The views' benchmark: exporting a long session to HTML against snapshotting it.

Run from the repository root::

    python -m benchmarks.views_bench [--turns 1600] [--profiles chat,tools] [--repeat 7]
                                     [--stores benchmarks/stores]

For each profile it generates the session of ``--turns`` turns if it is missing (the same
deterministic store ``benchmarks.run`` uses), then times, taking turns for ``--repeat`` rounds
after a warm-up: ``prepare`` of one reference to it with a 1 MiB budget (reading the log
included), and its export to HTML as ``sessionref export --format html`` makes it (the store's
transcript, the page rendered piece by piece and written to ``/dev/null``). The target: the
export takes at most 3× the snapshot's time, as the median of the rounds' ratios. Prints one
line per profile; exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.generate import size_session_id
from benchmarks.measure import alternating_times, median_ratio
from benchmarks.options import at_least_one, profile_list
from benchmarks.run import HERE, _prepare, ensure_stores
from sessionref import DirectoryStore
from sessionref.cli.output_file import encoded
from sessionref.views.entries import ViewOptions
from sessionref.views.html import export_html_chunks

MAX_BYTES = 1 << 20
TARGET_RATIO = 3.0


def export_html(store: DirectoryStore, session_id: str) -> Callable[[], int]:
    """The export of ``session_id`` to HTML, written to /dev/null; returns the page's bytes."""

    def export() -> int:
        transcript = store.transcript(session_id)
        written = 0
        with open(os.devnull, "wb") as sink:
            for piece in encoded(export_html_chunks(transcript, ViewOptions())):
                written += sink.write(piece)
        return written

    return export


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print, and say whether each target is met."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=at_least_one, default=1600)
    parser.add_argument("--profiles", type=profile_list, default="chat,tools")
    parser.add_argument("--repeat", type=at_least_one, default=7)
    parser.add_argument("--stores", type=Path, default=HERE / "stores")
    args = parser.parse_args(argv)
    profiles = args.profiles
    ensure_stores(args.stores, profiles, [args.turns])
    store = DirectoryStore(args.stores / "sizes")
    met = True
    for profile in profiles:
        session_id = size_session_id(args.turns, profile)
        export = export_html(store, session_id)
        page_bytes = export()
        snapshot_s, export_s = alternating_times(
            [_prepare(store, session_id, MAX_BYTES), export], args.repeat
        )
        ratio = median_ratio(export_s, snapshot_s)
        met = met and ratio <= TARGET_RATIO
        verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
        rounds = ", ".join(f"{e / s:.2f}" for e, s in zip(export_s, snapshot_s, strict=True))
        print(
            f"{profile.name} {args.turns} turns: snapshot (1 MiB) "
            f"{statistics.median(snapshot_s):.3f} s, export to HTML "
            f"{statistics.median(export_s):.3f} s ({page_bytes / 1e6:.1f} MB page): "
            f"{ratio:.2f}x (target <= {TARGET_RATIO}x: {verdict}; rounds {rounds})"
        )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
