"""A violation's window drawn as the reports' space-time diagram.

The window (a few events of the log) becomes a log of its own
(:func:`~ordercheck.checker.validate.log.sub_log`), then a :class:`~ordercheck.specs.history.History` and a
:class:`ordercheck.reports.timeline.Timeline` with one row per event; :func:`ordercheck.reports.diagram.layout`
places it and the reports' ``diagram.svg.j2`` template draws it, exactly as for a
counterexample of ``ordercheck check``. Rows are numbered with the log's line numbers.
"""

from __future__ import annotations

from ordercheck.checker.monitors import MONITORS
from ordercheck.checker.monitors.violation import Violation
from ordercheck.checker.validate.log import (
    DELIVER,
    DROP,
    NAME_OF_KIND,
    SEND,
    SIGNAL_IN,
    SIGNAL_OUT,
    Log,
    sub_log,
    to_history,
)
from ordercheck.reports.diagram import Diagram, layout
from ordercheck.reports.html import environment
from ordercheck.reports.timeline import Blame, Timeline, TimelineEvent


def timeline_of(log: Log) -> Timeline:
    """The log as a timeline: event ``k`` at step ``k + 1`` (step 0 is the start)."""
    history = to_history(log)
    events: list[TimelineEvent] = []
    index = [0] * len(log.peers)  # position in each peer's history log
    for k in range(len(log)):
        p, kind, a = log.peer[k], log.kind[k], log.arg[k]
        name = NAME_OF_KIND[kind]
        text = log.describe(k)
        if kind == SEND or kind == DELIVER or kind == DROP:
            events.append(TimelineEvent(k + 1, p, name, a, None, index[p], text))
        elif kind == SIGNAL_OUT or kind == SIGNAL_IN:
            events.append(TimelineEvent(k + 1, p, name, None, a, index[p], text))
        elif name == "step":
            events.append(TimelineEvent(k + 1, p, "step", None, None, None, text))
            continue
        else:
            events.append(TimelineEvent(k + 1, p, name, None, None, index[p], text))
        index[p] += 1
    messages = dict(history.messages)
    return Timeline(history.peers, messages, events, history, len(log) + 1)


def window_diagram(log: Log, violation: Violation, uid: str) -> Diagram:
    """The diagram of ``violation``'s window; ``uid`` keeps marker ids unique on a page."""
    window, kept = sub_log(log, violation.events)
    position = {i: j for j, i in enumerate(kept)}
    peer_at = {name: j for j, name in enumerate(window.peers)}
    msg_at = {name: j for j, name in enumerate(window.msg_name)}
    missing = set()
    for m, p in violation.missing:
        mw, pw = msg_at.get(log.msg_name[m]), peer_at.get(log.peers[p])
        if mw is not None and pw is not None:
            missing.add((mw, pw))
    # Draw only the destinations the window shows: those that consume the message in
    # it, and those it is missing at; the rest would dangle as "never delivered".
    shown = set(missing)
    for j in range(len(window)):
        if window.kind[j] in (DELIVER, DROP):
            shown.add((window.arg[j], window.peer[j]))
    window.msg_dests = [tuple(d for d in ds if (m, d) in shown) for m, ds in enumerate(window.msg_dests)]
    timeline = timeline_of(window)
    blame = Blame()
    by_event = {e.step - 1: e for e in timeline.events}
    for i in violation.offending:
        e = by_event.get(position.get(i, -1))
        if e is not None and e.log_index is not None:
            blame.deliveries.add((e.peer, e.log_index))
    # As a counterexample of check reads it (ordercheck.reports.timeline.violation_blame): missing pairs
    # are never delivered for an eventually-property, else awaited by the offending delivery.
    if getattr(MONITORS.get(violation.prop), "kind", "always") == "eventually":
        blame.missing = missing
    else:
        blame.awaited = missing
    diagram = layout(timeline, blame, uid)
    at = position.get(violation.at)
    diagram.rows = [
        (window.line[step - 1] if step else 0, y, at is not None and step == at + 1)
        for step, y, _hot in diagram.rows
    ]
    return diagram


def window_svg(log: Log, violation: Violation, uid: str) -> str:
    """The SVG of :func:`window_diagram` (rows labelled by line, 0 for the start)."""
    return environment().get_template("diagram.svg.j2").render(diagram=window_diagram(log, violation, uid))
