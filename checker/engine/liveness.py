"""Liveness on the whole state graph: fair cycles that keep something outstanding.

An ``eventually`` property's ``pending`` function says, for a state, what is still
outstanding. The property holds when no fair run keeps something outstanding from some
point on, for ever (in TLA+, ``[]<>(nothing outstanding)``): a run violates it if it ends
with something outstanding (a terminal state: the breadth-first search checks those) or
if it can go round a cycle of states that all have something outstanding while treating
every action fairly. (The ghost history only grows, so it is the same all round a
cycle: the same messages stay undelivered.) This module finds such cycles:

1. Explore the whole graph breadth-first, numbering states, with each state's enabled
   fairness obligations (see :meth:`ordercheck.checker.api.spec.Spec.fairness_class`), its outstanding
   properties as a bitmask, and its outgoing edges in flat arrays (no graph library: a
   model with millions of states stays a few arrays of ints).
2. For each property, take the states where it is outstanding and compute their
   strongly connected components (Tarjan's algorithm, iterative).
3. A component with a cycle holds a *fair* cycle when every weakly fair obligation is
   either taken on one of its edges or disabled in one of its states; and every
   strongly fair one is either taken on one of its edges or, after removing the states
   where it is enabled, the rest still holds a fair cycle (checked recursively).
4. The counterexample is a lasso: the shortest path to the component, then a loop
   through the component that takes (or passes a state disabling) each obligation.
"""

from __future__ import annotations

import sys
from array import array
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ordercheck.checker.api.rendering import rendering_of
from ordercheck.checker.api.spec import Property, Spec
from ordercheck.checker.engine.bfs import NO_BOUNDS, Bounds
from ordercheck.checker.engine.fingerprint import fingerprint

NO_CLASS = 0xFFFFFFFF


@dataclass
class Lasso:
    """A violation: the path to the loop, then the loop (action positions)."""

    prop: str
    explanation: str
    init: int
    prefix: list[int]
    loop: list[int]


@dataclass
class Graph:
    """The explored state graph in flat arrays, indexed by state number."""

    parents: array = field(default_factory=lambda: array("q"))
    actions: array = field(default_factory=lambda: array("I"))
    pending: array = field(default_factory=lambda: array("Q"))
    enabled: array = field(default_factory=lambda: array("I"))  # id of the enabled-obligations set
    offsets: array = field(default_factory=lambda: array("q", [0]))
    dst: array = field(default_factory=lambda: array("I"))
    cls: array = field(default_factory=lambda: array("I"))  # obligation id of the edge's action
    pos: array = field(default_factory=lambda: array("I"))
    obligations: list[tuple[str, tuple]] = field(default_factory=list)
    enabled_sets: list[frozenset[int]] = field(default_factory=list)
    sentences: dict[tuple[int, int], str] = field(default_factory=dict)
    complete: bool = True

    def __len__(self) -> int:
        return len(self.parents)

    def edges(self, u: int) -> range:
        return range(self.offsets[u], self.offsets[u + 1])

    def path(self, index: int) -> tuple[int, list[int]]:
        """The initial-state position and the action positions that reach state ``index``
        (its parent links followed back to an initial state, parent -1)."""
        steps: list[int] = []
        parents, actions = self.parents, self.actions
        while parents[index] >= 0:
            steps.append(actions[index])
            index = parents[index]
        steps.reverse()
        return actions[index], steps


