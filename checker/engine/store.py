"""The visited-state store of the local engine.

States are numbered in the order breadth-first search discovers them. The store keeps
the fingerprint of every visited state (for membership) and, per number, the number of
its parent and the position of the action that led to it among the parent's enabled
actions. That is all a shortest trace needs: follow parents back to an initial state,
then replay the recorded action positions through the spec (:mod:`checker.api.trace`).
No full state is kept once its successors have been generated.
"""

from __future__ import annotations

from array import array


class VisitedStore:
    """Fingerprints of visited states, with parent links by discovery number.

    An initial state has parent ``-1`` and, as its action, its position among the
    spec's initial states.
    """

    __slots__ = ("seen", "parents", "actions")

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.parents = array("q")
        self.actions = array("I")

    def __len__(self) -> int:
        return len(self.parents)

    def add(self, fp: int, parent: int, action: int) -> int:
        """Record a state; return its number, or -1 if its fingerprint was seen."""
        if fp in self.seen:
            return -1
        self.seen.add(fp)
        self.parents.append(parent)
        self.actions.append(action)
        return len(self.parents) - 1

    def path(self, index: int) -> tuple[int, list[int]]:
        """The initial-state position and the action positions that reach ``index``."""
        return path_to(self.parents, self.actions, index)

    def nbytes(self) -> int:
        """Approximate bytes held by the parent links (the set is counted by RSS)."""
        return self.parents.itemsize * len(self.parents) + self.actions.itemsize * len(self.actions)


def path_to(parents, actions, index: int) -> tuple[int, list[int]]:
    """Follow parent links from state ``index`` back to an initial state (parent -1).

    Returns that initial state's position among the spec's initial states and the
    positions of the actions that lead from it to ``index``.
    """
    steps: list[int] = []
    while parents[index] >= 0:
        steps.append(actions[index])
        index = parents[index]
    steps.reverse()
    return actions[index], steps
