"""The MCP server, warm, over a large store: listing, completion, search, and reading a long
session against the library's ``prepare`` of it.

    python -m benchmarks.mcp_bench                  # 10,000 sessions and one of 1600 turns
    python -m benchmarks.mcp_bench --sessions 300 --turns 2 --big-turns 100   # a quick look

Generates (seeded, once) a store of ``--sessions`` sessions of about ``--turns`` turns
(``generate_batch_store``) plus the ``chat`` session of ``--big-turns`` turns, builds its index,
then measures, with the SDK's own client, both in this process (``in_memory``) and over stdio
(``python -m sessionref mcp --tools`` as a client starts it):

- ``resources/list``: the first page, and the whole listing (every page, cursor to cursor);
- ``completion/complete`` on the template, over a few queries (one matching nothing: the
  worst case, every session's id, cwd and title looked at);
- ``tools/call search_sessions`` over a few queries;
- reading the long session's resource, taking turns with the library's ``prepare`` of it in
  this process (from a store of that session alone); the ratio is the median of the rounds'.

In this process the server runs without its watcher (the looks it takes while no request is
answered would land on the ``prepare`` timed beside the reads); over stdio it runs whole.

Times are each call's wall time as the client sees it; p50 and p90 over ``--repeat`` calls.
Prints a Markdown table and one line per target (exit 1 when one is missed), and writes
``benchmarks/mcp_results.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client

from benchmarks.generate import generate_batch_store, generate_session, size_session_id
from benchmarks.measure import median_ratio
from benchmarks.options import at_least_one
from benchmarks.profiles import CHAT
from sessionref import DirectoryStore, SessionReferenceResolver, Target
from sessionref.cli.common import OpenStore
from sessionref.codecs.uri import encode_session_reference_uri
from sessionref.index import SessionIndex
from sessionref.mcp.catalog import TEMPLATE, Catalog, index_at
from sessionref.mcp.server import SessionServer, in_memory

HERE = Path(__file__).resolve().parent
COMPLETIONS = ("chunk", "fix", "webapp", "no-such-words")
SEARCHES = ("token", "cache", "retry handler")
TARGETS = {"list_p50": 0.100, "completion_p50": 0.030, "search_p50": 0.050, "read_ratio": 1.2}


def quantile(times: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``times`` (nearest rank).

    >>> quantile([3.0, 1.0, 2.0, 4.0], 0.5), quantile([3.0, 1.0, 2.0, 4.0], 0.9)
    (2.0, 4.0)
    """
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    """Wall seconds of one awaited call."""
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def calls(call: Callable[[int], Awaitable[object]], repeat: int) -> dict[str, float]:
    """p50 and p90 of ``repeat`` calls (after one untimed), the i-th given ``i``."""
    await call(0)
    times = [await timed(lambda i=i: call(i)) for i in range(repeat)]
    return {"p50": quantile(times, 0.5), "p90": quantile(times, 0.9)}


async def whole_listing(session: ClientSession) -> int:
    """Every page of ``resources/list``: how many resources."""
    listed = await session.list_resources()
    count = len(listed.resources)
    while listed.next_cursor is not None:
        params = types.PaginatedRequestParams(cursor=listed.next_cursor)
        listed = await session.list_resources(params=params)
        count += len(listed.resources)
    return count


