"""Redaction as a unit transform of the spine: the units that can reach the output are
redacted before the budget sees them (docs/redaction.md §Where)."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Final

import msgspec

from sessionref.codecs.uri import label_text
from sessionref.errors import SessionLogError, describe, instance, listed, positive_count, string
from sessionref.log.multi import AmbiguousSession
from sessionref.log.records import SessionLog
from sessionref.log.store import SessionNotFound
from sessionref.pipeline.messages import SourceData, Unit
from sessionref.pipeline.retain_budget import SizedUnit, retain_budget
from sessionref.redact.detectors import builtin_detectors
from sessionref.redact.scan import compile_patterns, redact_text
from sessionref.snapshot import SourceSnapshot, snapshot_source
from sessionref.transcript import Transcript


class Redaction(msgspec.Struct, frozen=True):
    """What to redact: the built-in formats and the user's own ``patterns`` (regular
    expressions; a group named ``secret`` narrows a match to that group). It holds only
    strings, so it crosses to worker processes as it is.

    >>> Redaction(("ticket-[0-9]+",)).check().patterns
    ('ticket-[0-9]+',)

    Patterns come as a list or a tuple of strings; a single string (which would be one
    pattern a character) or anything else is INVALID_CONFIG:

    >>> Redaction(["ticket-[0-9]+"]).patterns
    ('ticket-[0-9]+',)
    >>> Redaction("ticket-[0-9]+")
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: Redaction patterns must be a list, not str

    A pattern that does not compile is INVALID_CONFIG as the redaction is made, not when it
    is first used:

    >>> Redaction(["ticket-("])
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: redact pattern 'ticket-(' is not a regular \
expression: missing ), unterminated subpattern at position 7
    """

    patterns: Sequence[str] = ()
    """The patterns, given as any list or tuple of strings and held as a tuple (a redaction
    is hashable, and its compiled patterns are cached by it)."""

    def __post_init__(self) -> None:
        listed_patterns = listed(self.patterns, "Redaction patterns")
        patterns = tuple(string(p, "each of Redaction patterns") for p in listed_patterns)
        compile_patterns(patterns)  # compiled once per process, then cached
        msgspec.structs.force_setattr(self, "patterns", patterns)

    def check(self) -> Redaction:
        """This redaction, once detect-secrets is installed (its patterns compiled as it was
        made); INVALID_CONFIG otherwise."""
        builtin_detectors()
        return self

    def redact(self, text: str) -> tuple[str, Counter[str]]:
        """``text`` redacted, and how many secrets of each kind it held.

        >>> Redaction(("ticket-[0-9]+",)).redact("see ticket-42")
        ('see [REDACTED:custom]', Counter({'custom': 1}))
        >>> Redaction().redact(b"see ticket-42")
        Traceback (most recent call last):
        sessionref.errors.SessionReferenceError: Redaction.redact text must be a string, not bytes
        """
        string(text, "Redaction.redact text")
        return redact_text(text, builtin_detectors(), compile_patterns(tuple(self.patterns)))

    def label(self, label: Any) -> tuple[Any, Counter[str]]:
        """A label or title redacted, and the counts (docs/redaction.md §Labels): a string
        as :meth:`redact` gives it; any other JSON value (a log may hold one as a title) is
        redacted as its JSON text, which it becomes only when that held a secret.

        >>> redaction = Redaction(("ticket-[0-9]+",))
        >>> redaction.label("fix ticket-7")
        ('fix [REDACTED:custom]', Counter({'custom': 1}))
        >>> redaction.label({"t": "ticket-7"}), redaction.label(7)
        (('{"t":"[REDACTED:custom]"}', Counter({'custom': 1})), (7, Counter()))
        >>> redaction.label("x" * 300 + " ticket-7")[0][-20:]  # too long to remember
        'xx [REDACTED:custom]'
        """
        text = label_text(label)
        scan = _redacted_label if len(text) <= REMEMBERED_LABEL else _redacted_label.__wrapped__
        redacted, counts = scan(self, text)
        return (redacted if counts else label), Counter(dict(counts))

    def failure(self, cause: BaseException) -> BaseException:
        """What a store or a stage raised (``cause``), as an error message may quote it: as it
        is, unless its message holds a secret (a log's text it quotes, as an unknown event
        type), then a :class:`~sessionref.errors.SessionLogError` of that message redacted.
        A missing or ambiguous session's error is kept: it says only the id, which is never
        redacted, and the roots (the command line adds what to do about it).

        >>> redaction = Redaction(("ticket-[0-9]+",))
        >>> str(redaction.failure(SessionLogError("event type 'x/ticket-7' is unknown")))
        "event type 'x/[REDACTED:custom]' is unknown"
        >>> gap = SessionLogError("seq gap at seq 3")
        >>> redaction.failure(gap) is gap
        True
        """
        if isinstance(cause, (SessionNotFound, AmbiguousSession)):
            return cause
        text = describe(cause)
        redacted, counts = self.redact(text)
        return SessionLogError(redacted) if counts else cause

    def snapshot(self, log: SessionLog, label: Any, max_bytes: int) -> SourceSnapshot:
        """The snapshot of ``log`` (the spine's, with :meth:`transform` as its unit
        transform) with its ``label`` redacted too, before the budget measures it; its
        ``redacted`` stats count the label's secrets and those of the messages it keeps.

        >>> from sessionref.log.records import SessionHeader
        >>> log = SessionLog(SessionHeader("s", 0), [])
        >>> done = Redaction().snapshot(log, "key AKIAIOSFODNN7EXAMPLE", 200)
        >>> done.label, done.redacted
        ('key [REDACTED:aws-access-key]', {'aws-access-key': 1})
        >>> Redaction().snapshot(log, "s", "200")
        Traceback (most recent call last):
        sessionref.errors.SessionReferenceError: Redaction.snapshot max_bytes must be a positive \
