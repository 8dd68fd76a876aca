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
        # forward from y among positions < hi; reaching x is a cycle
        forward = [y]
        seen = {y}
        todo = [y]
        succ = self.succ
        while todo:
            u = todo.pop()
            for w in succ[u]:
                if w == x:
                    return False
                if w not in seen and pos[w] < hi:
                    seen.add(w)
                    forward.append(w)
                    todo.append(w)
        backward = [x]
        back_seen = {x}
        todo = [x]
        pred = self.pred
        while todo:
            u = todo.pop()
            for w in pred[u]:
                if w not in back_seen and pos[w] > lo:
                    back_seen.add(w)
                    backward.append(w)
                    todo.append(w)
        backward.sort(key=pos.__getitem__)
        forward.sort(key=pos.__getitem__)
        moved = backward + forward
        slots = sorted(pos[u] for u in moved)
        for u, p in zip(moved, slots):
            pos[u] = p
        succ[x].append(y)
        pred[y].append(x)
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
        pos, hi = self.pos, self.pos[y]
        if pos[x] > hi:
            return False
        seen = {x}
        todo = [x]
        while todo:
            u = todo.pop()
            for w in self.succ[u]:
                if w == y:
                    return True
                if w not in seen and pos[w] < hi:
                    seen.add(w)
                    todo.append(w)
        return False
