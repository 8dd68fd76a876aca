"""The level loop with sharded workers: the main process orchestrates, the workers own
the visited set (:mod:`checker.engine.shards`).

Each level, the main process tells every worker to search its share, and gets back
per-parent successor counts, findings and the sorted order keys of each worker's new
states (never a state or a fingerprint). It then does what the one-process loop of
:mod:`checker.engine.levels` does state by state, on these arrays:

* the next level's order is the order of the keys (a parent's rank, then the
  successor's position), which is the order in which one process discovers the states;
  a new state's number is the next level's first number plus its rank;
* a property is decided by the first finding in that order, at the state where one
  process decides it (a terminal state's finding at its own number);
* the level ends early where one process would end it: at the ``max_states``-th state
  (counting its parent's transitions up to that successor), or after the parent at
  which every property is decided (with ``stop_when_decided``). Coverage counts, the
  ``max_depth`` bound's test and the cycle test count whole chunks of :data:`CHUNK`
  parents up to that point, as one process merges them;
* the workers then *commit*: they store the new states below the cut, with their
  numbers and parent links, as their share of the next level.

So distinct states, transitions, depth, verdicts, coverage and counterexamples equal
those of one process for every worker count. Before the commit, the memory the
workers' tables will grow by is asked of the budget; a stop inside a level (the
budget, SIGINT or SIGTERM, the time limit) gives the level up in every worker, which
leaves the shards exactly as at the level's start, and that is what a checkpoint
holds. A checkpoint is gathered from the workers into the format of the one-process
engine, so a run resumes with any number of workers. The parent links of states
restored from a checkpoint are spread over the workers by number; a trace is rebuilt
by asking every worker for the links of a set of numbers, one step at a time.

The workers keep the level's states, so they spill them: with a spill directory each
worker's share of every level goes to files of its own there; without one, a share of
more than its part of :data:`~checker.engine.levels.SPILL_AFTER` (the threshold over the
number of workers) goes to the search's own temporary directory, which is removed at the
end. The main process holds no level (but gathers one for a checkpoint, in memory).

Partial-order reduction's cycle proviso decides, parent by parent in one process,
whether a reduced expansion is replaced by the full one, from what earlier parents
generated. Here it is decided in rounds between the expansion and the level's report
(:meth:`_ShardedSearch.proviso_rounds`, :meth:`checker.engine.shards._Shard.rounds`):
each round the workers name the parents their successors show to need a full
expansion, this process names the new ones to every worker, and their holders expand
them fully, until a round names none. The rounds reach the decision of one process
(a parent's depends on smaller ranks only), so the results are again those of one
process; a level where no parent needs it takes one round.
"""

from __future__ import annotations

import marshal
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, BinaryIO

import numpy as np

from checker.api.spec import Property, Spec
from checker.engine import interrupts
from checker.engine.checkpoints import duplicate_refusal, save
from checker.engine.fingerprint import check_vocabulary
from checker.engine.frontier import decode, encode, write_record
from checker.engine.levels import CHUNK, PHASES, TimeUp, _LevelSearch
from checker.engine.memory import peak_rss
from checker.engine.messages import (
    Adopt,
    Check,
    Checked,
    Commit,
    Committed,
    Dump,
    Dumped,
    Keep,
    Level,
    LevelReport,
    Links,
    More,
    Paths,
    Peak,
    PeakReport,
    Round,
    Settle,
)
from checker.engine.resumable import warn
from checker.engine.shards import KEY_BITS, STORE_SECONDS, Shards, Spill, owner_of
from checker.engine.table import FingerprintTable

OFFSET_MASK = (1 << KEY_BITS) - 1


