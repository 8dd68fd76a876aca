"""The geometry of a space-time (Lamport) diagram; ``templates/diagram.svg.j2`` draws it.

Time runs down the page, one row per trace step (numbered as in the step list beside
the diagram), one vertical line per peer. Sends and deliveries are dots joined by an
arrow from the send to each delivery; side-channel signals are dashed arrows in
another colour; staging (blocks) and commits are squares on the queue's line; other
local steps are small ticks. Offending deliveries and their arrows are drawn in the
highlight colour, messages never delivered end in a dangling dashed arrow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reports.timeline import Blame, Timeline

ROW = 26  # pixels per step
COL = 120  # pixels between peer lines
LEFT = 56  # room for step numbers
TOP = 46  # room for peer names
BOTTOM = 40  # room for dangling arrows

HIGHLIGHT = "#d62728"
WITNESS = "#2b8a3e"
ARROW = "#1f4e8c"
SIGNAL = "#e8590c"
SITE = "#7048e8"
PENDING = "#868e96"


@dataclass
class Line:
    """An arrow or a line: ``cls`` names its role (``message``, ``signal``, ``pending``,
    plus ``offending`` when highlighted) for styling and tests."""

    x1: float
    y1: float
    x2: float
    y2: float
    cls: str
    title: str
    label: str = ""
    lx: float = 0
    ly: float = 0


@dataclass
class Mark:
    """An event mark: ``shape`` is ``dot``, ``ring``, ``square``, ``box`` or ``tick``."""

    x: float
    y: float
    shape: str
    cls: str
    title: str
    label: str = ""


@dataclass
class Diagram:
    uid: str
    width: float
    height: float
    peers: list[tuple[str, float]]  # name, x
    rows: list[tuple[int, float, bool]]  # step, y, highlighted
    lines: list[Line] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    top: float = TOP
    bottom: float = 0
    colours: dict[str, str] = field(default_factory=dict)
    loop: tuple[float, float] | None = None  # rows a lasso repeats for ever (y from, y to)


def layout(timeline: Timeline, blame: Blame, uid: str, loop_start: int | None = None) -> Diagram:
    """Place every event of ``timeline``; ``uid`` keeps marker ids unique on a page.
    ``loop_start`` marks a lasso: the steps after it repeat for ever."""
    n = len(timeline.peers)
    xs = [LEFT + COL / 2 + COL * p for p in range(n)]
    last_y = TOP + ROW * (timeline.steps - 1)
    bottom = last_y + BOTTOM
    diagram = Diagram(
        uid=uid,
        width=LEFT + COL * n,
        height=bottom + 16,
        peers=[(name, xs[p]) for p, name in enumerate(timeline.peers)],
        rows=[(k, TOP + ROW * k, k in blame.steps) for k in range(timeline.steps)],
        bottom=bottom,
        colours={
            "highlight": WITNESS if blame.witness else HIGHLIGHT,
            "arrow": ARROW,
            "signal": SIGNAL,
            "site": SITE,
            "pending": PENDING,
        },
    )
    if loop_start is not None and loop_start < timeline.steps - 1:
        diagram.width += 40
        diagram.loop = (TOP + ROW * (loop_start + 1), last_y)
    # Several events of one peer in one step sit a few pixels apart.
    slot: dict[tuple[int, int], int] = {}

    def pos(step: int, peer: int) -> tuple[float, float]:
        k = slot.get((step, peer), 0)
        slot[(step, peer)] = k + 1
        return xs[peer], TOP + ROW * step + 7 * k

    sends: dict[int, tuple[float, float]] = {}
    signal_out: dict[tuple[int, int], list[tuple[float, float]]] = {}
    consumed: set[tuple[int, int]] = set()
    hot = "offending" if not blame.witness else "witness"
    for e in timeline.events:
        x, y = pos(e.step, e.peer)
        name = timeline.message_name(e.message)
        if e.kind == "send":
            sends[e.message] = (x, y)  # type: ignore[index]
            diagram.marks.append(Mark(x, y, "dot", "send", f"step {e.step}: {e.text}", name))
        elif e.kind in ("deliver", "drop"):
            consumed.add((e.message, e.peer))  # type: ignore[arg-type]
            bad = (e.peer, e.log_index) in blame.deliveries
            cls = e.kind + (f" {hot}" if bad else "")
            diagram.marks.append(Mark(x, y, "ring" if e.kind == "deliver" else "cross", cls, f"step {e.step}: {e.text}"))
            if e.message in sends:
                sx, sy = sends[e.message]
                lcls = "message" + (f" {hot}" if bad else "") + (" dropped" if e.kind == "drop" else "")
                lx, ly = _label_at(sx, sy, x, y)
                ex, ey = _shorten(sx, sy, x, y, 8 if bad else 6)
                diagram.lines.append(Line(sx, sy, ex, ey, lcls, f"{name}: {e.text} (step {e.step})", name, lx, ly))
        elif e.kind == "signal_out":
            signal_out.setdefault((e.peer, e.other), []).append((x, y))  # type: ignore[arg-type]
            diagram.marks.append(Mark(x, y, "dot", "signal-out", f"step {e.step}: {e.text}"))
        elif e.kind == "signal_in":
            diagram.marks.append(Mark(x, y, "ring", "signal-in", f"step {e.step}: {e.text}"))
            queue = signal_out.get((e.other, e.peer))  # type: ignore[arg-type]
            if queue:
                sx, sy = queue.pop(0)
                ex, ey = _shorten(sx, sy, x, y, 6)
                diagram.lines.append(Line(sx, sy, ex, ey, "signal", f"step {e.step}: {e.text}", "signal", (sx + x) / 2, sy - 5))
        elif e.kind in ("stage", "commit"):
            shape = "box" if e.kind == "stage" else "square"
            diagram.marks.append(Mark(x, y, shape, e.kind, f"step {e.step}: {e.text}", name if e.message is not None else ""))
        else:
            diagram.marks.append(Mark(x, y, "tick", "step", f"step {e.step}: {e.text}"))
    for mid, (sx, sy) in sends.items():
        msg = timeline.messages.get(mid)
        if msg is None:
            continue
        for q in sorted(msg.dests):
            if (mid, q) in consumed:
                continue
            bad = (mid, q) in blame.missing or (mid, q) in blame.awaited
            cls = "pending" + (f" {hot}" if bad else "")
            if (mid, q) in blame.missing:
                state = "never delivered"
            elif bad:
                state = "not yet delivered when the offending delivery was made"
            else:
                state = "not delivered when the trace ends"
            lx, ly = _label_at(sx, sy, xs[q], bottom)
            diagram.lines.append(
                Line(sx, sy, xs[q], bottom, cls, f"{msg.name} to {timeline.peers[q]}: {state}", msg.name, lx, ly)
            )
    return diagram


def _label_at(x1: float, y1: float, x2: float, y2: float) -> tuple[float, float]:
    """Where an arrow's message name goes: three quarters along, nudged aside."""
    t = 0.75
    x, y = x1 + (x2 - x1) * t, y1 + (y2 - y1) * t
    return (x + 6, y - 3) if x2 >= x1 else (x - 6, y - 3)


def _shorten(x1: float, y1: float, x2: float, y2: float, by: float) -> tuple[float, float]:
    """The end of a line pulled back ``by`` pixels, so its arrowhead meets a ring's edge."""
    dx, dy = x2 - x1, y2 - y1
    length = (dx * dx + dy * dy) ** 0.5
    if length <= by:
        return x2, y2
    return x2 - dx / length * by, y2 - dy / length * by
