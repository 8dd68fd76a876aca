"""The executor side of the Spark engine: the functions Spark runs in its tasks.

One Spark search explores a *batch* of models at once (a single ``check`` is a batch of
one). Every record is keyed by ``model << 64 | fingerprint`` (:func:`record_key`), so
one partitioner (the key modulo the partition count) spreads all models' states over the
same partitions and each level is one job for all models still running. Small keys
(below the partition count, or negative) name the bookkeeping records below; state keys
are larger than any partition count, since fingerprints are 64-bit hashes.

The first item of a record's value says what the record is (order keys are >= 0):

- ``(order key, blob[, parent fingerprint])``: a state (a candidate carries its parent);
- ``(VISITED, {model: (fps, parents, actions)})``: one per partition, fps sorted;
- ``(EXPANDED, {model: (ranks, successor counts, terminal events)})``: one per expand task;
- ``(SUMMARY, {model: LevelSummary})``: one per partition, for the driver.

See :mod:`checker.spark.bfs` for the algorithm and why its answers are the local engine's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from checker.api.spec import Spec
from checker.engine.bfs import SpecError
from checker.engine.encoding import decode, encode
from checker.engine.evaluate import Evaluator
from checker.engine.fingerprint import check_vocabulary, fingerprint
from checker.engine.memory import collector_paused

POS_BITS = 16
MAX_ACTIONS = 1 << POS_BITS
POS_MASK = MAX_ACTIONS - 1
FP_BITS = 64
FP_MASK = (1 << FP_BITS) - 1

VISITED = -2
SUMMARY = -3
EXPANDED = -1

ALWAYS_SUFFIX = "!"
"""A stage named with this suffix in the failure hook fails on every attempt (a job that
fails for good), not only on the first."""


class InjectedFailure(RuntimeError):
    """Raised by the test-only failure hook; Spark retries the task."""


def record_key(model: int, fp: int) -> int:
    """The key of model ``model``'s state with fingerprint ``fp``."""
    return (model << FP_BITS) | fp


def fp_partition(key: int) -> int:
    """The partitioner function: Spark takes it modulo the number of partitions."""
    return key


@dataclass(frozen=True)
class TaskConfig:
    """What executor tasks need about one model: its spec by canonical reference
    (:func:`checker.loading.specref.reference_of`) and constants, the
    properties still open, whether new states are checked and kept this level."""

    spec_name: str
    constants_json: str
    props: tuple[str, ...]
    check_new: bool
    add: bool


@dataclass
class Event:
    """A property decided at the state with order key ``key`` and fingerprint ``fp``."""

    key: int
    fp: int
    sentence: str
    terminal: bool = False


@dataclass
class LevelSummary:
    """What one merge task tells the driver about one model's level."""

    keys: np.ndarray  # sorted order keys of the partition's new states
    events: dict[str, Event]
    ranks: list[np.ndarray]  # from the expand tasks routed here: frontier ranks ...
    nsucc: list[np.ndarray]  # ... and their successor counts
    back_edge: bool = False  # a successor was visited in an earlier level (a cycle may close)


_SPECS: dict[tuple[str, str], Spec] = {}


def task_spec(cfg: TaskConfig) -> Spec:
    """The spec of ``cfg``, built once per Python worker."""
    key = (cfg.spec_name, cfg.constants_json)
    spec = _SPECS.get(key)
    if spec is None:
        from checker.spark.ship import task_spec_class

        spec = task_spec_class(cfg.spec_name)(**json.loads(cfg.constants_json))
        _SPECS[key] = spec
    return spec


def _evaluator(spec: Spec, names: Iterable[str]) -> Evaluator:
    available = spec.property_map()
    return Evaluator(spec, [available[n] for n in names])


def maybe_fail(inject: frozenset[str], stage: str) -> None:
    """The test-only failure hook: raise on the first attempt of even partitions, or on
    every attempt of every task when the stage is named with ``!`` (``expand!``)."""
    always = stage + ALWAYS_SUFFIX in inject
    if stage not in inject and not always:
        return
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        return
    if always:
        raise InjectedFailure(f"injected failure: {stage} task {ctx.partitionId()}, every attempt")
    if ctx.attemptNumber() == 0 and ctx.partitionId() % 2 == 0:
        raise InjectedFailure(f"injected failure: {stage} task {ctx.partitionId()}, attempt 0")


def expand(cfgs: dict[int, TaskConfig], inject: frozenset[str], keys_bc: Any, index: int, records: Iterator) -> Iterator:
    """Stage 1: successors of a frontier partition, keyed by model and fingerprint.

    Frontier states of models not in ``cfgs`` (their search has stopped) are skipped.
    Python's cyclic collector is paused meanwhile, as in the local engine."""
    with collector_paused():
        yield from _expand(cfgs, inject, keys_bc, index, records)


def _expand(cfgs: dict[int, TaskConfig], inject: frozenset[str], keys_bc: Any, index: int, records: Iterator) -> Iterator:
    by_model: dict[int, list[tuple[int, tuple]]] = {}
    for key, value in records:
        m = key >> FP_BITS
        if m in cfgs:
            by_model.setdefault(m, []).append((key & FP_MASK, value))
    all_keys = keys_bc.value
    out: dict[int, tuple[np.ndarray, np.ndarray, dict[str, Event]]] = {}
    for m, items in by_model.items():
        cfg = cfgs[m]
        spec = task_spec(cfg)
        evaluator = _evaluator(spec, cfg.props)
        terminal = bool(evaluator.terminal_state or evaluator.terminal_history)
        items.sort(key=lambda kv: kv[1][0])
        ranks = np.searchsorted(all_keys[m], np.array([kv[1][0] for kv in items], dtype=np.int64))
        nsucc = np.zeros(len(items), dtype=np.int32)
        events: dict[str, Event] = {}
        next_states = spec.next_states
        high = m << FP_BITS
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
                yield high | fingerprint(succ_state), (base | pos, encode(succ_state), fp)
        out[m] = (ranks.astype(np.int64), nsucc, events)
    maybe_fail(inject, "expand")
    yield -1 - index, (EXPANDED, out)


