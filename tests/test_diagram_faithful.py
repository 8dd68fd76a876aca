"""Diagrams draw what the run did (issue 31): no block a configuration leaves out,
protocol messages as arrows of their own, a message's arrival apart from its delivery,
bags of records changed record by record in step lists, Mermaid keeping every message,
and no arrow label over an arrow, as laid out and as Chromium renders it."""

from __future__ import annotations

import html as htmllib
import json
import re
from functools import cache

import pytest
from reports_helpers import checked

from ordercheck.checker import Property, Rendering, Spec
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.result import Result
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.reports.browser import dump_dom, find_chromium
from ordercheck.reports.diagram import CHAR, Diagram, Labels, crosses, layout
from ordercheck.reports.diff import diff, step_lines
from ordercheck.reports.html import write_report
from ordercheck.reports.markdown import sequence_diagram
from ordercheck.reports.timeline import blame, build_timeline
from ordercheck.reports.view import build_report
from ordercheck.specs.history import History


@cache
def view_of(name: str):
    return build_report([checked(name)])


def trace(name: str, prop: str):
    return next(t for t in view_of(name).traces if t.prop == prop)


def rows(d: Diagram, step: int) -> list:
    """The marks drawn in the row of ``step``."""
    y = d.rows[step][1]
    return [m for m in d.marks if y - 1 <= m.y < y + 20]


# -- draw only what the step changed ----------------------------------------------------


def test_no_block_is_drawn_where_the_mutant_blocks_nothing():
    t = trace("bus1-mutant-no-block", "causal")
    assert t.steps[2].action == "block a's queue for c1" and not t.steps[2].changes
    for k in (2, 3):  # "block ..." steps that put nothing on a queue
        assert t.steps[k].action.startswith("block ")
        assert not [m for m in rows(t.diagram, k) if m.shape == "box" or m.cls == "stage"], k
    # they are steps of the sender's transaction, drawn on c's line
    c_x = dict(t.diagram.peers)["c"]
    assert all(m.x == c_x and m.shape == "tick" for m in rows(t.diagram, 2) + rows(t.diagram, 3))
    # the full algorithm still draws its blocks
    full = trace("bus1-mutant-sync-while-queueing", "causal")
    assert any(m.cls == "stage" and m.shape == "box" for m in full.diagram.marks)


def test_a_stage_that_changes_nothing_described_is_a_plain_step(monkeypatch):
    """Whatever a spec's action_site says, a step that leaves the described state as it
    was draws no block or commit."""
    from ordercheck.specs.bus1 import Bus1

    def old_site(self, action):  # the site before issue 31: a block is always staged
        if action[0] == "block":
            return ("stage", action[2], action[3])
        return None

    monkeypatch.setattr(Bus1, "action_site", old_site)
    result = checked("bus1-mutant-no-block")
    model = load_model(result.model)
    steps = result.properties["causal"].trace
    timeline = build_timeline(model.spec, steps)
    at2 = [e for e in timeline.events if e.step == 2]
    assert [e.kind for e in at2] == ["step"] and "no change in the described state" in at2[0].text
    assert [e.kind for e in timeline.events if e.step == 3] == ["stage"]  # it changed c's transaction


# -- control messages and arrivals ---------------------------------------------------------


def test_skeen_proposals_and_finals_are_arrows_of_their_own():
    d = trace("skeen-mutant-no-wait", "total").diagram
    internal = sorted(line.label for line in d.lines if line.cls.split()[0] == "internal")
    # a1 and b1 to c and d: two proposals back each, a final out to each destination
    assert internal == sorted(["propose(a1, 2)"] * 2 + ["final(a1, 2)"] * 2 + ["propose(b1, 4)", "propose(b1, 3)"]
                              + ["final(b1, 4)"] * 2)
    assert not [line for line in d.lines if "internal" in line.cls and "pending" in line.cls]
    a_x, c_x = dict(d.peers)["a"], dict(d.peers)["c"]
    final = next(line for line in d.lines if line.label == "final(a1, 2)" and abs(line.x2 - c_x) < 6)
    assert final.x1 == a_x and final.y1 == d.rows[5][1] and final.y2 > final.y1  # sent at step 5, taken at 6


def test_skeen_arrival_is_drawn_apart_from_the_delivery():
    t = trace("skeen-mutant-no-wait", "total")
    d = t.diagram
    d_x = dict(d.peers)["d"]
    assert t.steps[3].action == "d queues a1 as undeliverable and proposes 2"
    assert t.steps[18].action == "d receives a1"
    arrows = [line for line in d.lines if line.cls.split()[0] == "message" and line.label == "a1" and abs(line.x2 - d_x) < 8]
    assert len(arrows) == 1
    assert abs(arrows[0].y2 - d.rows[3][1]) < 8, "a1's arrow ends where it arrived at d (step 3), not at step 18"
    assert "offending" in arrows[0].cls  # the delivery it leads to is to blame
    held = [line for line in d.lines if line.cls.split()[0] == "held" and line.x1 == d_x and abs(line.y1 - d.rows[3][1]) < 8]
    assert held and abs(held[0].y2 - d.rows[18][1]) < 10 and "offending" in held[0].cls
    assert any(m.cls == "arrive" and m.x == d_x for m in rows(d, 3))


