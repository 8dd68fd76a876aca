"""Random simulation for models too large to exhaust.

A walk starts in an initial state and takes up to ``depth`` steps; Hypothesis generates
what drives it (a :class:`Walk`), so the same ``seed`` gives the same walks. Every
property is checked on every state of every walk (``eventually`` properties where a
walk ends with nothing enabled).

**Steps.** Each step first picks an action *kind* among the enabled ones (the action's
name and, by the specs' convention, the peer that takes it: ``send:0``, ``deliver:2``),
then one action of that kind, so that kinds with many variants (a send to any subset
of peers) do not crowd out the others.

**Swarm.** Each walk draws its own weights: per kind a level from "almost never" to
"whenever possible", and per action name another level on top; per kind a wake-up
step and a nap (steps it waits after each of its own steps, which leaves a peer's
transaction half done while others move); per action name a wake-up step, a quarter
of the time the whole walk (the name then waits in the main walk; see reactions). A
kind that sleeps is left out while an awake kind is enabled; when every enabled kind
sleeps, the first to wake goes.

**News.** A peer learns something when it delivers a message, or receives a
side-channel signal from a peer that had learnt something (read from the common
history form, see :class:`News`). In the main walk a per-walk *chase* level is the
chance that a step is taken by the peer that learnt last, when it has an awake kind.

**Reactions.** Where a peer has just learnt a message that some of the message's
destinations have not got yet (the news can overtake the message), the walk forks
``BRANCHES`` side walks of up to ``BRANCH_DEPTH`` steps before going on. In a side walk
the peer that learnt last moves whenever it can, sleeping or not; with chance
``SPREAD_CHANCE`` it passes its news on when it can (a signal to a peer that lacks the
news, or a send addressed only to such peers: a kind, then one action of it),
otherwise it takes any of its actions; once it has none, the others move by the
walk's weights. This is what finds races where a reaction to
a message reaches a peer before the message itself. A violation in a side walk is
reported as the main walk's steps up to the fork followed by the side walk's.

**Shrinking.** A walk that breaks a property is shrunk by :mod:`ordercheck.checker.simulate.shrink`
(delta debugging on steps, swapping steps for siblings of the same kind,
breadth-first search among the runs made of the remaining actions) to a real run of
the model, reported like a search result.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from ordercheck.checker.api.spec import Action, Property, Spec, State
from ordercheck.checker.engine.evaluate import Evaluator
from ordercheck.checker.engine.fingerprint import fingerprint

SWARM_WEIGHTS = (1, 8, 64, 0.05)  # level 0 (the simplest draw) is plain uniform
CHASE_LEVELS = (0.0, 0.5, 0.9, 0.99)  # chance a step is taken by the peer that learnt last
BRANCHES = 3  # side walks forked where a peer learns news some of its addressees lack
BRANCH_DEPTH = 40  # steps per side walk
SPREAD_CHANCE = 0.9  # in a reaction, the chance to pass the news on when it can
HISTORY_CACHE = 1 << 13
STEP_BYTES = 3  # per step: kind (1 byte), chase coin (1), which action of the kind (1)


@dataclass(frozen=True)
class Walk:
    """What Hypothesis generates: an initial state, a swarm (per action kind a weight
    level, a wake-up step and a nap; per action name a weight level and a wake-up
    step), a chase level, step choices (``STEP_BYTES`` per step) and a seed for steps
    past the end of the choices and for side walks."""

    init: int
    swarm: tuple[int, ...]
    choices: bytes
    tail_seed: int
    wake: tuple[int, ...] = ()  # per kind: the step before which it waits for nothing else
    nap: tuple[int, ...] = ()  # per kind: steps it waits for nothing else after each of its steps
    chase: int = 0  # index into CHASE_LEVELS
    names: tuple[int, ...] = ()  # a weight level per action name, on top of the kind's
    name_wake: tuple[int, ...] = ()  # per action name: a wake-up step for all its kinds


@dataclass
class Found:
    """A property a walk decided, with the walk's labels and the sentence."""

    prop: str
    explanation: str
    init: int
    labels: list[Action]


