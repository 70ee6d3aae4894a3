"""What the runner prints and draws: the table of its measurements, which says what its columns
are, and the chart of time against log size (``--plot``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

LEGEND = """\
floor: the least any reader does: decompress the log, split its lines, decode each envelope
read: DirectoryStore.read; prepare: one reference at that budget
÷ floor: the median of the rounds' ratios to the floor timed beside it in each round
peak ÷ log: traced peak memory of prepare over the decompressed log
published: the JS package's prepare at 64 KiB; speed-up: its time ÷ prepare's (—: not timed)"""
"""The lines under the table that say what its columns are (benchmarks/README.md has more)."""


def table(rows: list[dict[str, Any]]) -> str:
    """The measurements as a Markdown table, then the :data:`LEGEND`.

    >>> row = {"profile": "tools", "turns": 100, "log_bytes": 1.6e6, "floor_s": 0.03,
    ...        "read_vs_floor": 2.0, "prepare_65536_s": 0.06, "vs_floor_65536": 1.9,
    ...        "prepare_1048576_s": 0.07, "vs_floor_1048576": 2.3, "peak_bytes": 3.2e6}
    >>> print(table([row]).splitlines()[2])
    | tools | 100 | 1.6 | 0.0300 | 2.00 | 0.0600 | 1.90 | 0.0700 | 2.30 | 2.00 | — | — |
    """
    columns = (
        "profile",
        "turns",
        "log MB",
        "floor s",
        "read ÷ floor",
        "prepare 64 KiB s",
        "÷ floor",
        "prepare 1 MiB s",
        "÷ floor",
        "peak ÷ log",
        "published s",
        "speed-up",
    )
    lines = ["| " + " | ".join(columns) + " |", "|" + "---:|" * len(columns)]
    for row in rows:
        js = row.get("js_prepare_65536_s")
        js_time = "—" if js is None else f"{js:.2f}"
        speedup = "—" if js is None else f"{row['speedup']:.0f}×"
        lines.append(
            f"| {row['profile']} | {row['turns']} | {row['log_bytes'] / 1e6:.1f} "
            f"| {row['floor_s']:.4f} | {row['read_vs_floor']:.2f} "
            f"| {row['prepare_65536_s']:.4f} | {row['vs_floor_65536']:.2f} "
            f"| {row['prepare_1048576_s']:.4f} | {row['vs_floor_1048576']:.2f} "
            f"| {row['peak_bytes'] / row['log_bytes']:.2f} "
            f"| {js_time} | {speedup} |"
        )
    return "\n".join([*lines, "", LEGEND])


def plot(rows: list[dict[str, Any]], out: Path) -> None:
    """A log-log chart of time against log size, one colour per profile (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5))
    for number, name in enumerate(dict.fromkeys(r["profile"] for r in rows)):
        colour = f"C{number}"
        mine = [r for r in rows if r["profile"] == name]
        lines = (
            ("floor_s", mine, "o:", "floor (read + envelope decode)"),
            ("prepare_65536_s", mine, "o-", "sessionref prepare"),
            (
                "js_prepare_65536_s",
                [r for r in mine if "js_prepare_65536_s" in r],
                "s--",
                "published package",
            ),
        )
        for key, subset, style, what in lines:
            if subset:
                ax.loglog(
                    [r["log_bytes"] / 1e6 for r in subset],
                    [r[key] for r in subset],
                    style,
                    color=colour,
                    label=f"{name}: {what}",
                )
    ax.set_xlabel("decompressed log size (MB)")
    ax.set_ylabel("seconds (median)")
    ax.set_title("One referenced session, disk to context, 65536-byte budget")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    fig.savefig(out, dpi=120)
