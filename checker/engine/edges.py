"""The edges a local search took (one process, or shard workers), kept so that a spec's
``acyclic`` declaration is decided on the graph the search explored instead of by
walking a graph again.

The check of the declaration (:func:`ordercheck.checker.engine.declarations.check_acyclic`)
starts when the search met an edge that *can* close a cycle (to a state visited at its
source's depth or shallower). Most such edges close none: two runs of different lengths
meet in a state (a hold-back peer that takes a message into its hold-back queue and
delivers it later, or delivers it at once). Where the search kept its edges, whether
the graph it explored has a cycle is decided from them by peeling states with no edge
left into them (Kahn's topological order, in array steps): the graph has a cycle
exactly when some state is never peeled. That graph is the one every verdict of the
search rests on (the reduced graph under partial-order reduction, whose states are
orbits under symmetry), and the same graph in which the absence of such an edge
already confirms the declaration; so an acyclic answer here confirms it as that
absence would, and only a graph with a cycle is walked again, depth first, to name a
cycle of the spec (:func:`~ordercheck.checker.engine.declarations.find_cycle`).

The one-process log holds each state's fingerprint by state number, and each edge as
its source's number and its target's fingerprint: 8 bytes a state and 12 an edge. It
grows within its share of the run's memory budget (:data:`LOG_SHARE`), leaving the
store room to grow as much again (:func:`log_room`), and is dropped, not the search
stopped, where it would not (the check then walks the graph as before). A checkpoint
carries the log of the levels before it (:data:`ordercheck.checker.engine.checkpoints.LOG_FILES`),
and a resume goes on with it, in one process or with shard workers.

With shard workers (:mod:`ordercheck.checker.engine.shards`) each worker keeps a
*numbered* log: the states it stores, with their numbers (16 bytes a state), and the
edges its expansions take, whatever worker owns their targets (12 bytes an edge), so
that every state and every edge is in exactly one worker's log. The main process asks
the budget for the logs' growth before each level's commit, and where it refuses, the
workers drop their logs (:mod:`ordercheck.checker.engine.sharded`). After a complete search
that the check will read them for, it gathers them into one log
(:meth:`EdgeLog.joined`), whose states are put in the order of their numbers
(:func:`by_number`) before they are peeled as one process's are. A checkpoint gathers
them the same way, and a resume with workers spreads the checkpoint's log over them
(each worker the states it owns and a share of the edges).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ordercheck.checker.engine.budget import MemoryBoundReached
from ordercheck.checker.engine.table import GrowArray

__all__ = ["LOG_SHARE", "EdgeLog", "by_number", "has_cycle", "log_room"]

LOG_SHARE = 0.25
"""An edge log may hold at most this share of the memory budget's limit."""


def log_room(budget: Any, log_bytes: int, extra: int, search_bytes: int) -> None:
    """Raise :class:`~ordercheck.checker.engine.budget.MemoryBoundReached` unless an edge log
    holding ``log_bytes`` may take ``extra`` bytes more from ``budget`` (a
    :class:`~ordercheck.checker.engine.budget.MemoryBudget`): the log stays within
    :data:`LOG_SHARE` of the limit, and the budget keeps room for the growth and
    ``search_bytes`` more (what the search's own store would take to grow next), so
    that the log, which only saves the walk of the graph after the search, never
    makes the search itself stop at its memory bound: refused, it is dropped first."""
    limit = getattr(budget, "limit", None)
    if limit is not None and log_bytes + extra > limit * LOG_SHARE:
        raise MemoryBoundReached(log_bytes + extra, int(limit * LOG_SHARE), "the edge log's share of memory")
    budget.reserve(extra + search_bytes)


