"""The local engine's search loop: level-synchronous breadth-first search.

Each level's frontier (:class:`~checker.engine.frontier.Frontier`) is kept as chunks of
:data:`CHUNK` states; past the first :data:`RAW_FRONTIER` states of a level each chunk
is one ``pickle`` byte string (pickle shares repeated sub-tuples within a chunk: about
80 bytes per bus1 state, and it loads ten times faster than ``marshal`` version 2).
A level of more than ``spill_after`` states is spilled to a file in ``spill_dir`` (a
temporary directory unless one is given) and read back sequentially when its turn
comes, so memory holds the visited store, not the frontier. A chunk is expanded into
its successors with their fingerprints, and the chunks are merged *in order*: the
fingerprints go into the :class:`~checker.engine.table.CompactStore` in batch order,
the new states are numbered, checked and appended to the next frontier. This loop runs
in one process; with workers, :func:`checker.engine.bfs.search` runs
:mod:`checker.engine.sharded`'s, whose workers own shards of the visited set (no
merging process) and give the same counts, numbering and counterexamples. The
cycle proviso of partial-order reduction is decided here chunk by chunk at the merge
(:func:`_proviso`), parent by parent in the level's order; it is the rule that
:mod:`checker.engine.sharded` reproduces. Each level's time split is recorded
(:class:`~checker.api.result.LevelTiming`).

With a checkpoint directory, the store, the frontier and the statistics are written at
level boundaries (at most every ``checkpoint_every`` seconds), atomically: a new
checkpoint is written beside the old one and a small ``CURRENT`` file is then replaced
to point at it. A run resumed from a checkpoint ends with exactly the counts of an
uninterrupted run.
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from checker.api.result import LevelTiming
from checker.api.spec import Property, Spec
from checker.engine import interrupts
from checker.engine.budget import MemoryBoundReached
from checker.engine.checkpoints import load, restore
from checker.engine.declarations import ReductionCheck
from checker.engine.evaluate import Evaluator
from checker.engine.fingerprint import check_vocabulary
from checker.engine.frontier import Frontier, decode, own_spill_dir
from checker.engine.memory import current_rss, peak_rss, reset_peak
from checker.engine.reduce import Expander, Reductions
from checker.engine.resumable import LevelMark, warn
from checker.engine.table import CompactStore, FingerprintTable

CHUNK = 2048
"""States per frontier chunk: the unit of work for a worker and of the merge."""

RAW_FRONTIER = 100_000
"""Up to this many states of a level's next frontier stay Python objects; beyond it
chunks are pickled (compact, but encoding costs a few microseconds per state)."""

SPILL_AFTER = 1_000_000
"""A level of more states than this goes to disk (without an explicit ``spill_dir``)."""

VOCABULARY_CHECKS = 1000

class TimeUp(Exception):
    """The time limit passed inside a level: the search ends at the level's start."""


PHASES = ("expand", "exchange", "dedup", "check")
"""The timed phases of a level (:class:`~checker.api.result.LevelTiming`)."""


_states = decode


def _expand_local(expander: Expander, chunk: bytes | list) -> tuple:
    states = _states(chunk)
    owner, pos, succ, counts, reduced = expander.expand(states)
    return owner, pos, succ, counts, reduced, expander.fingerprints(succ), states, expander.take_fired()