def explore(spec: Spec, props: Sequence[Property], bounds: Bounds = NO_BOUNDS) -> Graph:
    """Build the whole state graph with what liveness checking needs."""
    if len(props) > 64:
        raise ValueError("at most 64 eventually-properties at once")
    g = Graph()
    index: dict[int, int] = {}
    obligation_ids: dict[tuple[str, tuple], int] = {}
    set_ids: dict[frozenset[int], int] = {}
    states: deque = deque()

    def pending_mask(state: object, number: int) -> int:
        mask = 0
        arg = None
        for bit, p in enumerate(props):
            if p.over == "history":
                arg = spec.history(state) if arg is None else arg
                out = p.check(arg)
            else:
                out = p.check(state)
            if out is not None and out is not False:
                mask |= 1 << bit
                if (bit, number) not in g.sentences:
                    g.sentences[(bit, number)] = _pending_sentence(p, arg, out)
        return mask

    def add(state: object, parent: int, action: int) -> int:
        fp = fingerprint(state)
        known = index.get(fp)
        if known is not None:
            return known
        number = len(g.parents)
        index[fp] = number
        g.parents.append(parent)
        g.actions.append(action)
        g.pending.append(pending_mask(state, number))
        states.append(state)
        return number

    for i, s in enumerate(spec.init_states()):
        add(s, -1, i)
    expanded = 0
    while states:
        if bounds.max_states is not None and len(g.parents) > bounds.max_states:
            g.complete = False
            break
        state = states.popleft()
        u = expanded
        expanded += 1
        enabled: set[int] = set()
        for position, (label, t) in enumerate(spec.next_states(state)):
            v = add(t, u, position)
            fc = spec.fairness_class(label)
            cid = NO_CLASS
            if fc is not None:
                cid = obligation_ids.setdefault(fc, len(obligation_ids))
                if cid == len(g.obligations):
                    g.obligations.append(fc)
                enabled.add(cid)
            g.dst.append(v)
            g.cls.append(cid)
            g.pos.append(position)
        key = frozenset(enabled)
        g.enabled.append(set_ids.setdefault(key, len(set_ids)))
        if len(g.enabled_sets) < len(set_ids):
            g.enabled_sets.append(key)
        g.offsets.append(len(g.dst))
    return g


