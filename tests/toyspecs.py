"""Tiny specs whose state spaces are known by hand, for testing the engine."""

from __future__ import annotations

from ordercheck.checker import Constant, PartialOrder, Property, Spec, Symmetry


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


class Ring(Spec):
    """A token passes round ``n`` places for ever (with ``stop``: it stops at the last),
    and the spec *declares* ``acyclic``: a wrong declaration, unless ``stop``."""

    name = "ring"
    constants = (Constant("n", int, 3, minimum=1), Constant("stop", bool, False))
    acyclic = True

    def init_states(self):
        return [0]

    def next_states(self, state):
        if state < self.n - 1:
            return [(("pass", state), state + 1)]
        return [] if self.stop else [(("wrap", state), 0)]

    def properties(self):
        return [
            Property.always("in_range", lambda s: None if 0 <= s < self.n else f"place {s}"),
            Property.eventually("stops", lambda s: None if self.stop and s == self.n - 1 else f"at place {s}"),
        ]


class Shortcut(Spec):
    """0 -> 1 -> 2 -> 3 and a shortcut 0 -> 3: the edge 2 -> 3 leads to a state found at
    a shallower depth without closing a cycle. Declared ``acyclic``, rightly."""

    name = "shortcut"
    acyclic = True

    def init_states(self):
        return [0]

    def next_states(self, state):
        out = [(("step", state), state + 1)] if state < 3 else []
        if state == 0:
            out.append((("skip",), 3))
        return out

    def properties(self):
        return [Property.eventually("ends", lambda s: None if s == 3 else f"at {s}")]


class RandomProcesses(Spec, PartialOrder):
    """``processes`` processes, each running a random automaton (built from ``seed``)
    over ``places`` local places, cycles allowed; some steps are guarded by a shared bit
    and flip it. The footprints are declared exactly (a process's bit, and the shared
    bit where a guarded step may come), so partial-order reduction applies; it is
    sound on these cyclic graphs only with its cycle proviso. The ``always`` property
    ``avoid`` says one process never reaches one place, ``reach`` (``sometimes``) that
    another place is reached, ``settles`` (``eventually``) that the shared bit ends at 0."""

    name = "random_processes"
    constants = (
        Constant("seed", int, 0),
        Constant("processes", int, 2, minimum=1, maximum=4),
        Constant("places", int, 3, minimum=1),
    )

    def setup(self):
        import random

        rnd = random.Random(self.seed)
        n, m = self.processes, self.places
        # steps[p][place]: (next place, guard): guard None is a local step; 0 or 1 needs the
        # shared bit to have that value, and flips it.
        self.steps = [
            [[(rnd.randrange(m), rnd.choice((None, None, 0, 1))) for _ in range(rnd.choice((0, 1, 1, 2)))] for _ in range(m)]
            for _ in range(n)
        ]
        self.avoid_at = (rnd.randrange(n), rnd.randrange(m))
        self.reach_at = (rnd.randrange(n), rnd.randrange(m))
        self.shared = 1 << n

    def init_states(self):
        return [((0,) * self.processes, 0)]

    def next_states(self, state):
        places, bit = state
        out = []
        for p, at in enumerate(places):
            for i, (to, guard) in enumerate(self.steps[p][at]):
                if guard is None:
                    out.append((("step", p, at, i), (places[:p] + (to,) + places[p + 1 :], bit)))
                elif guard == bit:
                    out.append((("flip", p, at, i), (places[:p] + (to,) + places[p + 1 :], 1 - bit)))
        return out

    def actor(self, action):
        return action[1]

    def footprints(self, state):
        places, _bit = state
        out = []
        for p, at in enumerate(places):
            now = 1 << p
            if any(g is not None for _t, g in self.steps[p][at]):
                now |= self.shared
            later = 1 << p
            if any(g is not None for steps in self.steps[p] for _t, g in steps):
                later |= self.shared
            out.append((now, now, later, later))
        return out

    def visible_mask(self, reads):
        if reads is None:
            return -1
        mask = 0
        for kind in reads:
            mask |= self.shared if kind == "shared" else 1 << int(kind[1:])
        return mask

    def properties(self):
        (ap, al), (rp, rl) = self.avoid_at, self.reach_at
        return [
            Property.always("avoid", lambda s: f"process {ap} at {al}" if s[0][ap] == al else None, reads=(f"x{ap}",)),
            Property.sometimes("reach", lambda s: f"process {rp} at {rl}" if s[0][rp] == rl else None, reads=(f"x{rp}",)),
            Property.eventually("settles", lambda s: None if s[1] == 0 else "the shared bit is 1", reads=("shared",)),
        ]


