"""``sessionref show``: what a snapshot of a session keeps under a budget, unit by unit."""

from __future__ import annotations

import argparse
import shutil
import textwrap
from typing import Final

from sessionref.cli.candidates import display_width
from sessionref.cli.common import (
    OpenStore,
    add_session_arguments,
    output_path,
    printable,
    quoted,
    reporting_errors,
    session_id_argument,
    write_text,
)
from sessionref.cli.export import read_session
from sessionref.cli.output_file import write_pieces
from sessionref.cli.redaction import add_redact_arguments, redaction_of_args
from sessionref.cli.snapshot import add_budget_argument
from sessionref.cli.store_logs import refuse_a_log
from sessionref.errors import BUDGET_EXCEEDED, SessionReferenceError
from sessionref.views.picture import PictureRow, SnapshotPicture, snapshot_picture

DESCRIPTION = """\
Show what a snapshot of SESSION keeps within --max-bytes: every unit of its surface (user
and assistant texts, checkpoints) with its role, its size in UTF-8 bytes and its fate:
kept, dropped (the oldest go first; checkpoints and the newest unit never) or cut (a head
and a tail stay, with the omission notice), and a bar of the budget used. The numbers are
the snapshot's own: dropped units are omittedMessages, dropped and cut bytes omittedBytes.
The session is labelled by its id, as `snapshot` labels it by default.
"""
EPILOG = """\
examples:
  sessionref show --root ~/.dsh/sessions 7f3c1e2a-auth-refactor --max-bytes 4096
  sessionref show --root ~/.dsh/sessions 7f3c1e2a-auth-refactor --html picture.html
"""
BAR_WIDTH: Final = 40
"""The cells of the bar of `show` on a terminal wide enough; a narrower one gets as many
cells as fit between the brackets, and one too narrow for a single cell gets no bar."""
MIN_SHOWN: Final = 10
"""The fewest columns of text the SHOWS column of `show` takes; a narrower terminal leaves
it out, so that every row still fits."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``sessionref show``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    add_session_arguments(parser)
    add_budget_argument(parser)
    parser.add_argument(
        "--html",
        type=output_path,
        metavar="FILE",
        help="write the picture as an HTML page to FILE (- for stdout) instead of the table",
    )
    add_redact_arguments(parser)


def bar(used: int, budget: int, width: int = BAR_WIDTH) -> str:
    """A bar of ``width`` cells, the share of the budget used filled.

    >>> bar(50, 100, 10)
    '[█████░░░░░]'
    """
    filled = min(width, used * width // max(budget, 1))
    return "[" + "█" * filled + "░" * (width - filled) + "]"


def bar_lines(used: int, budget: int, columns: int) -> list[str]:
    """The bar as a terminal ``columns`` wide shows it: at most :data:`BAR_WIDTH` cells and
    never wider than the terminal; none when not even one cell fits between the brackets.

    >>> bar_lines(50, 100, 120), bar_lines(50, 100, 6), bar_lines(50, 100, 3)
    (['[████████████████████░░░░░░░░░░░░░░░░░░░░]'], ['[██░░]'], ['[░]'])
    >>> bar_lines(50, 100, 2)
    []
    """
    cells = min(BAR_WIDTH, columns - 2)
    return [bar(used, budget, cells)] if cells >= 1 else []


def clipped(text: str, width: int) -> str:
    """``text`` on one line, at most ``width`` columns (``…`` where it is cut).

    >>> clipped("a\\nbcdef", 4), clipped("中文字", 5)
    ('a b…', '中文…')
    """
    line = printable(text)
    if display_width(line) <= width:
        return line
    kept, used = [], 0
    for character in line:
        used += display_width(character)
        if used > width - 1:
            break
        kept.append(character)
    return "".join(kept) + "…"


def shows(row: PictureRow, width: int) -> str:
    """What the snapshot shows of a unit, within ``width`` columns: its text, or its head
    and tail around ``[…]`` when it was cut."""
    if row.fate != "cut":
        return clipped(row.text, width)
    half = max(1, (width - 5) // 2)
    tail = printable(row.tail)
    end = tail[-half:] if display_width(tail) > half else tail
    return clipped(row.head, half) + " […] " + clipped(end, half)


def table(picture: SnapshotPicture, width: int) -> str:
    """The picture as plain text within ``width`` columns: a summary, the bar, one row per
    unit (#, role, bytes, fate, what it shows)."""
    used = f"{picture.used_bytes} of {picture.max_bytes} bytes used ({picture.percent_used()}%)"
    summary = (
        f"kept {picture.retained_messages} of {picture.original_messages} units "
        f"({picture.count('cut')} cut, {picture.omitted_messages} dropped), omitted "
        f"{picture.omitted_bytes} bytes"
        + (", truncated" if picture.truncated else "")
        + (", compacted" if picture.compacted else "")
    )
    lines = [
        *textwrap.wrap(used, width),
        *bar_lines(picture.used_bytes, picture.max_bytes, width),
        *textwrap.wrap(summary, width),
        "",
    ]
    cells = [
        (
            str(row.position),
            "checkpoint" if row.checkpoint else row.role,
            str(row.text_bytes),
            row.fate + (f" -{row.omitted_bytes}" if row.fate == "cut" else ""),
        )
        for row in picture.rows
    ]
    head = ("#", "ROLE", "BYTES", "FATE")
    widths = [max([len(head[k])] + [len(cell[k]) for cell in cells]) for k in range(4)]
    text_width = width - sum(widths) - 8  # SHOWS only where it has room for a few words
    for (number, role, size, fate), row in [(head, None), *zip(cells, picture.rows, strict=True)]:
        line = f"{number:>{widths[0]}}  {role:<{widths[1]}}  {size:>{widths[2]}}  "
        line += f"{fate:<{widths[3]}}"
        if text_width >= MIN_SHOWN:
            line += f"  {'SHOWS' if row is None else shows(row, text_width)}"
        lines.append(line.rstrip())
    return "\n".join(lines) + "\n"


@reporting_errors
def run(args: argparse.Namespace) -> int:
    """Show what a snapshot of one session keeps."""
    session = session_id_argument(args.session)
    redaction = redaction_of_args(args)
    opened = OpenStore.of(args, redaction=redaction)
    refuse_a_log(args, opened, "--html")
    log = read_session(opened, session, opened.listed.read, redaction)
    try:
        picture = snapshot_picture(log, session, args.max_bytes, redaction)
    except SessionReferenceError as exc:
        if exc.code != BUDGET_EXCEEDED:
            raise
        raise SessionReferenceError(
            f"--max-bytes {args.max_bytes} is too small for session "
            f"{quoted(session)}: even cut short, its snapshot needs more",
            BUDGET_EXCEEDED,
        ) from None
    if args.html is not None:
        from sessionref.views.html import picture_html_chunks

        write_pieces(picture_html_chunks(picture), args.html, "--html")
    else:
        write_text(table(picture, shutil.get_terminal_size((100, 24)).columns))
    if not args.verbose:
        opened.report_problems()
    return 0
