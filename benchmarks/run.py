"""The benchmark runner: sessionref against its floor and the published package.

Run from the repository root::

    python -m benchmarks.run [--sizes 100,400,1600,6400] [--profiles chat,tools,surrogates]
                             [--repeat 5] [--js-sizes 100,400,1600] [--batch] [--plot]

Measures, in-process and with medians over ``--repeat`` rounds, for one session of each size and
workload profile (``chat``: conversation-heavy, ``tools``: tool-heavy, ``surrogates``: ``chat``
with lone surrogates on 1% of its lines; see ``benchmarks/sessiongen.py``):
``prepare`` of one reference at ``max_reference_bytes`` 65536 and 1 MiB (wall time; peak
memory traced in a separate pass), and the floor: reading and envelope-decoding the same
file. What a target compares is timed taking turns, round by round (the floor and ``prepare``,
two sizes, the ``surrogates`` session and the ``chat`` one, the published package and this
one), and the target checks the median of the rounds' ratios: this machine's speed moves by a
third from one minute to the next, and a ratio of two times taken in the same round does not
move with it. Start-up compares medians of commands taking turns in the same rounds; the
1600-turn time is an absolute median. With node and npm present it times the published
package on the same files (``benchmarks/js``) and checks that both produce the same prompt.
It times start-up as whole processes (``benchmarks/startup.py``; ``--no-startup`` skips it),
and ``--batch`` adds batch throughput over a 1000-session store (``benchmarks/throughput.py``).
It prints a table, checks the targets, writes ``--out`` (``benchmarks/results.json``) and, with
``--plot``, ``benchmarks/scaling.png``. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.generate import PROFILES, Profile, generate_store, size_session_id
from benchmarks.measure import (
    alternating_clocks,
    alternating_times,
    envelope_floor,
    median_ratio,
    peak_bytes,
    seconds,
)
from benchmarks.options import at_least_one, profile_list, turn_counts
from benchmarks.profiles import CHAT, SURROGATES
from benchmarks.report import plot, table
from benchmarks.startup import (
    BYTECODE_NOTE,
    describe_instructions,
    measure_instructions,
    measure_startup,
    startup_checks,
)
from benchmarks.targets import check_targets
from benchmarks.throughput import batch_checks, describe, measure_batch
from sessionref import DirectoryStore, SessionReferenceResolver, Target
from sessionref.log.records import decompress_frames

__all__ = ["check_targets", "main"]

HERE = Path(__file__).resolve().parent
JS_DIR = HERE / "js"
BUDGETS = (65536, 1 << 20)
"""The budgets every row times ``prepare`` at: the default, and 1 MiB (issue 22)."""
TARGET = Target("sessionref-benchmark-target")
PAIRED_ROUNDS = 21
"""The fewest rounds of the ``surrogates``/``chat`` pair: two times a few percent apart, at
100 turns about 30 ms each, need more rounds than one row's median to be told apart on a
busy machine."""
GROWTH_PAIRS = ((100, 400), (400, 1600), (1600, 6400))
"""The sizes whose times the linear-growth target compares, each pair timed taking turns."""
GROWTH_ROUNDS = 11
"""The fewest rounds of a growth pair: the machine's speed moves by a third from one minute
to the next, so two sizes timed minutes apart are not compared; each round times both."""


def ensure_stores(stores: Path, profiles: Sequence[Profile], sizes: Sequence[int]) -> None:
    """Generate what is missing (deterministic: the same seed gives the same bytes)."""
    (stores / "sizes").mkdir(parents=True, exist_ok=True)
    known = {h.id for h in DirectoryStore(stores / "sizes").headers()}
    if SURROGATES in profiles and CHAT not in profiles:
        profiles = [*profiles, CHAT]  # the surrogates target compares with chat
    for profile in profiles:
        missing = [turns for turns in sizes if size_session_id(turns, profile) not in known]
        if missing:
            print(f"generating {profile.name} sessions of {missing} turns …", file=sys.stderr)
            generate_store(
                stores / "sizes", missing, profiles=[profile], plain_root=stores / "sizes-plain"
            )


def js_available() -> bool:
    """Whether node can run the published package (installing it with npm if needed)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return False
    if not (JS_DIR / "node_modules").exists():
        done = subprocess.run(["npm", "ci", "--silent"], cwd=JS_DIR, capture_output=True)
        if done.returncode != 0:
            print(done.stderr.decode(errors="replace")[-500:], file=sys.stderr)
            return False
    return True


def js_prepare(path: Path, max_bytes: int, warm_up: bool, dump: Path) -> float:
    """Seconds of one run of the published package's ``prepare`` on ``path`` in a fresh node
    process, after one untimed run when ``warm_up``."""
    done = subprocess.run(
        [
            "node",
            str(JS_DIR / "run.mjs"),
            "--file",
            str(path),
            "--max-bytes",
            str(max_bytes),
            "--runs",
            "1",
            "--warmup",
            "1" if warm_up else "0",
            "--dump",
            str(dump),
        ],
        capture_output=True,
        check=False,
    )
    result: dict[str, Any] = json.loads(done.stdout or b"{}")
    if done.returncode != 0 or "median_s" not in result:
        raise RuntimeError(f"js runner failed: {done.stderr.decode(errors='replace')[-500:]}")
    return float(result["median_s"])


