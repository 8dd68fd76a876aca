"""The Spark engine: level-synchronous breadth-first search on Apache Spark.

One search explores a batch of models at once (:class:`SparkBatch`; checking one model
is the batch of one, :class:`SparkSearch`). Records are keyed by model and state
fingerprint (:func:`checker.spark.tasks.record_key`); the frontier and the visited set
are RDDs partitioned by that key, and each level, shared by every model still running,
runs as one Spark job of two stages (the task functions are in
:mod:`checker.spark.tasks`):

1. *expand* (one task per frontier partition): decode each frontier state, compute its
   successors with the spec (rebuilt on the executor from its name and constants),
   check ``eventually`` properties on terminal states, and emit every successor keyed
   by its fingerprint. Equal successors are combined (map side, then after the
   shuffle) keeping the one first in breadth-first order.
2. *merge* (one task per fingerprint partition): the partition's candidates meet the
   same partition of the visited set (the two RDDs share their partitioner, so Spark
   unions them partition by partition with no shuffle); candidates already visited are
   dropped, the new states are checked against the open invariants with
   :class:`~checker.engine.evaluate.Evaluator`, and the visited set grows by them.

The visited set holds, per partition, sorted numpy arrays of fingerprints with each
state's parent fingerprint and action position: the parent links. The driver rebuilds
a counterexample by looking these links up partition by partition (one small job per
step, never collecting the state space) and replays the positions with
:func:`checker.api.trace.replay`. States travel in :mod:`checker.engine.encoding`. Each level's
dataset is checkpointed (``localCheckpoint`` by default, reliable checkpoints with a
checkpoint directory), so the plan does not grow with the depth.

Same answers as the local engine. Every state carries an order key: its parent's
position in its level (the *rank*) times 2**16 plus its action position. Sorting a
level by that key gives exactly the order in which :mod:`checker.engine.bfs` discovers it,
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
model's seconds and time limit count from the start of the shared search).

Liveness: ``eventually`` properties are checked on terminal states on the executors.
When one is still open at the end and some edge led back to an earlier level (so a
cycle may exist), the fair-cycle search of :mod:`checker.engine.liveness` runs on the driver,
as it does after the local engine.

A job that fails for good (a task failing more often than Spark's retries allow, an
executor lost without reliable checkpoints) raises :class:`SparkJobError`, an
:class:`~checker.api.errors.EngineError` the command line prints as one line.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from checker.api.errors import EngineError, InputError
from checker.api.model import Model
from checker.api.result import Result
from checker.api.spec import Property, Spec
from checker.engine.bfs import Bounds, Decision, SearchOutcome, SpecError
from checker.engine.evaluate import Evaluator
from checker.engine.fairness_note import fairness_warning
from checker.engine.fingerprint import check_vocabulary, fingerprint
from checker.engine.memory import current_rss, peak_rss, reset_peak
from checker.loading.specref import reference_of
from checker.spark.session import DEFAULT_MASTER, SparkUnavailable, get_spark
from checker.spark.ship import ship_specs
from checker.spark.tasks import (
    FP_MASK,
    POS_BITS,
    POS_MASK,
    Event,
    LevelSummary,
    TaskConfig,
    earlier,
    expand,
    fp_partition,
    is_state,
    is_summary,
    is_visited,
    lookup,
    merge,
    record_key,
    summary,
    visited_record,
)

INJECT_ENV = "ORDERCHECK_SPARK_INJECT_FAILURES"
"""Test hook: comma-separated stages (``expand``, ``merge``, ``sweep``) whose tasks on
even partitions raise on their first attempt (``expand!``: every task, every attempt,
so the job fails for good). Read on the driver when a run starts."""


class SparkJobError(EngineError):
    """A Spark job failed for good (after its retries)."""

    def __init__(self, message: str) -> None:
        super().__init__("spark", message)


@dataclass(frozen=True)
class SparkOptions:
    """Settings of the Spark engine."""

    master: str = DEFAULT_MASTER
    partitions: int | None = None  # default: twice Spark's default parallelism
    checkpoint_dir: str | None = None  # reliable checkpoints here; else localCheckpoint
    conf: tuple[tuple[str, str], ...] = ()
    inject_failures: frozenset[str] = field(
        default_factory=lambda: frozenset(s for s in os.environ.get(INJECT_ENV, "").split(",") if s)
    )


@dataclass
class SparkStats:
    """Engine figures beyond the local engine's: levels, per-level times, lookup jobs."""

    partitions: int = 0
    levels: int = 0
    level_seconds: list[float] = field(default_factory=list)
    driver_seconds: float = 0.0  # the driver's own work between jobs (keys, counts, decisions)
    lookup_jobs: int = 0


