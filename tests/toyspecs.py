"""Tiny specs whose state spaces are known by hand, for testing the engine."""

from __future__ import annotations

from checker import Constant, Property, Spec


class Counter(Spec):
    """x counts from 0 to ``limit``: ``limit + 1`` states, ``limit`` transitions."""

    name = "counter"
    constants = (Constant("limit", int, 3, minimum=0), Constant("bad", int, -1))

    def init_states(self):
        return [0]

    def next_states(self, state):
        return [(("inc",), state + 1)] if state < self.limit else []

    def properties(self):
        return [
            Property.always("not_bad", lambda s: f"x reached {s}" if s == self.bad else None),
            Property.sometimes("reaches_two", lambda s: "x is 2" if s == 2 else None),
            Property.eventually("ends_at_limit", lambda s: None if s == self.limit else f"x stopped at {s}"),
        ]


class Grid(Spec):
    """Two independent counters, each 0..n: (n+1)**2 states, 2*n*(n+1) transitions,
    and the longest shortest path has 2*n steps."""

    name = "grid"
    constants = (Constant("n", int, 2, minimum=0),)

    def init_states(self):
        return [(0, 0)]

    def next_states(self, state):
        x, y = state
        out = []
        if x < self.n:
            out.append((("x",), (x + 1, y)))
        if y < self.n:
            out.append((("y",), (x, y + 1)))
        return out

    def properties(self):
        return [
            Property.always("not_corner", lambda s: "far corner" if s == (self.n, self.n) else None),
            Property.always("diagonal_ok", lambda s: "x=y=1" if s == (1, 1) else None),
        ]


class Stuck(Spec):
    """Either finishes (state 2) or gets stuck (state 3): a deadlock at depth 1."""

    name = "stuck"

    def init_states(self):
        return [0]

    def next_states(self, state):
        if state == 0:
            return [(("go",), 1), (("trap",), 3)]
        if state == 1:
            return [(("done",), 2)]
        return []

    def finished(self, state):
        return state != 3

    def properties(self):
        return [Property.eventually("no_deadlock", lambda s: None if self.finished(s) else "stuck in state 3")]


class Chatty(Spec):
    """A spec that breaks the state vocabulary: its states hold strings."""

    name = "chatty"

    def init_states(self):
        return [("hello",)]

    def next_states(self, state):
        return []


class Spinner(Spec):
    """Spins between 0 and 1 until ``finish`` moves it to 2 (done). ``finish`` is
    enabled in 0 and 1; with ``fair_finish`` it is weakly fair, which rules the spin
    out. ``flaky`` makes finish enabled only in state 0, so weak fairness no longer
    forces it but strong fairness does."""

    name = "spinner"
    constants = (Constant("fair_finish", str, "none", choices=("none", "weak", "strong")), Constant("flaky", bool, False))

    @property
    def fairness(self):  # type: ignore[override]
        return {} if self.fair_finish == "none" else {"finish": self.fair_finish}

    def init_states(self):
        return [0]

    def next_states(self, state):
        if state == 2:
            return []
        out = [(("spin", 0), 1 - state)]
        if state == 0 or not self.flaky:
            out.append((("finish", 0), 2))
        return out

    def properties(self):
        return [Property.eventually("done", lambda s: None if s == 2 else f"still spinning in {s}")]