def measure_size(stores: Path, profile: Profile, turns: int, repeat: int) -> dict[str, Any]:
    """Floor, prepare at each budget, peak memory: one row of the table."""
    store = DirectoryStore(stores / "sizes")
    session_id = size_session_id(turns, profile)
    path = store.path_of(session_id)
    decompressed = len(decompress_frames(path.read_bytes()))
    row: dict[str, Any] = {
        "profile": profile.name,
        "turns": turns,
        "log_bytes": decompressed,
        "session_id": session_id,
    }
    prepares = [_prepare(store, session_id, budget) for budget in BUDGETS]
    read = functools.partial(store.read, session_id)
    wall, cpu = alternating_clocks([envelope_floor(path), read, *prepares], repeat)
    (floor_s, read_s, *prepare_s), (floor_cpu, read_cpu, *prepare_cpu) = wall, cpu
    row["floor_s"] = statistics.median(floor_s)
    row["read_s"] = statistics.median(read_s)
    row["read_vs_floor"] = median_ratio(read_s, floor_s)
    row["read_cpu_vs_floor"] = median_ratio(read_cpu, floor_cpu)  # the floor has one thread
    for budget, times, cpus in zip(BUDGETS, prepare_s, prepare_cpu, strict=True):
        row[f"prepare_{budget}_s"] = statistics.median(times)
        row[f"vs_floor_{budget}"] = median_ratio(times, floor_s)
        row[f"cpu_vs_floor_{budget}"] = median_ratio(cpus, floor_cpu)
    row["vs_floor"] = row[f"vs_floor_{BUDGETS[0]}"]
    row["peak_bytes"] = peak_bytes(prepares[0])
    if profile == SURROGATES:
        row |= paired_with_chat(store, turns, repeat)
    return row


def _prepare(
    store: DirectoryStore, session_id: str, budget: int = BUDGETS[0]
) -> Callable[[], object]:
    """``prepare`` of one reference to ``session_id`` at ``budget``: what every row times."""
    resolver = SessionReferenceResolver(store, max_reference_bytes=budget)
    return functools.partial(resolver.prepare, TARGET, [], [{"sessionId": session_id}])


def paired_with_chat(store: DirectoryStore, turns: int, repeat: int) -> dict[str, Any]:
    """``prepare`` of the ``surrogates`` session and of the ``chat`` one of its size, taking
    turns: the medians, the median of the rounds' ratios, and the size of the ``chat`` log:
    what the surrogates target compares."""
    ids = [size_session_id(turns, SURROGATES), size_session_id(turns, CHAT)]
    works = [_prepare(store, session_id) for session_id in ids]
    mine, clean = alternating_times(works, max(repeat, PAIRED_ROUNDS))
    chat_bytes = len(decompress_frames(store.path_of(ids[1]).read_bytes()))
    return {
        "paired_prepare_s": statistics.median(mine),
        "paired_chat_prepare_s": statistics.median(clean),
        "paired_ratio": median_ratio(mine, clean),
        "chat_log_bytes": chat_bytes,
    }


def add_growth(stores: Path, rows: list[dict[str, Any]], repeat: int) -> None:
    """For each profile and pair of :data:`GROWTH_PAIRS` measured, time ``prepare`` at both
    sizes taking turns and give the larger row ``growth_time_ratio``, the median of the
    rounds' ratios of its time to the smaller's (``growth_from``: the smaller size)."""
    store = DirectoryStore(stores / "sizes")
    by_key = {(row["profile"], row["turns"]): row for row in rows}
    for (profile, turns), row in by_key.items():
        for small, large in GROWTH_PAIRS:
            if turns == large and (profile, small) in by_key:
                works = [
                    _prepare(store, by_key[profile, small]["session_id"]),
                    _prepare(store, row["session_id"]),
                ]
                small_times, large_times = alternating_times(works, max(repeat, GROWTH_ROUNDS))
                row["growth_from"] = small
                row["growth_time_ratio"] = median_ratio(large_times, small_times)


