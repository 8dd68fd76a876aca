"""JUnit XML, ITF, ShiViz, Markdown and the state diff."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st
from reports_helpers import MODELS, checked

from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from ordercheck.reports.diff import MISSING, diff, flatten, show
from ordercheck.reports.itf import SAFE_INT, itf_trace, itf_value
from ordercheck.reports.junit import junit_xml
from ordercheck.reports.markdown import md, mermaid, render_markdown
from ordercheck.reports.shiviz import PARSER, PYTHON_PARSER, shiviz_log, vector_clocks
from ordercheck.reports.timeline import build_timeline, load_spec
from ordercheck.reports.view import build_report


def test_junit_counts_cases_and_failures():
    good = checked("fifo-4")
    raw = dict(load_model(MODELS / "fifo-3.toml").raw)
    raw["expect"] = dict(raw["expect"], causal="holds", eventual_delivery="violated")  # two wrong expectations
    bad = check_model(model_from_dict(raw, "models/fifo-3-wrong.toml"), Options(progress=False))
    root = ET.fromstring(junit_xml([good, bad]))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [good.model, "models/fifo-3-wrong.toml"]
    cases = root.findall(".//testcase")
    assert len(cases) == len(good.properties) + len(bad.properties) == int(root.get("tests"))
    assert root.get("failures") == "2" and suites[0].get("failures") == "0" and suites[1].get("failures") == "2"
    failed = {c.get("name"): c.find("failure") for c in suites[1].findall("testcase") if c.find("failure") is not None}
    assert set(failed) == {"causal", "eventual_delivery"}
    assert failed["causal"].get("message").startswith("causal: expected holds, got violated, ")
    assert "c delivered b1" in failed["causal"].text and "trace (6 steps)" in failed["causal"].text
    assert "while a1, which happened before it, had not been delivered" in failed["causal"].text
    assert "no counterexample" in failed["eventual_delivery"].text
    assert {c.get("classname") for c in suites[1]} >= {"fifo-3-wrong"}


def test_junit_unknown_is_an_error():
    model = load_model(MODELS / "fifo-3.toml")
    cut = check_model(model, Options(progress=False, max_states=50))
    root = ET.fromstring(junit_xml([cut]))
    assert int(root.get("errors")) >= 1
    assert root.find(".//error").get("type") == "unknown"


def test_itf_document_structure():
    r = checked("fifo-4")
    steps = r.properties["total"].trace
    doc = itf_trace(steps, source=r.model)
    assert doc["#meta"]["format"] == "ITF" and doc["#meta"]["source"] == r.model
    assert doc["vars"] == ["peers", "messages", "signals_left"]
    assert len(doc["states"]) == len(steps)
    for i, state in enumerate(doc["states"]):
        assert state["#meta"]["index"] == i
        assert set(state) == {"#meta", *doc["vars"]}  # every state defines every variable
    assert doc["states"][1]["#meta"]["action"] == steps[1].action
    # fifo's described "sending" slot is None when idle: the empty option, never null
    assert doc["states"][0]["peers"]["a"]["sending"] == {"tag": "None", "value": {"#tup": []}}
    assert "null" not in json.dumps(doc["states"])


def _from_itf(v):
    if isinstance(v, dict):
        if "#bigint" in v:
            return int(v["#bigint"])
        if "#map" in v:
            return {_from_itf(k): _from_itf(x) for k, x in v["#map"]}
        if v.get("tag") == "None":
            return None
        return {k: _from_itf(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_from_itf(x) for x in v]
    return v


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_itf_values_round_trip_and_bigints_only_where_needed(value):
    out = itf_value(value)
    assert _from_itf(json.loads(json.dumps(out))) == value
    text = json.dumps(out)
    for m in re.finditer(r'\{"#bigint": "(-?\d+)"\}', text):
        assert abs(int(m.group(1))) > SAFE_INT
    for m in re.finditer(r"(?<![\"\w#])-?\d+(?![\"\w])", text):
        assert abs(int(m.group(0))) <= SAFE_INT


def test_shiviz_log_parses_with_the_default_expression_and_clocks_are_consistent():
    r = checked("bus1-mutant-sync-while-queueing")
    spec = load_spec(r.spec, r.constants)
    tl = build_timeline(spec, r.properties["causal"].trace)
    log = shiviz_log(tl)
    first, second, body = log.split("\n", 2)
    assert first == PARSER and second == ""
    events = list(PYTHON_PARSER.finditer(body))
    assert len(events) == len(vector_clocks(tl)) == sum(len(log) for log in tl.history.logs)
    own: dict[str, int] = {}
    clocks = []
    for m in events:
        clock = json.loads(m["clock"])
        host = m["host"]
        assert clock[host] == own.get(host, 0) + 1  # ShiViz: each host's own entry ticks by one
        own[host] = clock[host]
        clocks.append((host, m["event"], clock))
    # d's receipt of c1 knows of b's receipt of a2 (through the signal to c)...
    d_c1 = next(c for h, e, c in clocks if h == "d" and e.startswith("d received c1"))
    b_a2 = next(c for h, e, c in clocks if h == "b" and e.startswith("b received a2"))
    assert all(d_c1.get(k, 0) >= v for k, v in b_a2.items())
    # ...so a2's send happened before c1's receipt, and the trace ends there: causal
    # delivery is broken at that receipt, before d ever receives a2
    assert clocks[-1][0] == "d" and clocks[-1][1].startswith("d received c1")
    assert not any(h == "d" and e.startswith("d received a2") for h, e, c in clocks)


def test_markdown_has_matrix_traces_and_mermaid():
    view = build_report([checked("fifo-4")])
    text = render_markdown(view)
    assert "## Protocol × property" in text
    rows = [line for line in text.splitlines() if line.startswith("| fifo\\-4 |")]
    assert len(rows) == 1 and "[➖ not promised](#trace-fifo-4--causal)" in rows[0]
    assert text.count("```mermaid") == 3
    assert '<a id="trace-fifo-4--total"></a>' in text
    assert "c delivered b1" in text and "while a1, which happened before it, had not been delivered" in text
    block = text.split("```mermaid", 1)[1].split("```", 1)[0]
    assert "rect rgb(255, 201, 201)" in block and "p1->>p2: b1" in block


@given(st.text(max_size=40))
def test_md_escape_leaves_no_markup(text):
    out = md(text)
    assert "<" not in out and ">" not in out and "\n" not in out
    assert re.sub(r"\\(.)", "", out).count("|") == 0  # every pipe is escaped


@given(st.text(max_size=40))
def test_mermaid_escape_uses_only_safe_characters(text):
    assert re.fullmatch(r"[A-Za-z0-9 _.,@/'=+#;-]*", mermaid(text))


described = st.recursive(
    st.integers(-3, 3) | st.text("ab", max_size=2) | st.none(),
    lambda inner: st.dictionaries(st.sampled_from(["p", "q", "r"]), inner, max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(st.sampled_from(["x", "y", "z"]), described), st.dictionaries(st.sampled_from(["x", "y", "z"]), described))
def test_diff_lists_exactly_the_changed_paths(before, after):
    changes = {c.path: c for c in diff(before, after)}
    old, new = flatten(before), flatten(after)
    for path, value in new.items():
        prev = old.get(path, MISSING)
        if prev is not MISSING and prev == value:
            assert path not in changes
        elif prev is not MISSING:
            assert changes[path].before == show(prev) and changes[path].after == show(value)
    for path in changes:
        assert path in new or path in old


def test_a_lasso_is_marked_in_itf_html_and_markdown(tmp_path):
    from ordercheck.reports.html import write_report

    r = checked("retransmit-weak")
    p = r.properties["eventual_delivery"]
    assert p.loop_start is not None
    view = build_report([r])
    (t,) = view.traces
    assert t.culprits == ["a1 to b: never delivered"]
    assert t.diagram is not None and t.diagram.loop is not None
    write_report(view, tmp_path)
    doc = json.loads((tmp_path / "traces" / f"{t.slug}.itf.json").read_text())
    assert doc["loop"] == p.loop_start
    assert doc["states"][-1]["in_transit"] == doc["states"][p.loop_start]["in_transit"]
    html = (tmp_path / "index.html").read_text()
    assert '<g class="loop">' in html and "repeat for ever" in html
    assert 'class="arrow pending offending"' in html  # the message never delivered, highlighted
    assert "repeat for ever" in (tmp_path / "report.md").read_text()
    # a spec that does not place its steps still gets a mark per step on the acting peer
    assert sum(1 for m in t.diagram.marks if m.cls == "step") == len(t.steps) - 2
