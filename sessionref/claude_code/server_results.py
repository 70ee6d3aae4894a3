"""What a server tool gave back, as the text of its ``tool-result`` entry (docs/harnesses.md
§Claude Code §Server tools).

The Messages API runs a server tool (web search, web fetch, code execution, tool search …)
itself and writes its result into the assistant's own message, as a ``*_tool_result``
block naming its call (``tool_use_id``) whose ``content`` has the shape its tool documents.
Each known shape is written as text a person reads; what is for the model alone
(``encrypted_content``, ``encrypted_stdout``, a PDF's base64) is never shown; an error is
``error: <error_code>``; any other shape is its JSON, bounded (:func:`unknown_result`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from sessionref.transcript import cut_text

EXCERPT_CHARACTERS: Final = 500
"""How much of a fetched page's text its result shows."""
JSON_CHARACTERS: Final = 2000
"""How much of an unknown result's JSON is shown."""
JSON_DEPTH: Final = 16
"""How deep an unknown result's JSON is written; what is deeper shows as ``…``."""


def server_result_text(kind: str, content: Any) -> str:
    """The text of a server tool's result block of type ``kind`` whose ``content`` is
    ``content`` (built): an error's code, a known result's text, else bounded JSON.

    >>> server_result_text("web_fetch_tool_result",
    ...     {"type": "web_fetch_tool_result_error", "error_code": "url_not_accessible"})
    'error: url_not_accessible'
    >>> server_result_text("tool_search_tool_result", {"type": "tool_search_tool_search_result",
    ...     "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]})
    'get_weather'
    >>> server_result_text("mcp_tool_result", "sunny")
    '"sunny"'
    """
    if type(content) is dict:
        if type(content.get("error_code")) is str:
            return error_text(content)
        shape = content.get("type")
        written = _RESULTS.get(shape) if type(shape) is str else None
        if written is not None:
            return written(content)
    elif kind == "web_search_tool_result" and type(content) is list:
        return web_search_output(content)
    return unknown_result(content)


def error_text(content: dict[str, Any]) -> str:
    """A server tool's error: ``error: <error_code>``, and its ``error_message`` (some
    tools give one) on the next line.

    >>> print(error_text({"error_code": "file_not_found", "error_message": "no /a.py"}))
    error: file_not_found
    no /a.py
    """
    message = content.get("error_message")
    code = f"error: {content['error_code']}"
    return f"{code}\n{message}" if type(message) is str and message else code


def web_search_output(content: list[Any]) -> str:
    """A web search's results as text: each result's title and URL (its
    ``encrypted_content`` is for the model alone), a blank line between results.

    >>> web_search_output([{"type": "web_search_result", "title": "T", "url": "https://t",
    ...                     "encrypted_content": "E", "page_age": None}, {"title": "U"}])
    'T\\nhttps://t\\n\\nU'
    """
    found = (_lines(item, "title", "url") for item in content if type(item) is dict)
    return "\n\n".join(result for result in found if result)


def _lines(fields: dict[str, Any], *keys: str) -> str:
    """The string values of ``keys`` in ``fields``, one a line (others left out).

    >>> _lines({"a": "x", "b": 2, "c": "z"}, "a", "b", "c")
    'x\\nz'
    """
    return "\n".join(value for key in keys if type(value := fields.get(key)) is str)


def _fetched(content: dict[str, Any]) -> str:
    """A ``web_fetch_result``: the page's title and URL, then the start of its text (at most
    :data:`EXCERPT_CHARACTERS`, cut by :func:`~sessionref.transcript.cut_text`) or, for a
    PDF, what it is: its base64 is for the model alone.

    >>> page = {"type": "web_fetch_result", "url": "https://e.org", "content": {"type":
    ...     "document", "title": "E", "source": {"type": "text", "data": "Hello " * 100}}}
    >>> shown = _fetched(page).split("\\n")
    >>> shown[:3], len(shown[3]), shown[3][-7:], shown[4]
    (['E', 'https://e.org', ''], 498, ' Hello…', '(600 characters in all)')
    >>> _fetched({"url": "https://e.org/a.pdf", "content": {"source": {"type": "base64",
    ...     "media_type": "application/pdf", "data": "JVBERi0x"}}})
    'https://e.org/a.pdf\\n\\n(application/pdf document, not shown)'
    """
    document = content.get("content")
    document = document if type(document) is dict else {}
    source = document.get("source")
    source = source if type(source) is dict else {}
    data = source.get("data")
    head = "\n".join(filter(None, (_lines(document, "title"), _lines(content, "url"))))
    if source.get("type") == "text" and type(data) is str and data:
        excerpt = cut_text(data, EXCERPT_CHARACTERS)
        if excerpt != data:
            excerpt = f"{excerpt}\n({len(data)} characters in all)".lstrip("\n")
        return f"{head}\n\n{excerpt}" if head else excerpt
    if type(data) is str and data:
        media = source.get("media_type")
        what = f"({media if type(media) is str else 'binary'} document, not shown)"
        return f"{head}\n\n{what}" if head else what
    return head