safe integer, not '200'
        """
        instance(log, SessionLog, "Redaction.snapshot log", "a SessionLog")
        max_bytes = positive_count(max_bytes, "Redaction.snapshot max_bytes")
        label, counts = self.label(label)
        redacting = self.transform()
        snapshot = snapshot_source(log, label, max_bytes, redacting)
        return msgspec.structs.replace(snapshot, redacted=dict(counts + redacting.counts))

    def transcript(self, transcript: Transcript) -> tuple[Transcript, Counter[str]]:
        """``transcript`` with its title and every entry's text and name redacted (tool
        calls, their output and reasoning included: an export shows what it is asked to, a
        tool's name too), and the counts.

        >>> from sessionref.transcript import Entry
        >>> t = Transcript("s", "dsh", None, None, None, [Entry("user", "text", "ticket-7"),
        ...     Entry("assistant", "tool-call", "{}", name="ticket-8")])
        >>> redacted, counts = Redaction(("ticket-[0-9]+",)).transcript(t)
        >>> [(e.text, e.name) for e in redacted.entries], counts
        ([('[REDACTED:custom]', None), ('{}', '[REDACTED:custom]')], Counter({'custom': 2}))
        """
        instance(transcript, Transcript, "Redaction.transcript transcript", "a Transcript")
        counts: Counter[str] = Counter()
        entries = []
        for entry in transcript.entries:
            text, found = self.redact(entry.text)
            name, named = self.redact(entry.name) if entry.name is not None else (None, Counter())
            counts += found + named
            changed = found or named
            entries.append(
                msgspec.structs.replace(entry, text=text, name=name) if changed else entry
            )
        title = transcript.title
        if title is not None:
            title, found = self.label(title)
            counts += found
        return msgspec.structs.replace(transcript, title=title, entries=entries), counts

    def transform(self) -> RedactingUnits:
        """A fresh unit transform for one snapshot, which counts what it redacts."""
        return RedactingUnits(self)


REMEMBERED_LABEL: Final = 256
"""The longest label text :func:`_redacted_label` remembers (a title may be any JSON value
of any size; a label as a listing shows it is a line). 16,384 of them take some 20 MB; a
pattern of the user's that redacts every character may make each some kilobytes."""


@functools.lru_cache(maxsize=1 << 14)
def _redacted_label(redaction: Redaction, text: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    """:meth:`Redaction.redact` of a label's text, remembered: a listing redacts every label
    each time it is asked (a candidates query, each keystroke of a mention picker), and a
    label takes some 50 µs to scan.

    >>> _redacted_label(Redaction(("TK-[0-9]+",)), "fix TK-7")
    ('fix [REDACTED:custom]', (('custom', 1),))
    """
    redacted, counts = redaction.redact(text)
    return redacted, tuple(counts.items())


class RedactingUnits:
    """The unit transform of one snapshot (``snapshot_source``'s ``transform``): returns the
    units with every one the budget can keep redacted, and counts in :attr:`counts` the
    secrets of the units it keeps.

    Checkpoints are always kept, so they are redacted first. Then the others, newest first,
    until one no longer fits: the drop phase drops it and every older one whatever their
    text (every later unit is in the snapshot with its final, redacted size), so those are
    passed on as the log holds them, never scanned. The one that no longer fits is passed
    on redacted, so that the drop phase measures what this measured.

    >>> units = [Unit("user", "old " + "x" * 300), Unit("assistant", "key AKIAIOSFODNN7EXAMPLE")]
    >>> redacting = Redaction().transform()
    >>> [u.text[:7] for u in redacting(units, SourceData("s", "s", None, 1), 200)]
    ['old xxx', 'key [RE']
    >>> redacting.counts
    Counter({'aws-access-key': 1})
    """

    def __init__(self, redaction: Redaction) -> None:
        self.redaction = redaction
        self.counts: Counter[str] = Counter()

    def _redacted(self, unit: Unit) -> tuple[Unit, Counter[str]]:
        text, counts = self.redaction.redact(unit.shown_text())
        return (msgspec.structs.replace(unit, text=text) if counts else unit), counts

    def __call__(self, units: Iterable[Unit], source: SourceData, max_bytes: int) -> list[Unit]:
        """``units`` as the drop phase of ``source`` under ``max_bytes`` should see them."""
        out = list(units)
        size = retain_budget((), source, max_bytes).size  # the data object, no conversation
        count = 0
        for index in [i for i, unit in enumerate(out) if unit.checkpoint]:
            out[index], counts = self._redacted(out[index])
            self.counts += counts
            size += SizedUnit.of(out[index]).json_bytes
            count += 1
        for index in reversed([i for i, unit in enumerate(out) if not unit.checkpoint]):
            out[index], counts = self._redacted(out[index])
            size += SizedUnit.of(out[index]).json_bytes
            count += 1
            if size + count - 1 > max_bytes and index != len(out) - 1:
                break  # dropped, and every older one with it
            self.counts += counts
        return out
