"""What a snapshot of a session keeps under a budget, unit by unit (``sessionref show``).

The picture is derived from the spine's own outputs and changes no stage: the units before
any budget (:func:`~sessionref.snapshot.project_units`, stages 1–4) and the snapshot itself
(:func:`~sessionref.snapshot.snapshot_source`: its data object's conversation and stats).
The units the snapshot says it dropped are the oldest droppable ones (docs/snapshot.md §Drop);
every other unit is matched to the conversation item that shows it, so each is *kept*
(shown as it is), *cut* (a head and a tail and the omission notice) or *dropped*.
:func:`check_agreement` holds the picture against the stats the snapshot reports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Final, Literal

import msgspec

from sessionref.codecs.jsstring import utf8_length, well_formed
from sessionref.codecs.uri import label_text
from sessionref.errors import instance, positive_count
from sessionref.log.records import SessionLog, title_label
from sessionref.redact import Redaction
from sessionref.snapshot import SourceSnapshot, Unit, project_units, snapshot_source

Fate = Literal["kept", "dropped", "cut"]
_NOTICE: Final = re.compile(r"\n\[… omitted (\d+) UTF-8 bytes …\]\Z")


class PictureRow(msgspec.Struct, frozen=True):
    """One unit of the surface: its place (from 1), role, whether it is a checkpoint, its
    text and that text's UTF-8 byte length (for a redacted snapshot's older dropped units,
    that of the text the log holds: :func:`counted_as_logged`), and what the snapshot did
    with it. A cut unit shows ``head`` + ``tail`` + ``notice``, and ``omitted_bytes`` of its
    text are gone; a dropped unit's whole text is gone."""

    position: int
    role: Literal["user", "assistant"]
    checkpoint: bool
    text: str
    text_bytes: int
    fate: Fate
    head: str = ""
    tail: str = ""
    notice: str = ""
    omitted_bytes: int = 0