def search_levels(
    spec: Spec,
    props: Sequence[Property],
    bounds: Any,
    outcome_cls: Any,
    decision_cls: Any,
    spec_error: type[Exception],
    *,
    progress: Any,
    stop_when_decided: bool,
    reductions: Reductions,
    workers: int = 1,
    checkpoint: str | Path | None = None,
    resume: bool = False,
    checkpoint_every: float = 30.0,
    identity: dict[str, Any] | None = None,
    spill_dir: str | Path | None = None,
    spill_after: int | None = None,
    budget: Any = None,
) -> Any:
    """The search behind :func:`checker.engine.bfs.search` in one process (see the
    module docstring); ``workers`` above 1 is refused: that search is
    :func:`checker.engine.sharded.search_sharded`'s.

    ``spill_dir``: where a level's frontier goes once it holds more than
    ``spill_after`` states (default: a temporary directory, :data:`SPILL_AFTER`
    states; with a ``spill_dir`` and no ``spill_after``, every level is spilled).
    ``budget``: a :class:`~checker.engine.budget.MemoryBudget`; the search stops as at
    a bound (``"memory"``) before it would pass it.

    Stopped inside a level (by the budget, or by SIGINT or SIGTERM, see
    :mod:`checker.engine.interrupts`), the search writes the checkpoint of the level's
    start when it has a checkpoint directory (:mod:`checker.engine.resumable`).

    The steps: load the last checkpoint or start from the initial states
    (:meth:`_LevelSearch.load_or_start`), then level by level
    (:meth:`_LevelSearch.run`): checkpoint when one is due, expand the level's chunks
    and merge each in order (:meth:`_LevelSearch.merge`), and decide whether the
    search goes on to the next level (:meth:`_LevelSearch.decide`).
    """
    if workers > 1:
        raise ValueError("search_levels runs in one process; with workers, use checker.engine.sharded.search_sharded")
    search = _LevelSearch(
        spec,
        props,
        bounds,
        outcome_cls,
        decision_cls,
        spec_error,
        progress=progress,
        stop_when_decided=stop_when_decided,
        reductions=reductions,
        workers=workers,
        checkpoint=checkpoint,
        checkpoint_every=checkpoint_every,
        identity=identity,
        spill_dir=spill_dir,
        spill_after=spill_after,
        budget=budget,
    )
    search.load_or_start(resume)
    search.run()
    return search.finish()


