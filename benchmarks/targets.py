"""The performance targets on the per-size rows of ``benchmarks.run``: what each asks, what was
measured, whether it holds."""

from __future__ import annotations

from typing import Any, Final

from benchmarks.profiles import CHAT, SURROGATES

Check = tuple[str, str, bool]

SPEED_UP_PROFILE: Final = CHAT
"""The workload the speed-up targets apply to: the one on which the published package takes
the times the performance issue reports (0.59 s, 9.3 s, 142 s at 100, 400, 1600 turns)."""
SURROGATE_SLOWDOWN: Final = 1.15
"""How much longer a log with lone surrogates may take than a clean one, per byte of log."""


def check_targets(rows: list[dict[str, Any]]) -> list[Check]:
    """Each target of the issue on the measured rows.

    Every target is checked on every profile, except the speed-ups over the published
    package: those are checked on :data:`SPEED_UP_PROFILE` and only reported for the others.
    The ``surrogates`` sessions are also compared with the ``chat`` sessions of their size.
    """
    checks: list[Check] = []
    for name in dict.fromkeys(row["profile"] for row in rows):
        checks += _profile_checks(name, [row for row in rows if row["profile"] == name])
    return checks + surrogate_checks(rows)


def surrogate_checks(rows: list[dict[str, Any]]) -> list[Check]:
    """Each size's ``surrogates`` session against the ``chat`` one: time per byte of log.

    The two were timed taking turns: ``paired_ratio`` in the row is the median of the rounds'
    ratios of their times. The ``surrogates`` log holds the ``chat`` text plus the escapes, so
    it is a little longer; the ratio is taken per byte of each log.

    >>> rows = [{"profile": "surrogates", "turns": 100, "log_bytes": 101, "chat_log_bytes": 100,
    ...          "paired_ratio": 1.17}]
    >>> [(measured, met) for _, measured, met in surrogate_checks(rows)]
    [('1.158× (1.170× in all)', False)]
    """
    checks: list[Check] = []
    for row in rows:
        if row["profile"] != SURROGATES.name or "paired_ratio" not in row:
            continue
        ratio = row["paired_ratio"]
        per_byte = ratio * row["chat_log_bytes"] / row["log_bytes"]
        checks.append(
            (
                f"{SURROGATES.name} {row['turns']} turns ≤ {SURROGATE_SLOWDOWN}× the time of "
                f"{CHAT.name}, per byte of log",
                f"{per_byte:.3f}× ({ratio:.3f}× in all)",
                per_byte <= SURROGATE_SLOWDOWN,
            )
        )
    return checks


def _profile_checks(name: str, rows: list[dict[str, Any]]) -> list[Check]:
    """The targets for the rows of one profile, each named with the profile."""
    by_turns = {row["turns"]: row for row in rows}
    checks: list[Check] = []
    if 1600 in by_turns:
        t = by_turns[1600]["prepare_65536_s"]
        checks.append((f"{name} 1600 turns, disk to context ≤ 0.25 s", f"{t:.3f} s", t <= 0.25))
    for turns, needed in ((1600, 500), (400, 150)):
        speedup = by_turns.get(turns, {}).get("speedup")
        if speedup is not None and name == SPEED_UP_PROFILE.name:
            checks.append(
                (
                    f"{name} ≥ {needed}× the published package at {turns}",
                    f"{speedup:.0f}×",
                    speedup >= needed,
                )
            )
    for row in rows:  # sizes timed taking turns, see benchmarks.run.add_growth
        if "growth_time_ratio" in row:
            small, ratio = row["growth_from"], row["growth_time_ratio"]
            growth = row["log_bytes"] / by_turns[small]["log_bytes"]
            checks.append(
                (
                    f"{name} linear {small}→{row['turns']}: time ratio ≤ 1.1 × log ratio",
                    f"{ratio:.2f}× for {growth:.2f}× the log",
                    ratio <= 1.1 * growth,
                )
            )
    for row in rows:
        where = f"{name} {row['turns']} turns"
        vs_floor = row["vs_floor"]  # the median of rounds taking turns with the floor
        checks.append((f"{where} within 2.5× of the floor", f"{vs_floor:.2f}×", vs_floor <= 2.5))
        memory = row["peak_bytes"] / row["log_bytes"]
        checks.append((f"{where} peak memory ≤ 3× the log", f"{memory:.2f}×", memory <= 3))
        if "same_prompt_as_js" in row:
            same = row["same_prompt_as_js"]
            checks.append((f"{where}: same prompt as the published package", str(same), same))
    return checks
