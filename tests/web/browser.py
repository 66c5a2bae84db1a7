"""A headless Chromium driven over the DevTools protocol (Debian's `chromium` package), enough for
the main flows: open a page, fill and submit forms, click, take a screenshot. No extra dependency:
`websockets` comes with uvicorn[standard]."""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time
import urllib.request
import zlib
from pathlib import Path

from websockets.sync.client import connect


def find_chromium() -> str | None:
    for candidate in (os.environ.get("CODEYARD_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


class Browser:
    def __init__(self, executable: str, width: int = 1280, height: int = 900):
        self.profile = tempfile.mkdtemp(prefix="codeyard-chromium-")
        self.process = subprocess.Popen(
            [executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--remote-debugging-port=0", f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        port = self._port()
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(target for target in targets if target["type"] == "page")
        self._connection = connect(page["webSocketDebuggerUrl"], max_size=64 * 1024 * 1024, open_timeout=10)
        self.socket = self._connection.__enter__()
        self._ids = itertools.count(1)
        self.send("Page.enable")
        self.resize(width, height)

    def resize(self, width: int, height: int = 900) -> None:
        """Lay the pages out in a window WIDTH x HEIGHT CSS pixels wide."""
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _port(self) -> int:
        marker = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if marker.exists() and marker.read_text().strip():
                return int(marker.read_text().split()[0])
            if self.process.poll() is not None:
                raise RuntimeError("chromium exited before it listened")
            time.sleep(0.05)
        raise RuntimeError("chromium did not open its DevTools port")

    def send(self, method: str, **params) -> dict:
        message_id = next(self._ids)
        self.socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.socket.recv(timeout=30))
            if reply.get("id") == message_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def _load_id(self) -> str:
        return self.evaluate("(window.__codeyardLoad = window.__codeyardLoad || Math.random().toString())")

    def wait_for_new_page(self, before: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        # Loaded, a new document, and showing something: on a busy machine the check has seen a
        # new, complete document whose body was still empty. Asked of one document in one
        # evaluation: asked in two, the first saw the old page complete and the second the new
        # one's fresh id while it was still loading (a test then read a half-parsed page).
        shown_id = (
            "(document.readyState === 'complete' && !!document.body && document.body.innerText.trim() !== '')"
            " ? (window.__codeyardLoad = window.__codeyardLoad || Math.random().toString()) : null"
        )
        while time.monotonic() < deadline:
            try:
                loaded = self.evaluate(shown_id)
                if loaded is not None and loaded != before:
                    return
            except RuntimeError:
                pass  # the context went away during the navigation
            time.sleep(0.05)
        raise TimeoutError("the page did not load")

    def open(self, url: str) -> None:
        before = self._load_id()
        self.send("Page.navigate", url=url)
        self.wait_for_new_page(before)

    def submit(self, selector: str, fields: dict[str, str] | None = None, button: str | None = None) -> None:
        """Fill FIELDS (name -> value) of the form SELECTOR and press its BUTTON (a selector), as a user would."""
        before = self._load_id()
        script = f"""(() => {{
            const form = document.querySelector({json.dumps(selector)});
            for (const [name, value] of Object.entries({json.dumps(fields or {})})) {{ form.elements[name].value = value; }}
            const button = {json.dumps(button)} ? form.querySelector({json.dumps(button)}) : form.querySelector('button[type=submit]');
            button.click();
        }})()"""
        self.evaluate(script)
        self.wait_for_new_page(before)

    def click(self, selector: str) -> None:
        """Click the link SELECTOR and wait for the page it opens."""
        before = self._load_id()
        self.evaluate(f"document.querySelector({json.dumps(selector)}).click()")
        self.wait_for_new_page(before)

    def text(self) -> str:
        return self.evaluate("document.body.innerText")

    def url(self) -> str:
        return self.evaluate("location.href")

    def screenshot(self, path: Path) -> bytes:
        """Save a full screenshot to PATH; returns a quarter-scale one (cheap to check for blankness)."""
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))
        size = self.evaluate("[window.innerWidth, window.innerHeight]")
        clip = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 0.25}
        return base64.b64decode(self.send("Page.captureScreenshot", format="png", clip=clip)["data"])

    def whole_page(self, path: Path) -> None:
        """Save a screenshot of the whole page (beyond the window) to PATH. Captured whole, the page
        has no scroll bar and is laid out as wide as the window."""
        height = self.send("Page.getLayoutMetrics")["cssContentSize"]["height"]
        clip = {"x": 0, "y": 0, "width": self.evaluate("window.innerWidth"), "height": height, "scale": 1}
        data = self.send("Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def layout_problems(self, selectors: tuple[str, ...] = ()) -> list[str]:
        """What looks broken on the page as laid out (LAYOUT_PROBE); SELECTORS name elements that
        must be shown inside the window."""
        return self.evaluate(f"({LAYOUT_PROBE})({json.dumps(list(selectors))})")

    def close(self) -> None:
        try:
            self._connection.__exit__(None, None, None)
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
            shutil.rmtree(self.profile, ignore_errors=True)


# What a reader would call broken, found in the laid-out page:
# - the page is wider than the window (the reader scrolls sideways; boxes that scroll their own
#   content, like code, are fine);
# - a box, a box's head or body, a row of actions, a notice, a list item or a preformatted block
#   drawn with nothing in it (no text, no generated text, no control or picture);
# - in a row of actions, a control off the line of the one before it, unless it starts a new line
#   (is at the row's left edge);
# - text that needs an emoji font, which many machines lack (it shows as empty squares);
# - an element named by the caller missing, hidden or reaching outside the window.
LAYOUT_PROBE = r"""(selectors) => {
  const problems = [], width = document.documentElement.clientWidth;  // the window less its scroll bar
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
    + [...el.classList].map(c => '.' + c).join('') + (el.textContent.trim() ? ` "${el.textContent.trim().slice(0, 30)}"` : '');
  const shown = el => {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden';
  };
  const page = document.documentElement.scrollWidth;
  if (page > width) problems.push(`the page is ${page} px wide in a ${width} px window`);
  const filled = 'input:not([type=hidden]), textarea, select, button, img, svg';
  const generated = el => ['::before', '::after'].some(part => !['none', 'normal'].includes(getComputedStyle(el, part).content));
  for (const el of document.querySelectorAll('.box, .box > .head, .box > .body, .actions, .notice, ul.items > li, pre')) {
    if (shown(el) && !el.innerText.trim() && !el.querySelector(filled) && !generated(el)) problems.push(`an empty ${name(el)}`);
  }
  const controls = 'button, input:not([type=hidden]), select, a.button';
  for (const row of document.querySelectorAll('.actions')) {
    const items = [...row.querySelectorAll(controls)].filter(shown).map(el => [el, el.getBoundingClientRect()]);
    const left = Math.min(...items.map(([, box]) => box.left)), middle = box => (box.top + box.bottom) / 2;
    items.slice(1).forEach(([el, box], index) => {
      const [before, previous] = items[index];
      const off = Math.round(middle(box) - middle(previous));
      if (box.left > left + 2 && Math.abs(off) > 4) problems.push(`${name(el)} sits ${off} px off the line of ${name(before)}`);
    });
  }
  const emoji = document.body.innerText.match(/[\u{1F000}-\u{1FAFF}\u{2600}-\u{27BF}]/u);
  if (emoji) problems.push(`the text needs an emoji font: ${emoji[0]}`);
  for (const selector of selectors) {
    const el = document.querySelector(selector);
    if (!el || !shown(el)) { problems.push(`no ${selector} shown`); continue; }
    const box = el.getBoundingClientRect();
    if (box.left < 0 || box.right > width + 0.5) problems.push(`${selector} reaches outside the window (${Math.round(box.left)} to ${Math.round(box.right)} px)`);
  }
  return problems;
}"""


# --- is a screenshot blank? -------------------------------------------------------------------------


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, idat, width = 8, b"", 0
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        chunk = data[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and color in (2, 6), (depth, color)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        offset += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def is_blank(data: bytes) -> bool:
    """A screenshot is blank when (almost) every sampled pixel has the colour of the first one."""
    width, _height, rows = png_pixels(data)
    channels = len(rows[0]) // width
    first = rows[0][:3]
    samples = [row[x * channels : x * channels + 3] for row in rows[::3] for x in range(0, width, 3)]
    differing = sum(sample != first for sample in samples)
    colours = len(set(samples))
    return differing < len(samples) * 0.01 or colours < 4