def components(g: Graph, nodes: Iterable[int], allowed: set[int] | None = None) -> list[list[int]]:
    """Strongly connected components of the subgraph induced by ``allowed`` (Tarjan,
    iterative), visiting roots in ``nodes`` order."""
    allowed = set(nodes) if allowed is None else allowed
    number: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in sorted(allowed):
        if root in number:
            continue
        work = [(root, iter(g.edges(root)))]
        number[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for e in it:
                w = g.dst[e]
                if w not in allowed:
                    continue
                if w not in number:
                    number[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(g.edges(w))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], number[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == number[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def _has_cycle(g: Graph, comp: Sequence[int]) -> bool:
    if len(comp) > 1:
        return True
    u = comp[0]
    return any(g.dst[e] == u for e in g.edges(u))


def fair_part(g: Graph, comp: set[int]) -> set[int] | None:
    """A set of states inside ``comp`` that holds a fair cycle, or ``None``."""
    taken: dict[int, bool] = {}
    present: set[int] = set()
    for u in comp:
        present |= g.enabled_sets[g.enabled[u]]
        for e in g.edges(u):
            if g.dst[e] in comp and g.cls[e] != NO_CLASS:
                taken[g.cls[e]] = True
    for cid in sorted(present):
        kind, _key = g.obligations[cid]
        if taken.get(cid):
            continue
        where_enabled = {u for u in comp if cid in g.enabled_sets[g.enabled[u]]}
        if kind == "weak":
            if len(where_enabled) == len(comp):
                return None  # enabled all along the cycle and never taken
        else:  # strong: a fair cycle must avoid the states where it is enabled
            rest = comp - where_enabled
            for sub in components(g, rest, rest):
                if _has_cycle(g, sub):
                    found = fair_part(g, set(sub))
                    if found is not None:
                        return found
            return None
    return comp


def _route(g: Graph, within: set[int], start: int, goals: set[int]) -> list[int] | None:
    """Edges (indices) of a shortest path from ``start`` to a state in ``goals``."""
    if start in goals:
        return []
    back: dict[int, tuple[int, int]] = {start: (-1, -1)}
    todo = deque([start])
    while todo:
        u = todo.popleft()
        for e in g.edges(u):
            v = g.dst[e]
            if v in within and v not in back:
                back[v] = (u, e)
                if v in goals:
                    path = []
                    while v != start:
                        v, edge = back[v]
                        path.append(edge)
                    return path[::-1]
                todo.append(v)
    return None


def lasso(g: Graph, fair: set[int]) -> tuple[int, list[int]]:
    """An entry state of ``fair`` (the one nearest an initial state) and a loop back to
    it that meets every obligation: returns the entry and the loop's edge indices."""
    entry = min(fair)
    needs: list[tuple[str, int]] = []
    present: set[int] = set()
    for u in fair:
        present |= g.enabled_sets[g.enabled[u]]
    for cid in sorted(present):
        edge = next((e for u in sorted(fair) for e in g.edges(u) if g.dst[e] in fair and g.cls[e] == cid), None)
        if edge is not None:
            needs.append(("edge", edge))
            continue
        off = next((u for u in sorted(fair) if cid not in g.enabled_sets[g.enabled[u]]), None)
        if off is not None:
            needs.append(("state", off))
    loop: list[int] = []
    here = entry
    for what, target in needs:
        if what == "edge":
            src = _source(g, target)
            loop += _route(g, fair, here, {src}) or []
            loop.append(target)
            here = g.dst[target]
        else:
            loop += _route(g, fair, here, {target}) or []
            here = target
    if not loop:
        first = next(e for e in g.edges(entry) if g.dst[e] in fair)
        loop.append(first)
        here = g.dst[first]
    loop += _route(g, fair, here, {entry}) or []
    return entry, loop


def _source(g: Graph, edge: int) -> int:
    # offsets is sorted: the source is the last state whose edges start at or before it.
    lo, hi = 0, len(g.offsets) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if g.offsets[mid] <= edge:
            lo = mid
        else:
            hi = mid - 1
    return lo


def find_lassos(spec: Spec, props: Sequence[Property], bounds: Bounds = NO_BOUNDS) -> tuple[dict[str, Lasso], Graph]:
    """Every ``eventually`` property in ``props`` that a fair cycle violates."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    g = explore(spec, props, bounds)
    found: dict[str, Lasso] = {}
    for bit, p in enumerate(props):
        outstanding = {u for u in range(len(g.offsets) - 1) if g.pending[u] >> bit & 1}
        if not outstanding:
            continue
        best: tuple[int, set[int]] | None = None
        for comp in components(g, outstanding, outstanding):
            if not _has_cycle(g, comp):
                continue
            fair = fair_part(g, set(comp))
            if fair is not None and (best is None or min(fair) < best[0]):
                best = (min(fair), fair)
        if best is None:
            continue
        entry, loop_edges = lasso(g, best[1])
        init, prefix = g.path(entry)
        sentence = g.sentences.get((bit, entry), f"{p.name} is outstanding")
        names = []
        for e in loop_edges:
            names.append(_edge_label(spec, g, e))
        explanation = (
            f"{sentence}: the run can repeat a {len(loop_edges)}-step loop ({'; '.join(names)}) for ever, "
            "a loop fair to every action the spec declares fair"
        )
        found[p.name] = Lasso(p.name, explanation, init, prefix, [g.pos[e] for e in loop_edges])
    return found, g


def _pending_sentence(p: Property, history: object, out: object) -> str:
    """What ``p`` has outstanding in a state of a fair loop: a monitor that can say it
    for a run that goes on (``outstanding()``, as ``EventualDelivery``'s) is asked on the
    history laid out as a log, so the sentence does not claim the run ends there; else
    ``p``'s own sentence."""
    ask = getattr(p.monitor, "outstanding", None) if p.over == "history" else None
    as_log = getattr(history, "as_log", None)
    if ask is not None and as_log is not None:
        log = as_log()
        monitor = p.monitor(log)
        if monitor.run(0, len(log)) is None:
            found = monitor.outstanding()
            if found is not None:
                return found.sentence
    return out if isinstance(out, str) else f"{p.name} is outstanding"


def _edge_label(spec: Spec, g: Graph, edge: int) -> str:
    init, path = g.path(_source(g, edge))
    from ordercheck.checker.api.trace import replay

    state = replay(spec, init, path)[-1][2]
    label = spec.next_states(state)[g.pos[edge]][0]
    return rendering_of(spec).format_action(label)
