"""Headless Chromium, to look at a report as a reader would (tests and screenshots).

``make setup`` installs Debian's ``chromium`` where it can; :func:`find_chromium`
returns ``None`` when there is none, and callers skip with that reason.

    python -m ordercheck.reports.browser PAGE.html OUT.png [WIDTHxHEIGHT]

writes a screenshot of a page (the picture in README.md and docs/howto/reports.md is made this way).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def find_chromium() -> str | None:
    """The path of a Chromium (or Chrome) binary, or ``None``."""
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    exe = find_chromium()
    if exe is None:
        raise FileNotFoundError("no chromium on PATH (make setup installs it where apt-get is available)")
    with tempfile.TemporaryDirectory(prefix="ordercheck-chromium-") as profile:
        cmd = [exe, *FLAGS, f"--user-data-dir={profile}", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def dump_dom(page: str | Path, size: tuple[int, int] = (1400, 1000), timeout: float = 120) -> str:
    """The DOM of ``page`` after it has loaded in a window of ``size``, serialised by
    the browser."""
    proc = _run([f"--window-size={size[0]},{size[1]}", "--dump-dom", Path(page).resolve().as_uri()], timeout)
    if proc.returncode != 0 or not proc.stdout:
        raise RuntimeError(f"chromium --dump-dom failed ({proc.returncode}): {proc.stderr[-500:]}")
    return proc.stdout


WIDTH_PROBE = """<script>
const root = document.documentElement, view = root.clientWidth;
const wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > view + 0.5)
  .slice(0, 5).map(e => e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined && e.className
    ? '.' + e.className.trim().split(/\\s+/).join('.') : '') + ' to ' + Math.round(e.getBoundingClientRect().right) + 'px');
const pre = document.createElement('pre'); pre.id = 'ordercheck-width-probe';
pre.textContent = JSON.stringify({scroll: root.scrollWidth, view: view, wide: wide});
document.body.appendChild(pre);
</script>"""
"""Measures a page as laid out: the document's scroll width, the window's width and the
first elements reaching past it (:func:`page_width`)."""


def page_width(page: str | Path, size: tuple[int, int] = (1400, 900), timeout: float = 120) -> dict[str, Any]:
    """How wide ``page`` lays out in a window of ``size``: ``scroll`` (the document's
    ``scrollWidth``; more than the window's width means a horizontal scroll bar),
    ``view`` (the window's width) and ``wide`` (up to five elements reaching past it,
    ``tag.class to NNNpx``). The page forbids scripts, so a copy beside it, without its
    Content-Security-Policy and with a probe script, is what the browser loads."""
    src = Path(page)
    text = src.read_text(encoding="utf-8")
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text).replace(
        "</body>", WIDTH_PROBE + "</body>")
    probe = src.with_name(f".width-probe-{src.name}")
    probe.write_text(text, encoding="utf-8")
    try:
        dom = dump_dom(probe, size, timeout)
    finally:
        probe.unlink()
    found = re.search(r'<pre id="ordercheck-width-probe">(.*?)</pre>', dom, flags=re.S)
    if found is None:
        raise RuntimeError(f"{src}: the width probe did not run")
    return dict(json.loads(html.unescape(found.group(1))))


def screenshot(page: str | Path, png: str | Path, size: tuple[int, int] = (1400, 1000), timeout: float = 120) -> Path:
    """A PNG of ``page`` as a browser window of ``size`` shows it."""
    out = Path(png).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    proc = _run([f"--window-size={size[0]},{size[1]}", f"--screenshot={out}", Path(page).resolve().as_uri()], timeout)
    if not out.exists():
        raise RuntimeError(f"chromium --screenshot wrote nothing ({proc.returncode}): {proc.stderr[-500:]}")
    return out


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print("usage: python -m ordercheck.reports.browser PAGE.html OUT.png [WIDTHxHEIGHT]", file=sys.stderr)
        return 2
    size = (1400, 1000)
    if len(argv) == 3:
        w, h = argv[2].lower().split("x")
        size = (int(w), int(h))
    print(screenshot(argv[0], argv[1], size))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
