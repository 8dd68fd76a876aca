"""The geometry of a space-time (Lamport) diagram; ``templates/diagram.svg.j2`` draws it.

Time runs down the page, one row per trace step (numbered as in the step list beside
the diagram), one vertical line per peer. Sends and deliveries are dots joined by an
arrow from the send to each delivery, or, when the spec places the message's arrival
(an ``arrive`` or ``commit`` site), to the arrival, with a band on the receiver's line
from the arrival to the delivery; side-channel signals are dashed arrows in another
colour; protocol-internal messages (tokens, acks, proposals: a spec's
``internal_messages``) are thin light arrows; staging (blocks) and commits are squares
on the queue's line; other local steps, and blocks or commits that change nothing
described, are small ticks. Offending deliveries and their arrows are drawn in the
highlight colour, messages never delivered end in a dangling dashed arrow.

The columns widen to fill :data:`TARGET_WIDTH` when there are few peers (the page
scales the drawing down to its column if need be), and every arrow's label is placed
where it overlaps no arrow, no other label and no event mark (:class:`Labels`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ordercheck.reports.timeline import Blame, Timeline, TimelineEvent

ROW = 30  # pixels per step
COL = 120  # least pixels between peer lines
MAX_COL = 220  # most pixels between peer lines
TARGET_WIDTH = 640  # the drawing's width when the peers fit in it
LEFT = 56  # room for step numbers
TOP = 46  # room for peer names
BOTTOM = 40  # room for dangling arrows

HIGHLIGHT = "#d62728"
WITNESS = "#2b8a3e"
ARROW = "#1f4e8c"
SIGNAL = "#e8590c"
SITE = "#7048e8"
PENDING = "#868e96"
INTERNAL = "#9aa5b1"
CHAR = 7.2  # pixels per character of an arrow label (12px semi-bold sans-serif)


@dataclass
class Line:
    """An arrow or a line: ``cls`` names its role (``message``, ``signal``, ``pending``,
    ``internal``, plus ``offending`` when highlighted) for styling and tests."""

    x1: float
    y1: float
    x2: float
    y2: float
    cls: str
    title: str
    label: str = ""
    lx: float = 0
    ly: float = 0
    anchor: str = "start"  # the label's text-anchor


@dataclass
class Mark:
    """An event mark: ``shape`` is ``dot``, ``ring``, ``square``, ``box``, ``tick`` or
    ``pip`` (a protocol-internal message's end)."""

    x: float
    y: float
    shape: str
    cls: str
    title: str
    label: str = ""


@dataclass
class Note:
    """A line of text beside the drawing, at its row (``ordercheck run`` puts each node's
    input and output lines beside its events): ``cls`` names its kind (``in``, ``out``,
    ``err``) for styling and tests, ``title`` is the whole line when ``text`` is cut."""

    x: float
    y: float
    text: str
    cls: str
    title: str


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
    notes: list[Note] = field(default_factory=list)  # text beside the rows (empty but for run's reports)

    def has(self, role: str) -> bool:
        """Whether some line has ``role`` among its classes (for the legend)."""
        return any(role in line.cls.split() for line in self.lines)


def layout(timeline: Timeline, blame: Blame, uid: str, loop_start: int | None = None) -> Diagram:
    """Place every event of ``timeline``; ``uid`` keeps marker ids unique on a page.
    ``loop_start`` marks a lasso: the steps after it repeat for ever."""
    n = len(timeline.peers)
    col = max(COL, min(MAX_COL, (TARGET_WIDTH - LEFT) / max(n, 1)))
    xs = [LEFT + col / 2 + col * p for p in range(n)]
    last_y = TOP + ROW * (timeline.steps - 1)
    bottom = last_y + BOTTOM
    diagram = Diagram(
        uid=uid,
        width=LEFT + col * n,
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
            "internal": INTERNAL,
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
    signal_at: dict[tuple[int, int], tuple[float, float]] = {}  # (peer, log_index) of a signal: its mark
    source = timeline.signal_pairs()  # each receipt's signal, as the monitors pair them
    late: list[tuple[tuple[int, int], float, float, str]] = []  # receipts drawn before their signal

    def signal_line(src: tuple[float, float], x: float, y: float, text: str) -> None:
        sx, sy = src
        ex, ey = _shorten(sx, sy, x, y, 6)
        diagram.lines.append(Line(sx, sy, ex, ey, "signal", text, "signal", (sx + x) / 2, sy - 5))

    internal_out: dict[tuple[int, int, str], list[tuple[float, float]]] = {}
    consumed: set[tuple[int, int]] = set()
    hot = "offending" if not blame.witness else "witness"
    # A message's first arrival at a peer (an ``arrive`` or ``commit`` site) ends its
    # arrow there; its delivery is then joined to the arrival on the peer's line.
    fate: dict[tuple[int, int], TimelineEvent] = {}  # (message, peer): its delivery or drop
    for e in timeline.events:
        if e.kind in ("deliver", "drop") and e.message is not None:
            fate.setdefault((e.message, e.peer), e)
    arrived: dict[tuple[int, int], tuple[float, float, int]] = {}  # (message, peer): x, y, step
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
            came = arrived.get((e.message, e.peer))  # type: ignore[arg-type]
            if came is not None:
                ax, ay, at = came
                hcls = "held" + (f" {hot}" if bad else "") + (" dropped" if e.kind == "drop" else "")
                what = "delivered" if e.kind == "deliver" else "dropped"
                title = f"{name}: arrived at step {at}, held until {what} at step {e.step}"
                diagram.lines.append(Line(ax, ay, x, y - (8 if bad else 6), hcls, title))
            elif e.message in sends:
                sx, sy = sends[e.message]
                lcls = "message" + (f" {hot}" if bad else "") + (" dropped" if e.kind == "drop" else "")
                lx, ly = _label_at(sx, sy, x, y)
                ex, ey = _shorten(sx, sy, x, y, 8 if bad else 6)
                diagram.lines.append(Line(sx, sy, ex, ey, lcls, f"{name}: {e.text} (step {e.step})", name, lx, ly))
        elif e.kind in ("arrive", "commit") and e.message is not None and (e.message, e.peer) not in arrived \
                and (e.message, e.peer) not in consumed:
            arrived[(e.message, e.peer)] = (x, y, e.step)
            then = fate.get((e.message, e.peer))
            if then is not None:
                bad = (then.peer, then.log_index) in blame.deliveries
            else:
                bad = (e.message, e.peer) in blame.missing or (e.message, e.peer) in blame.awaited
            shape = "square" if e.kind == "commit" else "ring"
            diagram.marks.append(Mark(x, y, shape, e.kind, f"step {e.step}: {e.text}", name if e.kind == "commit" else ""))
            if e.message in sends:
                sx, sy = sends[e.message]
                lcls = "message" + (f" {hot}" if bad else "")
                if then is None:
                    state = "arrived, " + ("never delivered" if (e.message, e.peer) in blame.missing else
                                           "not yet delivered when the offending delivery was made" if bad else
                                           "not delivered when the trace ends")
                else:
                    state = f"arrives at step {e.step}, {'delivered' if then.kind == 'deliver' else 'dropped'} at step {then.step}"
                lx, ly = _label_at(sx, sy, x, y)
                ex, ey = _shorten(sx, sy, x, y, 6)
                diagram.lines.append(Line(sx, sy, ex, ey, lcls, f"{name} to {timeline.peers[e.peer]}: {state}", name, lx, ly))
        elif e.kind == "signal_out":
            signal_at[(e.peer, e.log_index)] = (x, y)  # type: ignore[index]
            diagram.marks.append(Mark(x, y, "dot", "signal-out", f"step {e.step}: {e.text}"))
        elif e.kind == "signal_in":
            diagram.marks.append(Mark(x, y, "ring", "signal-in", f"step {e.step}: {e.text}"))
            src = source.get((e.peer, e.log_index))  # type: ignore[arg-type]
            if src in signal_at:
                signal_line(signal_at[src], x, y, f"step {e.step}: {e.text}")  # type: ignore[index]
            elif src is not None:
                late.append((src, x, y, f"step {e.step}: {e.text}"))
        elif e.kind == "internal_send":
            internal_out.setdefault((e.peer, e.other, e.text), []).append((x, y))  # type: ignore[arg-type]
            diagram.marks.append(Mark(x, y, "pip", "internal-send", f"step {e.step}: sends {e.text}"))
        elif e.kind in ("internal_receive", "internal_lose"):
            lost = e.kind == "internal_lose"
            if lost:
                diagram.marks.append(Mark(x, y, "cross", "internal-lost", f"step {e.step}: {e.text} is lost on its way here"))
            else:
                diagram.marks.append(Mark(x, y, "pip", "internal-receive", f"step {e.step}: receives {e.text}"))
            queue = internal_out.get((e.other, e.peer, e.text))  # type: ignore[arg-type]
            if queue:
                sx, sy = queue.pop(0)
                ex, ey = _shorten(sx, sy, x, y, 6 if lost else 4)
                title = f"{e.text}: lost at step {e.step}" if lost else f"{e.text}: step {e.step}"
                diagram.lines.append(Line(sx, sy, ex, ey, "internal dropped" if lost else "internal", title, e.text))
        elif e.kind in ("stage", "commit", "arrive"):
            shape = {"stage": "box", "commit": "square", "arrive": "ring"}[e.kind]
            diagram.marks.append(Mark(x, y, shape, e.kind, f"step {e.step}: {e.text}", name if e.message is not None else ""))
        else:
            diagram.marks.append(Mark(x, y, "tick", "step", f"step {e.step}: {e.text}"))
    for src, x, y, text in late:  # a signal received before it was sent (integrity)
        if src in signal_at:
            signal_line(signal_at[src], x, y, text)
    for mid, (sx, sy) in sends.items():
        msg = timeline.messages.get(mid)
        if msg is None:
            continue
        for q in sorted(msg.dests):
            if (mid, q) in consumed:
                continue
            if (mid, q) in arrived:  # arrived, never delivered: held to the end of the trace
                ax, ay, at = arrived[(mid, q)]
                bad = (mid, q) in blame.missing or (mid, q) in blame.awaited
                diagram.lines.append(Line(ax, ay, ax, bottom, "held pending" + (f" {hot}" if bad else ""),
                                          f"{msg.name}: arrived at {timeline.peers[q]} at step {at}, not delivered when the trace ends"))
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
    for (_p, q, name), left in internal_out.items():
        for sx, sy in left:  # still in transit when the trace ends
            diagram.lines.append(Line(sx, sy, xs[q], bottom, "internal pending", f"{name}: in transit when the trace ends", name))
    Labels(diagram).place_all()
    return diagram


class Labels:
    """Places every arrow's label where it overlaps no other label, no mark and no
    arrow (its own included).

    Candidates run along the arrow (three quarters of the way first, then nearer the
    middle and the ends), on either side of it and further aside; the first free one is
    taken, else the least crowded one (an arrow crossed weighs most). Labels are placed
    highlighted arrows first, so theirs get the best places."""

    HEIGHT = 12.0
    STEPS = (0.75, 0.6, 0.85, 0.45, 0.3, 0.92, 0.2, 0.66, 0.52, 0.38, 0.25, 0.12, 0.08, 0.96)
    ASIDE = ((6, -4), (6, 12), (-6, -4), (-6, 12), (10, -9), (10, 17), (-10, -9), (-10, 17), (16, -15), (16, 23),
             (-16, -15), (-16, 23))

    def __init__(self, diagram: Diagram) -> None:
        self.diagram = diagram
        self.taken: list[tuple[float, float, float, float]] = [(m.x - 7, m.y - 7, m.x + 7, m.y + 7) for m in diagram.marks]
        self.placed: list[tuple[float, float, float, float]] = []
        self.arrows = [(ln.x1, ln.y1, ln.x2, ln.y2) for ln in diagram.lines]

    def place_all(self) -> None:
        order = sorted(
            (i for i, line in enumerate(self.diagram.lines) if line.label),
            key=lambda i: (0 if ("offending" in self.diagram.lines[i].cls or "witness" in self.diagram.lines[i].cls) else 1, i),
        )
        for i in order:
            self.place(self.diagram.lines[i])

    def place(self, line: Line) -> None:
        width = CHAR * len(line.label) + 2
        right = line.x2 >= line.x1
        best = None
        for t in self.STEPS:
            x = line.x1 + (line.x2 - line.x1) * t
            y = line.y1 + (line.y2 - line.y1) * t
            for dx, dy in self.ASIDE:
                lx, ly = (x + dx, y + dy) if right else (x - dx, y + dy)
                anchor_start = (dx > 0) == right
                box = (lx, ly - self.HEIGHT + 2, lx + width, ly + 2) if anchor_start else (lx - width, ly - self.HEIGHT + 2, lx, ly + 2)
                # an arrow crossed costs most, then another label, then a mark
                cost = 100 * sum(crosses(a, box) for a in self.arrows) + \
                    10 * sum(_overlap(box, other) for other in self.placed) + sum(_overlap(box, m) for m in self.taken)
                if cost == 0:
                    self._take(line, lx, ly, box)
                    return
                if best is None or cost < best[0]:
                    best = (cost, lx, ly, box)
        assert best is not None  # no free place: the least crowded one
        self._take(line, *best[1:])

    def _take(self, line: Line, lx: float, ly: float, box: tuple[float, float, float, float]) -> None:
        line.lx, line.ly = lx, ly
        line.anchor = "start" if box[0] == lx else "end"
        self.placed.append(box)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def crosses(segment: tuple[float, float, float, float], box: tuple[float, float, float, float], pad: float = 1.5) -> bool:
    """Whether the line ``segment`` (x1, y1, x2, y2) passes through ``box`` (left, top,
    right, bottom) grown by ``pad`` pixels on each side (an arrow's stroke has a width):
    the segment clipped to the box (Liang-Barsky) is not empty."""
    x1, y1, x2, y2 = segment
    left, top, right, bottom = box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad
    dx, dy = x2 - x1, y2 - y1
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, x1 - left), (dx, right - x1), (-dy, y1 - top), (dy, bottom - y1)):
        if p == 0:
            if q < 0:
                return False
            continue
        r = q / p
        if p < 0:
            lo = max(lo, r)
        else:
            hi = min(hi, r)
        if lo > hi:
            return False
    return True


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
