"""The shard workers' backend of the level loop (:class:`~ordercheck.checker.engine.loop.LevelLoop`):
the main process orchestrates, the workers own the visited set
(:mod:`ordercheck.checker.engine.shards`; the messages are :mod:`ordercheck.checker.engine.messages`).

Each level, the main process tells every worker to search its share, and gets back
per-parent successor counts, findings and the sorted order keys of each worker's new
states (never a state or a fingerprint). It then does what the one-process loop of
:mod:`ordercheck.checker.engine.levels` does state by state, on these arrays:

* the next level's order is the order of the keys (a parent's rank, then the
  successor's position), which is the order in which one process discovers the states;
  a new state's number is the next level's first number plus its rank;
* a property is decided by the first finding in that order, at the state where one
  process decides it (a terminal state's finding at its own number);
* the level ends early where one process would end it: at the ``max_states``-th state
  (counting its parent's transitions up to that successor), or after the parent at
  which every property is decided (with ``stop_when_decided``). Coverage counts, the
  ``max_depth`` bound's test and the cycle test count whole chunks of :data:`CHUNK`
  parents up to that point, as one process merges them (all of it is
  :func:`ordercheck.checker.engine.rules.settle`, through the loop's
  :class:`~ordercheck.checker.engine.ledger.Ledger`, as Spark's driver applies it);
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

For a spec that declares ``acyclic``, the workers log the states they store and the
edges they take (:mod:`ordercheck.checker.engine.edges`). Before each commit the growth of
their logs is asked of the budget with that of their tables; refused, the workers drop
their logs at the commit and the search goes on. A checkpoint gathers the logs
(:meth:`ShardedLevels.log_of`) and carries them, and a resume spreads a checkpoint's log
over the workers (:class:`~ordercheck.checker.engine.messages.Logs`). After
a complete search that noticed an edge that can close a cycle, and only then, the
logs are gathered (:meth:`ShardedLevels.gather_log`) into the outcome's ``edges``,
from which :func:`~ordercheck.checker.engine.declarations.check_acyclic` decides the
declaration as from one process's log.

The workers keep the level's states, so they spill them: with a spill directory each
worker's share of every level goes to files of its own there; without one, a share of
more than its part of :data:`~ordercheck.checker.engine.loop.SPILL_AFTER` (the threshold over the
number of workers) goes to the search's own temporary directory, which is removed at the
end. The main process holds no level (but gathers one for a checkpoint, in memory).

Partial-order reduction's cycle proviso (:func:`ordercheck.checker.engine.rules.must_expand_fully`,
the rule one process applies too) decides whether a reduced expansion is replaced by
the full one, from what earlier parents generated. Here it is decided in rounds between the expansion and the level's report
(:meth:`ShardedLevels.proviso_rounds`, :meth:`ordercheck.checker.engine.shards._Shard.rounds`):
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
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from ordercheck.checker.api.errors import SpecError
from ordercheck.checker.api.spec import Property, Spec
from ordercheck.checker.engine import interrupts, rules
from ordercheck.checker.engine import messages as msg
from ordercheck.checker.engine.budget import MemoryBoundReached
from ordercheck.checker.engine.checkpoints import duplicate_refusal, save
from ordercheck.checker.engine.edges import EdgeLog, by_number, log_room
from ordercheck.checker.engine.frontier import decode, encode_json, write_record
from ordercheck.checker.engine.ledger import decided_at
from ordercheck.checker.engine.levels import CHUNK
from ordercheck.checker.engine.loop import LevelLoop, TimeUp
from ordercheck.checker.engine.outcome import Bounds, Decision, SearchOutcome
from ordercheck.checker.engine.resumable import warn
from ordercheck.checker.engine.rules import KEY_BITS, OFFSET_MASK, PHASES
from ordercheck.checker.engine.shards import STORE_SECONDS, Shards, Spill, WorkerLost, owner_of


class ShardedPaths:
    """What the outcome of a sharded search keeps of the workers' store (a
    :class:`~ordercheck.checker.engine.outcome.StatePaths`, not a store: it holds no
    fingerprints, so it cannot say whether a state was visited): the count, the bytes
    the workers' shards held, the paths of the decided states (the workers are gone by
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


