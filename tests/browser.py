"""Looking at a report page as a reviewer does: headless Chromium at 1400×900, its screenshot, and the layout
of the elements that must be above the fold.

The report page has no script (it opens offline, as a CI artifact); to measure its layout a copy gets one that
writes the boxes of the elements asked for into the DOM, which ``--dump-dom`` prints once the page has loaded.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

WIDTH, HEIGHT = 1400, 900
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    f"--window-size={WIDTH},{HEIGHT}",
)
TIMEOUT_S = 120


def chromium() -> str:
    """The browser's executable; the test is skipped, saying how to get it, where there is none."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(
        "headless Chromium is not installed (Debian: apt-get install -y chromium; .ci/run installs it): the "
        "HTML report's screenshot tests need a browser to look at the page"
    )


def _run(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium(), *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        cwd=page.parent,
    )


def screenshot(page: Path, png: Path) -> Path:
    result = _run(page, png.parent / "chromium-profile", f"--screenshot={png}")
    assert png.exists(), f"chromium wrote no screenshot:\n{result.stderr[-2000:]}"
    return png


PROBE = """
<script>
window.addEventListener("load", () => {
  const boxes = {};
  for (const [name, selector] of Object.entries(%s)) {
    boxes[name] = [...document.querySelectorAll(selector)].map(e => {
      const r = e.getBoundingClientRect();
      return {text: e.textContent.trim().slice(0, 80), top: r.top, bottom: r.bottom, left: r.left,
              right: r.right, background: getComputedStyle(e).backgroundColor};
    });
  }
  boxes.page = [{width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight}];
  const out = document.createElement("pre");
  out.id = "layout-probe";
  out.textContent = JSON.stringify(boxes);
  document.body.appendChild(out);
});
</script>
"""


def layout(page: Path, selectors: dict[str, str]) -> dict[str, list[dict[str, object]]]:
    """The boxes (viewport coordinates at 1400×900, before any scrolling) of the elements each CSS selector
    finds in ``page``, and ``page``: the document's scroll width and height."""
    probe = page.with_name(page.stem + "-probe.html")
    html = page.read_text(encoding="utf-8")
    probe.write_text(html.replace("</body>", PROBE % json.dumps(selectors) + "</body>"), encoding="utf-8")
    result = _run(probe, page.parent / "chromium-profile", "--dump-dom", "--virtual-time-budget=5000")
    found = re.search(r'<pre id="layout-probe">(.*?)</pre>', result.stdout, re.S)
    assert found, f"the layout probe did not run:\n{result.stderr[-2000:]}"
    text = (
        found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    )
    data: dict[str, list[dict[str, object]]] = json.loads(text)
    return data


def pixels(png: Path, rows_wanted: int = HEIGHT) -> tuple[int, int, list[bytes]]:
    """Width, height and the first ``rows_wanted`` rows (RGB bytes, 3 per pixel) of an 8-bit RGB or RGBA
    PNG, as Chromium writes them (decoded here: no imaging library needed)."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG"
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        chunks.append((kind, data[offset + 8 : offset + 8 + length]))
        offset += 12 + length
    header = next(body for kind, body in chunks if kind == b"IHDR")
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or color not in (2, 6) or interlace:
        raise ValueError(f"{png}: only 8-bit RGB(A) non-interlaced PNGs are read here")
    step = 4 if color == 6 else 3
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    stride = width * step
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(min(height, rows_wanted)):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - step] if i >= step else 0
            up = previous[i]
            corner = previous[i - step] if i >= step else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                near = min(
                    (abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner)
                )
                line[i] = (line[i] + near[2]) & 0xFF
        previous = line
        rows.append(bytes(b for i, b in enumerate(line) if step == 3 or i % 4 != 3))
    return width, height, rows


def colour_share(
    rows: list[bytes], top: int, bottom: int, colour: tuple[int, int, int], tolerance: int = 12
) -> float:
    """The share of pixels in rows ``top``..``bottom`` within ``tolerance`` of ``colour``."""
    hits = total = 0
    for row in rows[top:bottom]:
        for i in range(0, len(row), 3):
            total += 1
            if all(abs(row[i + k] - colour[k]) <= tolerance for k in range(3)):
                hits += 1
    return hits / total if total else 0.0
