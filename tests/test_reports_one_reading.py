"""A violation reads the same wherever it is drawn: the reports pair signals as the
monitors do (``ordercheck.checker.monitors.log.signal_sources``) and highlight what the deciding
monitor's ``Violation`` names."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from reports_helpers import checked

from ordercheck.checker.monitors.integrity import Integrity
from ordercheck.checker.validate.diagram import timeline_of, window_diagram
from ordercheck.checker.validate.readers import read_log
from ordercheck.reports.markdown import sequence_diagram
from ordercheck.reports.shiviz import vector_clocks
from ordercheck.reports.timeline import Blame, blame, build_timeline, load_spec

# b receives a's signal on line 1; a sends it on line 2 (an integrity violation).
LATE_SIGNAL = '{"peer": "b", "kind": "signal_in", "from": "a"}\n{"peer": "a", "kind": "signal_out", "to": "b"}\n'


def _late_signal(tmp_path: Path):
    path = tmp_path / "late.jsonl"
    path.write_text(LATE_SIGNAL, encoding="utf-8")
    log = read_log(path)
    monitor = Integrity(log)
    violation = monitor.run(0, len(log)) or monitor.end()
    assert violation is not None and "before it was sent" in violation.sentence
    return log, violation


def test_a_signal_received_before_it_is_sent_is_drawn_from_its_signal(tmp_path: Path) -> None:
    """The monitors pair the receipt with the signal after it; a first-in-first-out
    pairing in timeline order finds no signal before the receipt and draws nothing."""
    log, violation = _late_signal(tmp_path)
    timeline = timeline_of(log)
    b, a = timeline.peers.index("b"), timeline.peers.index("a")
    assert timeline.signal_pairs() == {(b, 0): (a, 0)}  # b's receipt is a's signal
    diagram = window_diagram(log, violation, "d")
    signals = [line for line in diagram.lines if line.cls == "signal"]
    assert len(signals) == 1
    out = next(m for m in diagram.marks if m.cls == "signal-out")
    into = next(m for m in diagram.marks if m.cls == "signal-in")
    (x1, y1), (x2, y2) = (signals[0].x1, signals[0].y1), (signals[0].x2, signals[0].y2)
    assert (x1, y1) == (out.x, out.y)  # from the signal ...
    assert abs(x2 - into.x) < 10 and y2 < y1  # ... up to the earlier receipt
    # The Mermaid diagram draws the same arrow.
    view = SimpleNamespace(timeline=timeline, blame=Blame(), steps=[])
    assert [line for line in sequence_diagram(view) if "signal" in line] == [f"    p{a}-->>p{b}: signal (step 1)"]


def test_every_report_draws_the_signals_the_monitors_pair() -> None:
    r = checked("bus1-mutant-sync-while-queueing")
    spec = load_spec(r.spec, r.constants)
    timeline = build_timeline(spec, r.properties["causal"].trace)
    pairs = timeline.signal_pairs()
    assert pairs, "the trace holds a signal"
    where = {(e.peer, e.log_index): e for e in timeline.events if e.log_index is not None}
    for receipt, signal in pairs.items():
        assert where[receipt].kind == "signal_in" and where[signal].kind == "signal_out"
        assert where[receipt].other == signal[0] and where[signal].other == receipt[0]
    # The Mermaid diagram: one arrow per pair, at the receipt's step.
    view = SimpleNamespace(timeline=timeline, blame=Blame(), steps=[])
    arrows = sorted(line for line in sequence_diagram(view) if "signal" in line)
    assert arrows == sorted(f"    p{s[0]}-->>p{r[0]}: signal (step {where[r].step})" for r, s in pairs.items())
    # ShiViz: a receipt's clock covers its signal's.
    clocks = vector_clocks(timeline)
    history_events = [e for e in timeline.events if e.kind in
                      ("send", "deliver", "drop", "signal_out", "signal_in", "fail", "restart")]
    clock_of = {(e.peer, e.log_index): clocks[k][2] for k, e in enumerate(history_events)}
    for receipt, signal in pairs.items():
        assert all(clock_of[receipt].get(h, 0) >= v for h, v in clock_of[signal].items())
        assert clock_of[receipt] != clock_of[signal]


def test_the_diagram_highlights_the_crown_the_sentence_names() -> None:
    """``synchronous``: the receipts of the crown the sentence names, not every delivery
    whose removal would make the run synchronous."""
    r = checked("skeen-mutant-min")
    verdict = r.properties["synchronous"]
    assert verdict.explanation.endswith("a sent a1 before c received b1; b sent b1 before d received a1")
    spec = load_spec(r.spec, r.constants)
    timeline = build_timeline(spec, verdict.trace)
    bl = blame(timeline, spec.property_map()["synchronous"], "violated")
    where = {(e.peer, e.log_index): e for e in timeline.events if e.log_index is not None}
    assert {where[d].text for d in bl.deliveries} == {"c received b1", "d received a1"}
    assert not bl.missing and not bl.awaited and not bl.steps


def test_a_validate_window_draws_the_awaited_predecessor_as_check_does() -> None:
    """``validate``'s window of a causal violation: the overtaken message is drawn as
    awaited by the offending delivery (as in a report of ``check``), not as lost."""
    data = Path(__file__).resolve().parent / "data" / "validate" / "causal-side-channel.jsonl"
    log = read_log(data)
    from ordercheck.checker.monitors import MONITORS

    monitor = MONITORS["causal"](log)
    violation = monitor.run(0, len(log)) or monitor.end()
    assert violation is not None and violation.missing
    diagram = window_diagram(log, violation, "d")
    pending = [line.title for line in diagram.lines if line.cls.startswith("pending")]
    assert pending and all(t.endswith("not yet delivered when the offending delivery was made") for t in pending), pending
    assert all("hot" in line.cls or "offending" in line.cls for line in diagram.lines if line.cls.startswith("pending"))
