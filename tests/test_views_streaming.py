"""The exporters stream: each yields its first pieces before it has read the transcript's last
entry, so a long session is written as it is rendered (the benchmark checks the time)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path

import pytest

from benchmarks import views_bench
from sessionref.transcript import Entry, Transcript
from sessionref.views.entries import ViewOptions
from sessionref.views.html import export_html_chunks
from sessionref.views.markdown import markdown_chunks
from sessionref.views.transcript_json import json_chunks


class ReadToTheEnd(Exception):
    """The exporter read past the entries it needed for its first pieces."""


class Poisoned(list[Entry]):
    """Entries that raise once iterated to the end."""

    def __iter__(self) -> Iterator[Entry]:
        yield from list.__iter__(self)
        raise ReadToTheEnd


@pytest.mark.parametrize("export", [export_html_chunks, markdown_chunks, json_chunks])
def test_the_first_pieces_come_before_the_last_entry_is_read(
    export: Callable[[Transcript, ViewOptions], Iterable[str | bytes]],
) -> None:
    entries = Poisoned(Entry("user", "text", f"message {n}") for n in range(200))
    transcript = Transcript("s", "dsh", "t", None, None, entries)
    pieces = iter(export(transcript, ViewOptions()))
    shown = ""
    for piece in islice(pieces, 100):  # the page so far, without reading every entry
        shown += piece if isinstance(piece, str) else piece.decode()
        if "message 1<" in shown or "message 1\n" in shown or 'message 1"' in shown:
            break
    assert "message 0" in shown and "message 1" in shown
    with pytest.raises(ReadToTheEnd):
        list(pieces)


def test_the_benchmark_runs_and_checks_its_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = views_bench.main(
        ["--turns", "12", "--profiles", "chat", "--repeat", "1", "--stores", str(tmp_path)]
    )
    line = capsys.readouterr().out
    assert line.startswith("chat 12 turns: snapshot (1 MiB) ")
    assert ("target <= 3.0x: met" in line) == (status == 0)