class ShardedStore:
    """What the outcome of a sharded search keeps of its store: the count, the bytes the
    workers' shards held, the paths of the decided states (the workers are gone by
    the time traces are rebuilt) and ``rounds``, the cycle proviso's rounds of each
    level searched (none without the proviso; one where no parent was expanded fully)."""

    def __init__(self, count: int, nbytes: int, paths: dict[int, tuple[int, list[int]]],
                 rounds: Sequence[int] = ()) -> None:
        self.count = count
        self._nbytes = nbytes
        self.paths = paths
        self.rounds = list(rounds)

    def __len__(self) -> int:
        return self.count

    def nbytes(self) -> int:
        """Bytes of the workers' tables and parent links at the end."""
        return self._nbytes

    def path(self, index: int) -> tuple[int, list[int]]:
        """The initial-state position and action positions that reach state ``index``
        (a decided state's; :class:`KeyError` for another)."""
        init, steps = self.paths[index]
        return init, list(steps)


def balance(held: np.ndarray, slack: int) -> tuple[list[list[tuple[int, int]]], list[int]]:
    """Which states to move so that no worker holds much more of the next level than
    another: ``held`` per worker; nothing moves while the shares differ by at most
    ``slack`` states and a tenth. Returns each worker's shipments ``(to, how many)`` and
    the number of states it receives."""
    workers = len(held)
    total = int(held.sum())
    ship: list[list[tuple[int, int]]] = [[] for _ in range(workers)]
    expect = [0] * workers
    if int(held.max()) - int(held.min()) <= max(slack, total // (10 * workers)):
        return ship, expect
    target = [total // workers + (1 if w < total % workers else 0) for w in range(workers)]
    over = [[w, int(held[w]) - target[w]] for w in range(workers) if held[w] > target[w]]
    under = [[w, target[w] - int(held[w])] for w in range(workers) if held[w] < target[w]]
    while over and under:
        give = min(over[0][1], under[0][1])
        ship[over[0][0]].append((under[0][0], give))
        expect[under[0][0]] += give
        over[0][1] -= give
        under[0][1] -= give
        if not over[0][1]:
            over.pop(0)
        if not under[0][1]:
            under.pop(0)
    return ship, expect


class _Level:
    """A level's states in order, written as frontier records of :data:`CHUNK` states."""

    def __init__(self, states: list) -> None:
        self.states = states

    def dump(self, fh: BinaryIO) -> None:
        for i in range(0, len(self.states), CHUNK):
            write_record(fh, encode(self.states[i : i + CHUNK]))


def search_sharded(
    spec: Spec,
    props: Sequence[Property],
    bounds: Any,
    outcome_cls: Any,
    decision_cls: Any,
    spec_error: type[Exception],
    **options: Any,
) -> Any:
    """The search behind :func:`checker.engine.bfs.search` with ``workers`` > 1 (see the
    module docstring); the options are those of
    :func:`checker.engine.levels.search_levels`, ``spill_dir`` and ``spill_after``
    applying to each worker's share of a level (``spill_after`` over the number of
    workers)."""
    resume = options.pop("resume", False)
    options.setdefault("spill_after", None)
    search = _ShardedSearch(spec, props, bounds, outcome_cls, decision_cls, spec_error, **options)
    search.load_or_start(resume)
    search.run()
    return search.finish()


class _ShardedSearch(_LevelSearch):
    """The level loop of the main process with shard workers."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        # A worker spills its share past its part of the level's threshold, so the level
        # holds in memory about what one process's would.
        after = None if self.spill_after is None else -(-self.spill_after // self.workers)
        try:
            self.shards = Shards(self.workers, self.expander, self.props, Spill(str(self.spill_dir), after))
        except BaseException:
            if self.own_spill:
                shutil.rmtree(self.spill_dir, ignore_errors=True)
            raise
        if self.budget is not None:
            self.budget.workers = self.shards.pids
        self.count = 0  # states stored
        self.frontier_len = 0
        self.seq = 0
        self.paths: dict[int, tuple[int, list[int]]] = {}
        self.shard_bytes = 0
        self.rounds: list[int] = []  # the cycle proviso's rounds, per level searched

    # -- load or start ------------------------------------------------------------------

    # The first level (``_LevelSearch.load_or_start``) is handed to the workers by owner;
    # the workers keep the frontier, so there is none to prepare here.

    def _prepare(self) -> None:
        pass

    def _abandon(self) -> None:
        self.shards.close()

    def _hand_out(self, fps: np.ndarray, nums: np.ndarray, parents: np.ndarray, actions: np.ndarray) -> None:
        """Give each worker its fingerprints and the parent links of ``nums``."""
        owners = owner_of(fps, self.workers)
        for w in range(self.workers):
            mine = owners == w
            self.shards.send(w, Adopt(fps[mine], nums[mine], parents[mine], actions[mine]))

    def _hand_out_level(self, states: list, first_rank: int) -> None:
        """Give each worker the states of ``states`` it owns, ranked from ``first_rank``."""
        if not states:
            return
        owners = owner_of(self.expander.fingerprints(states), self.workers)
        ranks = np.arange(first_rank, first_rank + len(states), dtype=np.int64)
        for w in range(self.workers):
            idx = np.flatnonzero(owners == w)
            if len(idx):
                self.shards.send(w, Keep(ranks[idx], [states[i] for i in idx.tolist()]))

    def _start(self) -> None:
        spec, evaluator, history_key = self.spec, self.evaluator, self.history_key
        inits = list(spec.init_states())
        for s in inits:
            problem = check_vocabulary(s)
            if problem:
                raise self.spec_error(f"{spec.name}: initial {problem}")
        fps = self.expander.fingerprints(inits)
        new = np.flatnonzero(FingerprintTable(max(len(inits), 16)).insert(fps))
        level = [inits[i] for i in new.tolist()]
        for number, s in enumerate(level):
            key = history_key(s) if history_key else None
            self.record(evaluator.on_state(s, key, None), number)
        n = len(level)
        self._hand_out(fps[new], np.arange(n, dtype=np.int64), np.full(n, -1, dtype=np.int64), new.astype(np.uint16))
        self._hand_out_level(level, 0)
        self.outcome.initial_states = n
        self.count = self.frontier_len = n

    def _resume(self, loaded: tuple) -> None:
        outcome = self.outcome
        meta, fps, parents, actions, frontier = loaded
        assert self.ckpt is not None
        if len(np.unique(np.where(fps == 0, np.uint64(1), fps))) != len(fps):
            frontier.discard()
            raise duplicate_refusal(self.ckpt)
        outcome.maybe_cyclic = meta.get("maybe_cyclic", False)
        self.level_start, self.depth, self.transitions = meta["level_start"], meta["depth"], meta["transitions"]
        outcome.initial_states = meta["initial_states"]
        self.elapsed_before = meta["seconds"]
        self.fired = Counter(meta["fired"]) if meta.get("fired") is not None else None
        for name, (index, sentence) in meta["decisions"].items():
            self.record([(name, sentence)], index)
        n = len(parents)
        # Fingerprints go to their owners; the links (by number) in equal ranges of numbers.
        owners = owner_of(fps, self.workers)
        cuts = np.linspace(0, n, self.workers + 1).astype(np.int64)
        for w in range(self.workers):
            lo, hi = int(cuts[w]), int(cuts[w + 1])
            self.shards.send(w, Adopt(fps[owners == w], np.arange(lo, hi, dtype=np.int64),
                                      parents[lo:hi].astype(np.int64), actions[lo:hi].astype(np.uint16)))
        rank = 0
        try:
            for chunk in frontier:
                states = decode(chunk)
                self._hand_out_level(states, rank)
                rank += len(states)
        finally:
            frontier.discard()
        self.count = n
        self.frontier_len = n - self.level_start

    # -- the level loop -----------------------------------------------------------------

    def _start_run(self) -> None:
        pass  # the workers started with the first level (_prepare, load_or_start)

    def _levels_left(self) -> bool:
        return bool(self.frontier_len)

    def _stored(self) -> int:
        return self.count

    def waiting(self) -> None:
        """Called while the workers search a level: signals, the memory budget, the time
        limit and the progress line (the shards are consistent here)."""
        interrupts.poll()
        if self.budget is not None:
            self.budget.check()
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise TimeUp
        if self.progress is not None:
            self.progress.tick(self.count, self.depth + 1, self.frontier_len)

    def expand_level(self) -> bool:
        """Search one level in the workers, settle it here, commit it there. Whether the
        search goes on."""
        shards = self.shards
        at_bound = self.max_depth is not None and self.depth >= self.max_depth
        self.at_depth_bound = at_bound
        self.seq += 1
        n_parents = self.frontier_len
        shards.broadcast(Level(self.seq, frozenset(self.evaluator.open), at_bound, CHUNK))
        if self.reductions.proviso:
            self.proviso_rounds()
        reports = shards.gather(LevelReport, self.waiting, None)
        counts = np.zeros(n_parents, dtype=np.int64)
        holder = np.zeros(n_parents, dtype=np.int64)  # the worker that expanded each parent
        terminal: dict[int, list] = {}
        fired: dict[int, Counter] = {}
        back, unvisited = [], []
        grow = 0
        for w, rep in enumerate(reports):
            if rep.problem:
                raise self.spec_error(f"{self.spec.name}: {rep.problem}")
            counts[rep.ranks] = rep.counts
            holder[rep.ranks] = w
            terminal.update(rep.terminal)
            for block, c in rep.fired.items():
                fired.setdefault(block, Counter()).update(c)
            if rep.back_rank >= 0:
                back.append(rep.back_rank)
            if rep.unvisited_rank >= 0:
                unvisited.append(rep.unvisited_rank)
            grow += rep.grow
        if self.budget is not None and grow:
            self.budget.reserve(grow)  # before anything of the level is decided here
        keys_w = [rep.keys for rep in reports]
        all_keys = np.sort(np.concatenate(keys_w)) if keys_w else np.zeros(0, dtype=np.int64)
        # The new states are checked where they were generated, beside their parents.
        maker = holder[all_keys >> KEY_BITS]
        for w in range(self.workers):
            ranks_w = np.flatnonzero(maker == w)
            shards.send(w, Check(all_keys[ranks_w], ranks_w))
        checked = shards.gather(Checked, self.waiting, None)
        findings: dict[int, list] = {}
        for c in checked:
            if c.problem:
                raise self.spec_error(f"{self.spec.name}: {c.problem}")
            findings.update(c.findings)
        kept, added, last_block = self.settle(counts, terminal, findings, all_keys, at_bound)
        if self.fired is not None:
            for block, c in fired.items():
                if last_block is None or block <= last_block:
                    self.fired.update(c)
        if at_bound and unvisited and (last_block is None or min(unvisited) // CHUNK <= last_block):
            self.outcome.bound = self.outcome.bound or "max_depth"
        if self.track_cycles and back and (last_block is None or min(back) // CHUNK <= last_block):
            self.outcome.maybe_cyclic = True
        next_start = self.level_start + n_parents
        ship, expect = balance(np.bincount(maker[:kept], minlength=self.workers), CHUNK)
        for w in range(self.workers):
            shards.send(w, Commit(kept, next_start, self.level_start, np.searchsorted(all_keys, keys_w[w]),
                                  ship[w], expect[w]))
        commits = shards.gather(Committed, timeout=STORE_SECONDS)
        for phase in PHASES:
            self.phase[phase] = sum(rep.times[phase] for rep in reports) / self.workers
        self.phase["check"] += sum(c.seconds for c in checked) / self.workers
        self.phase["dedup"] += sum(c.seconds for c in commits) / self.workers
        self.count += kept
        self.transitions += added
        if self.stop:
            if kept and not at_bound:
                self.depth += 1  # the next level's states found so far count towards the depth
            return False
        self.level_start = next_start
        self.frontier_len = 0 if at_bound else kept
        if self.frontier_len:
            self.depth += 1
            if self.progress is not None:  # each level, for the growing warning (the line itself is rate-limited)
                self.progress.tick(self.count, self.depth, self.frontier_len)
        if self.deadline is not None and self.frontier_len and time.monotonic() > self.deadline:
            self.outcome.bound = "time_limit"
            self.stop = True
        return True

    def proviso_rounds(self) -> None:
        """The cycle proviso's rounds of a level (:meth:`checker.engine.shards._Shard.rounds`):
        gather the parents each worker found to need a full expansion, name the new ones
        to every worker, until a round finds none. Records the number of rounds."""
        full = np.zeros(0, dtype=np.int64)
        rounds = 0
        while True:
            rounds += 1
            found = [rep.parents for rep in self.shards.gather(Round, self.waiting, None)]
            new = np.setdiff1d(np.concatenate(found), full)
            if not len(new):
                break
            full = np.union1d(full, new)
            self.shards.broadcast(More(new))
        self.shards.broadcast(Settle())
        self.rounds.append(rounds)

    def settle(self, counts: np.ndarray, terminal: dict[int, list], findings: dict[int, list],
               keys: np.ndarray, at_bound: bool) -> tuple[int, int, int | None]:
        """Decide the level as one process would, from the per-parent successor counts,
        the findings (terminal ones by parent rank, the others by key) and the sorted keys
        of the new states. Returns the new states kept, the transitions counted and the
        last chunk merged (``None``: the whole level)."""
        n_new = len(keys)
        first = self.count
        limit = n_new if self.max_states is None else max(min(n_new, self.max_states - first), 0)
        cut = (int(keys[limit] >> KEY_BITS), int(keys[limit] & OFFSET_MASK)) if limit < n_new else None
        events: list[tuple[int, int, int, list]] = [(r, -1, self.level_start + r, f) for r, f in terminal.items()]
        if findings:
            fk = np.fromiter(findings.keys(), dtype=np.int64, count=len(findings))
            at = np.searchsorted(keys, fk)
            events.extend((k >> KEY_BITS, k & OFFSET_MASK, first + int(j), findings[k]) for k, j in zip(fk.tolist(), at.tolist()))
        events.sort(key=lambda e: (e[0], e[1]))
        busy = np.flatnonzero(counts > 0)

        def after(rank: int) -> int | None:
            """The first parent at or after ``rank`` with successors."""
            i = np.searchsorted(busy, rank)
            return int(busy[i]) if i < len(busy) else None

        stop_parent = after(0) if self.stop_when_decided and self.evaluator.done else None
        for rank, sub, index, found in events:
            if stop_parent is not None and rank > stop_parent:
                break
            if cut is not None and (rank, sub) >= cut:
                break
            self.record(found, index)
            if stop_parent is None and self.stop_when_decided and self.evaluator.done:
                stop_parent = after(rank)
        if stop_parent is not None and (cut is None or stop_parent < cut[0]):
            self.stop = True
            kept = int(np.searchsorted(keys, (stop_parent + 1) << KEY_BITS))
            end = min(len(counts), (stop_parent // CHUNK + 1) * CHUNK) if at_bound else stop_parent + 1
            return kept, int(counts[:end].sum()), stop_parent // CHUNK
        if cut is not None:
            self.stop = True
            self.outcome.bound = "max_states"
            return limit, int(counts[: cut[0]].sum()) + cut[1] + 1, cut[0] // CHUNK
        return n_new, int(counts.sum()), None

    # -- checkpoints --------------------------------------------------------------------

    def checkpoint(self) -> None:
        """Gather the shards (as at the level's start) and write them as one process's
        checkpoint (:mod:`checker.engine.checkpoints`; a failed write warns)."""
        mark = self.mark
        if mark.ckpt is None or mark.meta is None:
            return
        n, n_level = mark.states, self.frontier_len
        self.shards.broadcast(Dump())
        dumps = self.shards.gather(Dumped, timeout=STORE_SECONDS)
        fps = np.concatenate([d.fps for d in dumps])
        parents = np.full(n, -2, dtype=np.int64)
        actions = np.zeros(n, dtype=np.uint16)
        links = 0
        states: list = [None] * n_level
        held = 0
        for _fps, nums, par, act, ranks, blob in dumps:
            parents[nums] = par
            actions[nums] = act
            links += len(nums)
            for r, s in zip(ranks.tolist(), marshal.loads(blob)):
                states[r] = s
            held += len(ranks)
        if len(fps) != n or links != n or (parents == -2).any() or held != n_level:
            warn(f"checkpoint not written: the workers hold {len(fps):,} fingerprints, {links:,} links and "
                 f"{held:,} level states for {n:,} states and a level of {n_level:,}; "
                 + (f"the previous checkpoint, {mark.saved()}, is kept" if mark.saved() else "there is no earlier checkpoint"))
            return
        save(mark.ckpt, mark.ident, mark.meta, fps, parents, actions, _Level(states), warn)
        mark.last = time.monotonic()

    def _save_level_start(self, write: bool) -> bool:
        """When the search stops inside a level: the workers give it up (their shards are
        then as at its start) and, with ``write``, the level's start is checkpointed.
        Whether the workers are still in step."""
        try:
            self.shards.abort()
        except Exception as exc:  # a worker that died: its shard is gone
            if self.mark.ckpt is not None:
                warn(f"no checkpoint of the stopped level ({exc}); the last one, {self.mark.saved() or 'none'}, is kept")
            return False
        if write and self.mark.ckpt is not None:
            try:
                self.checkpoint()
            except MemoryError:
                warn(f"no checkpoint of the stopped level (out of memory); the last one, "
                     f"{self.mark.saved() or 'none'}, is kept")
        return True

    # -- the end ------------------------------------------------------------------------

    def resolve(self, indices: list[int]) -> dict[int, tuple[int, list[int]]]:
        """The paths of states ``indices``, from the workers' parent links."""
        steps: dict[int, list[int]] = {i: [] for i in indices}
        at = {i: i for i in indices}
        out: dict[int, tuple[int, list[int]]] = {}
        while at:
            numbers = np.asarray(sorted(set(at.values())), dtype=np.int64)
            self.shards.broadcast(Paths(numbers))
            parent = np.full(len(numbers), -2, dtype=np.int64)
            action = np.zeros(len(numbers), dtype=np.int64)
            for found, par, act in self.shards.gather(Links):
                parent[found] = par[found]
                action[found] = act[found]
            if (parent == -2).any():
                missing = int(numbers[parent == -2][0])
                raise RuntimeError(f"no worker holds the parent link of state {missing}")
            link = dict(zip(numbers.tolist(), zip(parent.tolist(), action.tolist())))
            for i, g in list(at.items()):
                p, a = link[g]
                if p < 0:
                    out[i] = (a, steps[i][::-1])
                    del at[i]
                else:
                    steps[i].append(a)
                    at[i] = p
        return out

    def _close(self) -> None:
        """Rebuild the decided states' paths and read the workers' memory (when they are
        in step), stop them, drop the own spill directory."""
        try:
            if self.searched:
                self.paths = self.resolve(sorted({d.index for d in self.decisions.values()}))
                self.shards.broadcast(Peak())
                peaks = self.shards.gather(PeakReport)
                self.worker_peak = sum(p.peak for p in peaks)
                self.shard_bytes = sum(p.nbytes for p in peaks)
        finally:
            self.remaining = self.frontier_len > 0
            self.shards.close()
            if self.own_spill:
                shutil.rmtree(self.spill_dir, ignore_errors=True)

    def finish(self) -> Any:
        """The outcome, with a :class:`ShardedStore`."""
        outcome = self.outcome
        outcome.store = ShardedStore(self.count, self.shard_bytes, self.paths, self.rounds)
        outcome.transitions = self.transitions
        outcome.depth = self.depth + 1 if self.count else 0
        outcome.complete = outcome.bound is None and not (self.stop and self.remaining)
        outcome.fired = dict(self.fired) if self.fired is not None else None
        outcome.seconds = self.elapsed_before + time.monotonic() - self.started
        outcome.peak_memory_bytes = max(peak_rss() - self.baseline, 0) + self.worker_peak
        outcome.store_bytes = self.shard_bytes
        outcome.levels = self.levels
        return outcome
