"""The level loop of the local engine, one for every backend.

:class:`LevelLoop` runs a breadth-first search level by level: it loads the last
checkpoint or starts from the initial states, writes a checkpoint at a level boundary
when one is due, asks its backend to search each level, and stops at a bound (states,
depth, time, memory), when every property is decided (with ``stop_when_decided``) or
at a signal (:mod:`ordercheck.checker.engine.interrupts`), where the state is consistent. It
records each level's time split, the decisions, coverage and whether an edge may close
a cycle (for the liveness search), and returns a
:class:`~ordercheck.checker.engine.outcome.SearchOutcome`. The rules it and its backends apply are
:mod:`ordercheck.checker.engine.rules`, applied to the model's counts, decisions and stop by its
:class:`~ordercheck.checker.engine.ledger.Ledger`.

A *backend* provides expansion and storage, by the hooks below marked abstract:

* :class:`ordercheck.checker.engine.levels.OneProcessLevels`: one process, a
  :class:`~ordercheck.checker.engine.table.CompactStore` and a frontier of chunks, merged in order;
* :class:`ordercheck.checker.engine.sharded.ShardedLevels`: shard workers that own the visited set
  (:mod:`ordercheck.checker.engine.shards`).

Spark (:mod:`ordercheck.checker.spark.bfs`) is a backend of the same rules: its driver runs a batch
of models together, level by level, over DataFrames (so it is not a subclass of this
loop), and each model's run holds a :class:`~ordercheck.checker.engine.ledger.Ledger` as this loop
does: the decisions, bounds, stop reasons, depth, transitions and outcome of every
engine are the ledger's.
"""

from __future__ import annotations

import shutil
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ordercheck.checker.api.result import LevelTiming
from ordercheck.checker.api.spec import Property, Spec
from ordercheck.checker.engine import interrupts, rules
from ordercheck.checker.engine.budget import MemoryBoundReached, MemoryBudget
from ordercheck.checker.engine.checkpoints import load
from ordercheck.checker.engine.declarations import ReductionCheck
from ordercheck.checker.engine.evaluate import Evaluator
from ordercheck.checker.engine.frontier import own_spill_dir
from ordercheck.checker.engine.ledger import Ledger, decided_at
from ordercheck.checker.engine.memory import current_rss, peak_rss, reset_peak
from ordercheck.checker.engine.outcome import Bounds, Decision, SearchOutcome
from ordercheck.checker.engine.reduce import Expander, Reductions
from ordercheck.checker.engine.resumable import LevelMark, warn

SPILL_AFTER = 1_000_000
"""A level of more states than this goes to disk (without an explicit ``spill_dir``)."""


class TimeUp(Exception):
    """The time limit passed inside a level: the search ends at the level's start."""


