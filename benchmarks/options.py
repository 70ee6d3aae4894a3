"""The values the benchmark commands take on their command lines, checked as argparse checks
its own: a bad one is one usage line (exit 2) before anything is generated or timed, never a
traceback nor a run over nonsense sizes minutes later.
"""

from __future__ import annotations

import argparse

from benchmarks.profiles import PROFILES, Profile


def at_least_one(text: str) -> int:
    """A count (rounds, runs, sessions, turns) of at least 1.

    >>> at_least_one("3")
    3
    >>> at_least_one("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: '0' is not a whole number of at least 1
    >>> at_least_one("abc")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: 'abc' is not a whole number of at least 1
    """
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return count


def turn_counts(text: str) -> list[int]:
    """Session sizes in turns, comma-separated, each at least 1.

    >>> turn_counts("100,400")
    [100, 400]
    >>> turn_counts("100,")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    argparse.ArgumentTypeError: '100,' is not a comma-separated list of turn counts: '' is not ...
    """
    try:
        return [at_least_one(part.strip()) for part in text.split(",")]
    except argparse.ArgumentTypeError as error:
        message = f"{text!r} is not a comma-separated list of turn counts: {error}"
        raise argparse.ArgumentTypeError(message) from None


def profile_list(text: str) -> list[Profile]:
    """Workload profiles by name, comma-separated.

    >>> [profile.name for profile in profile_list("chat,tools")]
    ['chat', 'tools']
    >>> profile_list("chat,tool")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: unknown profile 'tool'; choose from chat, tools, surrogates
    """
    names = [name.strip() for name in text.split(",")]
    unknown = [name for name in names if name not in PROFILES]
    if unknown:
        choices = ", ".join(PROFILES)
        raise argparse.ArgumentTypeError(f"unknown profile {unknown[0]!r}; choose from {choices}")
    return [PROFILES[name] for name in names]
