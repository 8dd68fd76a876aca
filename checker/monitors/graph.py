"""An acyclic graph kept in topological order as edges come and go (Pearce and Kelly's
dynamic topological sort), for the monitors whose property is "this relation has no
cycle" (``total_global``, ``global_lock``, ``synchronous``).

Each node has a position; every edge goes from a lower position to a higher one. An
edge that already agrees with the positions costs O(1). One that does not is checked by
searching forward from its head among the nodes positioned up to its tail (reaching the
tail is a cycle) and backward from its tail among those positioned from its head on;
the two regions found swap their positions. The cost is the size of the region that
had to move, which is nothing for edges that follow the order events created the nodes
in (the common case in logs). Removing an edge keeps the order valid and costs the
length of two adjacency lists.
"""

from __future__ import annotations

_INF = float("inf")


class DynamicOrder:
    """A directed acyclic graph over hashable nodes, in a topological order.

    Positions are numbers: by default nodes are numbered as they arrive; a caller may
    give each node a key of its own instead (all distinct, and never a key of another
    node, past or present: reordering hands the moved nodes' keys round among them).
    :meth:`add` refuses (returns ``False`` and leaves the graph as it was) an edge that
    would close a cycle. Parallel edges are kept (each :meth:`remove` takes one).
    """

    __slots__ = ("pos", "succ", "pred", "_next")

    def __init__(self) -> None:
        self.pos: dict[int, float] = {}
        self.succ: dict[int, list[int]] = {}
        self.pred: dict[int, list[int]] = {}
        self._next = 0

    def copy(self) -> DynamicOrder:
        """An independent copy."""
        other = DynamicOrder()
        other.pos = dict(self.pos)
        other.succ = {k: v[:] for k, v in self.succ.items()}
        other.pred = {k: v[:] for k, v in self.pred.items()}
        other._next = self._next
        return other

    def node(self, x: int, key: float | None = None) -> None:
        """Add node ``x`` unless it is there: at position ``key`` (a number no node has
        had; a good guess at its place saves reordering later), else last."""
        if x not in self.pos:
            if key is None:
                key = self._next
                self._next += 1
            self.pos[x] = key
            self.succ[x] = []
            self.pred[x] = []

    def add(self, x: int, y: int) -> bool:
        """Add the edge ``x -> y`` (adding the nodes as needed); ``False``, and nothing
        added, when ``y`` reaches ``x`` (the edge would close a cycle)."""
        pos = self.pos
        hi = pos.get(x)
        if hi is None:
            self.node(x)
            hi = pos[x]
        lo = pos.get(y)
        if lo is None:
            self.node(y)
            lo = pos[y]
        if lo > hi:  # the edge agrees with the order
            self.succ[x].append(y)
            self.pred[y].append(x)
            return True
        if x == y:
            return False
        forward = self._region(y, self.succ, -_INF, hi, x)  # reaching x is a cycle
        if forward is None:
            return False
        backward = self._region(x, self.pred, lo, _INF)
        assert backward is not None
        backward.sort(key=pos.__getitem__)
        forward.sort(key=pos.__getitem__)
        moved = backward + forward
        slots = sorted(pos[u] for u in moved)
        for u, p in zip(moved, slots):
            pos[u] = p
        self.succ[x].append(y)
        self.pred[y].append(x)
        return True

    def remove(self, x: int, y: int) -> None:
        """Remove one edge ``x -> y`` (which must be there)."""
        self.succ[x].remove(y)
        self.pred[y].remove(x)

    def reaches(self, x: int, y: int) -> bool:
        """Whether a path leads from ``x`` to ``y`` (searching only the positions
        between them)."""
        if x not in self.pos or y not in self.pos:
            return False
        if x == y:
            return True
        hi = self.pos[y]
        if self.pos[x] > hi:
            return False
        return self._region(x, self.succ, -_INF, hi, y) is None

    def _region(self, start: int, edges: dict[int, list[int]], lo: float, hi: float,
                goal: int | None = None) -> list[int] | None:
        """The nodes reached from ``start`` along ``edges`` (``succ`` or ``pred``)
        through nodes positioned strictly between ``lo`` and ``hi``, ``start`` first;
        ``None`` when the search reaches ``goal``."""
        pos = self.pos
        found = [start]
        seen = {start}
        todo = [start]
        while todo:
            u = todo.pop()
            for w in edges[u]:
                if w == goal:
                    return None
                if w not in seen and lo < pos[w] < hi:
                    seen.add(w)
                    found.append(w)
                    todo.append(w)
        return found


def backtrack(parent: dict[int, int | None], node: int) -> list[int]:
    """The path a search's ``parent`` links (``None`` at its start) lead to ``node``,
    from the start to ``node``."""
    path = []
    step: int | None = node
    while step is not None:
        path.append(step)
        step = parent[step]
    path.reverse()
    return path