@dataclass(frozen=True)
class SearchJob:
    """One model of a batch: its spec, properties, bounds and early-stop rule."""

    spec: Spec
    props: Sequence[Property]
    bounds: Bounds = Bounds()
    stop_when_decided: bool = True
    label: str = ""


class _Paths:
    """Stands in for the local store in :func:`checker.engine.run.build_result`: the paths
    rebuilt from the parent links, by decision number."""

    def __init__(self, distinct: int) -> None:
        self.distinct = distinct
        self.paths: list[tuple[int, list[int]]] = []

    def __len__(self) -> int:
        return self.distinct

    def path(self, index: int) -> tuple[int, list[int]]:
        return self.paths[index]


Progress = Callable[[str, int, int, int], None]


class _ModelRun:
    """The driver's side of one model in a batch: its level keys, counts and decisions,
    and where the local engine would stop (see the module docstring)."""

    def __init__(self, index: int, job: SearchJob, started: float) -> None:
        self.index = index
        self.job = job
        self.spec = job.spec
        self.constants_json = json.dumps(job.spec.values, sort_keys=True)
        self.decisions: dict[str, Event] = {}
        self.open_names: list[str] = []
        self.level_keys = np.zeros(0, np.int64)
        self.distinct = self.initial_states = 0
        self.transitions = 0
        self.levels = 0
        self.depth = 0
        self.bound: str | None = None
        self.stop = False
        self.pending_stop = False
        self.maybe_cyclic = False
        self.at_depth_bound = False
        self.started = started
        self.seconds = 0.0
        limit = job.bounds.time_limit
        self.deadline = None if limit is None else started + limit

    def initial(self) -> list[tuple[int, int, bytes]]:
        """The distinct initial states as ``(position, fingerprint, blob)``, with the
        invariants checked on them."""
        from checker.engine.encoding import encode

        spec = self.spec
        evaluator = Evaluator(spec, list(self.job.props))
        inits: list[tuple[int, int, bytes]] = []
        seen: set[int] = set()
        for i, state in enumerate(spec.init_states()):
            problem = check_vocabulary(state)
            if problem:
                raise SpecError(f"{spec.name}: initial {problem}")
            fp = fingerprint(state)
            if fp in seen:
                continue
            seen.add(fp)
            inits.append((i, fp, encode(state)))
            for name, sentence in evaluator.on_state(state, evaluator.history_key(state), None):
                if name not in self.decisions:
                    self.decisions[name] = Event(i, fp, sentence)
                    evaluator.decide(name)
        self.open_names = [p.name for p in self.job.props if p.name not in self.decisions]
        self.distinct = self.initial_states = len(inits)
        self.levels = 1 if inits else 0
        self.level_keys = np.array([i for i, _fp, _b in inits], dtype=np.int64)
        self.stop = self.job.stop_when_decided and not self.open_names
        self.seconds = time.monotonic() - self.started
        return inits

    @property
    def active(self) -> bool:
        return bool(len(self.level_keys)) and not self.stop

    def config(self) -> TaskConfig:
        """What the tasks need about this model for the next level."""
        max_depth = self.job.bounds.max_depth
        self.at_depth_bound = max_depth is not None and self.depth >= max_depth
        add = not self.at_depth_bound
        return TaskConfig(reference_of(type(self.spec)), self.constants_json, tuple(self.open_names), add, add)

    def absorb(self, summaries: list[LevelSummary]) -> None:
        """Take in one level's summaries: count, decide, and stop where the local engine would."""
        max_states = self.job.bounds.max_states
        at_depth_bound = self.at_depth_bound
        open_names = self.open_names
        new_keys = np.sort(np.concatenate([s.keys for s in summaries])) if summaries else np.zeros(0, np.int64)
        nsucc = np.zeros(len(self.level_keys), dtype=np.int64)
        for s in summaries:
            for r, n in zip(s.ranks, s.nsucc):
                nsucc[r] = n
        self.maybe_cyclic = self.maybe_cyclic or any(s.back_edge for s in summaries)
        events: dict[str, Event] = {}
        for s in summaries:
            for name, ev in s.events.items():
                if name in open_names and (name not in events or ev.key < events[name].key):
                    events[name] = ev

        limit = None  # exclusive key bound of what happens in this level
        if not at_depth_bound and max_states is not None and len(new_keys) > max_states - self.distinct:
            limit = int(new_keys[max(max_states - self.distinct, 0)])
        happened = {n: ev for n, ev in events.items() if limit is None or ev.key < limit}
        stop_rank = None
        if self.pending_stop or (self.job.stop_when_decided and open_names and set(happened) >= set(open_names)):
            if self.pending_stop:
                star, star_terminal = -1, True
            else:
                last = max(happened.values(), key=lambda ev: ev.key)
                star, star_terminal = last.key >> POS_BITS, last.terminal
            if star_terminal:
                later = np.flatnonzero(nsucc[star + 1 :] > 0)
                stop_rank = star + 1 + int(later[0]) if len(later) else None
            else:
                stop_rank = star
            self.pending_stop = stop_rank is None
        if stop_rank is not None and (limit is None or stop_rank < limit >> POS_BITS):
            self.stop = True
            kept = int(np.searchsorted(new_keys, (stop_rank << POS_BITS) | POS_MASK, side="right"))
            self.transitions += int(nsucc[: stop_rank + 1].sum())
        elif limit is not None:
            self.stop = True
            self.bound = "max_states"
            kept = max(max_states - self.distinct, 0)
            self.transitions += int(nsucc[: limit >> POS_BITS].sum()) + (limit & POS_MASK) + 1
        else:
            kept = len(new_keys)
            self.transitions += int(nsucc.sum())
        for name, ev in happened.items():
            self.decisions[name] = ev
        self.open_names = [n for n in open_names if n not in self.decisions]

        if at_depth_bound:
            if kept:
                self.bound = "max_depth"
            kept = 0
        self.distinct += kept
        if kept:
            self.levels += 1
        self.level_keys = new_keys if kept and not self.stop else np.zeros(0, np.int64)
        self.depth += 1
        now = time.monotonic()
        self.seconds = now - self.started
        if self.deadline is not None and not self.stop and len(self.level_keys) and now > self.deadline:
            self.bound = "time_limit"
            self.stop = True

    def outcome(self, paths: dict[str, tuple[int, list[int]]], peak_memory: int) -> SearchOutcome:
        """The outcome :func:`checker.engine.bfs.search` would have returned."""
        outcome = SearchOutcome(store=_Paths(self.distinct))  # type: ignore[arg-type]
        outcome.initial_states = self.initial_states
        outcome.transitions = self.transitions
        outcome.depth = self.levels
        outcome.bound = self.bound
        outcome.complete = self.bound is None and not (self.stop and len(self.level_keys))
        outcome.maybe_cyclic = self.maybe_cyclic
        for number, name in enumerate(paths):
            outcome.store.paths.append(paths[name])  # type: ignore[attr-defined]
            outcome.decisions[name] = Decision(number, self.decisions[name].sentence)
        outcome.seconds = self.seconds
        outcome.peak_memory_bytes = peak_memory
        return outcome


