"""Reproduction stores of layout and closer rules the real stack was checked on, beside
``oracle_cases.py`` (same template session, same bystander, same report format):

    python scripts/oracle_layout_cases.py tests/data/oracle-cases --oracle ../shared/oracle

- project folders that several cwds share: separator runs and leading ``-`` collapse, and the
  key is cut to 251 characters, inside a ``~XXXX`` escape if that is where the cut falls;
- zstd logs whose first frame is not exactly the header line (the harness refuses the whole
  root: sessionref serves the rest, docs/differences.md §sessionref rules);
- zstd logs whose events are framed otherwise than the harness writes them: a record split
  over two frames, empty frames, a last frame of one blank line, a torn frame before whole
  ones, the first bytes of a frame after the last one;
- what the harness's lookup of an id before a read meets in other project folders: a flat
  artifact of any kind, a link to the session's folder, a file or a link loop where a folder
  would be, a log of the other encoding, a copy of the log the listing does not take;
- closers of a log that ends with one call id given twice, or with a compaction left open.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Sequence
from pathlib import Path

from oracle_cases import PROJ, Case, Pack, Session, both, framed, header, open_call, run

from sessionref.log.writer import zstd_frame

LONG = "a" * 246
"""A cwd of ``/`` and this much ASCII leaves 5 characters of the 251 for what follows."""


def cwd_session(project: str, session_id: str, cwd: str) -> Session:
    """The template session under ``project`` with ``cwd`` (a string without ``"`` or ``\\``)."""
    return Session(project, session_id, header(session_id, cwd=f'"{cwd}"'))


def first_frame(session_id: str, description: str, pack: Pack) -> Case:
    """A zstd-only case whose log ``pack`` builds from the template's batches."""
    return Case(
        f"zstd-first-frame-{session_id}",
        f"{description} (the harness refuses the whole root)",
        [Session(PROJ, f"first-{session_id}", header(f"first-{session_id}"), pack)],
        ("zroot",),
    )


def split_header(batches: list[bytes]) -> bytes:
    """The header line split over two frames."""
    return framed([batches[0][:20], batches[0][20:], *batches[1:]])


def header_without_newline(batches: list[bytes]) -> bytes:
    """A first frame of the header line without its newline."""
    return framed([batches[0].rstrip(b"\n"), *batches[1:]])


def blank_line_first(batches: list[bytes]) -> bytes:
    return framed([b"\n" + batches[0], *batches[1:]])


def empty_frame_first(batches: list[bytes]) -> bytes:
    return zstd_frame(b"") + framed(batches)


def skippable_frame_first(batches: list[bytes]) -> bytes:
    return struct.pack("<II", 0x184D2A50, 4) + b"skip" + framed(batches)


def plain_text(batches: list[bytes]) -> bytes:
    """The plain log, not compressed, in a ``.jsonl.zstd`` file."""
    return b"".join(batches)


def seams(batches: list[bytes], *offsets: int) -> list[bytes]:
    """The events (all batches after the header's) cut at ``offsets`` (a negative one counts
    whole lines from the end)."""
    events = b"".join(batches[1:])
    lines = events.splitlines(keepends=True)
    cuts = [cut if cut >= 0 else len(events) - len(b"".join(lines[cut:])) for cut in offsets]
    return [events[start:end] for start, end in zip([0, *cuts], [*cuts, len(events)], strict=True)]


NOTE = zstd_frame(b"{}\n")
"""A small frame: magic (4 bytes), frame header descriptor, window descriptor, blocks."""


def flagged(bits: int, dictionary: bytes = b"") -> bytes:
    """``NOTE`` with ``bits`` set in its frame header descriptor (bit 3 is reserved, bits 0-1
    announce a dictionary id of 1, 2 or 4 bytes, written after the window descriptor)."""
    return NOTE[:4] + bytes([NOTE[4] | bits]) + NOTE[5:6] + dictionary + NOTE[6:]


def seam_session(name: str, pack: Pack) -> Session:
    return Session(PROJ, f"seam-{name}", header(f"seam-{name}"), pack)


SEAMS = [
    seam_session("split-record", lambda b: framed([b[0], *seams(b, 40)])),
    seam_session("empty-frame-mid", lambda b: framed([b[0], *seams(b, -8, -8)])),
    seam_session("empty-frame-end", lambda b: framed([*b, b""])),
    seam_session("blank-frame-end", lambda b: framed([*b, b"\n"])),
    seam_session(
        "torn-frame-mid",
        lambda b: framed(b[:1]) + zstd_frame(seams(b, -8)[0])[:-6] + zstd_frame(seams(b, -8)[1]),
    ),
    seam_session("frame-start-4", lambda b: framed(b) + zstd_frame(b"{}\n")[:4]),
    seam_session("frame-start-7", lambda b: framed(b) + zstd_frame(b"{}\n")[:7]),
    seam_session("reserved-bit-start", lambda b: framed(b) + flagged(0x08)[:5]),
    seam_session("reserved-block-start", lambda b: framed(b) + NOTE[:6] + b"\x07\x00\x00"),
    seam_session("dictionary-start", lambda b: framed(b) + flagged(0x01)[:6]),
    seam_session("dictionary-frame", lambda b: framed(b) + flagged(0x01, b"\x07")),
]
LOOKUP = (
    "flat-dir",
    "flat-link",
    "file",
    "loop",
    "alias",
    "other-encoding",
    "dangling",
    "bare-dir",
    "unlisted-copy",
)
OTHER = {"session.jsonl": "session.jsonl.zstd", "session.jsonl.zstd": "session.jsonl"}


def note(folder: Path) -> None:
    """``folder`` with a note in it (and no log): an empty folder does not survive git."""
    folder.mkdir(parents=True)
    (folder / "NOTE").write_text("not a session\n")


def lookup_extras(root: Path, log: str) -> None:
    """Beside each ``probe-<name>`` session what its name says, mostly in another project
    folder ``--x--`` (which the listing walks and finds nothing in); and ``alias-dir``, a
    session whose folder lies in ``--x--``, reached from its own project through a link."""
    other, own = root / "--x--", root / PROJ
    note(other / "probe-flat-dir.jsonl")
    (own / "probe-flat-link.jsonl.zstd").symlink_to("probe-flat-link")
    (other / "probe-file").write_text("not a folder\n")
    (other / "probe-loop").symlink_to("probe-loop")
    (other / "probe-alias").symlink_to(f"../{PROJ}/probe-alias")
    (own / "probe-other-encoding" / "stash").mkdir()
    (own / "probe-other-encoding" / "stash" / OTHER[log]).write_text("")
    (other / "probe-other-encoding").symlink_to(f"../{PROJ}/probe-other-encoding/stash")
    (other / "probe-dangling").symlink_to("nowhere")
    note(other / "probe-bare-dir")
    (own / "alias-dir").symlink_to("../--x--/alias-dir")
    copy = other / "probe-unlisted-copy" / log
    copy.parent.mkdir()
    unlisted = b"not a header\n"
    copy.write_bytes(zstd_frame(unlisted) if log.endswith(".zstd") else unlisted)


COMPACTION_START = (
    '{"type":"compaction/start","seq":20,"time":1700000000147,'
    '"data":{"compactionId":"cmp-1","turn":null}}'
)

CASES = [
    Case(
        "project-key-shared",
        "cwds that name one project folder: /x, /-x and /---x (leading dashes are stripped) "
        "under --x--, / and // (a separator run is one dash, nothing left is root) under "
        "--root--, /a:b\\c (: and \\ are separators) beside /a/b/c under --a-b-c--",
        [
            cwd_session("--x--", "pk-plain", "/x"),
            cwd_session("--x--", "pk-dash", "/-x"),
            cwd_session("--x--", "pk-dashes", "/---x"),
            cwd_session("--root--", "pk-slash", "/"),
            cwd_session("--root--", "pk-slashes", "//"),
            Session("--a-b-c--", "pk-separators", header("pk-separators", cwd='"/a:b\\\\c"')),
            cwd_session("--a-b-c--", "pk-path", "/a/b/c"),
        ],
    ),
    Case(
        "project-key-cut",
        "cwds whose project key is cut to 251 characters: inside the ~XXXX escape of a letter "
        "(two letters then share the folder) or of the high half of an emoji, right after a "
        "whole escape, and a long ASCII cwd",
        [
            cwd_session(f"--{LONG}aaa~0--", "cut-e-acute", f"/{LONG}aaaé"),
            cwd_session(f"--{LONG}aaa~0--", "cut-e-grave", f"/{LONG}aaaè"),
            cwd_session(f"--{LONG}a~D83--", "cut-emoji-high", f"/{LONG}a🙂"),
            cwd_session(f"--{LONG}~D83D--", "cut-emoji-whole", f"/{LONG}🙂"),
            cwd_session(f"--{LONG}aaaaa--", "cut-ascii", f"/{LONG}{'a' * 60}"),
        ],
    ),
    first_frame(
        "no-newline",
        "the first frame holds the header line without its newline",
        header_without_newline,
    ),
    first_frame("split", "the header line is split over the first two frames", split_header),
    first_frame(
        "blank-line", "the first frame holds a blank line, then the header", blank_line_first
    ),
    first_frame("empty", "an empty frame comes before the header's frame", empty_frame_first),
    first_frame(
        "skippable", "a skippable frame comes before the header's frame", skippable_frame_first
    ),
    first_frame("plain", "the .jsonl.zstd file holds the plain log, not zstd frames", plain_text),
    Case(
        "zstd-frame-seams",
        "the template log framed otherwise: a record split over two frames and an empty frame "
        "between two (both load), an empty last frame (loads), a last frame of one blank line "
        "(corrupt), a torn frame before a whole one (corrupt), the first 4 or 7 bytes of a "
        "frame after the last (a torn frame start: both load), a torn frame start with a "
        "reserved header bit or block type (corrupt) or a dictionary id (loads), a whole frame "
        "with a dictionary id (corrupt)",
        SEAMS,
        ("zroot",),
    ),
    Case(
        "lookup-probes",
        "sessions whose lookup by id meets, in a project folder: a directory named as its flat "
        "artifact <id>.jsonl, a link named <id>.jsonl.zstd (both fail the read: flat layout), "
        "a regular file or a link loop named <id> (ENOTDIR, ELOOP), a link to its folder "
        "(the log in two project folders: duplicate id), a link to a folder holding a log of "
        "the other encoding (fail), a folder <id> holding a log whose line 1 is no header "
        "(not listed, yet a second copy to the lookup: duplicate id); a dangling link or a "
        "folder without a log named <id> (both load); "
        "and alias-dir, whose folder is --x--/alias-dir with cwd /work/proj, reached from "
        "--work-proj-- through a link (the lookup finds it in both: duplicate id)",
        [
            *(Session(PROJ, f"probe-{name}", header(f"probe-{name}")) for name in LOOKUP),
            Session("--x--", "alias-dir", header("alias-dir")),
        ],
        dress=lookup_extras,
    ),
    Case(
        "closer-duplicate-call-id",
        "the log ends inside a turn whose last answer gives the call id call-2-1 twice: the "
        "harness closes it with one tool result, not two",
        [Session(PROJ, "closer-dup-id", open_call("closer-dup-id", '"call-2-1"', '"call-2-1"'))],
    ),
    Case(
        "closer-open-compaction",
        "the log ends after turn/end with a compaction/start and nothing after it: no closer "
        "(capturedThroughSeq is that event's seq)",
        [
            Session(
                PROJ,
                "open-compaction",
                both(header("open-compaction"), lambda lines: [*lines[:15], COMPACTION_START]),
            )
        ],
    ),
]


def main(argv: Sequence[str] | None = None) -> int:
    return run(CASES, "python scripts/oracle_layout_cases.py", __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
