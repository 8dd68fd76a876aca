"""The executor side of the Spark engine: Python functions over Arrow record batches.

Spark runs these through ``DataFrame.mapInArrow``: each call gets an iterator of
:class:`pyarrow.RecordBatch` (a slice of one partition) and yields record batches.
Python touches states only here, a batch at a time; deduplication, the shuffle and the
visited set are Spark's (see :mod:`checker.spark.bfs`).

Two functions run per level:

- :func:`expand_batches` reads frontier rows (``fp, model, key, state``), decodes each
  state, computes its successors with the spec (rebuilt on the executor from its name
  and constants), checks ``eventually`` properties on terminal states, and writes one
  candidate row per successor (``fp, model, key, parent, state``): the successor's
  fingerprint, its order key, its parent's fingerprint and its encoding. A successor a
  task has already written with a smaller order key is not written again (each batch is
  expanded in key order), so most equal successors never reach the shuffle. At its end each task writes one *meta row* (``model`` = :data:`META`,
  ``fp`` = the partition number): its frontier ranks, successor counts, terminal events
  and seconds, pickled into the ``state`` column. Meta rows never match a visited state,
  so they pass Spark's deduplication unchanged and reach the driver.
- :func:`check_batches` reads the level's new states after deduplication, checks the
  open invariants on them (and, on the first few of a task, the state vocabulary), and
  writes ``model, key, seen, payload``: one row per new state with its order key (the
  driver sorts these into the level's keys), the rows of already visited successors
  (``seen``, a back edge) and the meta rows passed through, and one row per task
  (``model`` = :data:`REPORT`) with the violations it found, how many states it checked
  the vocabulary of, and its seconds. When no model has anything to check at a level,
  the engine skips this function and reads the same columns from Spark directly.

Fingerprints are unsigned 64-bit numbers; in Spark they are ``long`` columns holding the
same 64 bits (:func:`signed`, :func:`unsigned`).
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from checker.engine.bfs import SpecError
from checker.engine.encoding import decode, encode
from checker.engine.fingerprint import check_vocabulary, fingerprint
from checker.engine.memory import collector_paused
from checker.spark.tasks import (
    FP_MASK,
    MAX_ACTIONS,
    POS_BITS,
    Event,
    TaskConfig,
    evaluator_for,
    maybe_fail,
    task_spec,
)

FRONTIER_SCHEMA = "fp long, model int, key long, state binary"
CANDIDATE_SCHEMA = "fp long, model int, key long, parent long, state binary"
RESULT_SCHEMA = "model int, key long, seen boolean, payload binary"

META = -1
"""``model`` of an expand task's meta row."""
REPORT = -2
"""``model`` of a check task's report row."""

def signed(fp: int) -> int:
    """The ``long`` holding the 64 bits of unsigned fingerprint ``fp``."""
    return fp - (1 << 64) if fp >= 1 << 63 else fp


def unsigned(value: int) -> int:
    """The unsigned fingerprint a ``long`` column holds (inverse of :func:`signed`)."""
    return int(value) & FP_MASK


def _partition() -> int:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return ctx.partitionId() if ctx is not None else 0


def expand_batches(
    cfgs: dict[int, TaskConfig], inject: frozenset[str], keys_bc: Any, batches: Iterator[Any]
) -> Iterator[Any]:
    """Candidates of one frontier partition, then its meta row (see the module docstring).

    Frontier rows of models not in ``cfgs`` (their search has stopped) are skipped.
    ``keys_bc`` broadcasts each model's sorted order keys of the level, which turn a
    state's key into its rank. Python's cyclic collector is paused meanwhile, as in the
    local engine."""
    with collector_paused():
        yield from _expand(cfgs, inject, keys_bc, batches)