class RandomProcessesDeclared(RandomProcesses):
    """The random processes declaring ``acyclic``, wrongly wherever their automata have
    a cycle: partial-order reduction then skips its cycle proviso, and the check of the
    declaration must stand in for it."""

    name = "random_processes_declared"
    acyclic = True


class RingUndeclared(Ring):
    """The ring without the wrong declaration."""

    name = "ring_undeclared"
    acyclic = False


class LastWriter(Spec, PartialOrder):
    """Two processes each write their id + 1 into ``x`` once: the last writer wins, so
    the writes do not commute; the footprints wrongly leave ``x`` out (and the visible
    mask says the property reads nothing). A reduced search takes process 0's write
    alone and never sees x = 1 at the end. With ``honest``, both are right."""

    name = "last_writer"
    constants = (Constant("honest", bool, False),)

    def init_states(self):
        return [(0, 0, 0)]

    def next_states(self, state):
        out = []
        for p in (0, 1):
            if not state[p]:
                t = list(state)
                t[p] = 1
                t[2] = p + 1
                out.append((("write", p), tuple(t)))
        return out

    def actor(self, action):
        return action[1]

    def footprints(self, state):
        x = 4 if self.honest else 0
        return [(1 << p | x, 1 << p | x, 1 << p | x, 1 << p | x) for p in (0, 1)]

    def visible_mask(self, reads):
        if self.honest:
            return 7  # the property reads both counters and x
        return 0 if reads == ("pc",) else -1

    def properties(self):
        return [Property.always("ends_with_two", lambda s: "x = 1 at the end" if s == (1, 1, 1) else None, reads=("pc",))]


class Blinker(Spec, PartialOrder):
    """Two processes each switch their own light on once; the property reads light 1
    but the spec says it reads nothing a step writes (``visible_mask`` 0)."""

    name = "blinker"

    def init_states(self):
        return [(0, 0)]

    def next_states(self, state):
        return [(("on", p), state[:p] + (1,) + state[p + 1 :]) for p in (0, 1) if not state[p]]

    def actor(self, action):
        return action[1]

    def footprints(self, state):
        return [(1 << p, 1 << p, 1 << p, 1 << p) for p in (0, 1)]

    def visible_mask(self, reads):
        return 0

    def properties(self):
        return [Property.always("one_first", lambda s: "light 1 alone" if s == (0, 1) else None, reads=("lights",))]


class Lopsided(Spec, Symmetry):
    """Two processes count to their limits, 1 for process 0 and 2 for process 1, yet the
    spec declares them interchangeable. Symmetry reduction merges (0, 1) into (1, 0)
    and never reaches (0, 2), where ``small`` fails."""

    name = "lopsided"

    def init_states(self):
        return [(0, 0)]

    def next_states(self, state):
        return [(("count", p), state[:p] + (state[p] + 1,) + state[p + 1 :]) for p in (0, 1) if state[p] < p + 1]

    def symmetries(self):
        return [(1, 0)]

    def permute(self, state, perm):
        return (state[1], state[0])

    def properties(self):
        return [Property.always("small", lambda s: "process 1 counted to 2 first" if s == (0, 2) else None)]


