"""Deciding properties on states as an engine meets them.

Shared by every engine: the local breadth-first search, the Spark engine and random
simulation all hand states to an :class:`Evaluator` and get back the properties that a
state decides (a violated invariant, a reached ``sometimes`` target, an outstanding
``eventually`` at a terminal state).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from checker.api.spec import Property, Spec, State

CACHE_LIMIT = 1 << 12


class Evaluator:
    """Checks the still-undecided properties of a spec on states.

    History checks run on ``self.history(state)`` (``spec.history`` unless a caller
    that keeps histories itself replaces it) and are cached by
    ``spec.history_key(state)``; a successor whose history key is its parent's (the
    same object) is not re-checked, since its history is the parent's. Nor is a check
    re-run on a successor whose history extends its parent's only by events the check's
    :attr:`~checker.api.spec.Property.changed_by` leaves out (:meth:`Spec.history_growth`
    says which were appended): its outcome is the parent's, already reported.
    """

    def __init__(self, spec: Spec, props: Sequence[Property]) -> None:
        self.spec = spec
        self.props = list(props)
        self.open: set[str] = {p.name for p in props}
        self._cache: dict[Hashable, tuple[tuple[str, str], ...]] = {}
        self._terminal_cache: dict[Hashable, tuple[tuple[str, str], ...]] = {}
        self.history = spec.history
        self._growth_memo: dict[frozenset[str], list[Property]] = {}
        self._rebuild()

    def _rebuild(self) -> None:
        live = [p for p in self.props if p.name in self.open]
        self.state_checks = [p for p in live if p.kind != "eventually" and p.over == "state"]
        self.history_checks = [p for p in live if p.kind != "eventually" and p.over == "history"]
        self.terminal_state = [p for p in live if p.kind == "eventually" and p.over == "state"]
        self.terminal_history = [p for p in live if p.kind == "eventually" and p.over == "history"]
        self.uses_history = bool(self.history_checks or self.terminal_history)
        self._growth_memo.clear()

    def _checks_for(self, grown: frozenset[str]) -> list[Property]:
        """The history checks an extension by events of kinds ``grown`` can affect."""
        checks = self._growth_memo.get(grown)
        if checks is None:
            checks = [p for p in self.history_checks if p.changed_by is None or not grown.isdisjoint(p.changed_by)]
            if len(checks) == len(self.history_checks):
                checks = self.history_checks
            self._growth_memo[grown] = checks
        return checks

    @property
    def done(self) -> bool:
        """Every property is decided; searching further changes no verdict."""
        return not self.open

    def decide(self, name: str) -> None:
        """Stop checking ``name``: its verdict is known."""
        if name in self.open:
            self.open.discard(name)
            self._rebuild()

    def history_key(self, state: State) -> Hashable | None:
        if not self.uses_history:
            return None
        return self.spec.history_key(state)

    def on_state(self, state: State, key: Any, parent_key: Any) -> list[tuple[str, str]]:
        """The properties ``state`` decides: ``(name, sentence)`` pairs."""
        found: list[tuple[str, str]] = []
        for p in self.state_checks:
            out = p.check(state)
            if out is not None and out is not False:
                found.append((p.name, _sentence(p, out)))
        if self.history_checks and (key is None or key is not parent_key):
            cached = self._cache.get(key) if key is not None else None
            if cached is None:
                checks = self.history_checks
                grown = self.spec.history_growth(parent_key, key) if parent_key is not None else None
                if grown is not None:
                    checks = self._checks_for(grown)
                hits = []
                if checks:
                    h = self.history(state)
                    for p in checks:
                        out = p.check(h)
                        if out is not None and out is not False:
                            hits.append((p.name, _sentence(p, out)))
                cached = tuple(hits)
                # Only a verdict of every check may stand for the key's history.
                if key is not None and checks is self.history_checks:
                    if len(self._cache) >= CACHE_LIMIT:
                        self._cache.clear()
                    self._cache[key] = cached
            found.extend(hit for hit in cached if hit[0] in self.open)
        return found

    def on_terminal(self, state: State, key: Any) -> list[tuple[str, str]]:
        """The ``eventually`` properties still outstanding in a terminal state."""
        found: list[tuple[str, str]] = []
        for p in self.terminal_state:
            out = p.check(state)
            if out is not None and out is not False:
                found.append((p.name, _sentence(p, out)))
        if self.terminal_history:
            cached = self._terminal_cache.get(key) if key is not None else None
            if cached is None:
                h = self.history(state)
                hits = []
                for p in self.terminal_history:
                    out = p.check(h)
                    if out is not None and out is not False:
                        hits.append((p.name, _sentence(p, out)))
                cached = tuple(hits)
                if key is not None:
                    if len(self._terminal_cache) >= CACHE_LIMIT:
                        self._terminal_cache.clear()
                    self._terminal_cache[key] = cached
            found.extend(hit for hit in cached if hit[0] in self.open)
        return found


def _sentence(p: Property, out: Any) -> str:
    if isinstance(out, str):
        return out
    if p.kind == "sometimes":
        return f"{p.name} is reached"
    return f"{p.name} does not hold"