def _expand(cfgs: dict[int, TaskConfig], inject: frozenset[str], keys_bc: Any, batches: Iterator[Any]) -> Iterator[Any]:
    import pyarrow as pa

    all_keys = keys_bc.value
    ranks_out: dict[int, list[np.ndarray]] = {}
    nsucc_out: dict[int, list[np.ndarray]] = {}
    events: dict[int, dict[str, Event]] = {}
    evaluators: dict[int, Any] = {}
    emitted: dict[int, dict[int, int]] = {}  # per model: fingerprint -> smallest key written
    seconds = 0.0
    for batch in batches:
        started = time.perf_counter()
        models = batch.column(1).to_numpy(zero_copy_only=False)
        fps_all = batch.column(0).to_numpy(zero_copy_only=False)
        keys_all = batch.column(2).to_numpy(zero_copy_only=False)
        blobs = batch.column(3).to_pylist()
        out_fp: list[int] = []
        out_model: list[int] = []
        out_key: list[int] = []
        out_parent: list[int] = []
        out_state: list[bytes] = []
        for m in np.unique(models).tolist():
            cfg = cfgs.get(m)
            if cfg is None:
                continue
            spec = task_spec(cfg)
            evaluator = evaluators.get(m)
            if evaluator is None:
                evaluator = evaluators[m] = evaluator_for(spec, cfg.props)
            terminal = bool(evaluator.terminal_state or evaluator.terminal_history)
            rows = np.flatnonzero(models == m)
            rows = rows[np.argsort(keys_all[rows], kind="stable")]
            ranks = np.searchsorted(all_keys[m], keys_all[rows])
            nsucc = np.zeros(len(rows), dtype=np.int64)
            found = events.setdefault(m, {})
            next_states = spec.next_states
            seen = emitted.setdefault(m, {})
            n_before = len(out_fp)
            for j, row in enumerate(rows.tolist()):
                state = decode(blobs[row])
                succ = next_states(state)
                n = len(succ)
                nsucc[j] = n
                rank = int(ranks[j])
                if not n:
                    if terminal:
                        fp = unsigned(fps_all[row])
                        for name, sentence in evaluator.on_terminal(state, evaluator.history_key(state)):
                            ev = found.get(name)
                            if ev is None or rank << POS_BITS < ev.key:
                                found[name] = Event(rank << POS_BITS, fp, sentence, True)
                    continue
                if n > MAX_ACTIONS:
                    raise SpecError(f"{spec.name}: a state has {n} enabled actions; the Spark engine allows {MAX_ACTIONS}")
                base = rank << POS_BITS
                parent = int(fps_all[row])
                for pos, (_label, succ_state) in enumerate(succ):
                    f = fingerprint(succ_state)
                    k = base | pos
                    if seen.get(f, k + 1) <= k:  # written already with an earlier key
                        continue
                    seen[f] = k
                    out_fp.append(f)
                    out_key.append(k)
                    out_parent.append(parent)
                    out_state.append(encode(succ_state))
            out_model.extend([m] * (len(out_fp) - n_before))
            ranks_out.setdefault(m, []).append(ranks.astype(np.int64))
            nsucc_out.setdefault(m, []).append(nsucc)
        seconds += time.perf_counter() - started
        if out_fp:
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(np.array(out_fp, dtype=np.uint64).view(np.int64)),
                    pa.array(out_model, type=pa.int32()),
                    pa.array(out_key, type=pa.int64()),
                    pa.array(out_parent, type=pa.int64()),
                    pa.array(out_state, type=pa.binary()),
                ],
                names=["fp", "model", "key", "parent", "state"],
            )
    maybe_fail(inject, "expand")
    if ranks_out or events:
        meta = {
            m: (np.concatenate(ranks_out.get(m, [np.zeros(0, np.int64)])),
                np.concatenate(nsucc_out.get(m, [np.zeros(0, np.int64)])),
                events.get(m, {}))
            for m in set(ranks_out) | set(events)
        }
        payload = pickle.dumps((meta, seconds), protocol=pickle.HIGHEST_PROTOCOL)
        yield pa.RecordBatch.from_arrays(
            [pa.array([_partition()], pa.int64()), pa.array([META], pa.int32()), pa.array([0], pa.int64()),
             pa.array([0], pa.int64()), pa.array([payload], pa.binary())],
            names=["fp", "model", "key", "parent", "state"],
        )


