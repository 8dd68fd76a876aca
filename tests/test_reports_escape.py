"""A spec whose names, labels and values hold markup renders harmlessly everywhere."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import networkx as nx
import pytest
from reports_helpers import EVIL, Evil, evil_result

from ordercheck.reports.html import write_report
from ordercheck.reports.junit import junit_xml
from ordercheck.reports.markdown import render_markdown
from ordercheck.reports.shiviz import PYTHON_PARSER
from ordercheck.reports.stategraph import mark_trace, state_graph, write_dot, write_graphml
from ordercheck.reports.view import build_report


def test_html_escapes_every_label_name_and_value(tmp_path):
    result = evil_result()
    assert result.properties["no_delivery<script>"].status == "violated"
    view = build_report([result], title="<b>title</b>", specs={"evil": Evil})
    trace = view.traces[0]
    assert trace.diagram is not None  # the hostile spec is drawn, not skipped
    write_report(view, tmp_path, result.to_json())
    pages = [tmp_path / "index.html", *sorted((tmp_path / "traces").glob("*.html"))]
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert "<script" not in html.lower()
        assert "<img" not in html.lower()
        assert "<b>title" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        for svg in re.findall(r"<svg\b.*?</svg>", html, flags=re.S):
            root = ET.fromstring(svg)  # still well-formed
            texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
            assert EVIL in texts  # shown as text, not run as markup
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(2)&gt;" in index  # the action label
    assert "b&amp;&#34;q&#39;" in index  # the second peer's name


def test_markdown_neutralises_markup_and_syntax():
    view = build_report([evil_result()], specs={"evil": Evil})
    text = render_markdown(view)
    assert "<script" not in text.lower() and "<img" not in text.lower()
    assert "&lt;script&gt;" in text
    mermaid = text.split("```mermaid", 1)[1].split("```", 1)[0]
    texts = [line.split(" as ", 1)[1] if " as " in line else line.split(": ", 1)[1] for line in mermaid.splitlines()
             if " as " in line or ": " in line]
    assert len(texts) >= 3 and not any(ch in t for t in texts for ch in "<>\"&")
    assert "#60;script#62;" in mermaid
    for line in text.splitlines():
        if line.startswith("| ") and "no" in line and "delivery" in line:
            assert line.count(" | ") + 2 == line.count("|") - line.count("\\|")  # no stray cell breaks


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pydot's parser on newer pyparsing
def test_junit_itf_shiviz_and_graphs_stay_parseable(tmp_path):
    result = evil_result()
    root = ET.fromstring(junit_xml([result]))
    failure = root.find(".//failure")
    assert failure is not None and EVIL in failure.text  # escaped by XML, read back intact
    view = build_report([result], specs={"evil": Evil})
    write_report(view, tmp_path, None)
    slug = view.traces[0].slug
    itf = json.loads((tmp_path / "traces" / f"{slug}.itf.json").read_text())
    assert itf["states"][1]["<k>&"] == EVIL
    log = (tmp_path / "traces" / f"{slug}.shiviz.log").read_text()
    body = "\n".join(log.split("\n")[2:])
    events = list(PYTHON_PARSER.finditer(body))
    assert len(events) == 2 and all(" " not in m["host"] for m in events)
    spec = Evil()
    g, ids = state_graph(spec, 10)
    mark_trace(g, ids, spec, "no_delivery<script>", result.properties["no_delivery<script>"].trace)
    write_dot(g, tmp_path / "g.dot", EVIL)
    write_graphml(g, tmp_path / "g.graphml")
    back = nx.nx_pydot.read_dot(tmp_path / "g.dot")
    assert back.number_of_nodes() == 3
    labels = {json.loads(d["label"]) if d["label"].startswith('"') else d["label"] for _u, _v, d in back.edges(data=True)}
    assert f"send {EVIL}" in {lbl.replace('\\"', '"') for lbl in labels}
    gm = nx.read_graphml(tmp_path / "g.graphml")
    assert any(EVIL in d["label"] for _u, _v, d in gm.edges(data=True))
