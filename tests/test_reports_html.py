"""The HTML report: structure, diagrams, highlighted deliveries, matrix links, commands."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner
from reports_helpers import MODELS, checked

from ordercheck.checker.cli import main
from ordercheck.reports import load_items
from ordercheck.reports.html import write_report
from ordercheck.reports.timeline import blame, build_timeline, load_spec
from ordercheck.reports.view import build_report

SVG = "{http://www.w3.org/2000/svg}"


class Collect(HTMLParser):
    """Ids, hrefs and every tag of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    items = [checked("fifo-4"), checked("bus1-mutant-sync-while-queueing")]
    out = tmp_path_factory.mktemp("report")
    view = build_report(items)
    index = write_report(view, out, [r.to_json() for r in items])
    return view, out, index.read_text(encoding="utf-8")


def svgs(html: str) -> list[ET.Element]:
    return [ET.fromstring(s) for s in re.findall(r"<svg\b.*?</svg>", html, flags=re.S)]


def test_index_is_self_contained_and_well_formed(report):
    _view, _out, html = report
    assert html.startswith("<!DOCTYPE html>")
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "<script" not in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "no network resources"
    page = Collect()
    page.feed(html)
    tags = [t for t, _ in page.tags]
    # fifo-4: causal, total, global_lock; bus1 mutant: causal, global_lock, and its fifo_race witness
    assert tags.count("svg") == 6
    for svg in svgs(html):  # each diagram parses as XML (so the browser reads it as SVG)
        assert svg.tag == f"{SVG}svg"


def test_matrix_rows_columns_and_links(report):
    view, _out, html = report
    page = Collect()
    page.feed(html)
    tables = re.findall(r'<table class="matrix">.*?</table>', html, flags=re.S)
    assert len(tables) == 2  # one per spec: fifo, bus1
    matrix = "".join(tables)
    assert re.findall(r'<tr><th class="mx-model"[^>]*><a href="#model-([^"]+)">', matrix) == [
        "fifo-4", "bus1-mutant-sync-while-queueing"]
    for col in ("fifo", "causal", "total", "global_lock", "eventual_delivery", "deadlock_free"):
        assert f"<span>{col}</span>" in matrix
    links = re.findall(r'href="#(trace-[^"]+)"', matrix)
    assert sorted(links) == sorted(t.anchor for t in view.traces)
    assert set(links) <= page.ids, "every matrix cell links to a trace on the page"
    assert len(links) == 6  # fifo-4: causal, total, global_lock; bus1 mutant: causal, global_lock, fifo_race


def offending_labels(svg: ET.Element) -> list[str]:
    out = []
    for g in svg.iter(f"{SVG}g"):
        cls = (g.get("class") or "").split()
        if "offending" in cls and "arrow" in cls and "held" not in cls:  # a held segment has no label
            out.append(g.find(f"{SVG}text").text)
    return out


def trace_svg(html: str, anchor: str) -> ET.Element:
    section = re.search(rf'<section class="trace[^"]*" id="{anchor}">.*?</section>', html, flags=re.S).group(0)
    return svgs(section)[0]


def test_causal_diagram_highlights_the_premature_delivery_and_what_it_did_not_wait_for(report):
    _view, _out, html = report
    svg = trace_svg(html, "trace-fifo-4--causal")
    assert sorted(offending_labels(svg)) == ["a1", "b1"]
    arrows = [g for g in svg.iter(f"{SVG}g") if (g.get("class") or "").startswith("arrow message")]
    assert len(arrows) == 2  # b received a1, c received b1; the trace ends there
    hot = {g.find(f"{SVG}text").text: g.get("class").split() for g in svg.iter(f"{SVG}g")
           if "offending" in (g.get("class") or "").split() and "arrow" in g.get("class", "")
           and "held" not in g.get("class")}
    assert "message" in hot["b1"]  # c's delivery of b1 ...
    assert "pending" in hot["a1"]  # ... while a1, on its way to c, was not yet delivered
    peers = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "peer"]
    assert peers == ["a", "b", "c", "d"]
    # the offending arrows end on c's line
    c_x = float(next(t.get("x") for t in svg.iter(f"{SVG}text") if t.get("class") == "peer" and t.text == "c"))
    for g in svg.iter(f"{SVG}g"):
        if "offending" in (g.get("class") or "") and "arrow" in g.get("class", ""):
            line = g.find(f"{SVG}line")
            assert abs(float(line.get("x2")) - c_x) < 10
            assert line.get("stroke") == "#d62728"