class Toggles(Spec, Symmetry):
    """Two processes each flip their own bit back and forth: symmetric (renaming swaps
    the bits) and cyclic, yet declared ``acyclic``. With ``one_way``, the only step turns
    (0, 1) into (1, 0), its renaming: acyclic, but a self-loop up to the declared
    (wrong) symmetry."""

    name = "toggles"
    constants = (Constant("one_way", bool, False),)
    acyclic = True

    def init_states(self):
        return [(0, 1)] if self.one_way else [(0, 0)]

    def next_states(self, state):
        if self.one_way:
            return [(("move", 0), (1, 0))] if state == (0, 1) else []
        return [(("flip", p), state[:p] + (1 - state[p],) + state[p + 1 :]) for p in (0, 1)]

    def symmetries(self):
        return [(1, 0)]

    def permute(self, state, perm):
        return (state[1], state[0])

    def properties(self):
        return [Property.always("bits", lambda s: None if set(s) <= {0, 1} else "not a bit")]


class OneKey(Spec, PartialOrder):
    """Process 0 steps once, process 1 twice, independently; the spec's reduction key is
    the same for every state, which does not decide the footprints and actors."""

    name = "one_key"
    acyclic = True

    def init_states(self):
        return [(0, 0)]

    def next_states(self, state):
        return [(("count", p), state[:p] + (state[p] + 1,) + state[p + 1 :]) for p in (0, 1) if state[p] < p + 1]

    def actor(self, action):
        return action[1]

    def footprints(self, state):
        return [(1, 1, 1, 1), (2, 2, 2, 2)]

    def visible_mask(self, reads):
        return 0

    def reduction_key(self, state):
        return 0

    def properties(self):
        return [Property.eventually("ends", lambda s: None if s == (1, 2) else f"at {s}")]


class Flicker(Spec, PartialOrder):
    """Process 0 switches its light on and then off, process 1 its own on; ``lit`` (a
    ``sometimes``: light 0 is on) is declared ``stable``, wrongly: switching off undoes it."""

    name = "flicker"
    acyclic = True

    def init_states(self):
        return [(0, 0, 0)]

    def next_states(self, state):
        l0, l1, off = state
        out = []
        if not l0 and not off:
            out.append((("on", 0), (1, l1, off)))
        if l0:
            out.append((("off", 0), (0, l1, 1)))
        if not l1:
            out.append((("on", 1), (l0, 1, off)))
        return out

    def actor(self, action):
        return action[1]

    def footprints(self, state):
        return [(5, 5, 5, 5), (2, 2, 2, 2)]

    def visible_mask(self, reads):
        return 1

    def properties(self):
        return [Property.sometimes("lit", lambda s: "light 0 is on" if s[0] else None, stable=True, reads=("lights",))]


class Tail(Spec):
    """A loop near the start and a long way out: 0 -> 1 -> 0 (``back``), and 1 -> 2 ->
    ... -> ``n`` (``on``), where the run stops. Declares ``acyclic``, wrongly; a depth
    bound below ``n`` cuts the way out while the loop lies within it."""

    name = "tail"
    constants = (Constant("n", int, 6, minimum=2),)
    acyclic = True

    def init_states(self):
        return [0]

    def next_states(self, state):
        out = [(("on", state), state + 1)] if state < self.n else []
        if state == 1:
            out.append((("back",), 0))
        return out

    def properties(self):
        return [Property.eventually("out", lambda s: None if s == self.n else f"at {s}")]


class TailUndeclared(Tail):
    """The tail without the wrong declaration."""

    name = "tail_undeclared"
    acyclic = False