class SparkBatch:
    """One breadth-first search of several models on Spark, level by level together."""

    def __init__(self, sc: Any, jobs: Sequence[SearchJob], options: SparkOptions) -> None:
        self.sc = sc
        self.jobs = list(jobs)
        self.options = options
        self.partitions = options.partitions or max(2, 2 * self.sc.defaultParallelism)
        self.stats = SparkStats(partitions=self.partitions)
        if options.checkpoint_dir:
            self.sc.setCheckpointDir(options.checkpoint_dir)

    def _cut(self, rdd: Any) -> None:
        from pyspark import StorageLevel

        rdd.persist(StorageLevel.MEMORY_AND_DISK)
        if self.options.checkpoint_dir:
            rdd.checkpoint()
        else:
            rdd.localCheckpoint()

    def run(self, progress: Progress | None = None) -> list[SearchOutcome]:
        """Explore and decide every model; the outcomes match :func:`checker.engine.bfs.search`'s."""
        started = time.monotonic()
        reset_peak()
        baseline = current_rss()
        sc, P = self.sc, self.partitions
        inject = self.options.inject_failures
        runs = [_ModelRun(m, job, started) for m, job in enumerate(self.jobs)]
        ship_specs(sc, [type(job.spec) for job in self.jobs])  # users' spec modules, to the executors

        per_part: list[dict[int, list[tuple[int, int, int]]]] = [{} for _ in range(P)]
        frontier_records = []
        for run in runs:
            inits = run.initial()
            for i, fp, blob in inits:
                key = record_key(run.index, fp)
                per_part[key % P].setdefault(run.index, []).append((fp, 0, -1 - i))
                frontier_records.append((key, (i, blob)))
        frontier = sc.parallelize(frontier_records, P).partitionBy(P, fp_partition)
        visited = sc.parallelize([visited_record(j, rows) for j, rows in enumerate(per_part)], P).partitionBy(
            P, fp_partition
        )
        held: Any = None  # the last level's dataset, persisted

        while True:
            active = [run for run in runs if run.active]
            if not active:
                break
            level_started = time.monotonic()
            cfgs = {run.index: run.config() for run in active}
            keys_bc = sc.broadcast({run.index: run.level_keys for run in active})
            expanded = frontier.mapPartitionsWithIndex(partial(expand, cfgs, inject, keys_bc))
            candidates = expanded.reduceByKey(earlier, P, fp_partition)
            both = visited.union(candidates)
            if both.getNumPartitions() != P:
                raise RuntimeError("the visited set and the candidates are not co-partitioned")
            level = both.mapPartitionsWithIndex(partial(merge, cfgs, inject), preservesPartitioning=True)
            self._cut(level)
            parts = self._collect(level.filter(is_summary).map(summary))
            keys_bc.unpersist()
            job_done = time.monotonic()
            for run in active:
                run.absorb([p[run.index] for p in parts if run.index in p])
                if progress is not None:
                    progress(run.job.label, run.depth, run.distinct, len(run.level_keys))
            seconds = time.monotonic() - level_started
            self.stats.driver_seconds += time.monotonic() - job_done
            if held is not None:
                held.unpersist()
            held = level
            visited = level.filter(is_visited)
            frontier = level.filter(is_state)
            self.stats.levels += 1
            self.stats.level_seconds.append(round(seconds, 4))

        paths = self._rebuild(runs, visited)
        if held is not None:
            held.unpersist()
        peak = max(peak_rss() - baseline, 0)
        return [run.outcome(paths[run.index], peak) for run in runs]

    def _collect(self, rdd: Any) -> list:
        try:
            return rdd.collect()
        except Exception as exc:
            raise job_error(exc) from None

    def _rebuild(self, runs: list[_ModelRun], visited: Any) -> dict[int, dict[str, tuple[int, list[int]]]]:
        """Walk the parent links back to an initial state for every decision of every
        model at once (one small job per step), then check that replaying the positions
        reaches the decided state."""
        from checker.api.trace import replay

        current = {(run.index, name): record_key(run.index, ev.fp) for run in runs for name, ev in run.decisions.items()}
        steps: dict[tuple[int, str], list[int]] = {k: [] for k in current}
        init: dict[tuple[int, str], int] = {}
        while current:
            wanted = frozenset(current.values())
            parts = sorted({key % self.partitions for key in wanted})
            try:
                found = self.sc.runJob(visited, partial(lookup, wanted), parts)
            except Exception as exc:
                raise job_error(exc) from None
            self.stats.lookup_jobs += 1
            links = {key: (parent, action) for key, parent, action in found}
            for k, key in list(current.items()):
                if key not in links:
                    raise RuntimeError(f"no parent link for state {key & FP_MASK:#x} of model {k[0]} in the visited set")
                parent, action = links[key]
                if action < 0:
                    init[k] = -1 - action
                    del current[k]
                else:
                    steps[k].append(action)
                    current[k] = record_key(k[0], parent)
        out: dict[int, dict[str, tuple[int, list[int]]]] = {run.index: {} for run in runs}
        for run in runs:
            for name, ev in run.decisions.items():
                k = (run.index, name)
                path = list(reversed(steps[k]))
                replayed = replay(run.spec, init[k], path)
                if fingerprint(replayed[-1][2]) != ev.fp:
                    raise RuntimeError(f"the trace rebuilt for {name} does not reach the state that decided it")
                out[run.index][name] = (init[k], path)
        return out


