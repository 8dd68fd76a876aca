"""The Spark engine: level-synchronous breadth-first search on Apache Spark.

The frontier and the visited set are RDDs partitioned by state fingerprint (partition
``fp % P``). Each level runs as one Spark job of two stages:

1. *expand* (one task per frontier partition): decode each frontier state, compute its
   successors with the spec (rebuilt on the executor from its name and constants),
   check ``eventually`` properties on terminal states, and emit every successor keyed
   by its fingerprint. Equal successors are combined (map side, then after the
   shuffle) keeping the one first in breadth-first order.
2. *merge* (one task per fingerprint partition): the partition's candidates meet the
   same partition of the visited set (the two RDDs share their partitioner, so Spark
   unions them partition by partition with no shuffle); candidates already visited are
   dropped, the new states are checked against the open invariants with
   :class:`~checker.evaluate.Evaluator`, and the visited set grows by them.

The visited set holds, per partition, sorted numpy arrays of fingerprints with each
state's parent fingerprint and action position: the parent links. The driver rebuilds
a counterexample by looking these links up partition by partition (one small job per
step, never collecting the state space) and replays the positions with
:func:`checker.trace.replay`. States travel in :mod:`checker.encoding`. Each level's
dataset is checkpointed (``localCheckpoint`` by default, reliable checkpoints with a
checkpoint directory), so the plan does not grow with the depth.

Same answers as the local engine. Every state carries an order key: its parent's
position in its level (the *rank*) times 2**16 plus its action position. Sorting a
level by that key gives exactly the order in which :mod:`checker.bfs` discovers it,
and keeping, among equal successors, the one with the smallest key picks exactly the
local engine's parent. The driver gathers each level's sorted keys (8 bytes per state
of that level; never the states) and broadcasts them, so the next level turns a key
into a rank with a binary search. Each property is decided by its violation (or
witness) with the smallest key in the first level that has one, the state the local
engine meets first; the trace is then the local engine's trace, step for step. Early
ends follow the local engine to the state: with every property decided it finishes
the parent it is expanding; ``max_states`` cuts the level at the same successor;
``max_depth`` expands the last level without adding to it. So distinct states,
transitions, depth, verdicts and traces equal the local engine's (the time limit is
checked between levels only, as timing is never reproducible anyway).

Liveness: ``eventually`` properties are checked on terminal states on the executors.
When one is still open at the end and some edge led back to an earlier level (so a
cycle may exist), the fair-cycle search of :mod:`checker.liveness` runs on the driver,
as it does after the local engine.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from checker.bfs import Bounds, Decision, SearchOutcome, SpecError
from checker.encoding import decode, encode
from checker.errors import InputError
from checker.evaluate import Evaluator
from checker.fingerprint import check_vocabulary, fingerprint
from checker.memory import current_rss, peak_rss, reset_peak
from checker.model import Model
from checker.registry import spec_class
from checker.result import Result
from checker.spark_session import DEFAULT_MASTER, SparkUnavailable, get_spark
from checker.spec import Property, Spec

POS_BITS = 16
MAX_ACTIONS = 1 << POS_BITS
POS_MASK = MAX_ACTIONS - 1

# The first item of a record's value says what the record is (order keys are >= 0).
VISITED = -2  # (VISITED, fps, parents, actions): one per partition, fps sorted
SUMMARY = -3  # (SUMMARY, LevelSummary): one per partition, for the driver
EXPANDED = -1  # (EXPANDED, ranks, successor counts, terminal events): one per expand task

INJECT_ENV = "ORDERCHECK_SPARK_INJECT_FAILURES"
"""Test hook: comma-separated stages (``expand``, ``merge``, ``sweep``) whose tasks on
even partitions raise on their first attempt. Read on the driver when a run starts."""


class InjectedFailure(RuntimeError):
    """Raised by the test-only failure hook; Spark retries the task."""


class SparkJobError(RuntimeError):
    """A Spark job failed for good (after its retries)."""


def fp_partition(key: int) -> int:
    """The partitioner function: Spark takes it modulo the number of partitions."""
    return key


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


@dataclass(frozen=True)
class TaskConfig:
    """What executor tasks need: the spec by name and constants, the open properties."""

    spec_name: str
    constants_json: str
    props: tuple[str, ...]
    check_new: bool
    inject: frozenset[str]


@dataclass
class Event:
    """A property decided at the state with order key ``key`` and fingerprint ``fp``."""

    key: int
    fp: int
    sentence: str
    terminal: bool = False


@dataclass
class LevelSummary:
    """What one merge task tells the driver about a level."""

    keys: np.ndarray  # sorted order keys of the partition's new states
    events: dict[str, Event]
    ranks: list[np.ndarray]  # from the expand tasks routed here: frontier ranks ...
    nsucc: list[np.ndarray]  # ... and their successor counts
    back_edge: bool = False  # a successor was visited in an earlier level (a cycle may close)


# -- executor side ------------------------------------------------------------------------

_SPECS: dict[tuple[str, str], Spec] = {}


def _spec(cfg: TaskConfig) -> Spec:
    """The spec of ``cfg``, built once per Python worker."""
    key = (cfg.spec_name, cfg.constants_json)
    spec = _SPECS.get(key)
    if spec is None:
        spec = spec_class(cfg.spec_name)(**json.loads(cfg.constants_json))
        _SPECS[key] = spec
    return spec


def _evaluator(spec: Spec, names: Iterable[str]) -> Evaluator:
    available = spec.property_map()
    return Evaluator(spec, [available[n] for n in names])


def maybe_fail(inject: frozenset[str], stage: str) -> None:
    """The test-only failure hook: raise on the first attempt of even partitions."""
    if stage not in inject:
        return
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is not None and ctx.attemptNumber() == 0 and ctx.partitionId() % 2 == 0:
        raise InjectedFailure(f"injected failure: {stage} task {ctx.partitionId()}, attempt 0")


def _expand(cfg: TaskConfig, keys_bc: Any, index: int, records: Iterator) -> Iterator:
    """Stage 1: successors of a frontier partition, keyed by fingerprint."""
    spec = _spec(cfg)
    evaluator = _evaluator(spec, cfg.props)
    terminal = bool(evaluator.terminal_state or evaluator.terminal_history)
    level_keys = keys_bc.value
    items = sorted(records, key=lambda kv: kv[1][0])
    ranks = np.searchsorted(level_keys, np.array([kv[1][0] for kv in items], dtype=np.int64))
    nsucc = np.zeros(len(items), dtype=np.int32)
    events: dict[str, Event] = {}
    next_states = spec.next_states
    for j, (fp, (_key, blob)) in enumerate(items):
        state = decode(blob)
        succ = next_states(state)
        n = len(succ)
        nsucc[j] = n
        rank = int(ranks[j])
        if not n:
            if terminal:
                for name, sentence in evaluator.on_terminal(state, evaluator.history_key(state)):
                    events[name] = Event(rank << POS_BITS, fp, sentence, True)
                    evaluator.decide(name)
                terminal = bool(evaluator.terminal_state or evaluator.terminal_history)
            continue
        if n > MAX_ACTIONS:
            raise SpecError(f"{spec.name}: a state has {n} enabled actions; the Spark engine allows {MAX_ACTIONS}")
        base = rank << POS_BITS
        for pos, (_label, succ_state) in enumerate(succ):
            yield fingerprint(succ_state), (base | pos, encode(succ_state), fp)
    maybe_fail(cfg.inject, "expand")
    yield -1 - index, (EXPANDED, ranks.astype(np.int64), nsucc, events)


def _earlier(a: tuple, b: tuple) -> tuple:
    """Of two records of the same fingerprint, the one first in breadth-first order."""
    return a if a[0] <= b[0] else b


def _merge(cfg: TaskConfig, add: bool, index: int, records: Iterator) -> Iterator:
    """Stage 2: drop visited candidates, check the new states, grow the visited set."""
    visited = None
    candidates: list[tuple[int, tuple]] = []
    ranks: list[np.ndarray] = []
    nsucc: list[np.ndarray] = []
    events: dict[str, Event] = {}
    for key, value in records:
        tag = value[0]
        if tag >= 0:
            candidates.append((key, value))
        elif tag == VISITED:
            visited = value
        elif tag == EXPANDED:
            ranks.append(value[1])
            nsucc.append(value[2])
            for name, ev in value[3].items():
                if name not in events or ev.key < events[name].key:
                    events[name] = ev
    if visited is None:
        raise RuntimeError(f"partition {index} has no visited-set record: the datasets are not co-partitioned")
    _, vfps, vparents, vactions = visited
    cfps = np.fromiter((c[0] for c in candidates), dtype=np.uint64, count=len(candidates))
    if len(vfps):
        at = np.minimum(np.searchsorted(vfps, cfps), len(vfps) - 1)
        fresh = vfps[at] != cfps
    else:
        fresh = np.ones(len(cfps), dtype=bool)
    new = [candidates[i] for i in np.flatnonzero(fresh)]
    new.sort(key=lambda kv: kv[1][0])
    keys = np.array([kv[1][0] for kv in new], dtype=np.int64)
    if cfg.check_new and new:
        spec = _spec(cfg)
        evaluator = _evaluator(spec, cfg.props)
        vocabulary_checks = 100
        for fp, (key, blob, _parent) in new:
            if not (evaluator.state_checks or evaluator.history_checks) and not vocabulary_checks:
                break
            state = decode(blob)
            if vocabulary_checks:
                vocabulary_checks -= 1
                problem = check_vocabulary(state)
                if problem:
                    raise SpecError(f"{spec.name}: {problem}")
            if evaluator.state_checks or evaluator.history_checks:
                for name, sentence in evaluator.on_state(state, evaluator.history_key(state), None):
                    if name not in events or key < events[name].key:
                        events[name] = Event(key, fp, sentence)
                    evaluator.decide(name)
    if add and new:
        fps = np.concatenate([vfps, np.array([kv[0] for kv in new], dtype=np.uint64)])
        parents = np.concatenate([vparents, np.array([kv[1][2] for kv in new], dtype=np.uint64)])
        actions = np.concatenate([vactions, (keys & POS_MASK).astype(np.int32)])
        order = np.argsort(fps, kind="stable")
        visited = (VISITED, fps[order], parents[order], actions[order])
    maybe_fail(cfg.inject, "merge")
    yield index, visited
    if add:
        for fp, (key, blob, _parent) in new:
            yield fp, (key, blob)
    yield index, (SUMMARY, LevelSummary(keys, events, ranks, nsucc, bool(len(fresh)) and not bool(fresh.all())))


def _lookup(wanted: frozenset[int], records: Iterator) -> list[tuple[int, int, int]]:
    """Parent links of the ``wanted`` fingerprints found in one visited partition."""
    out = []
    for _key, value in records:
        if value[0] != VISITED:
            continue
        _, fps, parents, actions = value
        for fp in wanted:
            i = int(np.searchsorted(fps, np.uint64(fp)))
            if i < len(fps) and int(fps[i]) == fp:
                out.append((fp, int(parents[i]), int(actions[i])))
    return out


def _is_visited(kv: tuple) -> bool:
    return kv[1][0] == VISITED


def _is_state(kv: tuple) -> bool:
    return kv[1][0] >= 0


def _is_summary(kv: tuple) -> bool:
    return kv[1][0] == SUMMARY


def _summary(kv: tuple) -> LevelSummary:
    return kv[1][1]


# -- driver side --------------------------------------------------------------------------


@dataclass
class SparkStats:
    """Engine figures beyond the local engine's: levels, jobs, per-level times."""

    partitions: int = 0
    levels: int = 0
    level_seconds: list[float] = field(default_factory=list)
    lookup_jobs: int = 0