class LevelLoop(ABC):
    """What the level loop carries from level to level: the ledger (the counts so far,
    the decisions, the bounds and the stop), the checkpoint mark and the spill settings;
    the backend (a subclass) holds the store and the levels' states."""

    def __init__(
        self,
        spec: Spec,
        props: Sequence[Property],
        bounds: Bounds,
        *,
        progress: Any,
        stop_when_decided: bool,
        reductions: Reductions,
        workers: int,
        checkpoint: str | Path | None,
        checkpoint_every: float,
        identity: dict[str, Any] | None,
        spill_dir: str | Path | None,
        spill_after: int | None,
        budget: MemoryBudget | None = None,
    ) -> None:
        if reductions.por and bounds.max_depth is not None:
            # ordercheck.checker.engine.run turns partial-order reduction off under a depth bound:
            # a reduced path to a state can be longer than its shortest one, so a state within
            # the bound could be left unseen (with or without the cycle proviso).
            raise ValueError("partial-order reduction does not run under a depth bound (max_depth): "
                             "search unreduced, as ordercheck.checker.engine.run does")
        self.started = time.monotonic()
        reset_peak()
        self.baseline = current_rss()
        self.spec = spec
        self.props = props
        self.bounds = bounds
        self.progress = progress
        self.reductions = reductions
        self.workers = workers
        self.checkpoint_every = checkpoint_every
        self.evaluator = evaluator = Evaluator(spec, props)
        self.budget = budget
        self.outcome = SearchOutcome(store=None)
        self.fired: Counter[str] | None = Counter()  # coverage: successors generated per action name
        self.expander = Expander(spec, reductions, ReductionCheck(spec, reductions, props) if reductions.check else None)
        self.history_key = spec.history_key if evaluator.uses_history else None
        ident = dict(identity or {})
        ident.setdefault("spec", spec.name)
        ident["reductions"] = reductions.as_dict(spec)
        if reductions.check:  # --check-reductions: a resume must check what it did (only when on: older checkpoints resume)
            ident["reductions"]["check"] = True
        ident["properties"] = [p.name for p in props]
        self.ident = ident
        self.ckpt = Path(checkpoint) if checkpoint is not None else None
        # An edge into a state discovered before the level it leads to (at its source's depth
        # or shallower) is the one kind that can close a cycle: noticed, until the first,
        # whenever something reads it (rules.tracks_cycles): it sends `eventually` properties
        # to the fair-cycle search (ordercheck.checker.engine.liveness) and the fairness warning, and a
        # spec that declares itself acyclic to the check of its declaration
        # (ordercheck.checker.engine.declarations). At the depth bound, every edge into a stored state
        # is one (nothing deeper is stored).
        self.ledger: Ledger[Decision] = Ledger([p.name for p in props], bounds, stop_when_decided=stop_when_decided,
                                               track_cycles=rules.tracks_cycles(spec, props),
                                               on_decide=evaluator.decide)
        self.decisions = self.ledger.decisions
        self.own_spill = spill_dir is None
        if self.own_spill:
            spill_dir = own_spill_dir()
            if spill_after is None:
                spill_after = SPILL_AFTER
        elif spill_after is None:
            spill_after = 0
        self.spill_dir = spill_dir
        self.spill_after = spill_after
        self.worker_peak = 0  # the workers' own peak memory (a sharded backend's)
        self.searched = False  # the search loop ended without an exception
        self.phase = dict.fromkeys(rules.PHASES, 0.0)  # the current level's timed phases, in seconds
        self.busiest = 0.0  # with workers: the most seconds one spent expanding, deduplicating, checking
        self.mark = LevelMark(self.ckpt, ident)  # the level's start, for checkpoints
        self.level_start = 0  # the number of the level's first state
        self.frontier_len = 0  # the level's states
        self.elapsed_before = 0.0
        self.remaining = False  # states were left unexpanded at the end

    # -- the backend ----------------------------------------------------------------------

    @abstractmethod
    def stored(self) -> int:
        """States stored so far."""

    @abstractmethod
    def store_initial(self, fps: np.ndarray, positions: np.ndarray, level: list) -> None:
        """Store the distinct initial states ``level`` (fingerprints ``fps``, their
        ``positions`` among the spec's initial states) as the first level."""

    @abstractmethod
    def restore(self, fps: np.ndarray, parents: np.ndarray, actions: np.ndarray, frontier: Any,
                log: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> None:
        """Store a checkpoint's states and take its frontier as the level to search (and
        its edge log, where the backend keeps one: :mod:`ordercheck.checker.engine.edges`)."""

    @abstractmethod
    def search_level(self) -> tuple[int, bool]:
        """Search the level (:attr:`depth`, :attr:`frontier_len` states from
        :attr:`level_start`): expand it, store its new states, check them, count its
        coverage into the loop's fields and its transitions, decisions, cycle edges,
        stop and bound into the :attr:`ledger` (where the level ends early). Returns the
        new states kept and whether the search stopped inside the level."""

    @abstractmethod
    def next_level(self) -> None:
        """The level's new states become the level to search (or go, at the depth bound)."""

    @abstractmethod
    def checkpoint(self) -> None:
        """Write the store, the level and :attr:`mark`'s counts (a failure warns)."""

    @abstractmethod
    def give_up_level(self, write: bool) -> bool:
        """The search stops inside a level: give its work up and, with ``write``,
        checkpoint its start. Whether the backend is still in step (its figures can
        be read)."""

    @abstractmethod
    def close(self) -> None:
        """Release the backend (workers, frontiers, files), whatever happened; set
        :attr:`remaining`."""

    @abstractmethod
    def final_store(self) -> tuple[Any, int]:
        """The outcome's store (``len()`` and ``path()``) and its bytes."""

    def prepare(self) -> None:  # noqa: B027 - a hook most backends leave empty
        """What the first level needs before it is loaded or started."""

    def abandon(self) -> None:  # noqa: B027 - a hook most backends leave empty
        """Release what a failed start holds besides the spill directory."""

    def before_levels(self) -> None:  # noqa: B027 - a hook most backends leave empty
        """Inside :meth:`run`'s guard, before the first level."""

    # -- the loop ---------------------------------------------------------------------------

    def record(self, found: list[tuple[str, str]], index: int) -> None:
        """Decide each property in ``found`` (not decided before) at state ``index``
        (:meth:`~ordercheck.checker.engine.ledger.Ledger.record`)."""
        if found:
            self.ledger.record(decided_at(index, found))

    @property
    def depth(self) -> int:
        """The depth of the level being searched (the ledger's)."""
        return self.ledger.depth

    @property
    def at_depth_bound(self) -> bool:
        """The level being searched is the depth bound's (the ledger's)."""
        return self.ledger.at_depth_bound

    @property
    def all_decided(self) -> bool:
        """Every property is decided and the search stops when they are (the ledger's)."""
        return self.ledger.all_decided

    def load_or_start(self, resume: bool) -> None:
        """The first level: the last checkpoint's (with ``resume``, when there is one),
        else the initial states, stored and checked."""
        try:
            self.prepare()
            ckpt = self.ckpt
            loaded = load(ckpt, self.ident, self.spill_dir, self.spill_after) if (ckpt is not None and resume) else None
            if loaded is not None:
                self._resume(loaded)
            else:
                self._start()
        except BaseException:
            self.abandon()
            if self.own_spill:
                shutil.rmtree(self.spill_dir, ignore_errors=True)
            raise

    def _resume(self, loaded: tuple) -> None:
        ledger = self.ledger
        meta, fps, parents, actions, frontier, log = loaded
        ledger.maybe_cyclic = meta.get("maybe_cyclic", False)
        self.level_start, ledger.depth, ledger.transitions = meta["level_start"], meta["depth"], meta["transitions"]
        ledger.initial_states = meta["initial_states"]
        self.elapsed_before = meta["seconds"]
        self.fired = Counter(meta["fired"]) if meta.get("fired") is not None else None
        for name, (index, sentence) in meta["decisions"].items():
            self.record([(name, sentence)], index)
        self.restore(fps, parents, actions, frontier, log)

    def _start(self) -> None:
        evaluator, history_key = self.evaluator, self.history_key
        level, positions, fps = rules.initial_level(self.spec, self.expander.fingerprints)
        for number, s in enumerate(level):
            self.record(evaluator.on_state(s, history_key(s) if history_key else None, None), number)
        self.ledger.initial_states = len(level)
        self.store_initial(fps, positions, level)

    def run(self) -> None:
        """Level after level until no level is left, every property is decided (with
        ``stop_when_decided``) or a bound is met; the backend is closed whatever
        happens. The memory budget stops it as a bound (:meth:`_stopped_by_memory`),
        the time limit inside a level (:class:`TimeUp`) at the level's start; a signal
        stops it where its state is consistent (after a unit of work) and propagates."""
        ledger = self.ledger
        ledger.start(self.started)
        interrupts.defer()  # a signal is raised where the state is consistent (interrupts.poll)
        if self.budget is not None:
            self.budget.hold()  # room for the stop under an address-space limit (ordercheck.checker.engine.budget)
        try:
            self.before_levels()
            interrupts.watch(ledger.deadline)  # a step that never returns is interrupted (the watchdog)
            while self.frontier_len and not ledger.stop:
                began, depth, frontier_len, states = time.perf_counter(), self.depth, self.frontier_len, self.stored()
                self.mark.begin(self.meta(), states)
                if self.mark.due(self.checkpoint_every):
                    self.checkpoint()
                goes_on = self._level()
                self.timed(depth, frontier_len, self.stored() - states, time.perf_counter() - began)
                if not goes_on:
                    break
            self.searched = True
        except (TimeUp, interrupts.StepTimeUp) as exc:
            interrupts.unwatch()
            if isinstance(exc, interrupts.StepTimeUp):
                warn(str(exc))
            ledger.stop_at("time_limit")
            self.searched = self.give_up_level(write=False)
        except MemoryError as exc:  # the budget's bound (ordercheck.checker.engine.budget), or an allocation that failed
            interrupts.unwatch()
            if self.budget is not None:
                self.budget.release()  # first: the stop below needs the room
            self._stopped_by_memory(exc)
        except interrupts.Interrupted as exc:
            interrupts.unwatch()
            self.give_up_level(write=exc.safe)
            exc.checkpoint = self.mark.saved()
            raise
        finally:
            if self.budget is not None:
                self.budget.release()
            interrupts.unwatch()
            interrupts.undefer()
            self.close()

    def _level(self) -> bool:
        """One level: the backend searches it, then the level boundary's rules
        (:meth:`~ordercheck.checker.engine.ledger.Ledger.end_level`: the depth, the time limit).
        Whether the search goes on."""
        self.ledger.begin_level()
        self.phase = dict.fromkeys(rules.PHASES, 0.0)
        self.busiest = 0.0
        kept, stopped = self.search_level()
        next_states = self.ledger.end_level(kept)
        if stopped:
            return False
        self.level_start += self.frontier_len
        self.frontier_len = next_states
        self.next_level()
        if self.frontier_len:
            self.level_done()
        return True

    def level_done(self) -> None:  # noqa: B027 - a hook most backends leave empty
        """A level with a next one is done (a backend may tell the progress line)."""

    def _stopped_by_memory(self, exc: MemoryError) -> None:
        """End the search as at a bound (``"memory"``). Only a stop by the budget comes
        where the store is consistent (before an allocation, or after a unit): its
        level's checkpoint is written then."""
        outcome = self.outcome
        self.ledger.stop_at("memory")
        outcome.memory = exc if isinstance(exc, MemoryBoundReached) else None
        if self.mark.meta is not None:
            self.ledger.end_level(self.stored() - self.mark.states)
        self.searched = self.give_up_level(write=outcome.memory is not None)

    def meta(self) -> dict[str, Any]:
        """The counts at this level boundary, as a checkpoint records them."""
        ledger = self.ledger
        return {
            "level_start": self.level_start,
            "depth": ledger.depth,
            "transitions": ledger.transitions,
            "initial_states": ledger.initial_states,
            "seconds": self.elapsed_before + time.monotonic() - self.started,
            "decisions": {n: [d.index, d.explanation] for n, d in ledger.decisions.items()},
            "maybe_cyclic": ledger.maybe_cyclic,
            "fired": dict(self.fired) if self.fired is not None else None,
        }

    def timed(self, depth: int, frontier: int, new_states: int, wall: float) -> None:
        """Record the level just searched (:class:`~ordercheck.checker.api.result.LevelTiming`): the
        phases timed in :attr:`phase`, the rest of ``wall`` as ``other_s``."""
        t = self.phase
        busy = t["expand"] + t["exchange"] + t["dedup"] + t["check"]
        self.ledger.timed(LevelTiming(depth, frontier, new_states, t["expand"], t["exchange"], t["dedup"], t["check"],
                                      max(wall - busy, 0.0), self.busiest))

    def finish(self) -> SearchOutcome:
        """The outcome: counts, completeness, time and memory."""
        outcome = self.outcome
        outcome.store, outcome.store_bytes = self.final_store()
        self.ledger.fill(outcome, self.stored(), self.remaining, dict(self.ledger.decisions))
        outcome.fired = dict(self.fired) if self.fired is not None else None
        outcome.seconds = self.elapsed_before + time.monotonic() - self.started
        outcome.peak_memory_bytes = max(peak_rss() - self.baseline, 0) + self.worker_peak
        return outcome
