"""One model's ledger: the level rules of :mod:`ordercheck.checker.engine.rules` applied to its
counts, decisions and stop, once for every engine.

A :class:`Ledger` is what a breadth-first search of one model carries from level to
level besides its states: the decisions (the first finding of each property, in the
level's order, wins), the properties still open, the depth, the transitions, the
initial states, whether an edge may close a cycle, the bound met and whether the
search stops, and each level's time split. It is held by the local engine's level loop
(:class:`ordercheck.checker.engine.loop.LevelLoop`, for its one-process and sharded backends) and
by each model of a Spark search (:class:`ordercheck.checker.spark.bfs._ModelRun`); the backends
expand and store, and ask the ledger at each point where a rule applies:

* :meth:`Ledger.start`: before the first level, the time limit's deadline, and the stop
  when every property was decided on the initial states (with ``stop_when_decided``);
* :meth:`Ledger.begin_level`: whether the level is the depth bound's;
* :meth:`Ledger.record`: decide each property of a finding not decided before;
* :meth:`Ledger.settle`: where a level ends, from its arrays (the state bound, every
  property decided, :func:`ordercheck.checker.engine.rules.settle`), its transitions counted;
* :meth:`Ledger.stop_at`: a stop and its reason (``max_states``, ``time_limit``,
  ``memory``); :meth:`Ledger.beyond_depth_bound`: a successor not visited at the depth
  bound (``max_depth``, the search goes on);
* :meth:`Ledger.back_edge`, :attr:`Ledger.wants_back_edges`: an edge that can close a
  cycle, noticed until the first when something reads it
  (:func:`ordercheck.checker.engine.rules.tracks_cycles`);
* :meth:`Ledger.end_level`: the level boundary, the depth
  (:func:`ordercheck.checker.engine.rules.next_depth`) and the time limit between levels;
* :meth:`Ledger.fill`: the outcome's counts, bound, completeness (:meth:`Ledger.complete`)
  and levels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

import numpy as np

from ordercheck.checker.api.result import LevelTiming
from ordercheck.checker.engine import rules
from ordercheck.checker.engine.outcome import Bounds, Decision, SearchOutcome

D = TypeVar("D")
"""What a decision records: a :class:`~ordercheck.checker.engine.outcome.Decision` (a state's
number) locally, an event (a state's key and fingerprint) on Spark."""


def decided_at(index: int, found: Iterable[tuple[str, str]]) -> list[tuple[str, Decision]]:
    """Findings ``(name, sentence)`` at state number ``index``, as a local engine's
    ledger records them."""
    return [(name, Decision(index, sentence)) for name, sentence in found]


class Ledger(Generic[D]):
    """One model's bookkeeping from level to level (see the module docstring).

    ``names``: the properties, in order; ``on_decide(name)`` is told of each decision
    (the local engine's evaluator stops checking the property)."""

    def __init__(self, names: Sequence[str], bounds: Bounds, *, stop_when_decided: bool, track_cycles: bool,
                 on_decide: Callable[[str], None] | None = None) -> None:
        self.bounds = bounds
        self.stop_when_decided = stop_when_decided
        self.track_cycles = track_cycles
        self.on_decide = on_decide
        self.open: list[str] = list(names)  # the properties not decided, in order
        self.decisions: dict[str, D] = {}
        self.maybe_cyclic = False  # an edge leads back to a level at or above its source
        self.bound: str | None = None
        self.stop = False
        self.depth = 0  # the levels below the first that hold states
        self.transitions = 0
        self.initial_states = 0
        self.at_depth_bound = False  # the level being searched is the depth bound's
        self.deadline: float | None = None
        self.levels: list[LevelTiming] = []  # each level's time split, in order

    # -- decisions -------------------------------------------------------------------------

    def record(self, found: Iterable[tuple[str, D]]) -> bool:
        """Decide each property of ``found`` (``(name, decision)``) not decided before:
        the first finding of a property in the level's order is its decision. Whether
        every property is now decided and the search stops when they are."""
        decisions = self.decisions
        for name, decision in found:
            if name not in decisions:
                decisions[name] = decision
                if name in self.open:
                    self.open.remove(name)
                if self.on_decide is not None:
                    self.on_decide(name)
        return self.all_decided

    @property
    def all_decided(self) -> bool:
        """Every property is decided and the search stops when they are."""
        return self.stop_when_decided and not self.open

    # -- bounds and stops ------------------------------------------------------------------

    def start(self, started: float) -> None:
        """Before the first level: the time limit counts from ``started`` (monotonic
        seconds); with every property decided on the initial states the search stops."""
        limit = self.bounds.time_limit
        self.deadline = None if limit is None else started + limit
        self.stop = self.all_decided

    def begin_level(self) -> bool:
        """A level at :attr:`depth` begins: whether it is the depth bound's (expanded,
        nothing added: :func:`~ordercheck.checker.engine.rules.depth_bound_reached`)."""
        self.at_depth_bound = rules.depth_bound_reached(self.bounds.max_depth, self.depth)
        return self.at_depth_bound

    def stop_at(self, bound: str) -> None:
        """The search stops at ``bound`` (``max_states``, ``time_limit``, ``memory``)."""
        self.bound = bound
        self.stop = True

    def beyond_depth_bound(self) -> None:
        """A successor not visited before was generated at the depth bound: the bound
        ``max_depth`` was met (the level still ends where the other rules end it)."""
        self.bound = self.bound or "max_depth"

    def back_edge(self) -> None:
        """An edge into a state discovered before the level it leads to (at its source's
        depth or shallower) was met: a cycle may close, if anything reads it."""
        if self.track_cycles:
            self.maybe_cyclic = True

    @property
    def wants_back_edges(self) -> bool:
        """Whether the next level must look for an edge that can close a cycle: until
        the first, when something reads it (:func:`~ordercheck.checker.engine.rules.tracks_cycles`)."""
        return self.track_cycles and not self.maybe_cyclic

    # -- a level ---------------------------------------------------------------------------

    def room(self, stored: int, new: int) -> int:
        """How many of a level's ``new`` states are kept with ``stored`` states stored
        (the state bound, :func:`~ordercheck.checker.engine.rules.room`); at the depth bound, where
        none is kept, every one is counted."""
        return new if self.at_depth_bound else rules.room(self.bounds.max_states, stored, new)

    def settle(self, counts: np.ndarray, events: Sequence[tuple[int, int, Iterable[tuple[str, D]]]],
               keys: np.ndarray, stored: int, whole_chunks: int | None = None) -> rules.LevelEnd:
        """Decide where a level ends from its arrays (:func:`ordercheck.checker.engine.rules.settle`):
        ``counts`` by parent rank, ``events`` ``(rank, position, found)`` sorted (a
        terminal parent's at position ``-1``; ``found`` as :meth:`record` takes it),
        ``keys`` the new states' order keys sorted, ``stored`` the states stored before
        the level. The state bound keeps :meth:`room` of them (at
        the depth bound, where none is kept, every one is counted: :meth:`room`). Records
        the decisions, the level's transitions, its stop and its bound."""
        end = rules.settle(counts, events, keys, self.room(stored, len(keys)), self.all_decided, self.record,
                           whole_chunks)
        self.transitions += end.transitions
        if end.stop:
            self.stop = True
        if end.bound is not None:
            self.bound = end.bound
        return end

    def end_level(self, kept: int) -> int:
        """The level ends with ``kept`` new states (those found so far when it stopped
        inside): the depth grows by a level with states
        (:func:`~ordercheck.checker.engine.rules.next_depth`) and, when the search goes on to a
        next level, the time limit is tested. Returns the next level's states (none at
        the depth bound)."""
        next_states = 0 if self.at_depth_bound else kept
        self.depth = rules.next_depth(self.depth, kept, self.at_depth_bound)
        if next_states and not self.stop and rules.time_up(self.deadline):
            self.stop_at("time_limit")
        return next_states

    def timed(self, timing: LevelTiming) -> None:
        """Record a level's time split."""
        self.levels.append(timing)

    # -- the outcome -----------------------------------------------------------------------

    def complete(self, remaining: bool) -> bool:
        """Whether the search was complete: no bound, and no stop with ``remaining``
        states unexpanded."""
        return self.bound is None and not (self.stop and remaining)

    def fill(self, outcome: SearchOutcome, stored: int, remaining: bool,
             decisions: dict[str, Decision]) -> SearchOutcome:
        """Write the ledger into ``outcome``: the counts (``stored`` states; the depth
        counts the first level), the bound, whether the search was complete
        (:meth:`complete`, with ``remaining`` states unexpanded or not), the cycle test, the levels
        and the ``decisions`` (the ledger's own turned into
        :class:`~ordercheck.checker.engine.outcome.Decision`, where they are not)."""
        outcome.transitions = self.transitions
        outcome.depth = self.depth + 1 if stored else 0
        outcome.initial_states = self.initial_states
        outcome.bound = self.bound
        outcome.complete = self.complete(remaining)
        outcome.maybe_cyclic = self.maybe_cyclic
        outcome.levels = list(self.levels)
        outcome.decisions = decisions
        return outcome