class _Paths:
    """Stands in for the local store in :func:`checker.run.build_result`: the paths
    rebuilt from the parent links, by decision number."""

    def __init__(self, distinct: int) -> None:
        self.distinct = distinct
        self.paths: list[tuple[int, list[int]]] = []

    def __len__(self) -> int:
        return self.distinct

    def path(self, index: int) -> tuple[int, list[int]]:
        return self.paths[index]


class SparkSearch:
    """One breadth-first search of a spec on Spark (see the module docstring)."""

    def __init__(self, sc: Any, spec: Spec, props: Sequence[Property], options: SparkOptions) -> None:
        self.sc = sc
        self.spec = spec
        self.props = list(props)
        self.options = options
        self.partitions = options.partitions or max(2, 2 * self.sc.defaultParallelism)
        self.constants_json = json.dumps(spec.values, sort_keys=True)
        self.stats = SparkStats(partitions=self.partitions)
        if options.checkpoint_dir:
            self.sc.setCheckpointDir(options.checkpoint_dir)

    def _config(self, open_names: list[str], check_new: bool) -> TaskConfig:
        return TaskConfig(self.spec.name, self.constants_json, tuple(open_names), check_new, self.options.inject_failures)

    def _cut(self, rdd: Any) -> None:
        from pyspark import StorageLevel

        rdd.persist(StorageLevel.MEMORY_AND_DISK)
        if self.options.checkpoint_dir:
            rdd.checkpoint()
        else:
            rdd.localCheckpoint()

    def run(self, bounds: Bounds | None = None, *, stop_when_decided: bool = True, progress: Any = None) -> SearchOutcome:
        """Explore and decide; the outcome matches :func:`checker.bfs.search`'s."""
        bounds = bounds or Bounds()
        started = time.monotonic()
        reset_peak()
        baseline = current_rss()
        sc, spec, P = self.sc, self.spec, self.partitions
        decisions: dict[str, Event] = {}
        evaluator = Evaluator(spec, self.props)

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
                if name not in decisions:
                    decisions[name] = Event(i, fp, sentence)
                    evaluator.decide(name)
        open_names = [p.name for p in self.props if p.name not in decisions]

        per_part: list[list[tuple[int, int, int]]] = [[] for _ in range(P)]
        for i, fp, _blob in inits:
            per_part[fp % P].append((fp, 0, -1 - i))
        visited_records = []
        for j, rows in enumerate(per_part):
            rows.sort()
            visited_records.append(
                (
                    j,
                    (
                        VISITED,
                        np.array([r[0] for r in rows], dtype=np.uint64),
                        np.array([r[1] for r in rows], dtype=np.uint64),
                        np.array([r[2] for r in rows], dtype=np.int32),
                    ),
                )
            )
        frontier = sc.parallelize([(fp, (i, blob)) for i, fp, blob in inits], P).partitionBy(P, fp_partition)
        visited = sc.parallelize(visited_records, P).partitionBy(P, fp_partition)
        level_keys = np.array([i for i, _fp, _b in inits], dtype=np.int64)
        held: Any = None  # the last level's dataset, persisted

        distinct = len(inits)
        transitions = 0
        levels = 1 if inits else 0
        depth = 0
        bound: str | None = None
        stop = stop_when_decided and not open_names
        pending_stop = False
        maybe_cyclic = False
        max_states, max_depth = bounds.max_states, bounds.max_depth
        deadline = None if bounds.time_limit is None else started + bounds.time_limit

        while len(level_keys) and not stop:
            level_started = time.monotonic()
            at_depth_bound = max_depth is not None and depth >= max_depth
            cfg = self._config(open_names, check_new=not at_depth_bound)
            keys_bc = sc.broadcast(level_keys)
            expanded = frontier.mapPartitionsWithIndex(partial(_expand, cfg, keys_bc))
            candidates = expanded.reduceByKey(_earlier, P, fp_partition)
            both = visited.union(candidates)
            if both.getNumPartitions() != P:
                raise RuntimeError("the visited set and the candidates are not co-partitioned")
            level = both.mapPartitionsWithIndex(partial(_merge, cfg, not at_depth_bound), preservesPartitioning=True)
            self._cut(level)
            summaries = self._collect(level.filter(_is_summary).map(_summary))
            keys_bc.unpersist()

            new_keys = np.sort(np.concatenate([s.keys for s in summaries])) if summaries else np.zeros(0, np.int64)
            nsucc = np.zeros(len(level_keys), dtype=np.int64)
            for s in summaries:
                for r, n in zip(s.ranks, s.nsucc):
                    nsucc[r] = n
            maybe_cyclic = maybe_cyclic or any(s.back_edge for s in summaries)
            events: dict[str, Event] = {}
            for s in summaries:
                for name, ev in s.events.items():
                    if name in open_names and (name not in events or ev.key < events[name].key):
                        events[name] = ev

            # Where the local engine would stop in this level (see the module docstring).
            limit = None  # exclusive key bound of what happens in this level
            if not at_depth_bound and max_states is not None and len(new_keys) > max_states - distinct:
                limit = int(new_keys[max(max_states - distinct, 0)])
            happened = {n: ev for n, ev in events.items() if limit is None or ev.key < limit}
            stop_rank = None
            if pending_stop or (stop_when_decided and open_names and set(happened) >= set(open_names)):
                if pending_stop:
                    star, star_terminal = -1, True
                else:
                    last = max(happened.values(), key=lambda ev: ev.key)
                    star, star_terminal = last.key >> POS_BITS, last.terminal
                if star_terminal:
                    later = np.flatnonzero(nsucc[star + 1 :] > 0)
                    stop_rank = star + 1 + int(later[0]) if len(later) else None
                else:
                    stop_rank = star
                pending_stop = stop_rank is None
            if stop_rank is not None and (limit is None or stop_rank < limit >> POS_BITS):
                stop = True
                kept = int(np.searchsorted(new_keys, (stop_rank << POS_BITS) | POS_MASK, side="right"))
                transitions += int(nsucc[: stop_rank + 1].sum())
            elif limit is not None:
                stop = True
                bound = "max_states"
                kept = max(max_states - distinct, 0)
                transitions += int(nsucc[: limit >> POS_BITS].sum()) + (limit & POS_MASK) + 1
            else:
                kept = len(new_keys)
                transitions += int(nsucc.sum())
            for name, ev in happened.items():
                decisions[name] = ev
            open_names = [n for n in open_names if n not in decisions]

            if at_depth_bound:
                if kept:
                    bound = "max_depth"
                kept = 0
            distinct += kept
            if kept:
                levels += 1
            if held is not None:
                held.unpersist()
            held = level
            visited = level.filter(_is_visited)
            frontier = level.filter(_is_state)
            level_keys = new_keys if kept and not stop else np.zeros(0, np.int64)
            depth += 1
            self.stats.levels += 1
            self.stats.level_seconds.append(round(time.monotonic() - level_started, 4))
            if progress is not None:
                progress(depth, distinct, len(level_keys))
            if deadline is not None and not stop and len(level_keys) and time.monotonic() > deadline:
                bound = "time_limit"
                stop = True

        outcome = SearchOutcome(store=_Paths(distinct))  # type: ignore[arg-type]
        outcome.initial_states = len(inits)
        outcome.transitions = transitions
        outcome.depth = levels
        outcome.bound = bound
        outcome.complete = bound is None and not (stop and len(level_keys))
        outcome.maybe_cyclic = maybe_cyclic
        paths = self._rebuild(decisions, visited)
        for number, name in enumerate(paths):
            outcome.store.paths.append(paths[name])  # type: ignore[attr-defined]
            outcome.decisions[name] = Decision(number, decisions[name].sentence)
        if held is not None:
            held.unpersist()
        outcome.seconds = time.monotonic() - started
        outcome.peak_memory_bytes = max(peak_rss() - baseline, 0)
        return outcome

    def _collect(self, rdd: Any) -> list:
        try:
            return rdd.collect()
        except Exception as exc:
            raise _job_error(exc) from None

    def _rebuild(self, decisions: dict[str, Event], visited: Any) -> dict[str, tuple[int, list[int]]]:
        """Walk the parent links back to an initial state for each decision, then check
        that replaying the positions reaches the decided state."""
        from checker.trace import replay

        current = {name: ev.fp for name, ev in decisions.items()}
        steps: dict[str, list[int]] = {name: [] for name in decisions}
        init: dict[str, int] = {}
        while current:
            wanted = frozenset(current.values())
            parts = sorted({fp % self.partitions for fp in wanted})
            try:
                found = self.sc.runJob(visited, partial(_lookup, wanted), parts)
            except Exception as exc:
                raise _job_error(exc) from None
            self.stats.lookup_jobs += 1
            links = {fp: (parent, action) for fp, parent, action in found}
            for name, fp in list(current.items()):
                if fp not in links:
                    raise RuntimeError(f"no parent link for state {fp:#x} in the visited set")
                parent, action = links[fp]
                if action < 0:
                    init[name] = -1 - action
                    del current[name]
                else:
                    steps[name].append(action)
                    current[name] = parent
        out = {}
        for name in decisions:
            path = list(reversed(steps[name]))
            replayed = replay(self.spec, init[name], path)
            if fingerprint(replayed[-1][2]) != decisions[name].fp:
                raise RuntimeError(f"the trace rebuilt for {name} does not reach the state that decided it")
            out[name] = (init[name], path)
        return out


