"""Our state counts as TLC counts the states of an export.

For most specs the module's variables hold the whole Python state, and our engine's
counts are TLC's. A spec may keep per-step checks as sticky parts of its state (our
engine has no action properties: ``bus1_impl``'s ``bad`` bits), which the module checks
as action properties instead (:attr:`~ordercheck.tla.adapters.base.ExportedProperty.step`);
its adapter's :meth:`~ordercheck.tla.adapters.base.Adapter.view` leaves those parts
out. The module's state graph is then the graph of views: a breadth-first search over
views, each explored from the first Python state found with it, counts its distinct
states, generated states and depth as TLC's breadth-first search does. That is exact
because no step reads the parts left out (they only record checks), so two states with
one view have successors with the same views; were it not so, TLC's counts would differ
from these and the cross-check would report it.

A step that changes nothing but the parts left out would be a stuttering step of the
module, which an action property ``[][A]_vars`` does not constrain: :func:`view_counts`
refuses such a step rather than let TLC miss the check it fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ordercheck.checker.api.result import Result
    from ordercheck.tla.adapters import Adapter


@dataclass(frozen=True)
class Counts:
    """A complete search's figures as TLC prints them: distinct states, states generated
    (initial states plus every successor computed) and depth (levels, the initial one
    included)."""

    distinct: int
    generated: int
    depth: int


class HiddenStep(ValueError):
    """A step that changes only the parts of the state the adapter's view leaves out."""


def result_counts(spec: Any, ours: Result) -> Counts:
    """Our engine's counts of a complete search, the initial states counted as TLC counts
    them (generated: our transitions plus every distinct initial state)."""
    stats = ours.stats
    return Counts(stats.distinct_states, stats.transitions + len(set(spec.init_states())), stats.depth)


def view_counts(adapter: Adapter) -> Counts:
    """The counts of the graph of the adapter's views of its spec's states (see the
    module's docstring); raises :class:`HiddenStep` on a step whose source and target
    have one view but differ."""
    spec = adapter.spec
    seen: set[Any] = set()
    level: list[Any] = []
    for state in spec.init_states():
        v = adapter.view(state)
        if v not in seen:
            seen.add(v)
            level.append(state)
    generated = len(level)
    depth = 0
    while level:
        depth += 1
        following: list[Any] = []
        for state in level:
            here = adapter.view(state)
            for label, succ in spec.next_states(state):
                generated += 1
                v = adapter.view(succ)
                if v == here and succ != state:
                    raise HiddenStep(f"{spec.name}: the step {label!r} changes only what the TLA+ module "
                                     f"checks as action properties, which TLC would take for stuttering")
                if v not in seen:
                    seen.add(v)
                    following.append(succ)
        level = following
    return Counts(len(seen), generated, depth)


def our_counts(adapter: Adapter, ours: Result) -> Counts:
    """Our counts of a complete search as TLC should find them on the export: the
    engine's own, or where the adapter has a view, those of the graph of views."""
    if adapter.has_view:
        return view_counts(adapter)
    return result_counts(adapter.spec, ours)