class _LevelSearch:
    """What the level loop carries from step to step: the store, the frontiers, the
    counts so far, the workers, and the bounds and checkpoint settings."""

    def __init__(
        self,
        spec: Spec,
        props: Sequence[Property],
        bounds: Any,
        outcome_cls: Any,
        decision_cls: Any,
        spec_error: type[Exception],
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
        budget: Any = None,
    ) -> None:
        self.started = time.monotonic()
        reset_peak()
        self.baseline = current_rss()
        self.spec = spec
        self.props = props
        self.bounds = bounds
        self.decision_cls = decision_cls
        self.spec_error = spec_error
        self.progress = progress
        self.stop_when_decided = stop_when_decided
        self.reductions = reductions
        self.workers = workers
        self.checkpoint_every = checkpoint_every
        self.evaluator = evaluator = Evaluator(spec, props)
        self.store = CompactStore(min(bounds.max_states or 1 << 16, 1 << 16))  # grows as the search needs
        self.budget = budget
        if budget is not None:
            self.store.guard(budget.reserve)
        self.outcome = outcome_cls(self.store)
        self.decisions = self.outcome.decisions
        self.fired: Counter[str] | None = Counter()  # coverage: successors generated per action name
        self.expander = Expander(spec, reductions, ReductionCheck(spec, reductions, props) if reductions.check else None)
        self.history_key = spec.history_key if evaluator.uses_history else None
        self.max_states = bounds.max_states
        self.max_depth = bounds.max_depth
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
        # whenever something reads it (tracks_cycles): it sends `eventually` properties to
        # the fair-cycle search (checker.engine.liveness) and the fairness warning, and a
        # spec that declares itself acyclic to the check of its declaration
        # (checker.engine.declarations). At the depth bound, every edge into a stored state
        # is one (nothing deeper is stored).
        self.track_cycles = tracks_cycles(spec, props)
        self.level_new: FingerprintTable | None = FingerprintTable(1 << 10) if self.track_cycles else None
        self.own_spill = spill_dir is None
        if self.own_spill:
            spill_dir = own_spill_dir()
            if spill_after is None:
                spill_after = SPILL_AFTER
        elif spill_after is None:
            spill_after = 0
        self.spill_dir = spill_dir
        self.spill_after = spill_after

        # With workers the search is checker.engine.sharded's subclass (which hands the
        # spill settings to its workers); this class alone runs in one process.
        self.worker_peak = 0  # the workers' own peak memory (checker.engine.sharded)
        self.searched = False  # the search loop ended without an exception
        self.levels: list[LevelTiming] = []  # each level's time split
        self.phase = dict.fromkeys(PHASES, 0.0)  # the current level's timed phases, in seconds
        self.at_depth_bound = False
        self.mark = LevelMark(self.ckpt, ident)  # the level's start, for checkpoints

    def new_frontier(self) -> Frontier:
        """An empty frontier for a level."""
        return Frontier(self.spill_dir, raw=RAW_FRONTIER, spill_after=self.spill_after)

    def record(self, found: list[tuple[str, str]], index: int) -> None:
        """Decide each property in ``found`` (not decided before) at state ``index``."""
        decisions = self.decisions
        for name, sentence in found:
            if name not in decisions:
                decisions[name] = self.decision_cls(index, sentence)
                self.evaluator.decide(name)

    # -- load or start ------------------------------------------------------------------

    def load_or_start(self, resume: bool) -> None:
        """The first frontier: the last checkpoint's (with ``resume``, when there is one),
        else the initial states, stored and checked."""
        try:
            self._prepare()
            self.level_start = 0
            self.depth = 0
            self.transitions = 0
            self.elapsed_before = 0.0
            ckpt = self.ckpt
            loaded = load(ckpt, self.ident, self.spill_dir, self.spill_after) if (ckpt is not None and resume) else None
            if loaded is not None:
                self._resume(loaded)
            else:
                self._start()
        except BaseException:
            self._abandon()
            if self.own_spill:
                shutil.rmtree(self.spill_dir, ignore_errors=True)
            raise

    def _prepare(self) -> None:
        """What the first level needs before it is loaded or started: the frontier."""
        self.frontier = self.new_frontier()

    def _abandon(self) -> None:
        """Release what a failed start holds besides the spill directory: nothing in one process."""

    def _resume(self, loaded: tuple) -> None:
        store, outcome = self.store, self.outcome
        meta, fps, parents, actions, frontier = loaded
        outcome.maybe_cyclic = meta.get("maybe_cyclic", False)
        assert self.ckpt is not None
        restore(store, fps, parents, actions, self.ckpt)
        self.level_start, self.depth, self.transitions = meta["level_start"], meta["depth"], meta["transitions"]
        outcome.initial_states = meta["initial_states"]
        self.elapsed_before = meta["seconds"]
        self.fired = Counter(meta["fired"]) if meta.get("fired") is not None else None
        for name, (index, sentence) in meta["decisions"].items():
            self.record([(name, sentence)], index)
        self.frontier = frontier

    def _start(self) -> None:
        spec, store, evaluator, history_key = self.spec, self.store, self.evaluator, self.history_key
        inits = list(spec.init_states())
        for s in inits:
            problem = check_vocabulary(s)
            if problem:
                raise self.spec_error(f"{spec.name}: initial {problem}")
        fps = self.expander.fingerprints(inits)
        level: list = []
        for i, s in enumerate(inits):
            idx = store.add(int(fps[i]), -1, i)
            if idx < 0:
                continue
            key = history_key(s) if history_key else None
            self.record(evaluator.on_state(s, key, None), idx)
            level.append(s)
        self.outcome.initial_states = len(level)
        for i in range(0, len(level), CHUNK):
            self.frontier.append(level[i : i + CHUNK])
        self.frontier.seal()

    # -- the level loop -----------------------------------------------------------------

    def run(self) -> None:
        """Level after level until the frontier is empty, every property is decided (with
        ``stop_when_decided``) or a bound is met; the workers stop and the spill
        directory goes, whatever happens. The memory budget stops it as a bound
        (:meth:`_stopped_by_memory`), the time limit inside a level (:class:`TimeUp`)
        at the level's start; a signal stops it where its state is consistent (after a
        unit of work) and propagates. :class:`~checker.engine.sharded._ShardedSearch`
        shares this loop through :meth:`_start_run`, :meth:`_levels_left` and
        :meth:`_stored`."""
        bounds = self.bounds
        self.deadline = None if bounds.time_limit is None else self.started + bounds.time_limit
        self.stop = self.stop_when_decided and self.evaluator.done
        interrupts.defer()  # a signal is raised where the state is consistent (interrupts.poll)
        if self.budget is not None:
            self.budget.hold()  # room for the stop under an address-space limit (checker.engine.budget)
        try:
            self._start_run()
            while self._levels_left() and not self.stop:
                began, depth, frontier_len, states = time.perf_counter(), self.depth, self.frontier_len, self._stored()
                self.mark.begin(self.meta(), states)
                if self.mark.due(self.checkpoint_every):
                    self.checkpoint()
                goes_on = self.expand_level()
                self.timed(depth, frontier_len, self._stored() - states, time.perf_counter() - began)
                if not goes_on:
                    break
            self.searched = True
        except TimeUp:
            self.outcome.bound = "time_limit"
            self.stop = True
            self.searched = self._save_level_start(write=False)
        except MemoryError as exc:  # the budget's bound (checker.engine.budget), or an allocation that failed
            if self.budget is not None:
                self.budget.release()  # first: the stop below needs the room
            self._stopped_by_memory(exc)
        except interrupts.Interrupted as exc:
            self._save_level_start(write=exc.safe)
            exc.checkpoint = self.mark.saved()
            raise
        finally:
            if self.budget is not None:
                self.budget.release()
            interrupts.undefer()
            self._close()

    def _start_run(self) -> None:
        """Inside :meth:`run`'s guard, before the first level: the next level's frontier."""
        self.vocabulary_checks = VOCABULARY_CHECKS
        self.frontier_len = len(self.frontier)
        self.next_frontier = self.new_frontier()

    def _levels_left(self) -> bool:
        return bool(self.frontier)

    def _stored(self) -> int:
        """States stored so far."""
        return len(self.store)

    def _stopped_by_memory(self, exc: MemoryError) -> None:
        """End the search as at a bound (``"memory"``). Only a stop by the budget comes
        where the store is consistent (before an allocation, or after a unit): its
        level's checkpoint is written then."""
        outcome = self.outcome
        outcome.bound = "memory"
        outcome.memory = exc if isinstance(exc, MemoryBoundReached) else None
        self.stop = True
        if self.mark.meta is not None and len(self.store) > self.mark.states and not self.at_depth_bound:
            self.depth += 1  # the next level's states found so far count towards the depth
        self.searched = self._save_level_start(write=outcome.memory is not None)

    def _save_level_start(self, write: bool) -> bool:
        """When the search stops inside a level: stop the workers' part of it and, with
        ``write``, write the checkpoint of the level's start; a failure warns and keeps
        the last checkpoint. Whether the workers are still in step (their peak memory can
        be asked for)."""
        mark = self.mark
        if write and mark.ckpt is not None:
            try:
                mark.save(self.store, self.frontier)
            except MemoryError:
                warn(f"no checkpoint of the stopped level (out of memory); the last one, {mark.saved() or 'none'}, is kept")
        return True

    def meta(self) -> dict[str, Any]:
        """The counts at this level boundary, as a checkpoint records them."""
        outcome = self.outcome
        return {
            "level_start": self.level_start,
            "depth": self.depth,
            "transitions": self.transitions,
            "initial_states": outcome.initial_states,
            "seconds": self.elapsed_before + time.monotonic() - self.started,
            "decisions": {n: [d.index, d.explanation] for n, d in self.decisions.items()},
            "maybe_cyclic": outcome.maybe_cyclic,
            "fired": dict(self.fired) if self.fired is not None else None,
        }

    def timed(self, depth: int, frontier: int, new_states: int, wall: float) -> None:
        """Record the level just searched (:class:`~checker.api.result.LevelTiming`): the
        phases timed in :attr:`phase`, the rest of ``wall`` as ``other_s``."""
        t = self.phase
        busy = t["expand"] + t["exchange"] + t["dedup"] + t["check"]
        self.levels.append(LevelTiming(depth, frontier, new_states, t["expand"], t["exchange"], t["dedup"], t["check"],
                                       max(wall - busy, 0.0)))

    def checkpoint(self) -> None:
        """Write the store, the frontier and the counts at this level boundary
        (:mod:`checker.engine.checkpoints`; a failed write warns and the search goes on)."""
        self.mark.save(self.store, self.frontier)

    def expand_level(self) -> bool:
        """Expand the current level chunk by chunk and merge each chunk in order; then
        :meth:`decide`. Whether the search goes on."""
        self.at_depth_bound = self.max_depth is not None and self.depth >= self.max_depth
        self.next_frontier = self.new_frontier()
        self.next_len = 0
        self.pending: list = []
        self.base = self.level_start
        self.done_parents = 0
        self.phase = phase = dict.fromkeys(PHASES, 0.0)
        clock = time.perf_counter
        results = self.expanded()
        while True:
            began = clock()
            got = next(results, None)
            phase["expand"] += clock() - began
            if got is None or self.merge(*got):
                break
        return self.decide()

    def expanded(self) -> Iterator[tuple]:
        """``(chunk, expansion)`` for each chunk of the level, in order."""
        frontier = self.frontier
        expander = self.expander
        return ((c, _expand_local(expander, c)) for c in frontier)

    def merge(self, chunk: Any, res: tuple) -> bool:
        """Merge one expanded chunk: insert its fingerprints into the store in order,
        number the new states, check properties on them and append them to the next
        frontier; meet the bounds. Whether the level ends here (the search stops)."""
        spec, spec_error, store = self.spec, self.spec_error, self.store
        evaluator, outcome, record = self.evaluator, self.outcome, self.record
        reductions, history_key, max_states = self.reductions, self.history_key, self.max_states
        stop_when_decided, next_frontier = self.stop_when_decided, self.next_frontier
        at_depth_bound, base = self.at_depth_bound, self.base
        transitions, next_len, vocabulary_checks = self.transitions, self.next_len, self.vocabulary_checks
        pending, stop, done_parents = self.pending, self.stop, self.done_parents
        try:
            owner, pos, succ, counts, reduced, fps, states, fired = res
            if reductions.proviso:
                owner, pos, succ, counts, fps = _proviso(
                    self.expander, store, states, owner, pos, succ, counts, reduced, fps
                )
                fired = Counter(fired)
                fired.update(self.expander.take_fired())  # what the full expansions added
            owner_a = np.asarray(owner, dtype=np.int64)
            pos_a = np.asarray(pos, dtype=np.int64)
            if self.fired is not None:
                self.fired.update(fired)
            if pos_a.size and pos_a.max() > 0xFFFF:
                raise spec_error(f"{spec.name}: more than 65535 enabled actions in one state")
            clock = time.perf_counter
            began = clock()
            first = len(store)
            if at_depth_bound:
                if len(fps):
                    known = store.table.contains(fps)
                    if not known.all():
                        outcome.bound = "max_depth"
                    if self.track_cycles and known.any():
                        outcome.maybe_cyclic = True  # into a state at this depth or shallower
                transitions += len(fps)
                new = np.zeros(0, dtype=np.int64)
            else:
                self.mark.reserve(len(fps))
                new = store.add_batch(fps, owner_a + base, pos_a)
                self.mark.add(fps[new])
                level_new = self.level_new
                if level_new is not None and not outcome.maybe_cyclic:
                    fresh = np.zeros(len(fps), dtype=bool)
                    fresh[new] = True
                    level_new.insert(fps[new])
                    if not level_new.contains(fps[~fresh]).all():
                        outcome.maybe_cyclic = True
            checked = clock()
            self.phase["dedup"] += checked - began
            j = 0
            offset = 0
            nnew = len(new)
            limit = nnew if max_states is None else min(nnew, max_states - first)
            nparents = len(counts)
            new = new.tolist()
            checks = bool(evaluator.state_checks or evaluator.history_checks)
            on_state = evaluator.on_state
            append = pending.append
            for k, n in enumerate(counts):
                idx = base + k
                s = states[k] if states is not None else None
                if n == 0:
                    if evaluator.terminal_state or evaluator.terminal_history:
                        key = history_key(s) if history_key else None
                        record(evaluator.on_terminal(s, key), idx)
                    # A terminal state does not end the level by itself: as the
                    # reference engine always has, the check for "every property
                    # decided" follows the next state that has successors.
                    continue
                if not at_depth_bound:
                    transitions += n
                end = offset + n
                parent_key = history_key(s) if history_key and s is not None else None
                while j < nnew and new[j] < end:
                    if j >= limit:
                        outcome.bound = "max_states"
                        # Count transitions up to the successor that hit the bound.
                        transitions -= end - new[j] - 1
                        stop = True
                        break
                    t = succ[new[j]]
                    if vocabulary_checks:
                        vocabulary_checks -= 1
                        problem = check_vocabulary(t)
                        if problem:
                            raise spec_error(f"{spec.name}: {problem}")
                    if checks:
                        found = on_state(t, history_key(t) if history_key else None, parent_key)
                        if found:
                            record(found, first + j)
                            checks = bool(evaluator.state_checks or evaluator.history_checks)
                    append(t)
                    if len(pending) == CHUNK:
                        next_frontier.append(pending)
                        next_len += CHUNK
                        pending = []
                        append = pending.append
                    j += 1
                offset = end
                if stop or (stop_when_decided and evaluator.done):
                    stop = True
                    break
            self.phase["check"] += clock() - checked
            if stop:
                store.parents.truncate(first + j if not at_depth_bound else len(store))
                store.actions.truncate(len(store.parents))
                return True
            base += nparents
            done_parents += nparents
            if self.deadline is not None and time.monotonic() > self.deadline:
                outcome.bound = "time_limit"
                stop = True
                return True
            if self.budget is not None:
                self.budget.check()
            interrupts.poll()
            if self.progress is not None:
                self.progress.tick(len(store), self.depth + 1, self.frontier_len - done_parents + next_len + len(pending),
                                   pending[-1] if pending else None)
            return False
        finally:
            # The running values go back to the search, however the merge ended.
            self.base, self.transitions, self.next_len = base, transitions, next_len
            self.vocabulary_checks, self.pending, self.stop, self.done_parents = vocabulary_checks, pending, stop, done_parents

    def decide(self) -> bool:
        """The level is merged: seal the next frontier, then either stop (counting a
        started next level towards the depth) or make it the current one. Whether the
        search goes on."""
        next_frontier = self.next_frontier
        if self.pending:
            next_frontier.append(self.pending)
            self.next_len += len(self.pending)
        next_frontier.seal()
        if self.stop:
            if self.next_len and not self.at_depth_bound:
                self.depth += 1  # the next level's states found so far count towards the depth
            return False
        self.level_start += self.frontier_len
        self.level_new = None if self.outcome.maybe_cyclic or not self.track_cycles else FingerprintTable(1 << 10)
        self.frontier.discard()
        if self.at_depth_bound:
            next_frontier.discard()
        self.frontier = next_frontier
        self.frontier_len = len(self.frontier)
        if self.frontier:
            self.depth += 1
        if self.deadline is not None and self.frontier and time.monotonic() > self.deadline:
            self.outcome.bound = "time_limit"
            self.stop = True
        return True

    # -- the end ------------------------------------------------------------------------

    def _close(self) -> None:
        """Drop the frontiers and the own spill directory."""
        self.remaining = bool(self.frontier)
        self.frontier.discard()
        self.next_frontier.discard()
        if self.own_spill:
            shutil.rmtree(self.spill_dir, ignore_errors=True)

    def finish(self) -> Any:
        """The outcome: counts, completeness, time and memory."""
        outcome, store = self.outcome, self.store
        outcome.transitions = self.transitions
        outcome.depth = self.depth + 1 if len(store) else 0
        outcome.complete = outcome.bound is None and not (self.stop and self.remaining)
        outcome.fired = dict(self.fired) if self.fired is not None else None
        outcome.seconds = self.elapsed_before + time.monotonic() - self.started
        outcome.peak_memory_bytes = max(peak_rss() - self.baseline, 0) + self.worker_peak
        outcome.store_bytes = store.nbytes()
        outcome.levels = self.levels
        return outcome