def compare_with_js(stores: Path, row: dict[str, Any], rounds: int, repeat: int) -> None:
    """Add the published package's time, the speed ratio, and whether the prompts agree.

    Each of ``rounds`` times one run of the published package (after a warm-up run, but for
    a single round: at 1600 turns one run takes minutes), then ``prepare`` here ``repeat``
    times; the speed ratio is the median of the rounds' ratios, so both sides of each were
    timed within the same minute or so."""
    store = DirectoryStore(stores / "sizes")
    path = store.path_of(row["session_id"])
    dump = stores / f"js-{row['session_id']}.json"
    ours = _prepare(store, row["session_id"])
    theirs_s, ours_s = [], []
    for _ in range(rounds):
        theirs_s.append(js_prepare(path, BUDGETS[0], rounds > 1, dump))
        ours_s.append(statistics.median(seconds(ours) for _ in range(repeat)))
    row["js_prepare_65536_s"] = statistics.median(theirs_s)
    row["speedup"] = median_ratio(theirs_s, ours_s)
    theirs = json.loads(dump.read_text("utf-8"))
    snapshot = SessionReferenceResolver(store).snapshot(TARGET, [{"sessionId": row["session_id"]}])
    row["same_prompt_as_js"] = snapshot is not None and _prompt_of(theirs) == snapshot.prompt


def _prompt_of(dumped: Any) -> str | None:
    """The prompt text in whatever the JS runner dumped (a message or a prepare result)."""
    if isinstance(dumped, dict):
        for key in ("prompt", "additionalContext", "context"):
            if key in dumped:
                return _prompt_of(dumped[key])
        content = dumped.get("content")
        if isinstance(content, list) and content and isinstance(content[0], dict):
            text = content[0].get("text")
            return text if isinstance(text, str) else None
    return dumped if isinstance(dumped, str) else None


EPILOG = """\
examples:
  python -m benchmarks.run --sizes 100,400 --profiles tools --no-js --no-startup --repeat 3 \\
      --out /tmp/results.json
  python -m benchmarks.run --batch --plot      # every size and target; some 10 minutes
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--stores",
        type=Path,
        default=HERE / "stores",
        metavar="DIR",
        help="where the generated stores are kept (default: benchmarks/stores)",
    )
    parser.add_argument(
        "--sizes",
        type=turn_counts,
        default="100,400,1600,6400",
        metavar="N,N,...",
        help="session sizes, in turns (default: %(default)s)",
    )
    parser.add_argument(
        "--profiles",
        type=profile_list,
        default=",".join(PROFILES),
        metavar="NAME,...",
        help=f"workloads, of {', '.join(PROFILES)} (default: %(default)s)",
    )
    parser.add_argument(
        "--repeat",
        type=at_least_one,
        default=5,
        metavar="N",
        help="timed rounds, after a warm-up round (default: %(default)s)",
    )
    parser.add_argument(
        "--js-sizes",
        type=turn_counts,
        default="100,400,1600",
        metavar="N,N,...",
        help="the sizes to time the published package on (default: %(default)s)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=HERE / "results.json",
        metavar="FILE",
        help="where the results go (default: benchmarks/results.json, which the README quotes)",
    )
    parser.add_argument("--no-js", action="store_true", help="do not time the published package")
    parser.add_argument("--batch", action="store_true", help="also measure batch throughput")
    parser.add_argument("--no-startup", action="store_true", help="do not time start-up")
    parser.add_argument("--plot", action="store_true", help="also draw benchmarks/scaling.png")
    args = parser.parse_args(argv)
    sizes: list[int] = args.sizes
    profiles: list[Profile] = args.profiles
    ensure_stores(args.stores, profiles, sizes)
    rows = [
        measure_size(args.stores, profile, turns, args.repeat)
        for profile in profiles
        for turns in sizes
    ]
    add_growth(args.stores, rows, args.repeat)
    js_sizes = set(args.js_sizes)
    if args.no_js or not js_available():
        print(
            "node/npm not available (or --no-js): the published package is not timed",
            file=sys.stderr,
        )
    else:
        for row in rows:
            if row["turns"] in js_sizes:
                rounds = 3 if row["turns"] <= 400 else 1
                compare_with_js(args.stores, row, rounds, args.repeat)
    results: dict[str, Any] = {"sizes": rows, "python": sys.version.split()[0]}
    checks = check_targets(rows)
    if not args.no_startup:
        results["startup_s"] = measure_startup(args.stores)
        results["startup_bytecode"] = BYTECODE_NOTE
        results["startup_instructions"] = measure_instructions(args.stores)
        checks += startup_checks(results["startup_s"])
    if args.batch:
        results["batch"] = measure_batch(args.stores, args.repeat)
        checks += batch_checks(results["batch"])
    results["targets"] = [{"target": t, "measured": m, "met": ok} for t, m, ok in checks]
    print(table(rows))
    if "startup_s" in results:
        print(f"\nstart-up, whole processes, medians of 10, {BYTECODE_NOTE}:")
        for command, median in results["startup_s"].items():
            print(f"  {command}: {median * 1000:.0f} ms")
        if results["startup_instructions"]:
            print("the same commands in instructions (one run each, valgrind's callgrind):")
            print(describe_instructions(results["startup_instructions"]))
    if args.batch:
        print("\n" + describe(results["batch"]))
    print()
    for target, measured, met in checks:
        print(f"{'✓' if met else '✗'} {target}: {measured}")
    args.out.write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    if args.plot:
        plot(rows, HERE / "scaling.png")
    return 0 if all(met for _, _, met in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
