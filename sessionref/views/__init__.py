"""Views of a session for people: a transcript exported as Markdown, HTML or JSON
(:mod:`~sessionref.views.markdown`, :mod:`~sessionref.views.html`,
:mod:`~sessionref.views.transcript_json`), and a picture of what a snapshot keeps under a budget
(:mod:`~sessionref.views.picture`). docs/views.md describes them.

Exports read only a :class:`~sessionref.transcript.Transcript`, so they work for every
harness; the picture is derived from the spine's own outputs and never changes a stage.
"""