def tracks_cycles(spec: Spec, props: Sequence[Property]) -> bool:
    """Whether a search of ``spec`` for ``props`` must notice an edge that can close a
    cycle (``maybe_cyclic``): only the check of an ``acyclic`` declaration
    (:func:`checker.engine.declarations.check_acyclic`), the fair-cycle search of
    ``eventually`` properties and the fairness warning (which needs one too) read it."""
    return bool(spec.acyclic) or any(p.kind == "eventually" for p in props)


def _proviso(expander: Expander, store: CompactStore, states, owner, pos, succ, counts, reduced, fps):
    """The cycle proviso: a reduced state is expanded fully instead when two of its
    ample successors are equal, or one was discovered before: at an earlier level, or
    by an earlier state of this level (those of earlier chunks are in the store, except
    at the depth bound, where nothing is stored: there only this chunk's count). The
    successors a full expansion adds are counted as fired on the ``expander``."""
    seen_here: set[int] = set()
    o2: list[int] = []
    p2: list[int] = []
    s2: list = []
    c2: list[int] = []
    f2: list[np.ndarray] = []
    offset = 0
    for k, n in enumerate(counts):
        seg = fps[offset : offset + n]
        seg_owner, seg_pos, seg_succ = owner[offset : offset + n], pos[offset : offset + n], succ[offset : offset + n]
        offset += n
        if reduced[k]:
            values = [int(x) for x in seg]
            if (
                len(set(values)) < len(values)
                or any(v in seen_here for v in values)
                or bool(store.table.contains(seg).any())
            ):
                seg_succ, _fresh = expander.complete(states[k], seg_pos)
                seg_pos = range(len(seg_succ))
                seg_owner = [k] * len(seg_succ)
                seg = expander.fingerprints(seg_succ)
                n = len(seg_succ)
        seen_here.update(int(x) for x in seg)
        o2.extend(seg_owner)
        p2.extend(seg_pos)
        s2.extend(seg_succ)
        c2.append(n)
        f2.append(np.asarray(seg, dtype=np.uint64))
    return o2, p2, s2, c2, (np.concatenate(f2) if f2 else np.zeros(0, dtype=np.uint64))
