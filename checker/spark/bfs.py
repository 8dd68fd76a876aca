"""The Spark engine: level-synchronous breadth-first search on Apache Spark's DataFrames.

One search explores a batch of models at once (:class:`SparkBatch`; checking one model
is the batch of one, :class:`SparkSearch`). States travel as columnar batches: every
dataset is a DataFrame whose rows carry a model number, a state's 64-bit fingerprint (a
``long``), its order key and, where states are needed, the state's encoding
(:mod:`ordercheck.checker.engine.encoding`) as a ``binary`` column. Python sees states only in the
functions of :mod:`ordercheck.checker.spark.batches`, one Arrow record batch at a time
(``DataFrame.mapInArrow``); everything between them is Spark's own engine. A search's
first levels, while smaller than one task's share (:data:`DRIVER_STATES`), run on the
driver with the same functions (:mod:`ordercheck.checker.spark.first_levels`); from the first
larger one on, each level, shared by every model still running, is one Spark job of two
stages:

1. *expand*: the previous level's candidates go through Python, batch by batch, which
   keeps those that won their fingerprint (their keys are the level's keys, sent to every
   task; a key names one candidate), decodes each state,
   computes its successors, checks ``eventually`` properties on terminal states, checks
   the open invariants and ``sometimes`` targets on the successors it writes (see
   :mod:`ordercheck.checker.spark.batches` for why that decides what checking the level's new states
   would) and writes the successors (fingerprint, order key, encoding), each once per
   task unless met again with a smaller key; each task reports its frontier ranks,
   successor counts, events and seconds to the driver through an accumulator
   (:class:`~ordercheck.checker.spark.batches.TaskReports`). These candidates are
   checkpointed where they are written: the states never move between partitions.
2. *deduplicate*: Spark shuffles the candidates' fingerprints and keys (not their
   states) by fingerprint, marks those in the visited set with a hash join on
   ``(fp, model)`` (a left outer join built on the level's rows, the visited set
   streamed past it) and drops them (while some model's back edges matter, they are
   kept, marked, for the driver to see), and keeps of equal candidates the smallest
   order key (an aggregation). The new states' order keys go to the driver straight
   from Spark: no second pass through Python.

The driver collects only order keys (as Arrow) and the tasks' reports, never the states.
The visited set is a DataFrame of fingerprints (with their models). It grows by a union
with each level's new states and is checkpointed every :data:`COMPACT_EVERY` levels;
each level's candidates and new states are checkpointed too (``localCheckpoint`` by
default, reliable checkpoints with a checkpoint directory), so no
plan grows with the depth, and their blocks are dropped once nothing reads them (the
candidates after the next level's expansion, the new states once merged into a rewritten
visited set). The visited set and the deduplicated rows are hash-partitioned alike, with
adaptive execution off so the partition count stays the engine's.

A counterexample is rebuilt on the driver, with no job: each model keeps the sorted keys
of every level it expanded (:class:`~ordercheck.checker.spark.frontier_keys.FrontierKeys`, in an
anonymous temporary file, 8 bytes a state), and a key names its parent's rank in the level
before, so the decided state's key leads back level by level to an initial state; the
action positions are replayed with :func:`ordercheck.checker.api.trace.replay`, which must reach
the decided state's fingerprint.

Same answers as the local engine. Every state carries an order key: its parent's
position in its level (the *rank*) times 2**16 plus its action position. Sorting a
level by that key gives exactly the order in which :mod:`ordercheck.checker.engine.bfs` discovers it,
and keeping, among equal successors, the one with the smallest key picks exactly the
local engine's parent. The driver gathers each level's sorted keys (8 bytes per state
of that level; never the states) and broadcasts them, so the next level turns a key
into a rank with a binary search. Each property is decided by its violation (or
witness) with the smallest key in the first level that has one, the state the local
engine meets first; the trace is then the local engine's trace, step for step. Early
ends follow the local engine to the state, model by model: with every property decided it finishes
the parent it is expanding; ``max_states`` cuts the level at the same successor;
``max_depth`` expands the last level without adding to it. So distinct states,
transitions, depth, verdicts and traces equal the local engine's (the time limit is
checked between levels only, as timing is never reproducible anyway; in a batch, each
model's seconds and time limit count from the start of the shared search). These rules
are the local engine's own code: each model's run (:class:`_ModelRun`) holds a
:class:`~ordercheck.checker.engine.ledger.Ledger`, as the local level loop does, which records the
decisions, settles each level (:func:`ordercheck.checker.engine.rules.settle`), applies the bounds,
the stop reasons and the depth, and builds the outcome.

Liveness: ``eventually`` properties are checked on terminal states on the executors.
When one is still open at the end and some edge led back to an earlier level (so a
cycle may exist), the fair-cycle search of :mod:`ordercheck.checker.engine.liveness` runs on the driver,
as it does after the local engine.

Per-level time split (:class:`~ordercheck.checker.api.result.LevelTiming`, approximate on Spark):
``expand_s`` and ``check_s`` are the Python seconds of the expand function spent
expanding and checking properties, summed over the level's tasks and divided by the
cores Spark runs tasks on;
``dedup_s`` is the rest of the level job's wall time (Arrow transfer, the shuffle, the
join and the aggregation, the checkpoint: Spark's engine, not separable from outside);
``exchange_s`` is the driver's share of moving data (broadcasting the level's keys,
reading the collected keys and events); ``other_s`` is the rest (decisions, the visited
set's periodic checkpoint). A level run on the driver has its own seconds: expanding,
checking, deduplicating with numpy.

A job that fails for good (a task failing more often than Spark's retries allow, an
executor lost without reliable checkpoints) raises :class:`SparkJobError`, an
:class:`~ordercheck.checker.api.errors.EngineError` the command line prints as one line.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from ordercheck.checker.api.errors import EngineError, InputError
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.result import LevelTiming, Result
from ordercheck.checker.api.spec import Property, Spec
from ordercheck.checker.engine import rules
from ordercheck.checker.engine.bfs import GROWING_DEPTH, Bounds, Decision, SearchOutcome, SpecError
from ordercheck.checker.engine.bfs import Progress as LocalProgress
from ordercheck.checker.engine.evaluate import Evaluator
from ordercheck.checker.engine.fairness_note import fairness_warning
from ordercheck.checker.engine.fingerprint import fingerprint
from ordercheck.checker.engine.ledger import Ledger
from ordercheck.checker.engine.memory import current_rss, peak_rss, reset_peak
from ordercheck.checker.engine.reduce import Reductions
from ordercheck.checker.engine.rules import VOCABULARY_CHECKS, tracks_cycles
from ordercheck.checker.loading.specref import reference_of
from ordercheck.checker.spark.batches import (
    CANDIDATE_SCHEMA,
    FRONTIER_SCHEMA,
    TaskReports,
    expand_batches,
    signed,
)
from ordercheck.checker.spark.first_levels import DriverLevels
from ordercheck.checker.spark.frontier_keys import FrontierKeys
from ordercheck.checker.spark.session import (
    DEFAULT_MASTER,
    SparkUnavailable,
    executor_python_problem,
    get_spark,
    sql_session,
    whole_number_env,
)
from ordercheck.checker.spark.ship import ship_specs
from ordercheck.checker.spark.tasks import POS_BITS, POS_MASK, Event, LevelSummary, TaskConfig, remember_spec

VISITED_SCHEMA = "fp long, model int"
"""The visited set: every state's fingerprint and model (the traces need no parent
links: :class:`~ordercheck.checker.spark.frontier_keys.FrontierKeys`)."""

COMPACT_EVERY = 4
"""The visited set grows by a union per level; every this many levels it is
checkpointed (written by the next level's job), which cuts the lineage and leaves one
dataset without the states."""

VOCABULARY_PER_TASK = 100
"""Of :data:`~ordercheck.checker.engine.rules.VOCABULARY_CHECKS` (per model, as the local engine
checks the first states met), at most this many per task."""

STATES_PER_TASK = 20_000
"""A level whose frontier is smaller than this many states per partition is expanded
(and its new states checked) in fewer, fuller tasks."""

DRIVER_STATES = STATES_PER_TASK
"""By default, a level whose frontier (all models together) holds fewer states than
this runs on the driver, as long as every level before it did
(:mod:`ordercheck.checker.spark.first_levels`): Spark would give it a single task anyway."""


INJECT_ENV = "ORDERCHECK_SPARK_INJECT_FAILURES"
"""Test hook: comma-separated stages (``expand``, ``sweep``) whose tasks on
even partitions raise on their first attempt (``expand!``: every task, every attempt,
so the job fails for good). Read on the driver when a run starts."""


DRIVER_STATES_ENV = "ORDERCHECK_SPARK_DRIVER_STATES"
"""Sets :attr:`SparkOptions.driver_states` where the options do not: a whole number of
states, ``0`` for every level on Spark (what a test on a cluster uses)."""


def driver_states_from_env() -> int | None:
    """The threshold ``ORDERCHECK_SPARK_DRIVER_STATES`` gives (``None`` when it is unset or
    empty); anything but a whole number of 0 or more is bad input
    (:class:`~ordercheck.checker.api.errors.InputError`, exit 2)."""
    return whole_number_env(DRIVER_STATES_ENV, "states")


class SparkJobError(EngineError):
    """A Spark job failed for good (after its retries)."""

    def __init__(self, message: str) -> None:
        super().__init__("spark", message)


@dataclass(frozen=True)
class SparkOptions:
    """Settings of the Spark engine."""

    master: str = DEFAULT_MASTER
    partitions: int | None = None  # default: Spark's default parallelism (at least 2)
    checkpoint_dir: str | None = None  # reliable checkpoints here; else localCheckpoint
    conf: tuple[tuple[str, str], ...] = ()
    driver_states: int | None = None  # the first levels of fewer states run on the driver; None: DRIVER_STATES
    inject_failures: frozenset[str] = field(
        default_factory=lambda: frozenset(s for s in os.environ.get(INJECT_ENV, "").split(",") if s)
    )


@dataclass
class SparkStats:
    """Engine figures beyond the local engine's: levels, per-level times."""

    partitions: int = 0
    levels: int = 0
    level_seconds: list[float] = field(default_factory=list)
    level_tasks: list[int] = field(default_factory=list)  # per level, the expand tasks that had rows (0: the driver)
    timings: list[LevelTiming] = field(default_factory=list)  # per level, shared by the batch's models
    driver_levels: int = 0  # the first levels, expanded on the driver (ordercheck.checker.spark.first_levels)
    driver_seconds: float = 0.0  # the driver's own work between jobs (keys, counts, decisions)


@dataclass(frozen=True)
class SearchJob:
    """One model of a batch: its spec, properties, bounds and early-stop rule."""

    spec: Spec
    props: Sequence[Property]
    bounds: Bounds = Bounds()
    stop_when_decided: bool = True
    label: str = ""


class _Paths:
    """Stands in for the local store in :func:`ordercheck.checker.engine.run.build_result`: the paths
    rebuilt from the levels' keys, by decision number."""

    def __init__(self, distinct: int) -> None:
        self.distinct = distinct
        self.paths: list[tuple[int, list[int]]] = []

    def __len__(self) -> int:
        return self.distinct

    def path(self, index: int) -> tuple[int, list[int]]:
        return self.paths[index]


Progress = Callable[[str, int, int, int], None]


class _ModelRun:
    """The driver's side of one model in a batch: its level's keys and, in its
    :class:`~ordercheck.checker.engine.ledger.Ledger` (the level loop's rules, the local engine's
    own), its counts, decisions and where the local engine would stop (see the module
    docstring)."""

    def __init__(self, index: int, job: SearchJob, started: float, keys: FrontierKeys) -> None:
        self.index = index
        self.job = job
        self.spec = job.spec
        self.constants_json = json.dumps(job.spec.values, sort_keys=True)
        self.evaluator = Evaluator(job.spec, list(job.props))  # the initial states' (the tasks check the rest)
        self.ledger: Ledger[Event] = Ledger([p.name for p in job.props], job.bounds,
                                            stop_when_decided=job.stop_when_decided,
                                            track_cycles=tracks_cycles(job.spec, job.props),
                                            on_decide=self.evaluator.decide)
        self.decisions = self.ledger.decisions
        self.level_keys = np.zeros(0, np.int64)
        self.distinct = 0
        self.searched = 0  # levels searched (the progress line's and the time split's level)
        self.started = started
        self.seconds = 0.0
        self.vocabulary_left = VOCABULARY_CHECKS
        # Each expanded level's sorted keys (kept in the batch's file), and the level each
        # decision was made in (None: on an initial state): the traces are walked back
        # through them.
        self.frontiers = keys
        self.decided_in: dict[str, int | None] = {}

    def initial(self) -> list[tuple[int, int, bytes]]:
        """The distinct initial states as ``(position, fingerprint, blob)``, with the
        invariants checked on them."""
        from ordercheck.checker.engine.encoding import encode

        ledger, evaluator = self.ledger, self.evaluator
        level, positions, fps = rules.initial_level(self.spec, _fingerprints)
        inits: list[tuple[int, int, bytes]] = []
        for state, i, fp in zip(level, positions.tolist(), fps.tolist()):
            inits.append((i, fp, encode(state)))
            found = evaluator.on_state(state, evaluator.history_key(state), None)
            ledger.record([(name, Event(i, fp, sentence)) for name, sentence in found])
        self.decided_in.update((name, None) for name in self.decisions)
        self.distinct = ledger.initial_states = len(inits)
        self.vocabulary_left = max(VOCABULARY_CHECKS - len(inits), 0)
        self.level_keys = np.array([i for i, _fp, _b in inits], dtype=np.int64)
        ledger.start(self.started)
        self.seconds = time.monotonic() - self.started
        return inits

    @property
    def active(self) -> bool:
        return bool(len(self.level_keys)) and not self.ledger.stop

    def config(self) -> TaskConfig:
        """What the tasks need about this model for the next level (which begins)."""
        add = not self.ledger.begin_level()
        vocabulary = min(self.vocabulary_left, VOCABULARY_PER_TASK) if add else 0
        return TaskConfig(
            reference_of(type(self.spec)), self.constants_json, tuple(self.ledger.open), add, vocabulary=vocabulary
        )

    def absorb(self, summaries: list[LevelSummary]) -> None:
        """Take in one level's summaries: the ledger counts, decides and stops where the
        local engine would. At the depth bound the summaries' new states are the
        successors not visited before (none is kept)."""
        ledger = self.ledger
        level = self.frontiers.add(self.index, self.level_keys)  # the ranks of this level's events and new keys
        new_keys = np.sort(np.concatenate([s.keys for s in summaries])) if summaries else np.zeros(0, np.int64)
        nsucc = np.zeros(len(self.level_keys), dtype=np.int64)
        for s in summaries:
            for r, n in zip(s.ranks, s.nsucc):
                nsucc[r] = n
        if any(s.back_edge for s in summaries):
            ledger.back_edge()
        # Every task's first event of each open property, in breadth-first order (a
        # terminal one at position -1); the ledger records the first of each.
        events = sorted(((ev.key >> POS_BITS, -1 if ev.terminal else ev.key & POS_MASK, [(name, ev)])
                         for s in summaries for name, ev in s.events.items()), key=lambda e: (e[0], e[1]))
        end = ledger.settle(nsucc, events, new_keys, self.distinct)
        self.decided_in.update((name, level) for name in self.decisions if name not in self.decided_in)
        if ledger.at_depth_bound and end.kept:
            ledger.beyond_depth_bound()
        kept = ledger.end_level(end.kept)
        self.distinct += kept
        self.level_keys = new_keys if kept and not end.stop else np.zeros(0, np.int64)
        self.searched += 1
        self.seconds = time.monotonic() - self.started

    def outcome(self, paths: dict[str, tuple[int, list[int]]], peak_memory: int) -> SearchOutcome:
        """The outcome :func:`ordercheck.checker.engine.bfs.search` would have returned."""
        store = _Paths(self.distinct)
        decisions: dict[str, Decision] = {}
        for number, name in enumerate(paths):
            store.paths.append(paths[name])
            decisions[name] = Decision(number, self.decisions[name].sentence)
        outcome = self.ledger.fill(SearchOutcome(store=store), self.distinct, bool(len(self.level_keys)), decisions)
        outcome.seconds = self.seconds
        outcome.peak_memory_bytes = peak_memory
        return outcome


def _fingerprints(states: list) -> np.ndarray:
    """The states' fingerprints, as the tasks take them (:func:`ordercheck.checker.engine.fingerprint.fingerprint`)."""
    return np.fromiter((fingerprint(s) for s in states), dtype=np.uint64, count=len(states))


class SparkBatch:
    """One breadth-first search of several models on Spark, level by level together."""

    def __init__(self, sc: Any, jobs: Sequence[SearchJob], options: SparkOptions) -> None:
        self.sc = sc
        self.spark = sql_session(sc)
        self.jobs = list(jobs)
        self.options = options
        self.partitions = options.partitions or max(2, self.sc.defaultParallelism)
        self.stats = SparkStats(partitions=self.partitions)
        # The search on the driver (its first levels), then on Spark: the source of the
        # next level, the visited set (with its last compacted base, the levels merged
        # since, and the datasets a compaction replaced) and the data to release.
        self.driver: DriverLevels | None = None
        self.source: Any = None
        self.source_parts = 0
        self.visited: Any = None
        self.visited_base: Any = None
        self.level: Any = None
        self.unmerged: list[Any] = []
        self.replaced: list[Any] = []
        self.held: list[Any] = []
        self.reports: Any = None
        if options.checkpoint_dir:
            self.sc.setCheckpointDir(options.checkpoint_dir)

    def _cut(self, df: Any, eager: bool) -> Any:
        """``df`` with its lineage cut: a local checkpoint (kept on the executors; written
        by the first job that computes it), or a reliable one in the checkpoint directory
        (persisted first, so writing it does not compute ``df`` again)."""
        if self.options.checkpoint_dir:
            from pyspark import StorageLevel

            df.persist(StorageLevel.MEMORY_AND_DISK)
            out = df.checkpoint(eager=True)
            df.unpersist()  # written: the checkpoint's files are read from now on
            return out
        return df.localCheckpoint(eager=eager)

    def run(self, progress: Progress | None = None) -> list[SearchOutcome]:
        """Explore and decide every model; the outcomes match :func:`ordercheck.checker.engine.bfs.search`'s."""
        keys = FrontierKeys()  # one file for the batch, however many models
        try:
            return self._run(progress, keys)
        finally:
            keys.close()

    def _run(self, progress: Progress | None, keys: FrontierKeys) -> list[SearchOutcome]:
        started = time.monotonic()
        reset_peak()
        baseline = current_rss()
        sc, spark = self.sc, self.spark
        spark.conf.set("spark.sql.shuffle.partitions", str(self.partitions))
        runs = [_ModelRun(m, job, started, keys) for m, job in enumerate(self.jobs)]
        ship_specs(sc, [type(job.spec) for job in self.jobs])  # users' spec modules, to the executors

        frontier_rows, visited_rows = [], []
        for run in runs:
            remember_spec(reference_of(type(run.spec)), run.constants_json, run.spec)  # the driver's own
            for i, fp, blob in run.initial():
                frontier_rows.append((signed(fp), run.index, i, blob))
                visited_rows.append((signed(fp), run.index))
        self.driver = DriverLevels(frontier_rows, visited_rows)
        threshold = self.options.driver_states
        if threshold is None:
            threshold = driver_states_from_env()
        if threshold is None:
            threshold = DRIVER_STATES
        if self.options.inject_failures:  # the test hook fails Spark's tasks: every level is one
            threshold = 0
        in_frontier = {run.index for run in runs if run.active}
        while True:
            active = [run for run in runs if run.active]
            if not active:
                break
            level_started = time.monotonic()
            cfgs = {run.index: run.config() for run in active}
            cyclic = [run.index for run in active if run.ledger.wants_back_edges]
            if self.driver is not None and sum(len(run.level_keys) for run in active) >= threshold:
                self._hand_over()
            if self.driver is not None:
                table, told, dedup_s = self.driver.level(
                    cfgs, {run.index: run.level_keys for run in active}, bool(cyclic), self.stats.levels
                )
                job_s = exchange = 0.0
                self.stats.driver_levels += 1
                self.stats.level_tasks.append(0)
            else:
                table, told, job_s, exchange = self._spark_level(active, cfgs, cyclic, in_frontier)
                dedup_s = None
            in_frontier = set(cfgs)
            read_started = time.monotonic()
            summaries, vocabulary, expand_s, check_s = _summaries(table, told)
            exchange += time.monotonic() - read_started
            frontiers = {run.index: len(run.level_keys) for run in active}
            before = {run.index: run.distinct for run in active}
            for run in active:
                run.vocabulary_left = max(run.vocabulary_left - vocabulary.get(run.index, 0), 0)
                run.absorb(summaries.get(run.index, []))
                if progress is not None:
                    progress(run.job.label, run.searched, run.distinct, len(run.level_keys))
            if self.driver is None:
                self._merge_level()
            self.stats.levels += 1
            seconds = time.monotonic() - level_started
            if dedup_s is None:  # a Spark level: Python's seconds are the tasks', over the cores
                cores = max(1, sc.defaultParallelism)
                expand_wall, check_wall = min(expand_s / cores, job_s), min(check_s / cores, job_s)
                dedup_wall = max(job_s - expand_wall - check_wall, 0.0)
                other = max(seconds - job_s - exchange, 0.0)
            else:  # the driver's level: its own seconds
                expand_wall, check_wall, dedup_wall = expand_s, check_s, dedup_s
                other = max(seconds - expand_s - check_s - dedup_s - exchange, 0.0)
            timing = LevelTiming(
                depth=self.stats.levels,
                frontier=0,
                new_states=0,
                expand_s=round(expand_wall, 4),
                exchange_s=round(exchange, 4),
                dedup_s=round(dedup_wall, 4),
                check_s=round(check_wall, 4),
                other_s=round(other, 4),
            )
            for run in active:
                run.ledger.timed(
                    replace(timing, depth=run.searched, frontier=frontiers[run.index],
                            new_states=run.distinct - before[run.index])
                )
            self.stats.driver_seconds += seconds - job_s
            self.stats.level_seconds.append(round(seconds, 4))
            self.stats.timings.append(timing)

        paths = self._rebuild(runs)
        peak = max(peak_rss() - baseline, 0)
        return [run.outcome(paths[run.index], peak) for run in runs]

    def _hand_over(self) -> None:
        """Move the search from the driver to Spark: the driver's frontier becomes the
        first source, its visited fingerprints the first visited set (see
        :mod:`ordercheck.checker.spark.first_levels`)."""
        driver, self.driver = self.driver, None
        assert driver is not None
        try:
            self.source = self.spark.createDataFrame(driver.frontier_table(), FRONTIER_SCHEMA).coalesce(1)
            self.source_parts = 1  # the partitions the next level's rows come in
            visited = self.spark.createDataFrame(driver.visited_table(), VISITED_SCHEMA)
            self.visited = self._cut(visited.repartition(self.partitions, "fp", "model"), True)
        except Exception as exc:
            raise job_error(exc) from None
        self.visited_base, self.unmerged, self.replaced, self.held = self.visited, [], [], []
        self.reports = self.sc.accumulator([], TaskReports())

    def _spark_level(self, active: list[_ModelRun], cfgs: dict[int, TaskConfig], cyclic: list[int],
                     in_frontier: set[int]) -> tuple[Any, list[bytes], float, float]:
        """One level as a Spark job: expand the source, deduplicate against the visited
        set. Returns the collected ``model, key, seen`` table, the tasks' reports, the
        job's seconds and the driver's seconds moving data."""
        from pyspark.sql import functions as F

        sc, P = self.sc, self.partitions
        seen = F.col("seen")
        first_of = (F.min("key").alias("key"), F.max("seen").alias("seen"))
        broadcast_started = time.monotonic()
        keys_bc = sc.broadcast({run.index: run.level_keys for run in active})
        broadcast_s = time.monotonic() - broadcast_started
        source = self.source
        # The models still running, as one SQL expression (``Column.isin`` makes a JVM
        # call per model: 3 s a search of 160 models).
        still = F.expr(f"model IN ({', '.join(str(m) for m in sorted(cfgs))})")
        rows = source if len(active) == len(in_frontier) else source.filter(still)
        # A small level runs in fewer tasks (each Python task has a fixed cost). The
        # candidates stay in the partitions of the tasks that wrote them, so a level
        # larger than the one before is spread over more tasks by moving its rows
        # (round robin): that happens in the few levels where a search widens.
        tasks = min(P, -(-sum(len(run.level_keys) for run in active) // STATES_PER_TASK))
        if tasks < self.source_parts:
            rows = rows.coalesce(tasks)
        elif tasks > self.source_parts:
            rows = rows.repartition(tasks)
        self.source_parts = tasks
        # The candidates stay where they were written, states and all: only their
        # fingerprints and keys are shuffled and deduplicated.
        reports, inject = self.reports, self.options.inject_failures
        candidates = self._cut(
            rows.mapInArrow(partial(expand_batches, cfgs, inject, keys_bc, reports, self.stats.levels),
                            CANDIDATE_SCHEMA),
            eager=False,
        )
        links = candidates.select("fp", "model", "key")
        # Deduplication against the visited set: a hash join on the fingerprints, in
        # Spark's engine, its table built of the level's candidates (the smaller side:
        # the visited set streams past it) and the visited rows matched marked `seen`.
        # Those are dropped, unless some model's back edges matter: then the driver
        # learns of them.
        known = self.visited.select("fp", "model", F.lit(True).alias("seen"))
        joined = links.hint("shuffle_hash").join(known, ["fp", "model"], "left_outer")
        if not cyclic:
            joined = joined.filter(seen.isNull())
        # Equal candidates of one level: the one first in breadth-first order.
        level = self._cut(joined.groupBy("fp", "model").agg(*first_of), eager=False)
        # The driver reads the new states' keys and the back edges, and the tasks' reports.
        job_started = time.monotonic()
        table = self._collect(level.select("model", "key", "seen"))
        job_s = time.monotonic() - job_started
        told = {partition: payload for at, partition, payload in reports.value if at == self.stats.levels}
        reports.value = []
        self.stats.level_tasks.append(len(told))
        keys_bc.unpersist()
        # Read by nobody from now on: the previous level's candidates (this level's
        # frontier came from them), and the levels and visited set a compaction this
        # job wrote has replaced.
        for df in [*self.held, *self.replaced]:
            _release(df)
        self.held, self.replaced = [candidates], []
        # The next frontier: the candidates that won their fingerprint. A key names one
        # candidate of its model's level, so the next expand tasks pick them with the
        # level's keys they are sent anyway (a state not new is never decoded).
        self.source = candidates.select("fp", "model", "key", "state")
        self.level = level
        return table, list(told.values()), job_s, broadcast_s

    def _merge_level(self) -> None:
        """Add the last Spark level's new states to the visited set; every
        :data:`COMPACT_EVERY` levels, have the next job rewrite it as one dataset."""
        from pyspark.sql import functions as F

        new = self.level.filter(F.col("seen").isNull())
        self.visited = self.visited.unionByName(new.select("fp", "model"))
        self.unmerged.append(self.level)
        if (self.stats.levels + 1) % COMPACT_EVERY == 0:  # written by the next level's job
            self.replaced.extend([self.visited_base, *self.unmerged])
            self.visited = self.visited_base = self._cut(self.visited, eager=False)
            self.unmerged = []

    def _collect(self, df: Any) -> Any:
        try:
            return df.toArrow()
        except Exception as exc:
            raise job_error(exc) from None

    def _rebuild(self, runs: list[_ModelRun]) -> dict[int, dict[str, tuple[int, list[int]]]]:
        """Walk every decision of every model back to an initial state through the keys
        of the levels its search expanded (:class:`~ordercheck.checker.spark.frontier_keys.FrontierKeys`:
        no job), then check that replaying the positions reaches the decided state."""
        from ordercheck.checker.api.trace import replay

        out: dict[int, dict[str, tuple[int, list[int]]]] = {run.index: {} for run in runs}
        for run in runs:
            for name, ev in run.decisions.items():
                level = run.decided_in[name]
                if level is None:  # on an initial state: its key is its position
                    init, path = ev.key, []
                else:  # the event's key: its parent's rank, and its own action (none if terminal)
                    init, path = run.frontiers.path(run.index, level, ev.key >> POS_BITS,
                                                    [] if ev.terminal else [ev.key & POS_MASK])
                replayed = replay(run.spec, init, path)
                if fingerprint(replayed[-1][2]) != ev.fp:
                    raise RuntimeError(f"the trace rebuilt for {name} does not reach the state that decided it")
                out[run.index][name] = (init, path)
        return out


def _release(df: Any) -> None:
    """Drop the blocks of ``df``, a dataset :meth:`SparkBatch._cut` made and nothing reads
    any more (a local checkpoint's blocks stay in the executors' memory or disks until
    the driver's JVM collects its garbage otherwise); a reliable checkpoint's files stay.

    This reaches into Spark's query execution through the JVM gateway; should a Spark
    version lack it, the blocks are left to Spark's own cleaner (the search is
    unaffected; ``test_spark_releases_each_levels_data_once_nothing_reads_it`` fails)."""
    from py4j.protocol import Py4JError

    try:
        plan = df._jdf.queryExecution().logical()
        if plan.nodeName() == "LogicalRDD":
            plan.rdd().unpersist(False)
    except Py4JError:
        return


def _summaries(table: Any, reports: list[bytes]) -> tuple[dict[int, list[LevelSummary]], dict[int, int], float, float]:
    """One level's collected rows and its tasks' ``reports`` as summaries per model, with
    the states each model had its vocabulary checked on, and the Python seconds the
    expand tasks spent expanding and checking (each summed over tasks)."""
    models = table.column("model").to_numpy(zero_copy_only=False)
    keys = table.column("key").to_numpy(zero_copy_only=False)
    seen = np.asarray(table.column("seen").to_numpy(zero_copy_only=False) == True)  # noqa: E712 - nulls are not seen
    out: dict[int, list[LevelSummary]] = {}
    vocabulary: dict[int, int] = {}
    expand_s = check_s = 0.0
    for payload in reports:
        meta, checked, seconds, checking = pickle.loads(payload)
        expand_s += seconds
        check_s += checking
        for m, (ranks, nsucc, events) in meta.items():
            out.setdefault(m, []).append(LevelSummary(NO_KEYS, events, [ranks], [nsucc]))
        for m, n in checked.items():
            vocabulary[m] = vocabulary.get(m, 0) + n
    for m in np.unique(models[seen]).tolist():
        out.setdefault(m, []).append(LevelSummary(NO_KEYS, {}, [], [], True))
    states = ~seen
    if states.any():
        order = np.argsort(models[states], kind="stable")
        by_model, state_keys = models[states][order], keys[states][order]
        found_models, starts = np.unique(by_model, return_index=True)
        for m, part in zip(found_models.tolist(), np.split(state_keys, starts[1:])):
            out.setdefault(m, []).append(LevelSummary(part, {}, [], []))
    return out, vocabulary, expand_s, check_s


NO_KEYS = np.zeros(0, np.int64)


class SparkSearch:
    """One model's search on Spark: the batch of one."""

    def __init__(self, sc: Any, spec: Spec, props: Sequence[Property], options: SparkOptions) -> None:
        self.sc = sc
        self.spec = spec
        self.props = list(props)
        self.options = options
        self.stats = SparkStats()

    def run(self, bounds: Bounds | None = None, *, stop_when_decided: bool = True, progress: Any = None) -> SearchOutcome:
        """Explore and decide; the outcome matches :func:`ordercheck.checker.engine.bfs.search`'s.
        ``progress(level, states, frontier)`` is called after every level."""
        job = SearchJob(self.spec, self.props, bounds or Bounds(), stop_when_decided)
        batch = SparkBatch(self.sc, [job], self.options)
        each = None if progress is None else (lambda _label, level, states, frontier: progress(level, states, frontier))
        (outcome,) = batch.run(each)
        self.stats = batch.stats
        return outcome


def job_error(exc: Exception) -> Exception:
    """One line for a failed job: the Python exception a task raised (its traceback's
    last line; a :class:`SpecError` as itself) and how often Spark tried the task."""
    unfit = executor_python_problem(str(exc))
    if unfit is not None:
        return SparkJobError(unfit)
    lines = str(exc).splitlines()
    raised = None
    for i, line in enumerate(lines):
        if line.rstrip().endswith("Traceback (most recent call last):"):
            for after in lines[i + 1 :]:
                if after.strip() and not after[0].isspace():
                    raised = after.strip()
                    break
            if raised:
                break
    if raised and "SpecError: " in raised:
        return SpecError(raised.split("SpecError: ", 1)[1])
    if raised is None and "stage failure" not in str(exc):  # Spark itself failed, not a task
        found = [ln.strip(" :") for ln in lines if "Exception:" in ln or "Error:" in ln]
        return SparkJobError(f"Spark failed: {(found[0] if found else type(exc).__name__)[:300]}")
    tries = re.search(r"failed (\d+) times", str(exc))
    attempts = f" (a task failed {tries.group(1)} times)" if tries else ""
    if raised is None:
        found = [ln.strip() for ln in lines if "Exception:" in ln or "Error:" in ln]
        raised = found[0] if found else (lines[0].strip() if lines else type(exc).__name__)
    return SparkJobError(f"a Spark job failed after its retries{attempts}: {raised[:300]}")

def _spark_context(spark_options: SparkOptions) -> Any:
    try:
        return get_spark(spark_options.master, dict(spark_options.conf))
    except SparkUnavailable as exc:
        raise InputError("--master", spark_options.master, str(exc)) from None


def check_models_spark(models: Sequence[Model], options: Any, spark_options: SparkOptions | None = None) -> list[Result]:
    """Check ``models`` with the Spark engine in one batch (every level of every model
    in one Spark job); the same :class:`Result` per model as the local engine's.

    ``options`` is a :class:`ordercheck.checker.engine.run.Options`; its ``master`` picks the Spark master
    unless ``spark_options`` is given.
    """
    from py4j.protocol import Py4JError

    from ordercheck.checker.engine.declarations import check_acyclic, undecided_verdicts
    from ordercheck.checker.engine.run import bounds_for, build_result, check_cycles

    if spark_options is None:
        spark_options = SparkOptions(master=getattr(options, "master", DEFAULT_MASTER))
    sc = _spark_context(spark_options)
    jobs = [
        SearchJob(m.spec, m.properties, bounds_for(m, options), options.stop_when_decided, m.name) for m in models
    ]
    show = getattr(options, "progress", False)
    unbounded = {job.label for job in jobs if job.bounds == Bounds()}  # no limit at all: the growing warning
    warned: set[str] = set()

    def progress(label: str, level: int, states: int, frontier: int) -> None:
        if label in unbounded and label not in warned and level >= GROWING_DEPTH:
            warned.add(label)  # once, even with --quiet (ordercheck.checker.engine.bfs.Progress says the same)
            LocalProgress(None, label=label).growing(level)
        if show:
            sys.stderr.write(f"{label}: level {level}, {states:,} states, frontier {frontier:,}\n")
            sys.stderr.flush()

    batch = SparkBatch(sc, jobs, spark_options)
    try:
        outcomes = batch.run(progress)
    except Py4JError as exc:  # e.g. the context stopped because the master went away
        raise job_error(exc) from None
    results: list[Result] = []
    for model, job, outcome in zip(models, jobs, outcomes):
        warnings = []
        want_sym = model.symmetry if options.symmetry is None else options.symmetry
        want_por = model.por if options.por is None else options.por
        if want_sym or want_por:
            warnings.append("the Spark engine does not apply symmetry or partial-order reduction; the search ran unreduced")
        acyclic_note = check_acyclic(model, outcome, (), job.bounds)  # a cycle: InputError
        if acyclic_note is not None:
            warnings.append(acyclic_note)
        # Fair cycles (lassos) for `eventually` properties the search left open: the local
        # liveness checker runs on the driver, only when some edge went back to an earlier
        # level (without one, every run ends in a terminal state the search checked).
        if outcome.maybe_cyclic and outcome.bound is None and not model.spec.acyclic and any(
            p.kind == "eventually" and p.name not in outcome.decisions for p in model.properties
        ):
            warnings.append("`eventually`: fair cycles were searched on the driver by the local liveness checker")
        lassos, liveness_cut = check_cycles(model, outcome, job.bounds)
        result = build_result(model, outcome, "spark", Reductions().as_dict(model.spec), warnings, lassos, liveness_cut,
                              job.bounds, {"symmetry": want_sym, "por": want_por})
        if acyclic_note is not None:
            undecided_verdicts(result)
        note = fairness_warning(model.spec, model.properties, outcome.maybe_cyclic, result, job.bounds)
        if note is not None:
            result.warnings.append(note)
        results.append(result)
    return results


def check_model_spark(model: Model, options: Any, spark_options: SparkOptions | None = None) -> Result:
    """Check one model with the Spark engine: the batch of one."""
    return check_models_spark([model], options, spark_options)[0]
