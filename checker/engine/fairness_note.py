"""The fairness warning: a looping spec, an `eventually` property, and no fairness.

Without declared fairness the only assumption is that a run does not stop while some
action is enabled; a run may go round any loop of the state graph for ever, neglecting
every other process. An ``eventually`` property then fails on such a loop whenever it
keeps something outstanding, and the user reads a protocol bug into what is a missing
fairness assumption. When a model checks an ``eventually`` property on a spec that
declares no fairness and whose state graph has a cycle, the result carries a warning
naming the actions of one loop (the lasso's, when the property failed on one) and how
to declare fairness.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ordercheck.checker.api.spec import Property, Spec

GUIDE = "docs/howto/fairness-and-liveness.md"


def declares_fairness(spec: Spec) -> bool:
    """Whether ``spec`` declares any fairness (``fairness`` or its own
    ``fairness_class``)."""
    return bool(spec.fairness) or type(spec).fairness_class is not Spec.fairness_class


def fairness_warning(spec: Spec, props: Sequence[Property], maybe_cyclic: bool, result: Any, bounds: Any) -> str | None:
    """The warning for ``result`` (a :class:`~ordercheck.checker.api.result.Result`), or ``None``.

    ``maybe_cyclic`` is the search's finding that some edge may close a cycle. The loop
    named is the lasso of a violated ``eventually`` property when there is one, else a
    cycle found by exploring the graph again (within ``bounds``).
    """
    eventually = [p.name for p in props if p.kind == "eventually"]
    if not eventually or declares_fairness(spec) or spec.acyclic or not maybe_cyclic:
        return None
    loop = _lasso_loop(result) or find_loop(spec, bounds)
    if not loop:
        return None
    names = ", ".join(eventually)
    return (
        f"fairness: {spec.name} declares no fairness, and a run can repeat the loop "
        f"({'; '.join(loop)}) for ever; {names} may fail only because such a run neglects the other "
        f"processes, not through a protocol bug. Declare the actions that must not be neglected, "
        f'e.g. fairness = {{"deliver": "weak"}} (see {GUIDE})'
    )


def _lasso_loop(result: Any) -> list[str] | None:
    for p in result.properties.values():
        if p.loop_start is not None and p.trace:
            return [s.action or "" for s in p.trace[p.loop_start + 1 :]]
    return None


def find_loop(spec: Spec, bounds: Any) -> list[str] | None:
    """The actions of one cycle of ``spec``'s state graph (the one through the state
    nearest an initial state), or ``None`` when the explored graph has none."""
    from ordercheck.checker.engine.liveness import _edge_label, _has_cycle, _route, components, explore

    g = explore(spec, [], bounds)
    n = len(g.offsets) - 1
    best = None
    for comp in components(g, range(n), set(range(n))):
        if _has_cycle(g, comp) and (best is None or min(comp) < min(best)):
            best = comp
    if best is None:
        return None
    inside = set(best)
    entry = min(best)
    first = next(e for e in g.edges(entry) if g.dst[e] in inside)
    edges = [first] + (_route(g, inside, g.dst[first], {entry}) or [])
    return [_edge_label(spec, g, e) for e in edges]