def earlier(a: tuple, b: tuple) -> tuple:
    """Of two records of the same key, the one first in breadth-first order."""
    return a if a[0] <= b[0] else b


def _check_new(cfg: TaskConfig, new: list, events: dict[str, Event]) -> None:
    """Check the open invariants (and, on the first 100 states, the state vocabulary) on
    one model's new states, recording the earliest violation of each property."""
    spec = task_spec(cfg)
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


EMPTY_U64 = np.zeros(0, dtype=np.uint64)


def merge(cfgs: dict[int, TaskConfig], inject: frozenset[str], index: int, records: Iterator) -> Iterator:
    """Stage 2: drop visited candidates, check the new states, grow the visited set."""
    with collector_paused():
        yield from _merge(cfgs, inject, index, records)


def _merge(cfgs: dict[int, TaskConfig], inject: frozenset[str], index: int, records: Iterator) -> Iterator:
    visited = None
    candidates: dict[int, list[tuple[int, tuple]]] = {}
    expanded: dict[int, tuple[list, list, dict[str, Event]]] = {}
    for key, value in records:
        tag = value[0]
        if tag >= 0:
            candidates.setdefault(key >> FP_BITS, []).append((key & FP_MASK, value))
        elif tag == VISITED:
            visited = value[1]
        elif tag == EXPANDED:
            for m, (ranks, nsucc, events) in value[1].items():
                acc = expanded.setdefault(m, ([], [], {}))
                acc[0].append(ranks)
                acc[1].append(nsucc)
                for name, ev in events.items():
                    if name not in acc[2] or ev.key < acc[2][name].key:
                        acc[2][name] = ev
    if visited is None:
        raise RuntimeError(f"partition {index} has no visited-set record: the datasets are not co-partitioned")
    visited = dict(visited)
    summaries: dict[int, LevelSummary] = {}
    new_by_model: dict[int, list] = {}
    for m in set(candidates) | set(expanded):
        cfg = cfgs[m]
        cands = candidates.get(m, [])
        ranks, nsucc, events = expanded.get(m, ([], [], {}))
        vfps, vparents, vactions = visited.get(m, (EMPTY_U64, EMPTY_U64, np.zeros(0, np.int32)))
        cfps = np.fromiter((c[0] for c in cands), dtype=np.uint64, count=len(cands))
        if len(vfps):
            at = np.minimum(np.searchsorted(vfps, cfps), len(vfps) - 1)
            fresh = vfps[at] != cfps
        else:
            fresh = np.ones(len(cfps), dtype=bool)
        new = [cands[i] for i in np.flatnonzero(fresh)]
        new.sort(key=lambda kv: kv[1][0])
        keys = np.array([kv[1][0] for kv in new], dtype=np.int64)
        if cfg.check_new and new:
            _check_new(cfg, new, events)
        if cfg.add and new:
            fps = np.concatenate([vfps, np.array([kv[0] for kv in new], dtype=np.uint64)])
            parents = np.concatenate([vparents, np.array([kv[1][2] for kv in new], dtype=np.uint64)])
            actions = np.concatenate([vactions, (keys & POS_MASK).astype(np.int32)])
            order = np.argsort(fps, kind="stable")
            visited[m] = (fps[order], parents[order], actions[order])
            new_by_model[m] = new
        summaries[m] = LevelSummary(keys, events, ranks, nsucc, bool(len(fresh)) and not bool(fresh.all()))
    maybe_fail(inject, "merge")
    yield index, (VISITED, visited)
    for m, new in new_by_model.items():
        high = m << FP_BITS
        for fp, (key, blob, _parent) in new:
            yield high | fp, (key, blob)
    yield index, (SUMMARY, summaries)


def lookup(wanted: frozenset[int], records: Iterator) -> list[tuple[int, int, int]]:
    """Parent links ``(key, parent fingerprint, action)`` of the ``wanted`` record keys
    found in one visited partition."""
    out = []
    for _key, value in records:
        if value[0] != VISITED:
            continue
        for key in wanted:
            arrays = value[1].get(key >> FP_BITS)
            if arrays is None:
                continue
            fps, parents, actions = arrays
            fp = key & FP_MASK
            i = int(np.searchsorted(fps, np.uint64(fp)))
            if i < len(fps) and int(fps[i]) == fp:
                out.append((key, int(parents[i]), int(actions[i])))
    return out


def is_visited(kv: tuple) -> bool:
    return kv[1][0] == VISITED


def is_state(kv: tuple) -> bool:
    return kv[1][0] >= 0


def is_summary(kv: tuple) -> bool:
    return kv[1][0] == SUMMARY


def summary(kv: tuple) -> dict[int, LevelSummary]:
    return kv[1][1]


def visited_record(index: int, per_model: dict[int, list[tuple[int, int, int]]]) -> tuple[int, tuple]:
    """Partition ``index``'s first visited-set record from ``(fp, parent, action)`` rows."""
    out = {}
    for m, rows in per_model.items():
        rows.sort()
        out[m] = (
            np.array([r[0] for r in rows], dtype=np.uint64),
            np.array([r[1] for r in rows], dtype=np.uint64),
            np.array([r[2] for r in rows], dtype=np.int32),
        )
    return index, (VISITED, out)