@dataclass
class SimulationStats:
    walks: int = 0
    steps: int = 0
    longest: int = 0
    seen: set[int] = field(default_factory=set)


class Simulator:
    """Runs walks of one spec and checks properties along them."""

    def __init__(self, spec: Spec, props: Sequence[Property], depth: int) -> None:
        self.spec = spec
        self.props = list(props)
        self.depth = depth
        self.inits = list(spec.init_states())
        self._histories: dict[Any, Any] = {}
        self.evaluator = Evaluator(spec, self.props)
        self.evaluator.history = self.history
        try:  # reactions read the common history form; specs without one do without
            self.history(self.inits[0])
            self.uses_history = True
        except NotImplementedError:
            self.uses_history = False
        self.stats = SimulationStats()
        self.kinds = sorted(self._discover_kinds())
        self.kind_index = {k: i for i, k in enumerate(self.kinds)}
        self.names = sorted({k.split(":")[0] for k in self.kinds})
        name_index = {n: i for i, n in enumerate(self.names)}
        self.kind_name = [name_index[k.split(":")[0]] for k in self.kinds]

    def history(self, state: State) -> Any:
        """``spec.history(state)``, kept for the last few thousand history keys: walks
        and their side walks meet the same histories again and again."""
        key = self.spec.history_key(state)
        h = self._histories.get(key)
        if h is None:
            if len(self._histories) >= HISTORY_CACHE:
                self._histories.clear()
            h = self._histories[key] = self.spec.history(state)
        return h

    def _discover_kinds(self, walks: int = 20) -> set[str]:
        rng = random.Random(0)
        kinds: set[str] = set()
        for _ in range(walks):
            state = self.inits[rng.randrange(len(self.inits))]
            for _ in range(self.depth):
                succ = self.spec.next_states(state)
                if not succ:
                    break
                kinds.update(action_kind(label) for label, _ in succ)
                state = succ[rng.randrange(len(succ))][1]
        return kinds

    def strategy(self) -> st.SearchStrategy[Walk]:
        n = len(self.kinds)
        delay = st.one_of(st.just(0), st.integers(0, self.depth // 2))
        return st.builds(
            Walk,
            st.integers(0, len(self.inits) - 1),
            st.tuples(*[st.integers(0, len(SWARM_WEIGHTS) - 1) for _ in range(n)]),
            st.binary(max_size=self.depth * STEP_BYTES),
            st.integers(0, (1 << 32) - 1),
            st.tuples(*[delay for _ in range(n)]),
            st.tuples(*[st.one_of(st.just(0), st.integers(0, self.depth // 8)) for _ in range(n)]),
            st.integers(0, len(CHASE_LEVELS) - 1),
            st.tuples(*[st.integers(0, len(SWARM_WEIGHTS) - 1) for _ in self.names]),
            st.tuples(*[st.sampled_from((0, 0, self.depth // 4, self.depth)) for _ in self.names]),
        )

    def run(self, walk: Walk, open_props: set[str]) -> Found | None:
        """Take the walk; return the first of ``open_props`` it decides, if any."""
        spec = self.spec
        ev = self.evaluator
        state = self.inits[walk.init]
        rng = random.Random(walk.tail_seed)
        labels: list[Action] = []
        key = ev.history_key(state)
        hit = self._first(ev.on_state(state, key, None), open_props)
        self.stats.walks += 1
        seen = self.stats.seen if len(self.stats.seen) < 1_000_000 else None
        if seen is not None:
            seen.add(fingerprint(state))
        asleep = list(walk.wake) if walk.wake else [0] * len(self.kinds)
        if walk.name_wake:
            asleep = [max(w, walk.name_wake[self.kind_name[i]]) for i, w in enumerate(asleep)]
        nap = walk.nap or (0,) * len(self.kinds)
        chase = CHASE_LEVELS[walk.chase]
        news = News(spec, self.history, state) if self.uses_history else None
        choices = walk.choices
        step = 0
        while hit is None and step < self.depth:
            succ = spec.next_states(state)
            if not succ:
                hit = self._first(ev.on_terminal(state, key), open_props)
                break
            at = step * STEP_BYTES
            if at + STEP_BYTES <= len(choices):
                pick = int.from_bytes(choices[at : at + STEP_BYTES], "little")
            else:
                pick = rng.getrandbits(8 * STEP_BYTES)
            focus = news.focus if news is not None and (pick >> 8 & 0xFF) < chase * 256 else None
            label, state = self._choose(succ, walk, asleep, focus, pick, step)
            key, hit = self._take(label, state, key, step, asleep, nap, labels, open_props)
            step += 1
            if seen is not None:
                seen.add(fingerprint(state))
            if news is not None and news.update(state) and hit is None and news.fresh():
                for b in range(BRANCHES):
                    hit, side = self._branch(walk, state, key, news, asleep, step, b, open_props)
                    if hit is not None:
                        labels += side
                        break
        self.stats.steps += step
        self.stats.longest = max(self.stats.longest, step)
        if hit is None:
            return None
        return Found(hit[0], hit[1], walk.init, labels)

    def _take(
        self,
        label: Action,
        state: State,
        parent_key: Any,
        step: int,
        asleep: list[int],
        nap: Sequence[int],
        labels: list[Action],
        open_props: set[str],
    ) -> tuple[Any, tuple[str, str] | None]:
        """Record the step ``label`` to ``state`` taken at ``step``: its kind naps, the
        label joins ``labels``, and the new state is checked. Returns the new state's
        history key and what it decides."""
        k = self.kind_index.get(action_kind(label))
        if k is not None:
            asleep[k] = max(asleep[k], step + 1 + nap[k])
        labels.append(label)
        key = self.evaluator.history_key(state)
        return key, self._first(self.evaluator.on_state(state, key, parent_key), open_props)

    def _branch(
        self,
        walk: Walk,
        state: State,
        key: Any,
        news: News,
        asleep: list[int],
        step: int,
        b: int,
        open_props: set[str],
    ) -> tuple[tuple[str, str] | None, list[Action]]:
        """A side walk of up to ``BRANCH_DEPTH`` steps from ``state``, where a peer has
        just learnt something, in which every step is the reaction of the peer that
        learnt last when it has one: what it does with the news before anyone else
        moves. Returns what the side walk decides and its labels."""
        spec, ev = self.spec, self.evaluator
        rng = random.Random(walk.tail_seed * 1009 + step * 7 + b)
        news = news.copy()
        asleep = list(asleep)
        nap = walk.nap or (0,) * len(self.kinds)
        labels: list[Action] = []
        for i in range(step, min(step + BRANCH_DEPTH, self.depth)):
            succ = spec.next_states(state)
            if not succ:
                hit = self._first(ev.on_terminal(state, key), open_props)
                return hit, labels
            label, state = self._choose(succ, walk, asleep, news.focus, rng.getrandbits(8 * STEP_BYTES), i, True, news)
            key, hit = self._take(label, state, key, i, asleep, nap, labels, open_props)
            self.stats.steps += 1
            if hit is not None:
                return hit, labels
            news.update(state)
        return None, labels

    def _choose(
        self,
        succ: Sequence[tuple[Action, State]],
        walk: Walk,
        asleep: list[int],
        focus: int | None,
        pick: int,
        step: int,
        react: bool = False,
        news: News | None = None,
    ) -> tuple[Action, State]:
        """The action ``pick`` selects: a kind by swarm weight (low byte), then one
        action of that kind (the top byte). In the main walk (not ``react``) kinds
        asleep at ``step`` are left out first. Given a ``focus`` peer, the kinds of other
        peers are left out while any kind of the focus peer is left; in a reaction the
        focus peer's action is then chosen by :meth:`_react`."""
        by_kind: dict[str, list[tuple[Action, State]]] = {}
        for item in succ:
            by_kind.setdefault(action_kind(item[0]), []).append(item)
        index = self.kind_index
        kinds = list(by_kind)
        if not react:
            # Kinds asleep wait; if every enabled kind sleeps, the first to wake goes.
            wakes = [asleep[index[k]] if k in index else 0 for k in kinds]
            first = max(step, min(wakes))
            kinds = [k for k, w in zip(kinds, wakes) if w <= first]
        mine = [k for k in kinds if by_kind[k][0][0][1:2] == (focus,)] if focus is not None else []
        if mine:
            kinds = mine
            if react and news is not None:
                return self._react([item for k in mine for item in by_kind[k]], news, pick)
        weights = [self._weight(walk, k) for k in kinds]
        target = (pick & 0xFF) / 256 * sum(weights)
        chosen = kinds[-1]
        for kind, weight in zip(kinds, weights):
            if target < weight:
                chosen = kind
                break
            target -= weight
        options = by_kind[chosen]
        return options[(pick >> 16) % len(options)]

    @staticmethod
    def _react(options: list[tuple[Action, State]], news: News, pick: int) -> tuple[Action, State]:
        """One of the focus peer's ``options``: with chance ``SPREAD_CHANCE`` one that
        passes its news on to peers without it (a kind of those, then one of that
        kind), else any."""
        if len(options) == 1:
            return options[0]
        mid = news.news.get(news.focus)  # type: ignore[arg-type]
        knowers = news.knowers(mid) if mid is not None else set()
        spreading: dict[str, list[tuple[Action, State]]] = {}
        for item in options:
            if mid is not None and news.spreads(item[1], knowers):
                spreading.setdefault(action_kind(item[0]), []).append(item)
        if spreading and (pick & 0xFF) < SPREAD_CHANCE * 256:
            kinds = list(spreading)
            chosen = spreading[kinds[(pick >> 8 & 0xFF) % len(kinds)]]
            return chosen[(pick >> 16) % len(chosen)]
        return options[(pick >> 16) % len(options)]

    def _weight(self, walk: Walk, kind: str) -> float:
        i = self.kind_index.get(kind)
        if i is None:
            return 1.0
        w = SWARM_WEIGHTS[walk.swarm[i]]
        if walk.names:
            w *= SWARM_WEIGHTS[walk.names[self.kind_name[i]]]
        return w

    @staticmethod
    def _first(found: list[tuple[str, str]], open_props: set[str]) -> tuple[str, str] | None:
        for name, sentence in found:
            if name in open_props:
                return name, sentence
        return None

    def replay_labels(self, init: int, labels: Sequence[Action], prop: str) -> Found | None:
        """Replay ``labels`` leniently (skipping any that is not enabled) and report
        whether ``prop`` is decided on the way."""
        spec = self.spec
        ev = Evaluator(spec, [p for p in self.props if p.name == prop])
        state = self.inits[init]
        key = ev.history_key(state)
        taken: list[Action] = []
        hit = self._first(ev.on_state(state, key, None), {prop})
        for label in labels:
            if hit is not None:
                break
            match = _match(spec.next_states(state), label)
            if match is None:
                continue
            taken.append(match[0])
            state = match[1]
            parent_key, key = key, ev.history_key(state)
            hit = self._first(ev.on_state(state, key, parent_key), {prop})
        if hit is None and not spec.next_states(state):
            hit = self._first(ev.on_terminal(state, key), {prop})
        if hit is None:
            return None
        return Found(prop, hit[1], init, taken)


class News:
    """Who learnt what last, read from the common history form (so it works for every
    spec that keeps one). A peer learns a message by delivering it, and whatever its
    signaller last learnt by receiving a side-channel signal; ``focus`` is the last
    peer that learnt something and ``news`` what each peer learnt last."""

    def __init__(self, spec: Spec, history: Callable[[State], Any], state: State) -> None:
        self.spec = spec
        self.history_of = history
        self.focus: int | None = None
        self.key = spec.history_key(state)
        self.history = history(state)
        self.lengths = [len(log) for log in self.history.logs]
        self.news: dict[int, int] = {}

    def copy(self) -> News:
        other = object.__new__(News)
        other.spec, other.history_of, other.focus = self.spec, self.history_of, self.focus
        other.key, other.history = self.key, self.history
        other.lengths, other.news = list(self.lengths), dict(self.news)
        return other

    def update(self, state: State) -> bool:
        """Follow the walk to ``state``; whether a peer learnt something on the way."""
        key = self.spec.history_key(state)
        if key is self.key:
            return False
        self.key = key
        learnt = False
        self.history = h = self.history_of(state)
        for p, log in enumerate(h.logs):
            if len(log) > self.lengths[p]:
                for e in log[self.lengths[p] :]:
                    name = e.kind_name
                    if name == "deliver":
                        self.news[p] = e.arg
                    elif name == "signal_in" and e.arg in self.news:
                        self.news[p] = self.news[e.arg]
                    else:
                        continue
                    self.focus = p
                    learnt = True
                self.lengths[p] = len(log)
        return learnt

    def knowers(self, mid: int) -> set[int]:
        """The peers whose own events show ``mid``: its sender and who delivered it."""
        out = set()
        for p, log in enumerate(self.history.logs):
            if any(e.arg == mid and e.kind_name in ("send", "deliver") for e in log):
                out.add(p)
        return out

    def fresh(self) -> bool:
        """Whether the focus peer's news is not yet known to all its addressees."""
        mid = self.news.get(self.focus) if self.focus is not None else None
        if mid is None:
            return False
        return bool(set(self.history.messages[mid].dests) - self.knowers(mid))

    def spreads(self, state: State, knowers: set[int]) -> bool:
        """Whether the focus peer's step to ``state`` starts telling something to peers
        that do not know its news (``knowers`` do): a send or a signal addressed only
        to them."""
        h = self.history_of(state)
        p = self.focus
        told: set[int] = set()
        for e in h.logs[p][self.lengths[p] :]:
            name = e.kind_name
            if name == "send":
                told |= set(h.messages[e.arg].dests)
            elif name == "signal_out":
                told.add(e.arg)
        return bool(told) and not told & knowers


def action_kind(label: Action) -> str:
    """The swarm key of an action: its name and, by the specs' convention, the peer
    that takes it (its first argument)."""
    if len(label) > 1:
        return f"{label[0]}:{label[1]}"
    return str(label[0])


def _match(succ: Sequence[tuple[Action, State]], label: Action) -> tuple[Action, State] | None:
    """The enabled action ``label`` stands for: itself, or else the same kind of step by
    the same peer (``label[:2]``) agreeing with it on the most arguments. Removing an
    earlier step can renumber what a later one refers to (a peer's second message
    becomes its first); this keeps the later step in the walk."""
    same_kind = []
    for lab, state in succ:
        if lab == label:
            return lab, state
        if lab[:2] == label[:2] and len(lab) == len(label):
            same_kind.append((sum(a == b for a, b in zip(lab, label)), lab, state))
    if not same_kind:
        return None
    same_kind.sort(key=lambda t: -t[0])
    return same_kind[0][1], same_kind[0][2]


def path_of(spec: Spec, found: Found) -> list[tuple[Action | None, int, State]]:
    """The walk as ``(label, position, state)`` triples, as :func:`ordercheck.checker.api.trace.replay` gives."""
    state = list(spec.init_states())[found.init]
    out: list[tuple[Action | None, int, State]] = [(None, found.init, state)]
    for label in found.labels:
        succ = spec.next_states(state)
        pos = next(i for i, (lab, _s) in enumerate(succ) if lab == label)
        state = succ[pos][1]
        out.append((label, pos, state))
    return out
