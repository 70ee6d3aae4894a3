"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``):
open a page, record its console errors, exceptions and network requests, read its DOM, take
a screenshot, emulate a phone, dark mode and print. Only the standard library: no Playwright,
no websocket client.

Debian's ``chromium`` is what CI installs (.ci/run); a missing browser is a failure that
says so, never a skip.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)
TIMEOUT = 60.0


def chromium_path() -> str:
    """The browser, or an AssertionError saying how to get it."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path, "chromium is not installed: `apt-get install -y chromium` (.ci/run installs it)"
    return path


class Page:
    """What a page did while it loaded: console errors, requests other than the page's own
    file, and the events seen."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []


class Browser:
    """One Chromium process with a fresh profile, spoken to over fds 3 (in) and 4 (out)."""

    def __init__(self) -> None:
        self.profile = tempfile.TemporaryDirectory(prefix="sessionref-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:  # runs in the child: the pipes become fds 3 and 4
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.process = subprocess.Popen(
            [chromium_path(), *FLAGS, f"--user-data-dir={self.profile.name}", "about:blank"],
            preexec_fn=wire,
            pass_fds=(3, 4),  # kept open once wire() has made them
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._reader = os.fdopen(self._from_browser, "rb")
        self._buffer = b""
        self._next_id = 0
        self.session: str | None = None
        self.page = Page()

    def _send(
        self, method: str, params: dict[str, Any] | None = None, *, browser: bool = False
    ) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if not browser and self.session is not None:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = self._reader.read1(1 << 16)
            assert chunk, "chromium closed its DevTools pipe"
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        self._record(message)
        return message

    def _record(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params["type"] in (
            "error",
            "assert",
            "warning",
        ):
            self.page.errors.append(json.dumps(params["args"])[:300])
        elif method == "Runtime.exceptionThrown":
            self.page.errors.append(json.dumps(params["exceptionDetails"])[:300])
        elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            self.page.errors.append(params["entry"]["text"][:300])
        elif method == "Network.requestWillBeSent":
            self.page.requests.append(params["request"]["url"])

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, browser: bool = False
    ) -> Any:
        """Send a command and wait for its answer (recording the events that come first)."""
        number = self._send(method, params, browser=browser)
        while True:
            message = self._message()
            if message.get("id") == number:
                assert "error" not in message, f"{method}: {message['error']}"
                return message.get("result", {})

    def wait_for(self, method: str) -> dict[str, Any]:
        """The next event named ``method``."""
        while True:
            message = self._message()
            if message.get("method") == method:
                return message

    def open(self, path: Path) -> Page:
        """Load a file in a new tab and wait until it has loaded."""
        target = self.call("Target.createTarget", {"url": "about:blank"}, browser=True)
        attached = self.call(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, browser=True
        )
        self.session = attached["sessionId"]
        self.page = Page()
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(f"{domain}.enable")
        self.call("Page.navigate", {"url": path.resolve().as_uri()})
        self.wait_for("Page.loadEventFired")
        self.page.requests = [url for url in self.page.requests if url != path.resolve().as_uri()]
        return self.page

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (the test's, not the page's)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def screenshot(self) -> bytes:
        """A PNG of the viewport."""
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])

    def emulate(self, *, width: int = 800, media: str = "", dark: bool = False) -> None:
        """Show the page as a screen ``width`` CSS pixels wide (a phone below 500), as
        ``media`` ("print" or "" for screen), in the dark or light colour scheme."""
        metrics = {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 500}
        self.call("Emulation.setDeviceMetricsOverride", metrics)
        scheme = {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}
        self.call("Emulation.setEmulatedMedia", {"media": media, "features": [scheme]})

    def pdf(self) -> bytes:
        """The page printed to PDF."""
        return base64.b64decode(self.call("Page.printToPDF", {})["data"])

    def close(self) -> None:
        try:
            self._send("Browser.close", browser=True)
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            os.close(self._to_browser)
            self._reader.close()
            self.profile.cleanup()


def png_pixels(data: bytes, max_rows: int = 1 << 30) -> tuple[int, int, list[bytes]]:
    """Width, height and the first ``max_rows`` rows of an 8-bit RGB or RGBA, non-interlaced
    PNG (as Chromium writes screenshots), each row's filter undone."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, chunks, header = 8, [], b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind, body = data[offset + 4 : offset + 8], data[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        offset += 12 + length
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and color in (2, 6) and interlace == 0, "unexpected PNG layout"
    pixel = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * pixel
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(min(height, max_rows)):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            left = line[i - pixel] if i >= pixel else 0
            up = previous[i]
            corner = previous[i - pixel] if i >= pixel else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + best) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def distinct_colors(data: bytes, step: int = 4, max_rows: int = 240) -> int:
    """How many distinct pixel values the top ``max_rows`` rows of a PNG hold (a page's
    heading and first entries), sampling every ``step``-th pixel of every ``step``-th row."""
    width, _, rows = png_pixels(data, max_rows)
    pixel = len(rows[0]) // width
    seen = {row[i : i + pixel] for row in rows[::step] for i in range(0, len(row), pixel * step)}
    return len(seen)
