"""The one-process backend of the level loop (:class:`~ordercheck.checker.engine.loop.LevelLoop`):
level-synchronous breadth-first search in this process.

Each level's frontier (:class:`~ordercheck.checker.engine.frontier.Frontier`) is kept as chunks of
:data:`CHUNK` states; past the first :data:`RAW_FRONTIER` states of a level each chunk
is one ``pickle`` byte string (pickle shares repeated sub-tuples within a chunk: about
80 bytes per bus1 state, and it loads ten times faster than ``marshal`` version 2).
A level of more than ``spill_after`` states is spilled to a file in ``spill_dir`` (a
temporary directory unless one is given) and read back sequentially when its turn
comes, so memory holds the visited store, not the frontier. A chunk is expanded into
its successors with their fingerprints, and the chunks are merged *in order*: the
fingerprints go into the :class:`~ordercheck.checker.engine.table.CompactStore` in batch order,
the new states are numbered, checked and appended to the next frontier, by the rules
of :mod:`ordercheck.checker.engine.rules`. With workers, :func:`ordercheck.checker.engine.bfs.search` runs
:mod:`ordercheck.checker.engine.sharded`'s backend instead, whose workers own shards of the visited set (no
merging process) and give the same counts, numbering and counterexamples. The
cycle proviso of partial-order reduction (:func:`ordercheck.checker.engine.rules.must_expand_fully`,
which the shard workers apply too) is decided here chunk by chunk at the merge
(:func:`proviso`). Each level's time split is recorded
(:class:`~ordercheck.checker.api.result.LevelTiming`).

With a checkpoint directory, the store, the frontier and the statistics are written at
level boundaries (at most every ``checkpoint_every`` seconds), atomically: a new
checkpoint is written beside the old one and a small ``CURRENT`` file is then replaced
to point at it. A run resumed from a checkpoint ends with exactly the counts of an
uninterrupted run.
"""

from __future__ import annotations

import shutil
import time
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ordercheck.checker.api.errors import SpecError
from ordercheck.checker.api.spec import Property, Spec
from ordercheck.checker.engine import interrupts, rules
from ordercheck.checker.engine.checkpoints import restore
from ordercheck.checker.engine.edges import EdgeLog, log_room
from ordercheck.checker.engine.fingerprint import check_vocabulary
from ordercheck.checker.engine.frontier import Frontier, decode
from ordercheck.checker.engine.loop import LevelLoop
from ordercheck.checker.engine.outcome import Bounds, SearchOutcome
from ordercheck.checker.engine.reduce import Expander
from ordercheck.checker.engine.resumable import warn
from ordercheck.checker.engine.table import CompactStore, FingerprintTable

__all__ = ["CHUNK", "RAW_FRONTIER", "OneProcessLevels", "proviso", "search_levels"]

CHUNK = 2048
"""States per frontier chunk: the unit of work for a worker and of the merge."""

LEVEL_NEW_PRESIZE = 1 << 22
"""The most fingerprints the table of a level's new states (for edges that may close a
cycle) is made for at the level's start; it grows past that as it fills."""

RAW_FRONTIER = 100_000
"""Up to this many states of a level's next frontier stay Python objects; beyond it
chunks are pickled (compact, but encoding costs a few microseconds per state)."""


def _expand_local(expander: Expander, chunk: bytes | list) -> tuple:
    states = decode(chunk)
    owner, pos, succ, counts, reduced = expander.expand(states)
    return owner, pos, succ, counts, reduced, expander.fingerprints(succ), states, expander.take_fired()