def _job_error(exc: Exception) -> Exception:
    """The last line of a failed job's Python error, as a SpecError or SparkJobError."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "SpecError:" in ln:
            return SpecError(ln.split("SpecError:", 1)[1].strip())
    for ln in reversed(lines):
        if "Error:" in ln or "Exception:" in ln:
            return SparkJobError(f"Spark job failed: {ln[:500]}")
    return SparkJobError(f"Spark job failed: {lines[0][:500] if lines else type(exc).__name__}")


def check_model_spark(model: Model, options: Any, spark_options: SparkOptions | None = None) -> Result:
    """Check ``model`` with the Spark engine; the same :class:`Result` as the local one.

    ``options`` is a :class:`checker.run.Options`; its ``master`` picks the Spark master
    unless ``spark_options`` is given.
    """
    from checker.run import bounds_for, build_result, check_cycles

    if spark_options is None:
        spark_options = SparkOptions(master=getattr(options, "master", DEFAULT_MASTER))
    try:
        sc = get_spark(spark_options.master, dict(spark_options.conf))
    except SparkUnavailable as exc:
        raise InputError("--master", spark_options.master, str(exc)) from None
    search = SparkSearch(sc, model.spec, model.properties, spark_options)
    progress = None
    if getattr(options, "progress", False):

        def progress(level: int, states: int, frontier: int) -> None:
            sys.stderr.write(f"{model.name}: level {level}, {states:,} states, frontier {frontier:,}\n")
            sys.stderr.flush()

    bounds = bounds_for(model, options)
    outcome = search.run(bounds, stop_when_decided=options.stop_when_decided, progress=progress)
    warnings = []
    want_sym = model.symmetry if options.symmetry is None else options.symmetry
    want_por = model.por if options.por is None else options.por
    if want_sym or want_por:
        warnings.append("the Spark engine does not apply symmetry or partial-order reduction; the search ran unreduced")
    # Fair cycles (lassos) for `eventually` properties the search left open: the local
    # liveness checker runs on the driver, only when some edge went back to an earlier
    # level (without one, every run ends in a terminal state the search checked).
    lassos, liveness_cut = check_cycles(model, outcome, bounds)
    return build_result(model, outcome, "spark", {"symmetry": False, "por": False}, warnings, lassos, liveness_cut)
