"""Space-time diagrams: protocol-internal messages drawn lighter, the page's width used,
and arrow labels that do not overlap, as laid out and as a browser renders them."""

from __future__ import annotations

import html as htmllib
import json
import re
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import pytest
from reports_helpers import checked

from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.reports.browser import dump_dom, find_chromium
from ordercheck.reports.diagram import ARROW, INTERNAL, Labels, _overlap, layout
from ordercheck.reports.html import write_report
from ordercheck.reports.timeline import blame, build_timeline
from ordercheck.reports.view import build_report

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "token_ring" / "models"
SVG = "{http://www.w3.org/2000/svg}"


@cache
def ring(name: str):
    return check_model(load_model(EXAMPLE / f"{name}.toml"), Options(progress=False))


def diagrams():
    """(result, property, diagram) for every trace of a few results with busy diagrams."""
    results = [ring("token-ring-3-unfair"), ring("token-ring-3-no-hold-back"), checked("fifo-4"),
               checked("bus1-mutant-sync-while-queueing")]
    for result in results:
        model = load_model(result.model)
        for name, p in result.properties.items():
            if p.trace:
                timeline = build_timeline(model.spec, p.trace)
                yield result, name, layout(timeline, blame(timeline, model.spec.property_map()[name], p.status), "d", p.loop_start)


def test_token_passes_are_drawn_as_light_internal_arrows():
    d = next(d for r, n, d in diagrams() if n == "eventual_delivery")
    internal = [line for line in d.lines if line.cls == "internal"]
    a, b, c = (x for _name, x in d.peers)

    def near(x, y):
        return abs(x - y) < 6

    hops = {(p, q) for line in internal for p, xp in zip("abc", (a, b, c)) for q, xq in zip("abc", (a, b, c))
            if near(line.x1, xp) and near(line.x2, xq)}
    assert hops == {("a", "b"), ("b", "c"), ("c", "a")} and len(internal) == 3  # the token's three hops
    assert all(line.label == "token" and line.y2 > line.y1 for line in internal)
    assert d.colours["internal"] == INTERNAL != ARROW
    assert any(m.shape == "pip" for m in d.marks)


def test_the_internal_arrows_reach_the_page_lighter_and_thinner(tmp_path):
    write_report(build_report([ring("token-ring-3-unfair")]), tmp_path)
    page = (tmp_path / "traces" / "token-ring-3-unfair--eventual_delivery.html").read_text()
    svg = ET.fromstring(re.search(r"<svg .*?</svg>", page, flags=re.S).group(0))
    groups = {g.get("class"): g for g in svg.iter(f"{SVG}g")}
    line = groups["arrow internal"].find(f"{SVG}line")
    assert line.get("stroke") == INTERNAL and float(line.get("stroke-width")) < 1.6
    assert "protocol message" in page  # the legend explains them


def test_no_two_labels_overlap():
    seen = 0
    for _result, name, d in diagrams():
        boxes = [_box(line) for line in d.lines if line.label]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert not _overlap(a, b), (name, a, b)
        seen += len(boxes)
    assert seen > 20


def _box(line) -> tuple[float, float, float, float]:
    from ordercheck.reports.diagram import CHAR

    w = CHAR * len(line.label) + 2
    if line.anchor == "start":
        return (line.lx, line.ly - Labels.HEIGHT + 2, line.lx + w, line.ly + 2)
    return (line.lx - w, line.ly - Labels.HEIGHT + 2, line.lx, line.ly + 2)


def test_few_peers_get_wide_columns():
    d = next(d for r, n, d in diagrams() if n == "eventual_delivery")
    xs = [x for _name, x in d.peers]
    assert xs[1] - xs[0] > 150 and d.width >= 600


PROBE = """<script>
const svg = document.querySelector('svg.spacetime'), box = svg.getBoundingClientRect();
const labels = [...svg.querySelectorAll('text.msg')].map(t => { const r = t.getBoundingClientRect();
  return {x: r.x, y: r.y, w: r.width, h: r.height, text: t.textContent}; });
const pre = document.createElement('pre'); pre.id = 'probe';
pre.textContent = JSON.stringify({svg: {w: box.width, h: box.height}, page: document.body.clientWidth, labels});
document.body.appendChild(pre);
</script>"""


@pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed")
@pytest.mark.parametrize("slug", ["token-ring-3-unfair--eventual_delivery", "token-ring-3-no-hold-back--total", "fifo-4--causal"])
def test_in_the_browser_labels_do_not_overlap_and_the_diagram_is_wide(tmp_path, slug):
    write_report(build_report([ring("token-ring-3-unfair"), ring("token-ring-3-no-hold-back"), checked("fifo-4")]), tmp_path)
    page = tmp_path / "traces" / f"{slug}.html"
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text(encoding="utf-8"))
    probe = page.with_name("probe.html")
    probe.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = dump_dom(probe, (1400, 1000))
    data = json.loads(htmllib.unescape(re.search(r'<pre id="probe">(.*?)</pre>', dom, flags=re.S).group(1)))
    assert data["svg"]["w"] >= 0.4 * data["page"], "the diagram takes a good part of the page's width"
    labels = data["labels"]
    assert len(labels) >= 3
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            apart = a["x"] + a["w"] <= b["x"] + 0.5 or b["x"] + b["w"] <= a["x"] + 0.5 or \
                a["y"] + a["h"] <= b["y"] + 0.5 or b["y"] + b["h"] <= a["y"] + 0.5
            assert apart, (a, b)