def check_batches(cfgs: dict[int, TaskConfig], inject: frozenset[str], batches: Iterator[Any]) -> Iterator[Any]:
    """Keys of one partition's new states, checked, then its report row (see the module
    docstring). Rows are ``fp, model, key, state, seen``: ``seen`` is true on a candidate
    that was already visited (kept only for models whose back edges matter); such rows
    are passed on, unchecked, for the driver."""
    with collector_paused():
        yield from _check(cfgs, inject, batches)


def _check(cfgs: dict[int, TaskConfig], inject: frozenset[str], batches: Iterator[Any]) -> Iterator[Any]:
    import pyarrow as pa

    evaluators: dict[int, Any] = {}
    vocabulary = {m: cfg.vocabulary for m, cfg in cfgs.items()}
    checked: dict[int, int] = {}
    events: dict[int, dict[str, Event]] = {}
    seconds = 0.0
    names = ["model", "key", "seen", "payload"]
    for batch in batches:
        started = time.perf_counter()
        models = batch.column(1).to_numpy(zero_copy_only=False)
        keys = batch.column(2).to_numpy(zero_copy_only=False)
        seen = np.asarray(batch.column(4).to_numpy(zero_copy_only=False) == True)  # noqa: E712 - nulls: not seen
        meta = models == META
        if meta.any():
            payloads = batch.column(3).filter(pa.array(meta))
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.full(len(payloads), META, np.int32)), pa.array(np.zeros(len(payloads), np.int64)),
                 pa.nulls(len(payloads), pa.bool_()), payloads],
                names=names,
            )
        new = ~meta & ~seen
        blobs = None
        for m in np.unique(models[new]).tolist():
            cfg = cfgs.get(m)
            if cfg is None or not cfg.check_new or not cfg.checks:
                continue
            spec = task_spec(cfg)
            evaluator = evaluators.get(m)
            if evaluator is None:
                evaluator = evaluators[m] = evaluator_for(spec, cfg.props)
            invariants = bool(evaluator.state_checks or evaluator.history_checks)
            if not invariants and not vocabulary[m]:
                continue
            if blobs is None:
                blobs = batch.column(3).to_pylist()
            fps = batch.column(0).to_numpy(zero_copy_only=False)
            found = events.setdefault(m, {})
            for row in np.flatnonzero(new & (models == m)).tolist():
                if not invariants and not vocabulary[m]:
                    break
                state = decode(blobs[row])
                if vocabulary[m]:
                    vocabulary[m] -= 1
                    checked[m] = checked.get(m, 0) + 1
                    problem = check_vocabulary(state)
                    if problem:
                        raise SpecError(f"{spec.name}: {problem}")
                if invariants:
                    key = int(keys[row])
                    for name, sentence in evaluator.on_state(state, evaluator.history_key(state), None):
                        ev = found.get(name)
                        if ev is None or key < ev.key:
                            found[name] = Event(key, unsigned(fps[row]), sentence)
        rest = ~meta
        if rest.any():
            mask = pa.array(rest)
            yield pa.RecordBatch.from_arrays(
                [batch.column(1).filter(mask), batch.column(2).filter(mask), batch.column(4).filter(mask),
                 pa.nulls(int(rest.sum()), pa.binary())],
                names=names,
            )
        seconds += time.perf_counter() - started
    maybe_fail(inject, "merge")
    payload = pickle.dumps(({m: e for m, e in events.items() if e}, checked, seconds), protocol=pickle.HIGHEST_PROTOCOL)
    yield pa.RecordBatch.from_arrays(
        [pa.array([REPORT], pa.int32()), pa.array([0], pa.int64()), pa.nulls(1, pa.bool_()),
         pa.array([payload], pa.binary())],
        names=names,
    )
