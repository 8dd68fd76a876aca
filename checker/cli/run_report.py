"""``ordercheck run --report DIR``: one execution of a run, drawn as the reports draw a
counterexample, with what each node read and wrote beside its events.

``DIR`` gets:

- ``index.html``: the run (command, scenario, schedules), the execution's verdicts, each
  violation's sentence, window and window diagram as ``validate``'s report shows them,
  then the whole execution as a space-time diagram (the reports' ``diagram.svg.j2``)
  with one row per schedule step, each step's lines beside it: the action written to
  the node's stdin (``in``), the lines it wrote on stdout (``out``) and stderr
  (``err``); then the same lines, whole, step by step;
- ``report.md``: the same as Markdown (no drawing);
- ``run.jsonl``: the execution's log, for ``ordercheck validate``;
- ``run.shiviz.log``: the same events with vector clocks, which ShiViz opens (and
  ``validate`` reads);
- ``replay.json``: the replay file of a failing execution (for ``--replay``);
- ``verdicts.json``: the execution's verdicts, as ``validate --json`` writes a log's
  record (a list of one), with its conformance to ``--model``'s spec when one is given.

The execution shown is the failing one, else the last one run. The page is
self-contained (inline SVG, no script) and every text is escaped by the templates.
"""

from __future__ import annotations

import json
import math
import re
from functools import partial
from pathlib import Path
from typing import Any

from ordercheck.checker.harness.network import Execution
from ordercheck.checker.monitors import MONITORS, check
from ordercheck.checker.monitors.violation import Violation
from ordercheck.checker.validate.diagram import timeline_of
from ordercheck.checker.validate.log import Log
from ordercheck.checker.validate.report import markdown as validate_markdown
from ordercheck.checker.validate.verdicts import LogVerdict
from ordercheck.reports.diagram import ROW, TOP, Diagram, Note, layout
from ordercheck.reports.html import environment
from ordercheck.reports.markdown import md
from ordercheck.reports.shiviz import shiviz_log
from ordercheck.reports.timeline import Blame, Timeline, TimelineEvent

NOTE_CHARS = 84
"""The longest note drawn beside the diagram (the whole line is its tooltip and is in
the step table)."""

NOTE_PX = 6.7
"""Pixels per character of a note (11px monospace)."""

LINE_PX = 14
"""Pixels between two notes of one step."""


def note_text(node: str, stream: str, line: str) -> str:
    """A transcript line as a note: ``n3 in  n2→n3 {body}`` for a message, the line
    itself for anything else, cut to :data:`NOTE_CHARS`."""
    text = line
    try:
        msg = json.loads(line)
    except ValueError:
        msg = None
    if isinstance(msg, dict) and isinstance(msg.get("body"), dict):
        text = f"{msg.get('src')}→{msg.get('dest')} {json.dumps(msg['body'], separators=(',', ':'))}"
    text = f"{node} {stream:<3} {text}"
    return text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS - 1] + "…"


def steps_of(ex: Execution) -> list[list[tuple[str, str, str]]]:
    """The transcript by step: entry ``s`` lists step ``s``'s ``(node, stream, line)``
    (step 0 is the handshake)."""
    out: list[list[tuple[str, str, str]]] = [[] for _ in range(len(ex.picks) + 1)]
    for step, node, stream, line in ex.transcript:
        out[min(step, len(out) - 1)].append((node, stream, line))
    return out


def first_violation(log: Log, verdict: LogVerdict) -> Violation | None:
    """The first violated property's violation on ``log`` (the one the diagram blames)."""
    for name, p in verdict.properties.items():
        if p["status"] == "violated":
            return check(log, name)
    return None


