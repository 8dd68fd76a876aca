"""Shrinking a violating walk of :mod:`ordercheck.checker.simulate.walk` to a short run.

Three passes, repeated until none makes the run shorter: :func:`minimise` removes steps
(delta debugging), :func:`substitute` swaps single steps for siblings of the same kind
(a send to fewer peers), :func:`shortest_with_same_actions` searches breadth-first among
the runs made of the remaining actions only. Every candidate is replayed on the model,
so the result is always a real run that breaks the same property.
"""

from __future__ import annotations

from ordercheck.checker.api.spec import Action, Spec, State
from ordercheck.checker.simulate.walk import Found, Simulator, action_kind


def minimise(sim: Simulator, found: Found) -> Found:
    """Remove steps while the same property still breaks.

    Delta debugging over the walk's action labels: try removing chunks of steps, from
    half the walk down to single steps; a replay skips any later step that no longer
    fits, so removing a step also removes what depended on it.
    """
    best = found
    while True:
        before = len(best.labels)
        chunk = max(1, before // 2)
        while True:
            start = len(best.labels) - chunk
            while start >= 0 and best.labels:
                candidate = best.labels[:start] + best.labels[start + chunk :]
                again = sim.replay_labels(best.init, candidate, best.prop)
                if again is not None and len(again.labels) < len(best.labels):
                    best = again
                    start = min(start, len(best.labels) - chunk)
                else:
                    start -= chunk if chunk > 1 else 1
            if chunk == 1:
                break
            chunk //= 2
        if len(best.labels) >= before:
            return best


class _Restricted(Spec):
    """A spec that offers only the actions whose labels are in ``allowed``."""

    def __init__(self, inner: Spec, allowed: set[Action], init: int) -> None:
        super().__init__()
        self.inner = inner
        self.allowed = allowed
        self.init = init
        self.name = inner.name

    def init_states(self) -> list[State]:
        return [list(self.inner.init_states())[self.init]]

    def next_states(self, state: State) -> list[tuple[Action, State]]:
        return [(lab, s) for lab, s in self.inner.next_states(state) if lab in self.allowed]

    def history(self, state: State):
        return self.inner.history(state)

    def history_key(self, state: State):
        return self.inner.history_key(state)

    def finished(self, state: State) -> bool:
        return self.inner.finished(state)


def shortest_with_same_actions(sim: Simulator, found: Found, max_states: int = 200_000) -> Found:
    """The shortest run that breaks the same property using only the actions of
    ``found`` (in any order, any subset), by breadth-first search of the model cut down
    to those actions; ``found`` itself if that search is too large or finds nothing
    shorter."""
    from ordercheck.checker.engine.bfs import Bounds, search

    restricted = _Restricted(sim.spec, set(found.labels), found.init)
    props = [p for p in sim.props if p.name == found.prop]
    out = search(restricted, props, Bounds(max_states=max_states))
    decision = out.decisions.get(found.prop)
    if decision is None:
        return found
    _init, positions = out.store.path(decision.index)
    labels: list[Action] = []
    state = restricted.init_states()[0]
    for pos in positions:
        label, state = restricted.next_states(state)[pos]
        labels.append(label)
    if len(labels) >= len(found.labels):
        return found
    return Found(found.prop, decision.explanation, found.init, labels)


def substitute(sim: Simulator, found: Found) -> Found:
    """Swap single steps for siblings: another enabled action of the same kind (a send
    to fewer peers, say) in place of each step, keeping the swap when the lenient
    replay still breaks the property in fewer steps."""
    best = found
    i = 0
    while i < len(best.labels):
        state = sim.inits[best.init]
        for label in best.labels[:i]:
            state = next(s for lab, s in sim.spec.next_states(state) if lab == label)
        mine = best.labels[i]
        improved = False
        for label, _s in sim.spec.next_states(state):
            if label == mine or action_kind(label) != action_kind(mine):
                continue
            again = sim.replay_labels(best.init, best.labels[:i] + [label] + best.labels[i + 1 :], best.prop)
            if again is not None and len(again.labels) < len(best.labels):
                best, improved = again, True
                break
        if not improved:
            i += 1
    return best


def shrink(sim: Simulator, found: Found) -> Found:
    """:func:`minimise`, :func:`substitute` and :func:`shortest_with_same_actions`,
    again until none of them makes the run shorter."""
    while True:
        best = shortest_with_same_actions(sim, substitute(sim, minimise(sim, found)))
        if len(best.labels) >= len(found.labels):
            return best
        found = best