def search_levels(spec: Spec, props: Sequence[Property], bounds: Bounds, *, resume: bool = False,
                  workers: int = 1, spill_after: int | None = None, **options: Any) -> SearchOutcome:
    """The search behind :func:`ordercheck.checker.engine.bfs.search` in one process (see the
    module docstring); ``workers`` above 1 is refused: that search is
    :func:`ordercheck.checker.engine.sharded.search_sharded`'s. The options are those of
    :class:`~ordercheck.checker.engine.loop.LevelLoop`.

    ``spill_dir``: where a level's frontier goes once it holds more than
    ``spill_after`` states (default: a temporary directory,
    :data:`~ordercheck.checker.engine.loop.SPILL_AFTER` states; with a ``spill_dir`` and no
    ``spill_after``, every level is spilled). ``budget``: a
    :class:`~ordercheck.checker.engine.budget.MemoryBudget`; the search stops as at a bound
    (``"memory"``) before it would pass it.

    Stopped inside a level (by the budget, or by SIGINT or SIGTERM, see
    :mod:`ordercheck.checker.engine.interrupts`), the search writes the checkpoint of the level's
    start when it has a checkpoint directory (:mod:`ordercheck.checker.engine.resumable`).
    """
    if workers > 1:
        raise ValueError("search_levels runs in one process; with workers, use ordercheck.checker.engine.sharded.search_sharded")
    search = OneProcessLevels(spec, props, bounds, workers=workers, spill_after=spill_after, **options)
    search.load_or_start(resume)
    search.run()
    return search.finish()