BALANCE_SLACK = 64
"""States by which the largest share of the next level may exceed the mean before
states are moved (:func:`balance`), or a 32nd of the mean where that is more: the
level waits for its busiest worker, and moving a state costs far less than expanding
one."""


def balance(held: np.ndarray, slack: int = BALANCE_SLACK) -> tuple[list[list[tuple[int, int]]], list[int]]:
    """Which states to move so that no worker holds much more of the next level than
    the others: ``held`` per worker; nothing moves while the largest share exceeds the
    mean by at most ``slack`` states or a 32nd of the mean. Otherwise the shares are
    made equal. Returns each worker's shipments ``(to, how many)`` and the number of
    states it receives."""
    workers = len(held)
    total = int(held.sum())
    ship: list[list[tuple[int, int]]] = [[] for _ in range(workers)]
    expect = [0] * workers
    if int(held.max()) * workers - total <= max(slack * workers, total // 32):
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


def ranked(keys_w: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The workers' new keys (each worker's ascending) in one ascending array, and each
    worker's ranks in it (32-bit where they fit: half the bytes to send). One stable
    argsort, which merges the ascending runs, and its inverse: a binary search of every
    worker's keys cost more than both on a level of 400,000 states with 16 workers."""
    cat = np.concatenate(keys_w)
    order = np.argsort(cat, kind="stable")
    rank_type = np.int32 if len(cat) < 1 << 31 else np.int64
    ranks = np.empty(len(cat), dtype=rank_type)
    ranks[order] = np.arange(len(cat), dtype=rank_type)
    ends = np.cumsum([len(k) for k in keys_w])
    return cat[order], [ranks[e - len(k) : e] for e, k in zip(ends.tolist(), keys_w)]


@dataclass
class _Gathered:
    """A level's reports put together: successor counts and the expanding worker by
    parent rank, terminal findings, findings on new states by key, coverage by chunk, the first ranks with an edge
    back or an unvisited successor at the depth bound (per worker), the bytes the
    shards grow by, and their edge logs."""

    counts: np.ndarray
    holder: np.ndarray
    terminal: dict[int, list] = field(default_factory=dict)
    findings: dict[int, list] = field(default_factory=dict)
    fired: dict[int, Counter] = field(default_factory=dict)
    back: list[int] = field(default_factory=list)
    unvisited: list[int] = field(default_factory=list)
    grow: int = 0
    log_grow: int = 0


class _LevelStates:
    """A level's states in order, written as frontier records of :data:`CHUNK` states."""

    def __init__(self, states: list) -> None:
        self.states = states

    def dump(self, fh: BinaryIO) -> None:
        for i in range(0, len(self.states), CHUNK):
            write_record(fh, encode_json(self.states[i : i + CHUNK]))


def search_sharded(spec: Spec, props: Sequence[Property], bounds: Bounds, *, resume: bool = False,
                   **options: Any) -> SearchOutcome:
    """The search behind :func:`ordercheck.checker.engine.bfs.search` with ``workers`` > 1 (see the
    module docstring); the options are those of
    :func:`ordercheck.checker.engine.levels.search_levels`, ``spill_dir`` and ``spill_after``
    applying to each worker's share of a level (``spill_after`` over the number of
    workers)."""
    options.setdefault("spill_after", None)
    search = ShardedLevels(spec, props, bounds, **options)
    search.load_or_start(resume)
    search.run()
    return search.finish()


class ShardedLevels(LevelLoop):
    """The level loop's backend with shard workers: the main process orchestrates,
    the workers store (see the module docstring)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        # A worker spills its share past its part of the level's threshold, so the level
        # holds in memory about what one process's would.
        after = None if self.spill_after is None else -(-self.spill_after // self.workers)
        # the workers log the graph searched, for the check of an acyclic declaration
        # (ordercheck.checker.engine.edges); off for good once a budget refusal or a resume drops it
        self.logging = bool(self.spec.acyclic and self.ledger.track_cycles)
        self.log_bytes = 0  # what the workers' logs have grown by (at most)
        self.grown = 0  # what the workers' tables have grown by
        try:
            self.shards = Shards(self.workers, self.expander, self.props, Spill(str(self.spill_dir), after),
                                 log=self.logging)
        except BaseException:
            if self.own_spill:
                shutil.rmtree(self.spill_dir, ignore_errors=True)
            raise
        if self.budget is not None:
            self.budget.workers = self.shards.pids
        self.count = 0  # states stored
        self.seq = 0
        self.paths: dict[int, tuple[int, list[int]]] = {}
        self.shard_bytes = 0
        self.rounds: list[int] = []  # the cycle proviso's rounds, per level searched
        self.committing = False  # a commit sent whose answers are not read yet

    # -- load or start ------------------------------------------------------------------

    # The first level is handed to the workers by owner; the workers keep the frontier.

    def stored(self) -> int:
        return self.count

    def abandon(self) -> None:
        self.shards.close()

    def _hand_out(self, fps: np.ndarray, nums: np.ndarray, parents: np.ndarray, actions: np.ndarray) -> None:
        """Give each worker its fingerprints and the parent links of ``nums``."""
        owners = owner_of(fps, self.workers)
        for w in range(self.workers):
            mine = owners == w
            self.shards.send(w, msg.Adopt(fps[mine], nums[mine], parents[mine], actions[mine], paired=True))

    def _hand_out_level(self, states: list, first_rank: int) -> None:
        """Give each worker the states of ``states`` it owns, ranked from ``first_rank``."""
        if not states:
            return
        owners = owner_of(self.expander.fingerprints(states), self.workers)
        ranks = np.arange(first_rank, first_rank + len(states), dtype=np.int64)
        for w in range(self.workers):
            idx = np.flatnonzero(owners == w)
            if len(idx):
                self.shards.send(w, msg.Keep(ranks[idx], [states[i] for i in idx.tolist()]))

    def store_initial(self, fps: np.ndarray, positions: np.ndarray, level: list) -> None:
        n = len(level)
        self._hand_out(fps, np.arange(n, dtype=np.int64), np.full(n, -1, dtype=np.int64), positions.astype(np.uint16))
        self._hand_out_level(level, 0)
        self.count = self.frontier_len = n

    def restore(self, fps: np.ndarray, parents: np.ndarray, actions: np.ndarray, frontier: Any,
                log: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> None:
        assert self.ckpt is not None
        if len(np.unique(np.where(fps == 0, np.uint64(1), fps))) != len(fps):
            frontier.discard()
            raise duplicate_refusal(self.ckpt)
        n = len(parents)
        # Fingerprints go to their owners; the links (by number) in equal ranges of numbers.
        owners = owner_of(fps, self.workers)
        cuts = np.linspace(0, n, self.workers + 1).astype(np.int64)
        for w in range(self.workers):
            lo, hi = int(cuts[w]), int(cuts[w + 1])
            self.shards.send(w, msg.Adopt(fps[owners == w], np.arange(lo, hi, dtype=np.int64),
                                      parents[lo:hi].astype(np.int64), actions[lo:hi].astype(np.uint16)))
        if self.logging and log is not None:  # the checkpoint's edge log goes on, spread over the workers
            states, sources, targets = log
            mine = owner_of(states, self.workers)
            edges = np.linspace(0, len(sources), self.workers + 1).astype(np.int64)
            for w in range(self.workers):
                numbers = np.flatnonzero(mine == w)
                lo, hi = int(edges[w]), int(edges[w + 1])
                self.shards.send(w, msg.Logs(numbers, states[numbers], sources[lo:hi], targets[lo:hi]))
            self.log_bytes = 16 * len(states) + 12 * len(sources)
        else:
            self.logging = False  # the levels before the checkpoint took edges not logged (the workers drop theirs)
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

    # -- a level --------------------------------------------------------------------------

    def waiting(self) -> None:
        """Called while the workers search a level: signals, the memory budget, the time
        limit and the progress line (the shards are consistent here)."""
        interrupts.poll()
        if self.budget is not None:
            self.budget.check()
        if rules.time_up(self.ledger.deadline):
            raise TimeUp
        if self.progress is not None:
            self.progress.tick(self.count, self.depth + 1, self.frontier_len)

    def search_level(self) -> tuple[int, bool]:
        """Search one level in the workers, settle it here, commit it there."""
        shards = self.shards
        self.seq += 1
        shards.broadcast(msg.Level(self.seq, frozenset(self.evaluator.open), self.at_depth_bound, CHUNK))
        self.committed()  # the last level's commit, done before this level began there
        if self.reductions.proviso:
            self.proviso_rounds()
        reports = shards.gather(msg.LevelReport, self.waiting, None)
        level = self._gathered(reports)
        if self.logging and self.budget is not None and level.log_grow:
            try:  # within its share, leaving the tables room to grow as much again as they have
                log_room(self.budget, self.log_bytes, level.log_grow, level.grow + self.grown)
                self.log_bytes += level.log_grow
            except MemoryBoundReached:
                self.logging = False  # the workers drop their edge logs at the commit; the search goes on
        if self.budget is not None and level.grow:
            self.budget.reserve(level.grow)  # before anything of the level is decided here
        self.grown += level.grow
        all_keys, owned = ranked([rep.keys for rep in reports])
        end = self.settle(level.counts, level.terminal, level.findings, all_keys)
        last_block = None if end.last_rank is None else end.last_rank // CHUNK
        if self.fired is not None:
            for block, c in level.fired.items():
                if rules.counted(block, last_block):
                    self.fired.update(c)
        if self.at_depth_bound and level.unvisited and rules.counted(min(level.unvisited) // CHUNK, last_block):
            self.ledger.beyond_depth_bound()
        if level.back and rules.counted(min(level.back) // CHUNK, last_block):
            self.ledger.back_edge()
        next_start = self.level_start + self.frontier_len
        # The new states were checked where they were generated, beside their parents,
        # and that worker holds them in the next level: its ranks, in key order.
        maker = level.holder[all_keys >> KEY_BITS]
        by_maker = np.argsort(maker.astype(np.int16) if self.workers < 1 << 15 else maker, kind="stable")  # radix
        cuts = np.searchsorted(maker[by_maker], np.arange(self.workers + 1))
        ship, expect = balance(np.bincount(maker[: end.kept], minlength=self.workers))
        rank_type = owned[0].dtype
        for w in range(self.workers):
            shards.send(w, msg.Commit(end.kept, next_start, self.level_start, owned[w],
                                      by_maker[cuts[w] : cuts[w + 1]].astype(rank_type), ship[w], expect[w], self.logging))
        self.committing = True  # answered before the workers' next answer (see committed())
        for phase in PHASES:
            self.phase[phase] = sum(rep.times[phase] for rep in reports) / self.workers
        self.busiest = max(rep.times["expand"] + rep.times["dedup"] + rep.times["check"] for rep in reports)
        self.count += end.kept
        return end.kept, self.ledger.stop

    def committed(self) -> None:
        """Read the workers' answers to the last commit, if not read yet: a worker
        answers it before anything else (the next level's report, a checkpoint's dump,
        parent links), and its error, if any, is raised here."""
        if self.committing:
            self.committing = False
            self.shards.gather(msg.Committed, timeout=STORE_SECONDS)

    def _gathered(self, reports: list[msg.LevelReport]) -> _Gathered:
        """The workers' level reports put together by parent rank (a problem raises)."""
        n_parents = self.frontier_len
        level = _Gathered(np.zeros(n_parents, dtype=np.int64), np.zeros(n_parents, dtype=np.int64))
        for w, rep in enumerate(reports):
            if rep.problem:
                raise SpecError(f"{self.spec.name}: {rep.problem}")
            level.counts[rep.ranks] = rep.counts
            level.holder[rep.ranks] = w
            level.terminal.update(rep.terminal)
            if rep.findings:
                level.findings.update(rep.findings)
            for block, c in rep.fired.items():
                level.fired.setdefault(block, Counter()).update(c)
            if rep.back_rank >= 0:
                level.back.append(rep.back_rank)
            if rep.unvisited_rank >= 0:
                level.unvisited.append(rep.unvisited_rank)
            level.grow += rep.grow
            level.log_grow += rep.log_grow
        return level

    def next_level(self) -> None:
        pass  # the workers hold it (committed)

    def level_done(self) -> None:
        if self.progress is not None:  # each level, for the growing warning (the line itself is rate-limited)
            self.progress.tick(self.count, self.depth, self.frontier_len)

    def proviso_rounds(self) -> None:
        """The cycle proviso's rounds of a level (:meth:`ordercheck.checker.engine.shards._Shard.rounds`):
        gather the parents each worker found to need a full expansion, name the new ones
        to every worker, until a round finds none. Records the number of rounds."""
        full = np.zeros(0, dtype=np.int64)
        rounds = 0
        while True:
            rounds += 1
            found = [rep.parents for rep in self.shards.gather(msg.Round, self.waiting, None)]
            new = np.setdiff1d(np.concatenate(found), full)
            if not len(new):
                break
            full = np.union1d(full, new)
            self.shards.broadcast(msg.More(new))
        self.shards.broadcast(msg.Settle())
        self.rounds.append(rounds)

    def settle(self, counts: np.ndarray, terminal: dict[int, list], findings: dict[int, list],
               keys: np.ndarray) -> rules.LevelEnd:
        """Decide the level as one process would (:meth:`ordercheck.checker.engine.ledger.Ledger.settle`),
        from the per-parent successor counts, the findings (terminal ones by parent rank,
        the others by key) and the sorted keys of the new states; the ledger records its
        decisions, transitions, stop and bound."""
        first = self.count
        events: list[tuple[int, int, list[tuple[str, Decision]]]] = [
            (r, -1, decided_at(self.level_start + r, f)) for r, f in terminal.items()]
        if findings:
            fk = np.fromiter(findings.keys(), dtype=np.int64, count=len(findings))
            at = np.searchsorted(keys, fk)
            events.extend((k >> KEY_BITS, k & OFFSET_MASK, decided_at(first + int(j), findings[k]))
                          for k, j in zip(fk.tolist(), at.tolist()))
        events.sort(key=lambda e: (e[0], e[1]))
        return self.ledger.settle(counts, events, keys, first, CHUNK if self.at_depth_bound else None)

    # -- checkpoints --------------------------------------------------------------------

    def checkpoint(self) -> None:
        """Gather the shards (as at the level's start) and write them as one process's
        checkpoint (:mod:`ordercheck.checker.engine.checkpoints`; a failed write warns)."""
        mark = self.mark
        if mark.ckpt is None or mark.meta is None:
            return
        n, n_level = mark.states, self.frontier_len
        self.committed()
        self.shards.broadcast(msg.Dump())
        dumps = self.shards.gather(msg.Dumped, timeout=STORE_SECONDS)
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
        save(mark.ckpt, mark.ident, mark.meta, fps, parents, actions, _LevelStates(states), warn, self.log_of(n))
        mark.last = time.monotonic()

    def log_of(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The workers' edge logs joined (:meth:`joined_logs`), as a checkpoint of ``n``
        states carries one (:data:`~ordercheck.checker.engine.checkpoints.LOG_FILES`: the
        states' fingerprints by number, the edges' sources and targets); ``None`` where
        :meth:`joined_logs` gives none or the logs do not hold exactly the states ``0 ..
        n - 1`` (a resume then walks the graph, as without a log)."""
        log = self.joined_logs(n)
        if log is None or log.numbers is None or log.nodes is None or len(log.numbers) != n:
            return None
        states = by_number(log.numbers.view(), log.nodes.view())
        if states is None or log.sources is None or log.targets is None:
            return None
        return states, log.sources.view(), log.targets.view()

    def joined_logs(self, n: int) -> EdgeLog | None:
        """The workers' edge logs, of ``n`` states, joined into one (:meth:`EdgeLog.joined
        <ordercheck.checker.engine.edges.EdgeLog.joined>`); ``None`` where they keep none
        (one dropped its log) and where the memory budget refuses the gathered copies."""
        if not self.logging:
            return None
        try:
            if self.budget is not None:  # the logs received, and joined: 12 bytes an edge, 16 a state, twice
                self.budget.reserve(2 * (12 * self.ledger.transitions + 16 * n))
            self.shards.broadcast(msg.Log())
            parts = [got.part for got in self.shards.gather(msg.Logged, timeout=STORE_SECONDS)]
            if any(p is None for p in parts):
                return None
            return EdgeLog.joined(parts, self.budget.reserve if self.budget is not None else None)
        except MemoryError:  # the budget's refusal included
            return None

    def give_up_level(self, write: bool) -> bool:
        """When the search stops inside a level: the workers give it up (their shards are
        then as at its start) and, with ``write``, the level's start is checkpointed.
        Whether the workers are still in step."""
        self.committing = False  # the abort's wait drops the commit's answers
        try:
            self.shards.abort(self.shards.grace)  # the stop's grace: a worker stuck in a step is killed
        except Exception as exc:  # a worker that died or did not stop: its shard is gone
            lost = None
            if isinstance(exc, WorkerLost) and exc.why:
                lost = (f"worker process {exc.worker} {exc.why[3:]}" if exc.why.startswith("it ")
                        else f"worker process {exc.worker}: {exc.why}")
            if interrupts.pending() is not None:  # said in the interrupted line
                interrupts.note(lost or str(exc))
            elif lost:
                warn(f"{lost}; the stopped level was not checkpointed"
                     + (f" (the last checkpoint, {self.mark.saved() or 'none'}, is kept)" if self.mark.ckpt else ""))
            elif self.mark.ckpt is not None:
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
            self.shards.broadcast(msg.Paths(numbers))
            parent = np.full(len(numbers), -2, dtype=np.int64)
            action = np.zeros(len(numbers), dtype=np.int64)
            for found, par, act in self.shards.gather(msg.Links):
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

    def close(self) -> None:
        """Rebuild the decided states' paths and read the workers' memory (when they are
        in step), gather their edge logs where the check of an acyclic declaration will
        read them (:meth:`gather_log`), stop them, drop the own spill directory."""
        try:
            if self.searched:
                self.committed()
                self.paths = self.resolve(sorted({d.index for d in self.decisions.values()}))
                self.shards.broadcast(msg.Peak())
                peaks = self.shards.gather(msg.PeakReport)
                self.worker_peak = sum(p.peak for p in peaks)
                self.shard_bytes = sum(p.nbytes for p in peaks)
                self.outcome.edges = self.gather_log()
        finally:
            self.remaining = self.frontier_len > 0
            self.shards.close()
            if self.own_spill:
                shutil.rmtree(self.spill_dir, ignore_errors=True)

    def gather_log(self) -> EdgeLog | None:
        """The workers' edge logs joined into one (:meth:`EdgeLog.joined
        <ordercheck.checker.engine.edges.EdgeLog.joined>`), where
        :func:`~ordercheck.checker.engine.declarations.check_acyclic` reads it: the spec
        declares ``acyclic``, the search noticed an edge that can close a cycle and it is
        complete. ``None`` elsewhere, where a worker dropped its log, and where the
        memory budget refuses the gathered copies (the graph is then walked, as
        without a log)."""
        ledger = self.ledger
        if not (ledger.maybe_cyclic and ledger.complete(self.frontier_len > 0)):
            return None
        return self.joined_logs(self.count)

    def final_store(self) -> tuple[Any, int]:
        """A :class:`ShardedPaths` and the bytes of the workers' tables."""
        return ShardedPaths(self.count, self.shard_bytes, self.paths, self.rounds), self.shard_bytes