def test_total_highlights_four_deliveries_and_side_channel_is_drawn_apart(report):
    _view, _out, html = report
    assert sorted(offending_labels(trace_svg(html, "trace-fifo-4--total"))) == ["a1", "a1", "b1", "b1"]
    svg = trace_svg(html, "trace-bus1-mutant-sync-while-queueing--causal")
    assert sorted(offending_labels(svg)) == ["a2", "c1"]
    signals = [g for g in svg.iter(f"{SVG}g") if (g.get("class") or "") == "arrow signal"]
    assert len(signals) == 1
    line = signals[0].find(f"{SVG}line")
    assert line.get("stroke-dasharray") and line.get("stroke") != "#1f4e8c"
    classes = {g.get("class") for g in svg.iter(f"{SVG}g")}
    assert {"mark stage", "mark commit", "mark send"} <= classes
    # a2 was queued on c but never delivered before the trace ended: held to the bottom
    assert "arrow held pending" in classes or "arrow held pending offending" in classes


def test_steps_list_only_what_changed(report):
    view, _out, _html = report
    t = next(t for t in view.traces if t.anchor == "trace-fifo-4--causal")
    last = t.steps[-1]
    assert last.action == "c receives b1"
    paths = {c.path: (c.before, c.after) for c in last.changes}
    assert paths["peers.c.delivered"] == ("[]", "[b1]")
    assert "peers.a.queue" not in paths  # unchanged paths are left out
    assert last.hot
    assert t.explanation.startswith("c delivered b1")
    assert "while a1, which happened before it, had not been delivered" in t.explanation
    assert t.culprits == [f"step {len(t.steps) - 1}: c received b1", "a1 to c: not yet delivered there"]


def test_eventual_delivery_blames_the_missing_deliveries():
    from ordercheck.specs.properties import EVENTUAL_DELIVERY

    r = checked("fifo-4")
    spec = load_spec(r.spec, r.constants)
    steps = r.properties["causal"].trace
    tl = build_timeline(spec, steps[:4])  # a1 sent, b received it; c and d have not
    bl = blame(tl, EVENTUAL_DELIVERY, "violated")
    names = {(tl.message_name(m), tl.peers[q]) for m, q in bl.missing}
    assert names == {("a1", "c"), ("a1", "d")}


def test_trace_pages_itf_and_shiviz_files_written(report):
    view, out, _html = report
    for t in view.traces:
        page = (out / "traces" / f"{t.slug}.html").read_text(encoding="utf-8")
        assert f'id="{t.anchor}"' in page and "<svg" in page
        assert json.loads((out / "traces" / f"{t.slug}.itf.json").read_text())["vars"]
        assert (out / "traces" / f"{t.slug}.shiviz.log").read_text().startswith("(?<event>")
    assert (out / "report.md").exists()
    assert load_items([out / "results.json"])  # the report keeps what it was made from


def test_check_report_junit_and_report_command(tmp_path):
    runner = CliRunner()
    model = str(MODELS / "fifo-4.toml")
    res = runner.invoke(main, ["check", model, "--quiet", "--json", str(tmp_path / "r.json"),
                               "--report", str(tmp_path / "rep"), "--junit", str(tmp_path / "j.xml")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "rep" / "index.html").exists() and (tmp_path / "j.xml").exists()
    res = runner.invoke(main, ["report", str(tmp_path / "r.json"), "-o", str(tmp_path / "again")])
    assert res.exit_code == 0, res.output
    html = (tmp_path / "again" / "index.html").read_text()
    assert "trace-fifo-4--causal" in html and "<svg" in html


def test_report_rejects_bad_input_in_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    res = CliRunner().invoke(main, ["report", str(bad), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "bad.json" in res.output and "not valid JSON" in res.output and "Traceback" not in res.output
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"model": "m.toml"}))
    res = CliRunner().invoke(main, ["report", str(wrong), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "spec: missing" in res.output


def test_a_trace_that_no_longer_replays_is_shown_without_a_diagram():
    r = checked("fifo-4")
    data = r.to_json()
    data["properties"]["causal"]["trace"][2]["index"] = 7  # no such action
    view = build_report(load_items_from(data))
    t = next(t for t in view.traces if t.prop == "causal")
    assert t.diagram is None and "does not replay" in (t.note or "")
    assert len(t.steps) == len(r.properties["causal"].trace)  # the steps are still listed


def load_items_from(data):
    from ordercheck.reports import items_from_json

    return items_from_json(data, "<test>")