class OneProcessLevels(LevelLoop):
    """The level loop's backend in one process: a :class:`CompactStore` and a frontier of
    chunks, each chunk expanded and merged in order (see the module docstring)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        bounds = self.bounds
        self.store = CompactStore(min(bounds.max_states or 1 << 16, 1 << 16))  # grows as the search needs
        if self.budget is not None:
            self.store.guard(self.budget.reserve)
        self.outcome.store = self.store
        self.level_new: FingerprintTable | None = FingerprintTable(1 << 10) if self.ledger.wants_back_edges else None
        self.vocabulary_checks = rules.VOCABULARY_CHECKS
        # the graph searched, for the check of an acyclic declaration (ordercheck.checker.engine.edges)
        self.edges: EdgeLog | None = None
        if self.spec.acyclic and self.ledger.track_cycles:
            self.edges = EdgeLog(self._log_room if self.budget is not None else None)
        self.outcome.edges = self.mark.edges = self.edges

    def _log_room(self, extra: int) -> None:
        """The memory budget's word on the edge log taking ``extra`` bytes more: within its
        share, and leaving room for the store to double (:func:`~ordercheck.checker.engine.edges.log_room`)."""
        log_room(self.budget, self.edges.nbytes() if self.edges is not None else 0, extra, self.store.nbytes())

    def new_frontier(self) -> Frontier:
        """An empty frontier for a level."""
        return Frontier(self.spill_dir, raw=RAW_FRONTIER, spill_after=self.spill_after)

    # -- the backend's hooks ---------------------------------------------------------------

    def stored(self) -> int:
        return len(self.store)

    def prepare(self) -> None:
        self.frontier = self.new_frontier()

    def store_initial(self, fps: np.ndarray, positions: np.ndarray, level: list) -> None:
        store = self.store
        for fp, position in zip(fps.tolist(), positions.tolist()):
            store.add(fp, -1, position)
        if self.edges is not None:
            self.edges.add_states(fps)
        for i in range(0, len(level), CHUNK):
            self.frontier.append(level[i : i + CHUNK])
        self.frontier.seal()
        self.frontier_len = len(level)

    def restore(self, fps: np.ndarray, parents: np.ndarray, actions: np.ndarray, frontier: Any,
                log: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> None:
        assert self.ckpt is not None
        restore(self.store, fps, parents, actions, self.ckpt)
        if self.edges is not None and log is not None:  # the checkpoint's log goes on
            states, sources, targets = log
            self.edges.add_states(states)
            self.edges.add_edges(sources, targets)
        else:  # the levels before the checkpoint took edges not logged
            self.edges = self.mark.edges = self.outcome.edges = None
        self.frontier = frontier
        self.frontier_len = len(frontier)

    def before_levels(self) -> None:
        self.next_frontier = self.new_frontier()

    def checkpoint(self) -> None:
        """Write the store, the frontier and the counts at this level boundary
        (:mod:`ordercheck.checker.engine.checkpoints`; a failed write warns and the search goes on)."""
        self.mark.save(self.store, self.frontier)

    def give_up_level(self, write: bool) -> bool:
        """With ``write``, write the checkpoint of the level's start (the store is
        consistent: it was stopped between two units); a failure warns and keeps the
        last checkpoint."""
        mark = self.mark
        if write and mark.ckpt is not None:
            try:
                mark.save(self.store, self.frontier)
            except MemoryError:
                warn(f"no checkpoint of the stopped level (out of memory); the last one, {mark.saved() or 'none'}, is kept")
        return True

    def close(self) -> None:
        """Drop the frontiers and the own spill directory."""
        self.remaining = bool(self.frontier)
        self.frontier.discard()
        self.next_frontier.discard()
        if self.own_spill:
            shutil.rmtree(self.spill_dir, ignore_errors=True)

    def final_store(self) -> tuple[Any, int]:
        return self.store, self.store.nbytes()

    # -- a level -------------------------------------------------------------------------

    def search_level(self) -> tuple[int, bool]:
        """Expand the level chunk by chunk and merge each chunk in order (:meth:`merge`)."""
        self.next_frontier = self.new_frontier()
        self.next_len = 0
        self.pending: list = []
        self.base = self.level_start
        self.done_parents = 0
        phase = self.phase
        clock = time.perf_counter
        results = self.expanded()
        while True:
            began = clock()
            got = next(results, None)
            phase["expand"] += clock() - began
            if got is None or self.merge(*got):
                break
        if self.pending:
            self.next_frontier.append(self.pending)
            self.next_len += len(self.pending)
            self.pending = []
        self.next_frontier.seal()
        return self.next_len, self.ledger.stop

    def next_level(self) -> None:
        # room for as many new states as the level has (up to LEVEL_NEW_PRESIZE): growing
        # it rehashes
        size = min(max(1 << 10, self.frontier_len), LEVEL_NEW_PRESIZE)
        self.level_new = FingerprintTable(size) if self.ledger.wants_back_edges else None
        self.frontier.discard()
        if self.at_depth_bound:
            self.next_frontier.discard()
        self.frontier = self.next_frontier

    def expanded(self) -> Iterator[tuple]:
        """``(chunk, expansion)`` for each chunk of the level, in order."""
        expander = self.expander
        return ((c, _expand_local(expander, c)) for c in self.frontier)

    def merge(self, chunk: Any, res: tuple) -> bool:
        """Merge one expanded chunk: insert its fingerprints into the store in order,
        number the new states, check properties on them and append them to the next
        frontier; meet the bounds. Whether the level ends here (the search stops)."""
        owner, pos, succ, counts, reduced, fps, states, fired = res
        if self.reductions.proviso:
            owner, pos, succ, counts, fps = proviso(self.expander, self.store, states, owner, pos, succ, counts,
                                                    reduced, fps)
            fired = Counter(fired)
            fired.update(self.expander.take_fired())  # what the full expansions added
        if self.fired is not None:
            self.fired.update(fired)
        pos_a = np.asarray(pos, dtype=np.int64)
        if pos_a.size and pos_a.max() > 0xFFFF:
            raise SpecError(f"{self.spec.name}: more than 65535 enabled actions in one state")
        clock = time.perf_counter
        began = clock()
        first = len(self.store)
        new = self._dedup(fps, np.asarray(owner, dtype=np.int64) + self.base, pos_a)
        checked = clock()
        self.phase["dedup"] += checked - began
        kept = self._check(counts, states, succ, new, first)
        self.phase["check"] += clock() - checked
        if self.ledger.stop:
            store = self.store
            store.parents.truncate(first + kept if not self.at_depth_bound else len(store))
            store.actions.truncate(len(store.parents))
            return True
        self.base += len(counts)
        self.done_parents += len(counts)
        if rules.time_up(self.ledger.deadline):
            self.ledger.stop_at("time_limit")
            return True
        if self.budget is not None:
            self.budget.check()
        interrupts.poll()
        if self.progress is not None:
            pending = self.pending
            self.progress.tick(len(self.store), self.depth + 1,
                               self.frontier_len - self.done_parents + self.next_len + len(pending),
                               pending[-1] if pending else None)
        return False

    def _dedup(self, fps: np.ndarray, parents: np.ndarray, pos: np.ndarray) -> list[int]:
        """Insert a chunk's successors into the store in order: the positions (among
        them) of the new states. At the depth bound nothing is stored: a successor not
        visited sets the bound. Notes an edge that may close a cycle."""
        store, ledger, edges = self.store, self.ledger, self.edges
        if edges is not None:
            edges.add_edges(parents, fps)
        if ledger.at_depth_bound:
            if len(fps):
                known = store.table.contains(fps)
                if not known.all():
                    ledger.beyond_depth_bound()
                if known.any():
                    ledger.back_edge()  # into a state at this depth or shallower
            ledger.transitions += len(fps)
            return []
        self.mark.reserve(len(fps))
        new = store.add_batch(fps, parents, pos)
        self.mark.add(fps[new])
        if edges is not None:
            edges.add_states(fps[new])
        level_new = self.level_new
        if level_new is not None and ledger.wants_back_edges:
            fresh = np.zeros(len(fps), dtype=bool)
            fresh[new] = True
            level_new.insert(fps[new])
            if not level_new.contains(fps[~fresh]).all():
                ledger.back_edge()
        return new.tolist()

    def _check(self, counts: Sequence[int], states: list | None, succ: list, new: list[int], first: int) -> int:
        """Check the chunk's terminal parents and new states in order, append the new
        states to the next frontier, count transitions, and end the level where the
        rules say (:mod:`ordercheck.checker.engine.rules`: the state bound, every property decided,
        which stop the :attr:`ledger`). Returns the new states kept."""
        evaluator, record, history_key, ledger = self.evaluator, self.record, self.history_key, self.ledger
        at_depth_bound, base = ledger.at_depth_bound, self.base
        j = 0
        offset = 0
        nnew = len(new)
        limit = ledger.room(first, nnew)
        checks = bool(evaluator.state_checks or evaluator.history_checks)
        on_state, release = evaluator.on_state, evaluator.release
        terminal = bool(evaluator.terminal_state or evaluator.terminal_history)
        pending, next_frontier = self.pending, self.next_frontier
        append = pending.append
        vocabulary_checks = self.vocabulary_checks
        transitions = 0
        # the ledger's stop and decisions change only where a finding is recorded or a
        # bound met in this loop: read them again only then (and before the first)
        recorded = True
        try:
            for k, n in enumerate(counts):
                s = states[k] if states is not None else None
                if n == 0:
                    key = history_key(s) if history_key and s is not None else None
                    if terminal:
                        found = evaluator.on_terminal(s, key)
                        if found:
                            record(found, base + k)
                            recorded = True
                    release(key)
                    # A terminal state does not end the level by itself: the check for "every
                    # property decided" follows the next state that has successors (rules.first_busy).
                    continue
                transitions += n
                end = offset + n
                parent_key = history_key(s) if history_key and s is not None else None
                # this parent's new successors: new[j:upto] (new is sorted)
                if j >= nnew or new[j] >= end:
                    upto = j
                elif j + 1 >= nnew or new[j + 1] >= end:
                    upto = j + 1  # one new successor, the usual case: no search
                else:
                    upto = bisect_left(new, end, j + 2)
                # a parent with several new successors is worth reading whole once if its
                # entry is gone (Evaluator.on_state); with one, its successor is read whole
                parent = s if upto - j > 1 else None
                top = upto if upto <= limit else limit
                while j < top:
                    t = succ[new[j]]
                    if vocabulary_checks:
                        vocabulary_checks -= 1
                        problem = check_vocabulary(t)
                        if problem:
                            raise SpecError(f"{self.spec.name}: {problem}")
                    if checks:
                        # the parent's last new successor may take its entry over (released below)
                        found = on_state(t, history_key(t) if history_key else None, parent_key, parent,
                                         j + 1 == upto)
                        if found:
                            record(found, first + j)
                            recorded = True
                            checks = bool(evaluator.state_checks or evaluator.history_checks)
                    append(t)
                    if len(pending) == CHUNK:
                        next_frontier.append(pending)
                        self.next_len += CHUNK
                        pending = self.pending = []
                        append = pending.append
                    j += 1
                if top < upto:  # the state bound: j == limit
                    ledger.stop_at("max_states")
                    recorded = True
                    transitions -= end - new[j] - 1  # transitions up to the successor at the bound
                offset = end
                if parent_key is not None:
                    release(parent_key)
                if recorded:
                    recorded = False
                    if ledger.stop or ledger.all_decided:
                        ledger.stop = True
                        break
        finally:
            self.vocabulary_checks = vocabulary_checks
            if not at_depth_bound:
                ledger.transitions += transitions
        return j


def proviso(expander: Expander, store: CompactStore, states: list, owner: list, pos: list, succ: list,
            counts: list, reduced: list, fps: np.ndarray) -> tuple:
    """The cycle proviso (:func:`ordercheck.checker.engine.rules.must_expand_fully`) on one chunk:
    its successors met before are those in the store (earlier levels, and earlier chunks
    of this level; it never runs at a depth bound, see
    :class:`~ordercheck.checker.engine.loop.LevelLoop`). The parents the rule names are expanded
    fully, their added successors put to it in turn, until it names no more. Returns
    the chunk's expansion with those parents' full ones; the successors a full
    expansion adds are counted as fired on the ``expander``."""
    if not any(reduced):
        return owner, pos, succ, counts, fps
    counts_a = np.asarray(counts, dtype=np.int64)
    ranks = np.repeat(np.arange(len(counts_a), dtype=np.int64), counts_a)
    flags = np.repeat(np.asarray(reduced, dtype=bool), counts_a)
    visited = store.table.contains(fps)
    starts = (np.cumsum(counts_a) - counts_a).tolist()
    full: dict[int, tuple[list, np.ndarray]] = {}  # parent: its full expansion and fingerprints
    named = rules.must_expand_fully(fps, ranks, flags, visited)
    while len(named):
        added: list[np.ndarray] = []
        for k in named.tolist():
            a = starts[k]
            whole, fresh = expander.complete(states[k], pos[a : a + counts[k]])
            whole_fps = expander.fingerprints(whole)
            full[k] = (whole, whole_fps)
            added.append(whole_fps[fresh])
            ranks = np.concatenate([ranks, np.full(len(fresh), k, dtype=np.int64)])
        more = np.concatenate(added)
        fps = np.concatenate([fps, more])
        flags = np.concatenate([flags, np.zeros(len(more), dtype=bool)])
        visited = np.concatenate([visited, store.table.contains(more)])
        named = np.setdiff1d(rules.must_expand_fully(fps, ranks, flags, visited), np.fromiter(full, dtype=np.int64))
    if not full:
        return owner, pos, succ, counts, fps
    o2: list[int] = []
    p2: list[int] = []
    s2: list = []
    c2: list[int] = []
    f2: list[np.ndarray] = []
    for k, n in enumerate(counts):
        a = starts[k]
        if k in full:
            whole, whole_fps = full[k]
            o2.extend([k] * len(whole))
            p2.extend(range(len(whole)))
            s2.extend(whole)
            c2.append(len(whole))
            f2.append(whole_fps)
        else:
            o2.extend(owner[a : a + n])
            p2.extend(pos[a : a + n])
            s2.extend(succ[a : a + n])
            c2.append(n)
            f2.append(fps[a : a + n])
    return o2, p2, s2, c2, (np.concatenate(f2) if f2 else np.zeros(0, dtype=np.uint64))
