"""The HTML views in a real browser (headless Chromium, installed by .ci/run): the pages of
the sample sessions and of hostile text load with no console error and no network request,
every session text is in the DOM as text (never as markup), nothing runs, and the page reads
on a phone, in the dark and in print. A missing Chromium fails these tests; it is not a skip.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessionref.claude_code.reader import claude_transcript
from sessionref.cli.demo import sample_root
from sessionref.cli.output_file import write_pieces
from sessionref.codecs.jsstring import well_formed
from sessionref.log.builder import LogBuilder
from sessionref.log.store import DirectoryStore, MemoryStore
from sessionref.transcript import Entry, Transcript
from sessionref.views.entries import ViewOptions
from sessionref.views.html import export_html_chunks, picture_html_chunks
from sessionref.views.picture import snapshot_picture
from tests.browser import Browser, distinct_colors

HOSTILE = [
    "</div><script>document.title='pwned'</script>",
    "</p></article></main><img src=x onerror=\"document.title='pwned'\">",
    "<link rel=stylesheet href=http://example.com/x.css><iframe src=https://example.com>",
    "<style>body{display:none}</style><base href=http://example.com/>",
    "\u202eRTL override\u202c and \u200fmarks\u200e \u05e9\u05dc\u05d5\u05dd"
    " \u0645\u0631\u062d\u0628\u0627",
    "a lone \ud800 surrogate and a \udfff low one",
    "y" * 100_000,
    "{{ 7*7 }} {% raw %} ${x} &amp; &lt;b&gt;",
    "```html\n<script>document.title='pwned'</script>\n```",
]
BIDI_CONTROLS = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
"""Embedding, override and isolate controls: a page shows each as its escape (Trojan Source)."""
AS_SHOWN = {code: f"\\u{code:04x}" for code in BIDI_CONTROLS}
SAMPLES = [
    "7f3c1e2a-auth-refactor",
    "b91d04f0-flaky-ci",
    "c2e8a7d5-docs-dark-mode",
    "e5a90c11-scratch",
]


def hostile_transcript() -> Transcript:
    entries = [
        Entry("user" if i % 2 else "assistant", "text", t, 1000 * i) for i, t in enumerate(HOSTILE)
    ]
    entries += [
        Entry("user", "checkpoint", HOSTILE[0]),
        Entry("assistant", "thinking", HOSTILE[1]),
        Entry("assistant", "tool-call", HOSTILE[2], name="</summary><script>"),
        Entry("tool", "tool-result", HOSTILE[6], name="</summary><script>"),
        Entry("system", "text", HOSTILE[3]),
    ]
    return Transcript("<s>\u202e", "dsh", "</title><script>x</script>", "/w/<b>", 0, entries)


def server_tools_transcript() -> Transcript:
    """A Claude Code API message of text, a code execution's call and result, and more text,
    in the Messages API's shapes, the hostile texts in the result's output and around it."""
    stdout = "\n".join(HOSTILE)
    blocks = [
        {"type": "text", "text": HOSTILE[0]},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution",
         "input": {"code": HOSTILE[3]}},
        {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_1", "content": {
            "type": "code_execution_result", "stdout": stdout, "stderr": HOSTILE[4],
            "return_code": 1, "content": []}},
        {"type": "text", "text": HOSTILE[8]},
    ]  # fmt: skip
    lines = [{"type": "user", "uuid": "u", "message": {"role": "user", "content": HOSTILE[1]}}]
    for number, block in enumerate(blocks):
        message = {"id": "msg_1", "role": "assistant", "content": [block]}
        parent = lines[-1]["uuid"]
        lines.append({"type": "assistant", "uuid": f"a{number}", "parentUuid": parent,
                      "message": message})  # fmt: skip
    return claude_transcript("<s>", [json.dumps(line).encode() for line in lines])


def hostile_store() -> MemoryStore:
    b = LogBuilder()
    for text in HOSTILE:
        b.user(text)
        b.assistant(text[::-1])
    header = {"version": 0, "id": "h<", "createdAt": 1, "delegationDepth": 0}
    return MemoryStore([{"header": header, "events": b.events}])


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    opened = Browser()
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[str]]]:
    """Each page and the texts it must show."""
    folder = tmp_path_factory.mktemp("pages")
    store = DirectoryStore(sample_root())
    everything = ViewOptions(tools=True, reasoning=True)
    found: dict[str, tuple[Path, list[str]]] = {}
    for session_id in SAMPLES:
        transcript = store.transcript(session_id)
        path = folder / f"{session_id}.html"
        write_pieces(export_html_chunks(transcript, everything), str(path), "--out")
        prose = [e.text for e in transcript.entries if "```" not in e.text]
        found[session_id] = (path, prose)
        picture = snapshot_picture(store.read(session_id), session_id, 600)
        path = folder / f"{session_id}-show.html"
        write_pieces(picture_html_chunks(picture), str(path), "--out")
        found[f"{session_id}-show"] = (path, [row.text[:200] for row in picture.rows])
    hostile = hostile_transcript()
    path = folder / "hostile.html"
    write_pieces(export_html_chunks(hostile, everything), str(path), "--out")
    texts = [e.text for e in hostile.entries if not e.text.startswith("```")]
    found["hostile"] = (path, [*texts, "<script>document.title='pwned'</script>\n", hostile.title])
    memory = hostile_store()
    picture = snapshot_picture(memory.read("h<"), "h<", 4096)
    path = folder / "hostile-show.html"
    write_pieces(picture_html_chunks(picture), str(path), "--out")
    shown = [row.head[:100] for row in picture.rows if row.fate == "cut"]
    found["hostile-show"] = (path, [*shown, *(r.text for r in picture.rows if r.fate == "kept")])
    path = folder / "server-tools.html"
    write_pieces(export_html_chunks(server_tools_transcript(), everything), str(path), "--out")
    fenced = "<script>document.title='pwned'</script>\n"
    found["server-tools"] = (path, [*(t for t in HOSTILE if not t.startswith("```")), fenced])
    return found


NAMES = [*SAMPLES, *(f"{s}-show" for s in SAMPLES), "hostile", "hostile-show", "server-tools"]


@pytest.mark.parametrize("name", NAMES)
def test_the_page_loads_cleanly_and_shows_every_text(
    browser: Browser, pages: dict[str, tuple[Path, list[str]]], name: str
) -> None:
    path, texts = pages[name]
    page = browser.open(path)
    assert page.errors == []
    assert page.requests == []
    loaders = "script,img,iframe,link,base,object,embed,svg,form,a,meta[http-equiv=refresh i]"
    assert browser.evaluate(f"document.querySelectorAll('{loaders}').length") == 0
    assert browser.evaluate("document.title") != "pwned"
    content = browser.evaluate("document.body.textContent")
    for text in texts:
        assert well_formed(text).translate(AS_SHOWN) in content, text[:80]
    assert not set(map(ord, content + browser.evaluate("document.title"))) & set(BIDI_CONTROLS)
    assert distinct_colors(browser.screenshot()) > 8, "the screenshot is blank"


@pytest.mark.parametrize("name", ["hostile", "hostile-show", SAMPLES[0]])
def test_the_page_reads_on_a_phone_in_the_dark_and_in_print(
    browser: Browser, pages: dict[str, tuple[Path, list[str]]], name: str
) -> None:
    path, _ = pages[name]
    browser.open(path)
    browser.emulate(width=375)
    overflow = "document.documentElement.scrollWidth - window.innerWidth"
    assert browser.evaluate(overflow) <= 0, "the page scrolls sideways on a phone"
    phone = browser.screenshot()
    assert distinct_colors(phone) > 8
    background = "getComputedStyle(document.body).backgroundColor"
    light = browser.evaluate(background)
    browser.emulate(width=375, dark=True)
    dark = browser.evaluate(background)
    assert brightness(light) > 600 and brightness(dark) < 150, (light, dark)
    assert distinct_colors(browser.screenshot()) > 8
    browser.emulate(media="print")
    assert brightness(browser.evaluate(background)) > 600
    assert browser.pdf().startswith(b"%PDF")
    if name == "hostile":
        Path(path.with_suffix(".phone.png")).write_bytes(phone)


def brightness(css_color: str) -> int:
    """The sum of the channels of an ``rgb(r, g, b)`` colour."""
    channels = css_color[css_color.index("(") + 1 : css_color.index(")")].split(",")
    return sum(int(float(c)) for c in channels[:3])


SLIPPED = (
    "<base href=http://example.com/>"
    "<form action=http://example.com/form method=post><input name=q value=x>"
    "<button id=send>send</button></form>"
    "<form><button id=relative>send</button></form>"
)


@pytest.mark.parametrize("name", ["hostile", "hostile-show"])
def test_the_policy_stops_a_form_even_if_markup_slipped_through(
    browser: Browser, pages: dict[str, tuple[Path, list[str]]], name: str, tmp_path: Path
) -> None:
    """The escaping is the guarantee; the page's Content-Security-Policy is the second line.
    ``default-src`` covers what a page loads, not where a form sends its data or what a
    ``<base>`` makes relative URLs mean, so the policy names both (``form-action``,
    ``base-uri``): a form slipped into the page and submitted sends nothing."""
    path, _ = pages[name]
    page_text = path.read_text(encoding="utf-8")
    assert page_text.count("<main>") == 1
    slipped = tmp_path / "slipped.html"
    slipped.write_text(page_text.replace("<main>", "<main>" + SLIPPED), encoding="utf-8")
    page = browser.open(slipped)
    assert browser.evaluate("document.querySelectorAll('form').length") == 2  # it did slip in
    for button in ("send", "relative"):
        browser.evaluate(f"document.getElementById('{button}').click()")
    wait = {"expression": "new Promise(done => setTimeout(done, 500))", "awaitPromise": True}
    browser.call("Runtime.evaluate", wait)  # the submissions have had their chance
    assert page.requests == []