def test_lamport_acknowledgements_are_arrows():
    t = view_of("lamport-mutant-no-wait").traces[0]
    acks = [line for line in t.diagram.lines if line.cls.split()[0] == "internal" and line.label.startswith("ack(")]
    assert len(acks) >= 2 and all(line.y2 > line.y1 for line in acks)
    assert any(m.cls == "arrive" for m in t.diagram.marks)  # a message queued is drawn where it arrived


# -- element-level diffs --------------------------------------------------------------------


def test_a_bag_of_records_changes_record_by_record():
    one = {"from": "a", "to": "b", "message": "a1"}
    two = {"from": "a", "to": "c", "message": "a1"}
    three = {"from": "b", "to": "c", "message": "b1"}
    (c,) = diff({"in_transit": [one, two], "clock": [1, 0]}, {"in_transit": [two, three], "clock": [1, 0]})
    assert c.path == "in_transit" and c.gained == ("{from: b, to: c, message: b1}",)
    assert c.lost == ("{from: a, to: b, message: a1}",)
    assert c.brief() == "+{from: b, to: c, message: b1}, −{from: a, to: b, message: a1}"
    (dup,) = diff({"in_transit": [one, one]}, {"in_transit": [one]})  # a multiset: one copy went
    assert dup.lost == ("{from: a, to: b, message: a1}",) and not dup.gained
    (vec,) = diff({"v": [0, 0]}, {"v": [1, 0]})  # a list of scalars stays whole: its order matters
    assert not vec.items and (vec.before, vec.after) == ("[0, 0]", "[1, 0]")


def test_bss_steps_show_what_changed_in_transit_not_the_whole_bag(tmp_path):
    result = checked("bss-mutant-no-causal-condition")
    steps = result.properties["causal"].trace
    lines = step_lines(steps, most=10, width=200)
    text = "\n".join(lines)
    assert "in_transit: −{from: a, to: b, message: a1, data: [1, 0, 0]}" in text  # b takes a1: one record gone
    assert "in_transit: [" not in text, "no step rewrites the whole bag"
    write_report(view_of("bss-mutant-no-causal-condition"), tmp_path)
    page = (tmp_path / "traces" / "bss-mutant-no-causal-condition--causal.html").read_text()
    assert '<span class="from">−{from: a, to: b, message: a1, data: [1, 0, 0]}</span>' in page
    md = (tmp_path / "report.md").read_text()
    assert "in\\_transit: ~~\\{from: a, to: b, message: a1, data: \\[1, 0, 0\\]\\}~~" in md


# -- Mermaid ------------------------------------------------------------------------------


def test_mermaid_keeps_the_overtaking_message_as_a_message():
    lines = sequence_diagram(trace("bus1-mutant-no-block", "ready_is_final"))
    assert "    p0->>p1: a1 queued (step 11)" in lines  # the message that overtakes, not only a note
    assert any(line.startswith("    Note over") and "(breaks)" in line for line in lines)
    causal = sequence_diagram(trace("bus1-mutant-no-block", "causal"))
    assert any("p2--xp1: c1" in line for line in causal), "the message overtaken is drawn, pending"


def test_mermaid_witness_without_deliveries_is_not_empty():
    t = trace("bss-2", "fifo_race")  # reached when a2 is sent, before anything is delivered
    assert t.witness and not [e for e in t.timeline.events if e.kind == "deliver"]
    lines = sequence_diagram(t)
    assert sum("--x" in line for line in lines) >= 2  # a1 and a2, still on their way
    (t,) = build_report([quiet_result()], specs={"quiet": Quiet}).traces  # no message at all: the steps
    assert t.witness and t.timeline is not None
    lines = sequence_diagram(t)
    assert lines[3:] == ["    Note over p0: step 1: a wakes", "    Note over p0,p1: step 2: b wakes (reached)"]


class Quiet(Spec, Rendering):
    """Two peers that wake one after the other and send nothing: a witness with no
    message to draw."""

    name = "quiet"
    summary = "no messages"
    constants = ()

    def init_states(self):
        return [0]

    def next_states(self, state):
        return [(("wake", state), state + 1)] if state < 2 else []

    def history(self, state):
        return History.from_raw(("a", "b"), [[], []], [(), ()], 1)

    def format_action(self, action):
        return f"{'ab'[action[1]]} wakes"

    def action_site(self, action):
        return ("step", action[1], None)

    def properties(self):
        return [Property.sometimes("both_awake", lambda s: "both awake" if s == 2 else None)]