async def measure(session: ClientSession, big: Path, big_id: str, repeat: int) -> dict[str, Any]:
    """Every measure of one connected client."""
    template = types.ResourceTemplateReference(uri=TEMPLATE)
    uri = encode_session_reference_uri(big_id)
    resolver = SessionReferenceResolver(DirectoryStore(big))

    async def complete(i: int) -> object:
        argument = {"name": "id", "value": COMPLETIONS[i % len(COMPLETIONS)]}
        return await session.complete(template, argument)

    async def search(i: int) -> object:
        query = {"query": SEARCHES[i % len(SEARCHES)]}
        return await session.call_tool("search_sessions", query)

    def prepare() -> object:
        return resolver.prepare(Target("bench"), [], [{"sessionId": big_id}])

    row: dict[str, Any] = {"sessions": await whole_listing(session)}
    row["list_first_page"] = await calls(lambda _: session.list_resources(), repeat)
    row["list_all_pages"] = await calls(lambda _: whole_listing(session), max(3, repeat // 10))
    row["completion"] = await calls(complete, repeat)
    row["search"] = await calls(search, repeat)
    reads, prepares = [], []
    for round_number in range(max(3, repeat // 5) + 1):
        read = await timed(lambda: session.read_resource(uri))
        start = time.perf_counter()
        prepare()
        if round_number:
            reads.append(read)
            prepares.append(time.perf_counter() - start)
    row["read_big"] = statistics.median(reads)
    row["prepare_big"] = statistics.median(prepares)
    row["read_ratio"] = median_ratio(reads, prepares)
    return row


async def in_process(store: Path, index: Path, big: Path, big_id: str, repeat: int) -> Any:
    """The measures with the server in this process."""
    opened = OpenStore(store, lister=index_at(index), live=True)
    catalog = Catalog(opened, cwd="/", max_bytes=65536)
    server = SessionServer(catalog, tools=True, watch_seconds=None)  # its looks would land
    async with in_memory(server) as session:  # on the prepare timed beside, in this process
        return await measure(session, big, big_id, repeat)


async def over_stdio(store: Path, index: Path, big: Path, big_id: str, repeat: int) -> Any:
    """The measures with ``python -m sessionref mcp`` as a client starts it."""
    argv = ["-m", "sessionref", "mcp", "--root", str(store), "--index", str(index), "--tools"]
    tree = {"PYTHONPATH": str(HERE.parent)}
    params = StdioServerParameters(command=sys.executable, args=argv, env=tree, cwd="/")
    with open(store.parent / "mcp-server.log", "w") as errlog:
        async with (
            stdio_client(params, errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await measure(session, big, big_id, repeat)


def prepared_store(args: argparse.Namespace) -> tuple[Path, Path, str]:
    """The store (generated when missing, the long session copied in) and the long
    session's own store and id."""
    big_id = size_session_id(args.big_turns, CHAT)
    big = args.store.with_name(f"{args.store.name}.big")
    if not big.exists():
        print(f"generating the {args.big_turns}-turn session into {big} …", flush=True)
        generate_session(big, big_id, args.big_turns, profile=CHAT, draws=big_id)
    if not args.store.exists():
        print(f"generating {args.sessions} sessions into {args.store} …", flush=True)
        partial = args.store.with_name(f"{args.store.name}.partial")
        shutil.rmtree(partial, ignore_errors=True)
        generate_batch_store(partial, args.sessions, args.turns)
        for project in big.iterdir():
            shutil.copytree(project, partial / project.name, dirs_exist_ok=True)
        partial.rename(args.store)
    return big, args.store.with_name(f"{args.store.name}.index.sqlite"), big_id


def table(rows: dict[str, dict[str, Any]]) -> str:
    """The measures as a Markdown table, milliseconds."""
    lines = [
        "| measure | in-process p50 ms | p90 ms | stdio p50 ms | p90 ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for key, name in (
        ("list_first_page", "`resources/list`, first page (500)"),
        ("list_all_pages", "`resources/list`, every page"),
        ("completion", "`completion/complete`"),
        ("search", "`search_sessions`"),
    ):
        cells = [
            f"{rows[w][key][q] * 1000:.1f}" for w in ("in_process", "stdio") for q in ("p50", "p90")
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for w in ("in_process", "stdio"):
        row = rows[w]
        lines.append(
            f"| read the long session ({w}) | {row['read_big'] * 1000:.0f} | | prepare "
            f"{row['prepare_big'] * 1000:.0f} | {row['read_ratio']:.3f}× |"
        )
    return "\n".join(lines)


def checks(rows: dict[str, dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """(target, measured, met) for each target and way."""
    out = []
    for way, row in rows.items():
        for name, key in (
            ("list", "list_first_page"),
            ("completion", "completion"),
            ("search", "search"),
        ):
            limit = TARGETS[f"{name}_p50"]
            value = row[key]["p50"]
            out.append(
                (
                    f"{way} {name} p50 ≤ {limit * 1000:.0f} ms",
                    f"{value * 1000:.1f} ms",
                    value <= limit,
                )
            )
        ratio = row["read_ratio"]
        out.append(
            (
                f"{way} read ≤ {TARGETS['read_ratio']}× prepare",
                f"{ratio:.3f}×",
                ratio <= TARGETS["read_ratio"],
            )
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mcp_bench")
    parser.add_argument("--store", type=Path, default=HERE / "stores" / "mcp")
    parser.add_argument("--sessions", type=at_least_one, default=10_000)
    parser.add_argument("--turns", type=at_least_one, default=2)
    parser.add_argument("--big-turns", type=at_least_one, default=1600)
    parser.add_argument("--repeat", type=at_least_one, default=50, help="calls of each measure")
    parser.add_argument("--out", type=Path, default=HERE / "mcp_results.json")
    args = parser.parse_args(argv)
    big, index, big_id = prepared_store(args)
    built = time.perf_counter()
    report = SessionIndex(DirectoryStore(args.store), index).refresh()
    print(f"index: {report} in {time.perf_counter() - built:.1f} s", flush=True)
    rows = {
        "in_process": anyio.run(in_process, args.store, index, big, big_id, args.repeat),
        "stdio": anyio.run(over_stdio, args.store, index, big, big_id, args.repeat),
    }
    print(table(rows))
    missed = 0
    for name, value, ok in checks(rows):
        print(f"{'ok  ' if ok else 'MISS'} {name}: {value}")
        missed += not ok
    args.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
