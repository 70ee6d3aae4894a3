"""Views as one self-contained HTML file (docs/views.md): Jinja2 templates with autoescape,
inline CSS, no script, and a Content-Security-Policy that lets the page load nothing from
anywhere and submit no form. Jinja2 is imported when a page is rendered, never at start-up.

Pages stream: :func:`export_html_chunks` renders entry by entry as the template reaches
them, so a long session is written in time linear in its size.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from sessionref.codecs.jsstring import utf8_length
from sessionref.transcript import Transcript
from sessionref.views.entries import (
    ToolGroup,
    ViewOptions,
    format_time,
    nothing_shown,
    segments,
    view_arguments,
    view_items,
    visible_bidi,
    visible_controls,
)
from sessionref.views.markdown import HEADINGS
from sessionref.views.picture import SnapshotPicture

PREVIEW_CHARACTERS = 600
"""How much of a text a row of the picture shows: its start and its end."""

if TYPE_CHECKING:
    from jinja2 import Environment


@functools.lru_cache(maxsize=1)
def environment() -> Environment:
    """The templates of :mod:`sessionref.views`, every value escaped (built once)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("sessionref.views", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_shown,
    )
    env.tests["toolgroup"] = lambda item: isinstance(item, ToolGroup)
    env.globals.update(
        format_time=format_time,
        nothing_shown=nothing_shown,
        segments=segments,
        size=utf8_length,
        preview=preview,
        headings=HEADINGS,
    )
    return env


def _shown(value: Any) -> Any:
    """A value as a page shows it: text with its control characters
    (:func:`~sessionref.views.entries.visible_controls`) and its bidi controls
    (:func:`~sessionref.views.entries.visible_bidi`) visible, then escaped by the template.
    Isolating an element keeps an override from reordering the page around it, not the text
    inside it, which would read backwards; the page shows what is there, as Markdown does.

    >>> _shown("a\\x1bb \\u202eevil"), _shown(3)
    ('a\\\\u001bb \\\\u202eevil', 3)
    """
    return visible_bidi(visible_controls(value)) if type(value) is str else value


def render_chunks(template: str, **context: Any) -> Iterator[str]:
    """The pieces of a template of :mod:`sessionref.views` rendered with ``context``, as
    Jinja2 streams them."""
    return environment().get_template(template).generate(**context)


def export_html_chunks(transcript: Transcript, options: ViewOptions) -> Iterator[str]:
    """The HTML page of ``transcript``, piece by piece.

    >>> from sessionref.transcript import Entry
    >>> t = Transcript("s", "dsh", None, None, None, [Entry("user", "text", "</p><script>")])
    >>> page = "".join(export_html_chunks(t, ViewOptions()))
    >>> "&lt;/p&gt;&lt;script&gt;" in page, "<script" in page
    (True, False)
    >>> export_html_chunks(t, {"tools": True})
    Traceback (most recent call last):
    sessionref.errors.SessionReferenceError: export_html_chunks options must be a ViewOptions, \
not dict
    """
    transcript, options = view_arguments(transcript, options, "export_html_chunks")
    heading = transcript.title if transcript.title is not None else transcript.session_id
    return render_chunks(
        "export.html.j2",
        transcript=transcript,
        heading=heading,
        options=options,
        items=view_items(transcript.entries, options),
    )


def preview(text: str, limit: int = PREVIEW_CHARACTERS) -> str:
    """``text``, or its start and end around `` … `` when it is longer than ``limit``.

    >>> preview("abcdefgh", 4)
    'ab … gh'
    """
    if len(text) <= limit:
        return text
    return f"{text[: limit // 2]} … {text[len(text) - limit // 2 :]}"


def picture_html_chunks(picture: SnapshotPicture) -> Iterator[str]:
    """The HTML page of a snapshot's picture, piece by piece.

    >>> page = "".join(picture_html_chunks(SnapshotPicture("<s>", "<s>", 100, 60, [], 0, 0,
    ...     0, 0, False, False)))
    >>> "Snapshot of &lt;s&gt;" in page, 'width: 60%' in page
    (True, True)
    """
    return render_chunks("show.html.j2", picture=picture, percent=picture.percent_used())