class SparkSearch:
    """One model's search on Spark: the batch of one."""

    def __init__(self, sc: Any, spec: Spec, props: Sequence[Property], options: SparkOptions) -> None:
        self.sc = sc
        self.spec = spec
        self.props = list(props)
        self.options = options
        self.stats = SparkStats()

    def run(self, bounds: Bounds | None = None, *, stop_when_decided: bool = True, progress: Any = None) -> SearchOutcome:
        """Explore and decide; the outcome matches :func:`checker.engine.bfs.search`'s.
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

    ``options`` is a :class:`checker.engine.run.Options`; its ``master`` picks the Spark master
    unless ``spark_options`` is given.
    """
    from py4j.protocol import Py4JError

    from checker.engine.run import bounds_for, build_result, check_cycles

    if spark_options is None:
        spark_options = SparkOptions(master=getattr(options, "master", DEFAULT_MASTER))
    sc = _spark_context(spark_options)
    jobs = [
        SearchJob(m.spec, m.properties, bounds_for(m, options), options.stop_when_decided, m.name) for m in models
    ]
    progress = None
    if getattr(options, "progress", False):

        def progress(label: str, level: int, states: int, frontier: int) -> None:
            sys.stderr.write(f"{label}: level {level}, {states:,} states, frontier {frontier:,}\n")
            sys.stderr.flush()

    try:
        outcomes = SparkBatch(sc, jobs, spark_options).run(progress)
    except Py4JError as exc:  # e.g. the context stopped because the master went away
        raise job_error(exc) from None
    results = []
    for model, job, outcome in zip(models, jobs, outcomes):
        warnings = []
        want_sym = model.symmetry if options.symmetry is None else options.symmetry
        want_por = model.por if options.por is None else options.por
        if want_sym or want_por:
            warnings.append("the Spark engine does not apply symmetry or partial-order reduction; the search ran unreduced")
        # Fair cycles (lassos) for `eventually` properties the search left open: the local
        # liveness checker runs on the driver, only when some edge went back to an earlier
        # level (without one, every run ends in a terminal state the search checked).
        if outcome.maybe_cyclic and outcome.bound is None and any(
            p.kind == "eventually" and p.name not in outcome.decisions for p in model.properties
        ):
            warnings.append("`eventually`: fair cycles were searched on the driver by the local liveness checker")
        lassos, liveness_cut = check_cycles(model, outcome, job.bounds)
        result = build_result(model, outcome, "spark", {"symmetry": False, "por": False}, warnings, lassos, liveness_cut)
        note = fairness_warning(model.spec, model.properties, outcome.maybe_cyclic, result, job.bounds)
        if note is not None:
            result.warnings.append(note)
        results.append(result)
    return results


def check_model_spark(model: Model, options: Any, spark_options: SparkOptions | None = None) -> Result:
    """Check one model with the Spark engine: the batch of one."""
    return check_models_spark([model], options, spark_options)[0]
