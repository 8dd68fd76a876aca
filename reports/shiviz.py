"""A trace as a ShiViz log: every history event with its vector clock.

ShiViz (a space-time diagram viewer for distributed-system logs) reads a file whose
first line is the regular expression that parses the log, whose second line is the
delimiter between executions (empty for one), and then the log. This module writes the
viewer's default expression, :data:`PARSER`, under which each event takes two lines::

    b received a2 (step 9)
    b {"a": 2, "b": 2}

The vector clocks are computed from the history: each event ticks its own peer's
entry; a delivery (or drop) also takes the maximum with the clock of the message's
send, and a signal's receipt with the clock of its signal (the monitors' pairing:
:meth:`ordercheck.reports.timeline.Timeline.signal_pairs`). So the first event
of a peer has its own entry 1, and each later one adds exactly 1, as ShiViz requires.
"""

from __future__ import annotations

import json
import re

from ordercheck.reports.timeline import Timeline

PARSER = r"(?<event>.*)\n(?<host>\S*) (?<clock>{.*})"
"""ShiViz's default parser (JavaScript named groups)."""

PYTHON_PARSER = re.compile(r"(?P<event>.*)\n(?P<host>\S*) (?P<clock>{.*})")
"""The same expression in Python's syntax, for reading a log back."""

HISTORY_KINDS = {"send", "deliver", "drop", "signal_out", "signal_in", "fail", "restart"}


def host_name(name: str) -> str:
    """A peer name as a ShiViz host: no whitespace, never empty."""
    cleaned = re.sub(r"\s+", "_", name)
    return cleaned or "_"


def vector_clocks(timeline: Timeline) -> list[tuple[int, str, dict[str, int]]]:
    """``(peer, text, clock)`` for each history event, in timeline order."""
    hosts = [host_name(p) for p in timeline.peers]
    clocks: list[dict[str, int]] = [{} for _ in hosts]
    at_send: dict[int, dict[str, int]] = {}
    at_signal: dict[tuple[int, int], dict[str, int]] = {}  # (peer, log_index) of a signal: its clock
    source = timeline.signal_pairs()  # each receipt's signal, as the monitors pair them
    out = []
    for e in timeline.events:
        if e.kind not in HISTORY_KINDS:
            continue
        vc = clocks[e.peer]
        if e.kind in ("deliver", "drop") and e.message in at_send:
            _merge(vc, at_send[e.message])
        elif e.kind == "signal_in" and source.get((e.peer, e.log_index)) in at_signal:  # type: ignore[arg-type]
            _merge(vc, at_signal[source[(e.peer, e.log_index)]])  # type: ignore[index]
        me = hosts[e.peer]
        vc[me] = vc.get(me, 0) + 1
        if e.kind == "send" and e.message is not None:
            at_send[e.message] = dict(vc)
        elif e.kind == "signal_out" and e.log_index is not None:
            at_signal[(e.peer, e.log_index)] = dict(vc)
        out.append((e.peer, f"{e.text} (step {e.step})", dict(vc)))
    return out


def _merge(into: dict[str, int], other: dict[str, int]) -> None:
    for host, value in other.items():
        if value > into.get(host, 0):
            into[host] = value


def shiviz_log(timeline: Timeline) -> str:
    """The whole ShiViz file: parser line, empty delimiter line, then the events."""
    hosts = [host_name(p) for p in timeline.peers]
    lines = [PARSER, ""]
    for peer, text, clock in vector_clocks(timeline):
        lines.append(" ".join(text.split()))  # one line, whatever the labels hold
        lines.append(f"{hosts[peer]} {json.dumps(clock, sort_keys=True)}")
    return "\n".join(lines) + "\n"