class SpinFlag(Spec, PartialOrder):
    """Process 0 ticks 0 <-> 1 for ever; process 1 sets a flag once. The spec declares
    ``acyclic``, wrongly, and ``flag`` (a ``sometimes``: the flag is set) is ``stable``,
    so partial-order reduction gives it no visibility condition: on the declaration's
    word a reduced search may keep ticking and never set the flag."""

    name = "spinflag"
    acyclic = True

    def init_states(self):
        return [(0, 0)]

    def next_states(self, state):
        tick, flag = state
        out = [(("tick", 0), (1 - tick, flag))]
        if not flag:
            out.append((("go", 1), (tick, 1)))
        return out

    def actor(self, action):
        return action[1]

    def footprints(self, state):
        return [(1, 1, 1, 1), (2, 2, 2, 2)]

    def visible_mask(self, reads):
        return 2

    def properties(self):
        return [Property.sometimes("flag", lambda s: "flag set" if s[1] else None, stable=True, reads=("flag",))]


class SpinAlarm(SpinFlag):
    """SpinFlag's two processes, its flag read as an alarm: ``quiet`` (an ``always``: no
    alarm) is not ``stable``, so it needs the visibility condition: process 1's step is
    visible, process 0's ticks are not, and a reduced search ticks alone. The spec
    declares ``acyclic``, wrongly. The cycle proviso would expand the tick's state
    fully where its tick returns to a state met before, and find the alarm; where it is
    skipped on the declaration's word, the check of the declaration must catch it. With
    ``stop`` the ticks stop at 1 (acyclic: the declaration is right)."""

    name = "spinalarm"
    constants = (Constant("stop", bool, False),)

    def next_states(self, state):
        out = super().next_states(state)
        return [(a, t) for a, t in out if a[0] != "tick"] if self.stop and state[0] else out

    def properties(self):
        return [Property.always("quiet", lambda s: "the alarm is raised" if s[1] else None, reads=("alarm",))]


class SpinAlarmUndeclared(SpinAlarm):
    """The spinning alarm without the wrong declaration: the proviso applies."""

    name = "spinalarm_undeclared"
    acyclic = False


class LateLoop(Spec, PartialOrder):
    """A wrong ``acyclic`` that only a deferrable step leads to. The state is ``(x, b)``,
    ``x`` standing in for the history (the one property reads it alone). Process 0
    steps ``x`` from 0 to 1 (``go``), then ``back``: to 0 where ``b`` is set, a cycle, else
    on to 2, where it stops. Process 1 sets ``b`` (``mark``), a step the spec calls
    deferrable: it leaves ``x`` as it is and enables nothing, and every ``x`` a run reaches
    through it is reached without it. The search that defers ``mark`` takes it only once
    ``x`` is 2, so it never meets the cycle ``go``, ``back`` after an early ``mark``, nor an
    edge that could close one; the unreduced search does."""

    name = "lateloop"
    acyclic = True

    def next_states(self, state):
        x, b = state
        out = []
        if x == 0:
            out.append((("go", 0), (1, b)))
        elif x == 1:
            out.append((("back", 0), (0 if b else 2, b)))
        if not b:
            out.append((("mark", 1), (x, 1)))
        return out

    def init_states(self):
        return [(0, 0)]

    def actor(self, action):
        return action[1]

    def footprints(self, state):
        return [(3, 1, 3, 1), (0, 2, 0, 2)]  # bit 1: x, bit 2: b; process 0 reads b for back

    def visible_mask(self, reads):
        return 1

    def defers(self):
        return True

    def deferrable(self, action):
        return action[0] == "mark"

    def properties(self):
        return [Property.always("below_three", lambda s: "x is 3" if s[0] == 3 else None, reads=("history",))]


class LateLoopAwaiting(LateLoop):
    """:class:`LateLoop` awaiting ``x`` = 2: its hidden cycle (``go``, ``back`` for ever
    after an early ``mark``) is a fair run that never gets there, so the verdict on
    ``reaches_two`` rests on the (wrong) declaration ``acyclic``."""

    name = "lateloop_awaiting"

    def properties(self):
        return [Property.eventually("reaches_two", lambda s: None if s[0] == 2 else f"x is {s[0]}",
                                    reads=("history",))]