def _executed(content: dict[str, Any]) -> str:
    """A code execution's result (``code_execution_result``, ``bash_code_execution_result``,
    ``encrypted_code_execution_result``): its return code, stdout and stderr (each without
    its last line end; an encrypted stdout is for the model alone) and the files it made.

    >>> print(_executed({"type": "bash_code_execution_result", "stdout": "4\\n",
    ...     "stderr": "", "return_code": 0, "content": [{"type": "bash_code_execution_output",
    ...     "file_id": "file_1"}]}))
    return code: 0
    stdout:
    4
    files: file_1
    """
    parts = []
    code = content.get("return_code")
    if type(code) is int:
        parts.append(f"return code: {code}")
    if type(content.get("encrypted_stdout")) is str:
        parts.append("stdout: (encrypted, for the model alone)")
    for stream in ("stdout", "stderr"):
        text = content.get(stream)
        if type(text) is str and text:
            parts.append(f"{stream}:\n{text.removesuffix(chr(10))}")
    outputs = content.get("content")
    items = outputs if type(outputs) is list else []
    files = [name for item in items if type(item) is dict and (name := _lines(item, "file_id"))]
    if files:
        parts.append("files: " + ", ".join(files))
    return "\n".join(parts)


def _viewed(content: dict[str, Any]) -> str:
    """A file the text editor viewed: its text (a text file's), or what it is.

    >>> _viewed({"file_type": "text", "content": "x = 1\\n"}), _viewed({"file_type": "image"})
    ('x = 1\\n', '(image file, not shown)')
    """
    text = content.get("content")
    if content.get("file_type") in ("text", None) and type(text) is str:
        return text
    kind = content.get("file_type")
    return f"({kind if type(kind) is str else 'binary'} file, not shown)"


def _created(content: dict[str, Any]) -> str:
    """A file the text editor wrote: ``file created`` or ``file updated``.

    >>> _created({"is_file_update": True}), _created({"is_file_update": False})
    ('file updated', 'file created')
    """
    update = content.get("is_file_update")
    return "" if type(update) is not bool else "file updated" if update else "file created"


def _replaced(content: dict[str, Any]) -> str:
    """A text editor's replacement: the hunk's place (``@@ -old_start,old_lines
    +new_start,new_lines @@``, as a unified diff writes it) and its lines.

    >>> print(_replaced({"old_start": 3, "old_lines": 1, "new_start": 3, "new_lines": 2,
    ...     "lines": ["-a", "+b", "+c"]}))
    @@ -3,1 +3,2 @@
    -a
    +b
    +c
    """
    numbers = [content.get(key) for key in ("old_start", "old_lines", "new_start", "new_lines")]
    place = []
    if all(type(number) is int for number in numbers):
        place = ["@@ -{},{} +{},{} @@".format(*numbers)]
    lines = content.get("lines")
    texts = [line for line in lines if type(line) is str] if type(lines) is list else []
    return "\n".join(place + texts)


def _found_tools(content: dict[str, Any]) -> str:
    """A tool search's result: the names of the tools found, one a line."""
    found = content.get("tool_references")
    items = found if type(found) is list else []
    return "\n".join(_lines(item, "tool_name") for item in items if type(item) is dict)


_RESULTS: Final[dict[str, Callable[[dict[str, Any]], str]]] = {
    "web_fetch_result": _fetched,
    "code_execution_result": _executed,
    "bash_code_execution_result": _executed,
    "encrypted_code_execution_result": _executed,
    "text_editor_code_execution_view_result": _viewed,
    "text_editor_code_execution_create_result": _created,
    "text_editor_code_execution_str_replace_result": _replaced,
    "tool_search_tool_search_result": _found_tools,
}
"""The result shapes known, by their ``type`` (the Messages API's, as its SDKs type them)."""


def unknown_result(content: Any) -> str:
    """A result of no known shape as JSON (spaces after separators, so a cut falls between
    members), without what is for the model alone (members named ``encrypted_*``), written
    :data:`JSON_DEPTH` levels deep and cut at :data:`JSON_CHARACTERS` by
    :func:`~sessionref.transcript.cut_text`.

    >>> unknown_result({"type": "x", "encrypted_content": "E", "n": [1, {"a": None}]})
    '{"type": "x", "n": [1, {"a": null}]}'
    >>> deep = [1]
    >>> for _ in range(20):
    ...     deep = [deep]
    >>> written = unknown_result(deep)
    >>> written.count("["), written[14:22]
    (16, '[["…"]]]')
    """
    written = json.dumps(_readable(content, JSON_DEPTH), ensure_ascii=False)
    cut = cut_text(written, JSON_CHARACTERS)
    return cut if cut == written else f"{cut}\n({len(written)} characters in all)".lstrip("\n")


def _readable(value: Any, depth: int) -> Any:
    """``value`` without members named ``encrypted_*``, ``…`` below ``depth`` levels.

    >>> _readable({"encrypted_stdout": "E", "a": [{"b": 1}]}, 2)
    {'a': ['…']}
    """
    if type(value) is dict:
        if depth == 0:
            return "…"
        return {
            key: _readable(item, depth - 1)
            for key, item in value.items()
            if not (type(key) is str and key.startswith("encrypted_"))
        }
    if type(value) is list:
        return "…" if depth == 0 else [_readable(item, depth - 1) for item in value]
    return value