class EdgeLog:
    """The states and edges (source number, target fingerprint) of a search, in the
    order it stored and took them. The states are fingerprints by state number, or,
    ``numbered``, fingerprints with their numbers (a shard worker's: the states it
    owns, in any order). ``reserve(bytes)``, when given, is asked before each growth and
    may raise :class:`~ordercheck.checker.engine.budget.MemoryBoundReached`: the log is then
    dropped (:attr:`kept` is false) and the search goes on."""

    def __init__(self, reserve: Callable[[int], None] | None = None, numbered: bool = False) -> None:
        self.reserve = reserve
        self.numbers: GrowArray | None = GrowArray(np.int64, 1 << 12) if numbered else None
        self.nodes: GrowArray | None = GrowArray(np.uint64, 1 << 12)
        self.sources: GrowArray | None = GrowArray(np.int32, 1 << 12)
        self.targets: GrowArray | None = GrowArray(np.uint64, 1 << 12)

    @classmethod
    def joined(cls, parts: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
               reserve: Callable[[int], None] | None = None) -> EdgeLog:
        """One numbered log of the ``parts`` of several (:meth:`part`: the shard workers'
        logs, gathered), asking ``reserve`` when it decides."""
        log = cls(reserve, numbered=True)
        assert log.numbers is not None and log.nodes is not None and log.sources is not None and log.targets is not None
        for i, array in enumerate((log.numbers, log.nodes, log.sources, log.targets)):
            array.buf = np.concatenate([p[i].astype(array.buf.dtype, copy=False) for p in parts])
            array.n = len(array.buf)
        return log

    @property
    def kept(self) -> bool:
        """Whether the log still holds every state and edge added (not dropped)."""
        return self.nodes is not None

    def drop(self) -> None:
        """Forget everything: the log can no longer decide anything."""
        self.numbers = self.nodes = self.sources = self.targets = None

    def add_states(self, fps: np.ndarray, numbers: np.ndarray | None = None) -> None:
        """The search numbered these states next, in this order (a numbered log: the
        states of ``numbers``)."""
        if self.numbers is not None and numbers is not None:
            self._grow(self.numbers, numbers)
        if self.nodes is not None:
            self._grow(self.nodes, fps)

    def add_edges(self, sources: np.ndarray, fps: np.ndarray) -> None:
        """Edges from the states numbered ``sources`` to the states of fingerprints
        ``fps`` (one each, stored before or among the states added with them)."""
        if self.sources is None or self.targets is None:
            return
        if len(sources) and int(sources.max()) >= 1 << 31:  # past what the sources' int32 holds
            self.drop()
            return
        self._grow(self.sources, sources)
        if self.targets is not None:
            self._grow(self.targets, fps)

    def _grow(self, array: GrowArray, values: np.ndarray) -> None:
        need = len(array) + len(values)
        if need > len(array.buf) and self.reserve is not None:
            try:
                self.reserve(2 * need * array.buf.itemsize)  # the grown array, and room to decide later
            except MemoryBoundReached:
                self.drop()
                return
        array.extend(values)

    def growth(self, states: int, edges: int) -> int:
        """The bytes the log allocates to take ``states`` more states and ``edges`` more
        edges (nothing once dropped)."""
        if self.nodes is None or self.sources is None or self.targets is None:
            return 0
        grown = [(self.nodes, states), (self.sources, edges), (self.targets, edges)]
        if self.numbers is not None:
            grown.append((self.numbers, states))
        return sum(array.growth(len(array) + more) for array, more in grown)

    def nbytes(self) -> int:
        """The bytes the log holds."""
        if self.nodes is None or self.sources is None or self.targets is None:
            return 0
        numbered = self.numbers.nbytes if self.numbers is not None else 0
        return numbered + self.nodes.nbytes + self.sources.nbytes + self.targets.nbytes

    def part(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """A numbered log's states and edges as (numbers, fingerprints, sources,
        targets), for :meth:`joined`; ``None`` once dropped."""
        if self.numbers is None or self.nodes is None or self.sources is None or self.targets is None:
            return None
        return self.numbers.view(), self.nodes.view(), self.sources.view(), self.targets.view()

    def acyclic(self, states: int) -> bool | None:
        """Whether the logged graph of ``states`` states is acyclic; ``None`` when the log
        cannot tell (dropped, holding another number of states, or another set of
        numbers than ``0 .. states - 1``, an edge to a state not logged, or no memory to
        decide in)."""
        if self.nodes is None or self.sources is None or self.targets is None or len(self.nodes) != states:
            return None
        if len(self.sources) != len(self.targets):
            return None
        try:
            if self.reserve is not None:
                self.reserve(40 * (len(self.nodes) + len(self.targets)))  # has_cycle's arrays, at most
            nodes = self.nodes.view()
            if self.numbers is not None:
                nodes = by_number(self.numbers.view(), nodes)
                if nodes is None:
                    return None
            found = has_cycle(nodes, self.sources.view(), self.targets.view())
        except MemoryError:  # the budget's refusal included: the graph is walked instead
            return None
        return None if found is None else not found


def by_number(numbers: np.ndarray, fps: np.ndarray) -> np.ndarray | None:
    """The fingerprints ``fps`` of the states ``numbers`` put in the order of their
    numbers (as :func:`has_cycle` takes them); ``None`` unless the numbers are ``0 ..
    len(numbers) - 1``, each once."""
    n = len(numbers)
    if not n:
        return fps[:0]
    if int(numbers.min()) < 0 or int(numbers.max()) >= n:
        return None
    placed = np.zeros(n, dtype=bool)
    placed[numbers] = True
    if not placed.all():  # n numbers in range, none missing: each once
        return None
    ordered = np.empty(n, dtype=fps.dtype)
    ordered[numbers] = fps
    return ordered


def has_cycle(nodes: np.ndarray, sources: np.ndarray, targets: np.ndarray) -> bool | None:
    """Whether the directed graph has a cycle: its states are numbered by their position
    in ``nodes`` (distinct fingerprints), its edges go from state ``sources[i]`` to the
    state of fingerprint ``targets[i]``. ``None`` when a target is not among ``nodes``, or
    a source not among their numbers.

    States with no edge left into them are removed round by round, with their edges; a
    cycle keeps its states from ever being removed, and a graph without one loses every
    state (in as many rounds as its longest path has states)."""
    n = len(nodes)
    if not len(targets):
        return False
    order = np.argsort(nodes)
    ranked = nodes[order]
    at = np.searchsorted(ranked, targets)
    at[at == n] = 0
    if not np.array_equal(ranked[at], targets):
        return None
    dest = order[at]
    del ranked, at
    src = sources.astype(np.int64, copy=False)
    if int(src.min()) < 0 or int(src.max()) >= n:
        return None  # a source not among the states
    if bool((src == dest).any()):
        return True  # a step that returns to its own state
    by_source = np.argsort(src, kind="stable")
    dest = dest[by_source]  # the edges grouped by source
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=starts[1:])
    del by_source
    indegree = np.bincount(dest, minlength=n)
    ready = np.flatnonzero(indegree == 0)
    removed = 0
    while ready.size:
        removed += ready.size
        first = starts[ready]
        counts = starts[ready + 1] - first
        total = int(counts.sum())
        if not total:
            break
        # the positions of the ready states' edges: first .. first + count - 1 for each
        offsets = np.repeat(first - (np.cumsum(counts) - counts), counts) + np.arange(total)
        hit, times = np.unique(dest[offsets], return_counts=True)
        indegree[hit] -= times
        ready = hit[indegree[hit] == 0]
    return removed != n