def quiet_result() -> Result:
    spec = Quiet()
    model = Model(path="models/quiet.toml", spec_name="quiet", spec=spec, description="", constants={},
                  properties=list(spec.properties()), expect={})
    return check_model(model, Options(progress=False))


# -- no label over an arrow -----------------------------------------------------------------


def label_box(line) -> tuple[float, float, float, float]:
    w = CHAR * len(line.label) + 2
    if line.anchor == "start":
        return (line.lx, line.ly - Labels.HEIGHT + 2, line.lx + w, line.ly + 2)
    return (line.lx - w, line.ly - Labels.HEIGHT + 2, line.lx, line.ly + 2)


BUSY = ("skeen-mutant-no-wait", "fifo-4", "bss-3", "lamport-mutant-no-wait", "bus1-mutant-sync-while-queueing")


def test_no_label_crosses_an_arrow_in_the_layout():
    seen = 0
    for name in BUSY:
        result: Result = checked(name)
        model = load_model(result.model)
        for prop, p in result.properties.items():
            if not p.trace:
                continue
            timeline = build_timeline(model.spec, p.trace)
            d = layout(timeline, blame(timeline, model.spec.property_map()[prop], p.status), "d", p.loop_start)
            for line in d.lines:
                if line.label:
                    seen += 1
                    box = label_box(line)
                    hit = [o.title for o in d.lines if crosses((o.x1, o.y1, o.x2, o.y2), box, pad=0)]
                    assert not hit, (name, prop, line.label, hit)
    assert seen > 60


def test_crosses_reads_segments_and_boxes():
    box = (10, 10, 20, 20)
    assert crosses((0, 15, 30, 15), box) and crosses((15, 0, 15, 30), box) and crosses((12, 12, 13, 13), box)
    assert not crosses((0, 0, 30, 5), box) and not crosses((25, 0, 25, 30), box) and not crosses((0, 30, 30, 31), box)
    assert crosses((0, 0, 30, 30), box) and not crosses((0, 12, 8, 30), box)


PROBE = """<script>
const svg = document.querySelector('svg.spacetime');
const labels = [...svg.querySelectorAll('g.arrow text.msg')].map(t => { const r = t.getBoundingClientRect();
  return {x: r.x, y: r.y, w: r.width, h: r.height, text: t.textContent}; });
const arrows = [...svg.querySelectorAll('g.arrow line')].map(l => { const m = l.getScreenCTM();
  const p = (x, y) => { const q = svg.createSVGPoint(); q.x = x; q.y = y; return q.matrixTransform(m); };
  const a = p(l.x1.baseVal.value, l.y1.baseVal.value), b = p(l.x2.baseVal.value, l.y2.baseVal.value);
  return {x1: a.x, y1: a.y, x2: b.x, y2: b.y, title: l.parentNode.querySelector('title').textContent}; });
const pre = document.createElement('pre'); pre.id = 'probe';
pre.textContent = JSON.stringify({labels, arrows});
document.body.appendChild(pre);
</script>"""


@pytest.fixture(scope="module")
def busy_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("faithful")
    write_report(build_report([checked("skeen-mutant-no-wait"), checked("fifo-4")]), out)
    return out


@pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed")
@pytest.mark.parametrize("slug", ["skeen-mutant-no-wait--total", "fifo-4--causal"])
def test_in_the_browser_no_label_lies_over_an_arrow(busy_report, slug):
    page = busy_report / "traces" / f"{slug}.html"
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text(encoding="utf-8"))
    probe = page.with_name(f"probe-{slug}.html")
    probe.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = dump_dom(probe, (1400, 1000))
    data = json.loads(htmllib.unescape(re.search(r'<pre id="probe">(.*?)</pre>', dom, flags=re.S).group(1)))
    assert len(data["labels"]) >= 4 and len(data["arrows"]) >= len(data["labels"])
    for label in data["labels"]:
        box = (label["x"], label["y"], label["x"] + label["w"], label["y"] + label["h"])
        over = [a["title"] for a in data["arrows"] if crosses((a["x1"], a["y1"], a["x2"], a["y2"]), box, pad=0)]
        assert not over, (label["text"], over)


def test_a_control_message_the_channel_loses_ends_in_a_cross():
    t = trace("synchronous-tlc-duplicating", "deadlock_free")
    assert t.steps[3].action == "permission from b to a is lost"
    (lost,) = [line for line in t.diagram.lines if line.cls == "internal dropped"]
    assert lost.label == "permission" and abs(lost.y2 - t.diagram.rows[3][1]) < 8 and lost.x2 < lost.x1  # b to a
    assert not [line for line in t.diagram.lines if "internal" in line.cls and "pending" in line.cls]
    assert any(m.cls == "internal-lost" and m.shape == "cross" for m in t.diagram.marks)
    assert "    p1--xp0: permission lost (step 3)" in sequence_diagram(t)
