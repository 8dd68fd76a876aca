"""A report in a real browser: headless Chromium draws the diagram's arrows and the
highlighted deliveries, visibly."""

from __future__ import annotations

import html as htmllib
import json
import re

import pytest
from reports_helpers import checked, read_png

from ordercheck.reports.browser import dump_dom, find_chromium, screenshot
from ordercheck.reports.html import write_report
from ordercheck.reports.view import build_report

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="chromium is not installed (`make setup` installs Debian's chromium where apt-get is available)",
)

SIZE = (1100, 800)

# Appended to a copy of the page (the report itself forbids scripts): measures what the
# browser actually laid out and painted.
PROBE = """<script>
function info(el) {
  const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
  const cx = r.x + r.width / 2, cy = r.y + r.height / 2;
  const top = document.elementFromPoint(cx, cy);
  return {w: r.width, h: r.height, x: r.x, y: r.y, stroke: cs.stroke, visibility: cs.visibility,
          display: cs.display, opacity: cs.opacity, length: el.getTotalLength ? el.getTotalLength() : 0,
          onTop: !!top && el.closest('g.mark, g.arrow').contains(top)};
}
const svg = document.querySelector('svg.spacetime'), box = svg.getBoundingClientRect();
const out = {svg: {x: box.x, y: box.y, w: box.width, h: box.height},
  arrows: [...document.querySelectorAll('g.arrow.message line')].map(info),
  hot: [...document.querySelectorAll('g.arrow.offending:not(.held) line')].map(info),
  rings: [...document.querySelectorAll('g.mark.deliver.offending circle')].map(info)};
const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser")
    write_report(build_report([checked("fifo-4")]), out)
    return out / "traces" / "fifo-4--causal.html"


@pytest.fixture(scope="module")
def probe(page):
    """What the browser laid out, measured by a script run in a copy of the page (the
    report itself forbids scripts)."""
    text = page.read_text(encoding="utf-8")
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text).replace("</body>", PROBE + "</body>")
    probe_page = page.with_name("probe.html")
    probe_page.write_text(text, encoding="utf-8")
    dom = dump_dom(probe_page, SIZE)
    return json.loads(htmllib.unescape(re.search(r'<pre id="probe">(.*?)</pre>', dom, flags=re.S).group(1)))


def test_arrows_and_offending_deliveries_are_laid_out_visible_and_on_top(probe):
    data = probe
    assert data["svg"]["w"] > 300 and data["svg"]["h"] > 200
    assert len(data["arrows"]) == 2  # a1 to b, b1 to c: the causal trace ends at c's premature delivery of b1
    for line in data["arrows"]:
        assert line["length"] > 40 and line["visibility"] == "visible" and line["display"] != "none"
        assert float(line["opacity"]) == 1
    assert len(data["hot"]) == 2  # b1 to c, and a1 to c drawn as still in flight
    for line in data["hot"]:
        assert line["stroke"] == "rgb(214, 39, 40)" and line["length"] > 40
    assert len(data["rings"]) == 1  # the premature delivery; a1 never reached c, so it has no ring
    for ring in data["rings"]:
        assert ring["w"] >= 10 and ring["onTop"], "the highlighted delivery is drawn on top, not covered"
        assert 0 <= ring["x"] < SIZE[0] and 0 <= ring["y"] < SIZE[1], "inside the window"


def test_screenshot_shows_highlight_and_arrow_colours_inside_the_diagram(page, probe, tmp_path):
    box = probe["svg"]
    png = screenshot(page, tmp_path / "shot.png", SIZE)  # the real page, its policy in force
    width, height, rows = read_png(png)
    assert (width, height) == SIZE

    def count(rgb, tol):
        n = 0
        for y in range(int(box["y"]), min(height, int(box["y"] + box["h"]))):
            row = rows[y]
            for x in range(int(box["x"]), min(width, int(box["x"] + box["w"]))):
                r, g, b = row[3 * x : 3 * x + 3]
                if abs(r - rgb[0]) <= tol and abs(g - rgb[1]) <= tol and abs(b - rgb[2]) <= tol:
                    n += 1
        return n

    assert count((214, 39, 40), 12) > 300, "highlighted arrows and rings are painted"
    assert count((31, 78, 140), 12) > 100, "ordinary message arrows are painted"