def schedule_diagram(log: Log, ex: Execution, violation: Violation | None, uid: str = "run") -> Diagram:
    """The whole execution as a space-time diagram: one row per step (more where its
    lines need them), each log event at its step's row, the step's transcript lines as
    notes beside the rows; the violation's deliveries (and what they should have waited
    for, or what is never delivered) highlighted."""
    steps = steps_of(ex)
    first: list[int] = []  # each step's first row
    row = 0
    for lines in steps:
        first.append(row)
        row += max(1, math.ceil(len(lines) * LINE_PX / ROW))
    base = timeline_of(log)
    events = [TimelineEvent(first[min(ex.event_steps[e.step - 1], len(steps) - 1)], e.peer, e.kind, e.message,
                            e.other, e.log_index, e.text) for e in base.events]
    timeline = Timeline(base.peers, base.messages, events, base.history, row + 1)
    blame = Blame()
    hot_step = None
    if violation is not None:
        by_index = {e.step - 1: e for e in base.events}
        for i in violation.offending:
            e = by_index.get(i)
            if e is not None and e.log_index is not None:
                blame.deliveries.add((e.peer, e.log_index))
        if getattr(MONITORS.get(violation.prop), "kind", "always") == "eventually":
            blame.missing = set(violation.missing)
        else:
            blame.awaited = set(violation.missing)
        if 0 <= violation.at < len(ex.event_steps):
            hot_step = ex.event_steps[violation.at]
    diagram = layout(timeline, blame, uid)
    diagram.rows = [(s, TOP + ROW * first[s], s == hot_step) for s in range(len(steps))]
    step_of_row = {row: s for s, row in enumerate(first)}  # the tooltips name steps, not rows
    renumber = partial(re.sub, r"\bstep (\d+)", lambda m: f"step {step_of_row.get(int(m.group(1)), m.group(1))}")
    for mark in diagram.marks:
        mark.title = renumber(mark.title)
    for line in diagram.lines:
        line.title = renumber(line.title)
    x = diagram.width + 16
    width = 0.0
    for s, lines in enumerate(steps):
        for j, (node, stream, line) in enumerate(lines):
            text = note_text(node, stream, line)
            diagram.notes.append(Note(x, TOP + ROW * first[s] + 4 + LINE_PX * j, text, stream,
                                      f"step {s}, {node} {stream}: {line}"))
            width = max(width, NOTE_PX * len(text))
    diagram.width = x + width + 8
    return diagram


def _action(ex: Execution, s: int) -> str:
    return "the init and topology handshake" if s == 0 else ex.keys[s - 1]


def page(verdict: LogVerdict, log: Log, ex: Execution, about: dict[str, Any], files: list[str]) -> str:
    """The report's HTML page."""
    violation = first_violation(log, verdict)
    svg = environment().get_template("diagram.svg.j2").render(diagram=schedule_diagram(log, ex, violation))
    steps = [(s, _action(ex, s), lines) for s, lines in enumerate(steps_of(ex))]
    return environment().get_template("run.html.j2").render(
        v=verdict, about=about, schedule_svg=svg, steps=steps, files=files,
        violations=[(name, p) for name, p in verdict.properties.items() if p["status"] == "violated"],
    )


def markdown(verdict: LogVerdict, ex: Execution, about: dict[str, Any]) -> str:
    """The report as Markdown: ``validate``'s report of the execution, then its steps
    with every line the nodes read and wrote."""
    head = validate_markdown([verdict], "local").split("\n", 1)[1]
    lines = ["# ordercheck run", "", *(f"- {md(k)}: {md(str(v))}" for k, v in about.items()), "", "## Verdicts", head,
             "## Steps", ""]
    for s, entries in enumerate(steps_of(ex)):
        lines += [f"### step {s}", "", f"    action: {_action(ex, s)}"]
        lines += [f"    {node} {stream:<3} {line}" for node, stream, line in entries]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def report_files(out_dir: str | Path, verdict: LogVerdict, log: Log, ex: Execution, about: dict[str, Any],
                 replay: dict[str, Any] | None) -> dict[Path, str]:
    """The report's files, path -> text (to be staged with the command's other outputs)."""
    target = Path(out_dir)
    files = {target / "run.jsonl": ex.log_text(), target / "run.shiviz.log": shiviz_log(timeline_of(log))}
    if replay is not None:
        files[target / "replay.json"] = json.dumps(replay, indent=1) + "\n"
    files[target / "verdicts.json"] = json.dumps([verdict.to_json()], indent=1) + "\n"
    names = ["index.html", "report.md", *(p.name for p in files)]
    files[target / "report.md"] = markdown(verdict, ex, about)
    files[target / "index.html"] = page(verdict, log, ex, about, names[2:])
    return {p: files[p] for p in sorted(files, key=lambda p: names.index(p.name))}