class SnapshotPicture(msgspec.Struct, frozen=True):
    """A snapshot of one session under ``max_bytes``: every unit, the bytes its data object
    takes (``used_bytes``) and the stats it reports."""

    session_id: str
    label: str
    max_bytes: int
    used_bytes: int
    rows: list[PictureRow]
    original_messages: int
    retained_messages: int
    omitted_messages: int
    omitted_bytes: int
    truncated: bool
    compacted: bool

    def count(self, fate: Fate) -> int:
        """How many units met ``fate``."""
        return sum(1 for row in self.rows if row.fate == fate)

    def percent_used(self) -> int:
        """The share of the budget the snapshot takes, in whole percent (at most 100).

        >>> SnapshotPicture("s", "s", 300, 100, [], 0, 0, 0, 0, False, False).percent_used()
        33
        """
        return min(100, self.used_bytes * 100 // max(self.max_bytes, 1))


class PictureMismatch(AssertionError):
    """The snapshot's conversation does not follow from its units: a bug in a stage."""


def _common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share from their start."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def split_cut(original: str, shown: str) -> tuple[str, str, str, int] | None:
    """``(head, tail, notice, omitted)`` when ``shown`` is a cut of ``original`` (a head of
    it, a tail of it, the omission notice), else ``None``. A text cut to nothing shows ``""``.

    >>> split_cut("abcdefghij" * 10, 'abcdhij\\n[… omitted 93 UTF-8 bytes …]')
    ('abcd', 'hij', '\\n[… omitted 93 UTF-8 bytes …]', 93)
    >>> split_cut("abc", ""), split_cut("abc", "abd")
    (('', '', '', 3), None)
    """
    if not shown:
        return ("", "", "", utf8_length(original)) if original else None
    match = _NOTICE.search(shown)
    if match is None:
        return None
    kept, text = shown[: match.start()], well_formed(original)
    prefix = _common_prefix(kept, text.removeprefix("\ufeff"))
    suffix = _common_prefix(kept[::-1], text[::-1])
    if prefix + suffix < len(kept):
        return None
    split = min(max((len(kept) + 1) // 2, len(kept) - suffix), prefix)
    return kept[:split], kept[split:], match.group(), int(match.group(1))


def _row(position: int, unit: Unit, shown: str | None) -> PictureRow | None:
    """The row of ``unit`` shown as ``shown`` (``None``: dropped); ``None`` if ``shown``
    is neither its text nor a cut of it."""
    text = unit.shown_text()
    row = PictureRow(position, unit.role, unit.checkpoint, text, utf8_length(text), "dropped")
    if shown is None:
        return row
    if shown == text:
        return msgspec.structs.replace(row, fate="kept")
    cut = split_cut(text, shown)
    if cut is None:
        return None
    head, tail, notice, omitted = cut
    return msgspec.structs.replace(
        row, fate="cut", head=head, tail=tail, notice=notice, omitted_bytes=omitted
    )


def match_units(
    units: Sequence[Unit], conversation: Sequence[tuple[str, str]], dropped: int
) -> list[PictureRow]:
    """Each unit with its fate: the ``dropped`` oldest units that are neither checkpoints nor
    the newest are dropped (docs/snapshot.md §Drop), and every other unit is matched, in
    order, to the conversation item (role, text) that shows it: kept or cut. Raises
    :class:`PictureMismatch` when an item is not the text or a cut of its unit, or the counts
    differ.

    >>> rows = match_units([Unit("user", "a"), Unit("assistant", "b")], [("assistant", "b")], 1)
    >>> [(row.text, row.fate) for row in rows]
    [('a', 'dropped'), ('b', 'kept')]
    """
    rows: list[PictureRow] = []
    items = iter(conversation)
    last = len(units) - 1
    for index, unit in enumerate(units):
        if dropped and not unit.checkpoint and index != last:
            dropped -= 1
            row = _row(index + 1, unit, None)
        else:
            role, text = next(items, (None, ""))
            row = _row(index + 1, unit, text) if role == unit.role else None
            if row is None:
                raise PictureMismatch(f"unit {index + 1} is not shown by its conversation item")
        assert row is not None
        rows.append(row)
    if dropped or next(items, None) is not None:
        raise PictureMismatch("the conversation and the units do not add up")
    return rows


def snapshot_picture(
    log: SessionLog, label: Any, max_bytes: int, redaction: Redaction | None = None
) -> SnapshotPicture:
    """The picture of the snapshot of ``log`` labelled ``label`` (a title as a store's
    ``title()`` gives it: any JSON value, ``None`` for none, when the session's id labels it,
    as it labels a candidate) under ``max_bytes`` (raises what
    :func:`~sessionref.snapshot.snapshot_source` raises: BUDGET_EXCEEDED when even cut it
    does not fit). With ``redaction``, the snapshot is the redacted one, and every unit is
    shown redacted, dropped ones too (docs/redaction.md).

    >>> from sessionref.log.records import SessionHeader, decode_records
    >>> log = SessionLog(SessionHeader("s", 0), decode_records(b"".join(
    ...     b'{"type":"user/message","seq":%d,"surfaceOp":"append","data":{"content":'
    ...     b'[{"type":"text","text":"%s"}],"source":{"kind":"user"}}}\\n' % (seq, text)
    ...     for seq, text in enumerate([b"x" * 50, b"y" * 100]))))
    >>> picture = snapshot_picture(log, "s", 150)
    >>> [row.fate for row in picture.rows], picture.omitted_messages, picture.used_bytes
    (['dropped', 'cut'], 1, 150)
    >>> picture.rows[1].head, picture.rows[1].tail, picture.rows[1].omitted_bytes
    ('yyyyy', 'yyyyy', 90)

    An argument of another kind is INVALID_CONFIG naming it and the kind given:

    >>> snapshot_picture(log, "s", 150, redaction=True)
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: snapshot_picture redaction must be a Redaction or \
None, not bool
    """
    instance(log, SessionLog, "snapshot_picture log", "a SessionLog")
    label = title_label(log.header.id, label)
    max_bytes = positive_count(max_bytes, "snapshot_picture max_bytes")
    if redaction is not None:
        instance(redaction, Redaction, "snapshot_picture redaction", "a Redaction or None")
    units = list(project_units(log.records))
    if redaction is None:
        return picture_of(units, snapshot_source(log, label, max_bytes), max_bytes)
    snapshot = redaction.snapshot(log, label, max_bytes)
    shown = [Unit(u.role, redaction.redact(u.shown_text())[0], u.checkpoint) for u in units]
    return counted_as_logged(picture_of(shown, snapshot, max_bytes), units)


def counted_as_logged(picture: SnapshotPicture, units: Sequence[Unit]) -> SnapshotPicture:
    """``picture`` of a redacted snapshot of ``units`` with each dropped unit but the newest
    counted as the log holds it, its text still shown redacted: the snapshot never scans
    those, and its ``omittedBytes`` counts them so (docs/snapshot.md §Stats).

    >>> row = PictureRow(1, "user", False, "[REDACTED:custom]", 17, "dropped")
    >>> newest = PictureRow(2, "user", False, "[REDACTED:custom]", 17, "dropped")
    >>> picture = SnapshotPicture("s", "s", 9, 9, [row, newest], 2, 0, 2, 34, True, False)
    >>> units = [Unit("user", "ticket-1"), Unit("user", "ticket-2")]
    >>> [row.text_bytes for row in counted_as_logged(picture, units).rows]
    [8, 17]
    """
    older = set([row.position for row in picture.rows if row.fate == "dropped"][:-1])
    rows = [
        msgspec.structs.replace(row, text_bytes=utf8_length(units[row.position - 1].shown_text()))
        if row.position in older
        else row
        for row in picture.rows
    ]
    return msgspec.structs.replace(picture, rows=rows)


def picture_of(units: Sequence[Unit], snapshot: SourceSnapshot, max_bytes: int) -> SnapshotPicture:
    """The picture of ``snapshot``, a snapshot of ``units`` under ``max_bytes``."""
    data = json.loads(snapshot.data_json)  # the standard library keeps lone surrogates
    conversation = [(item["role"], item["text"]) for item in data["conversation"]]
    return SnapshotPicture(
        session_id=snapshot.session_id,
        label=label_text(snapshot.label),  # a title of another kind as its JSON text
        max_bytes=max_bytes,
        used_bytes=len(snapshot.data_json),
        rows=match_units(units, conversation, snapshot.omitted_messages),
        original_messages=snapshot.original_messages,
        retained_messages=snapshot.retained_messages,
        omitted_messages=snapshot.omitted_messages,
        omitted_bytes=snapshot.omitted_bytes,
        truncated=snapshot.omitted_messages > 0 or snapshot.omitted_bytes > 0,
        compacted=snapshot.compacted,
    )


def check_agreement(picture: SnapshotPicture) -> None:
    """Raise :class:`PictureMismatch` unless the rows add up to the snapshot's stats: the
    dropped units are ``omittedMessages``, their bytes and the cuts' omissions are
    ``omittedBytes``, and ``truncated`` holds exactly when something was left out.

    >>> check_agreement(SnapshotPicture("s", "s", 100, 60, [], 0, 0, 1, 0, True, False))
    Traceback (most recent call last):
    ...
    sessionref.views.picture.PictureMismatch: 0 units dropped, the snapshot says 1
    """
    dropped = [row for row in picture.rows if row.fate == "dropped"]
    if len(dropped) != picture.omitted_messages:
        raise PictureMismatch(
            f"{len(dropped)} units dropped, the snapshot says {picture.omitted_messages}"
        )
    gone = sum(row.text_bytes for row in dropped) + sum(row.omitted_bytes for row in picture.rows)
    if gone != picture.omitted_bytes:
        raise PictureMismatch(f"{gone} bytes left out, the snapshot says {picture.omitted_bytes}")
    cut = any(row.fate == "cut" for row in picture.rows)
    if picture.truncated != bool(dropped or cut):
        raise PictureMismatch(f"truncated is {picture.truncated}, the rows say otherwise")
