"""The executor side of the Spark engine: Python functions over Arrow record batches.

Spark runs :func:`expand_batches` through ``DataFrame.mapInArrow``: each call gets an
iterator of :class:`pyarrow.RecordBatch` (a slice of one partition) and yields record
batches. Python touches states only here, a batch at a time; deduplication, the shuffle
and the visited set are Spark's (see :mod:`ordercheck.checker.spark.bfs`).

:func:`expand_batches` reads the previous level's candidate rows (``fp, model, key,
state``; the initial states for the first level), keeps those whose key is one of the
level's keys (the states new in the level: a key names one candidate), decodes each
state, computes its successors with the spec (rebuilt on the executor from its name and
constants), fingerprints them a batch at a time (numpy, as the local engine does),
checks ``eventually`` properties on terminal states, and writes one candidate row per
successor (``fp, model, key, state``): the successor's fingerprint, its order key (which
names its parent: :mod:`ordercheck.checker.spark.frontier_keys`) and its encoding. A
successor a task has already written with a smaller order key is not written again (each
batch is expanded in key order), so most equal successors never reach the shuffle.

The open invariants and ``sometimes`` targets (and, on the first few of a task, the state
vocabulary) are checked here too, on the candidates a task writes, so the level's new
states need no second pass through Python. That finds what checking the level's new
states would: a candidate that is not new was visited in an earlier level, where it was
checked with every property still open now (properties only ever close), so it decides
nothing; and every state new in the level is written, by some task, with its smallest
order key (a task writes a successor again when it meets a smaller key), so the smallest
key among the candidates deciding a property is that of the first new state, in
breadth-first order, that decides it.

At its end each task reports to the driver, through an accumulator
(:class:`TaskReports`), its partition number with its frontier ranks, successor counts,
decided events, the states it checked the vocabulary of, and its seconds expanding and
checking, pickled. Spark merges the reports of a task's successful attempt only, before
the job that ran it ends, so the driver reads them once the level's job returns, and
never scans the candidates for them.

Fingerprints are unsigned 64-bit numbers; in Spark they are ``long`` columns holding the
same 64 bits (:func:`signed`, :func:`unsigned`).
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from ordercheck.checker.engine.bfs import SpecError
from ordercheck.checker.engine.encoding import decode, encode
from ordercheck.checker.engine.fingerprint import check_vocabulary, fingerprint
from ordercheck.checker.engine.memory import collector_paused
from ordercheck.checker.engine.table import mix
from ordercheck.checker.spark.tasks import (
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
CANDIDATE_SCHEMA = "fp long, model int, key long, state binary"
CANDIDATE_NAMES = ["fp", "model", "key", "state"]

class TaskReports:
    """The parameter (a :class:`pyspark.accumulators.AccumulatorParam` in all but name,
    so that importing this module does not import PySpark) of an accumulator of the
    expand tasks' reports: a list of ``(level, partition, payload)``, merged by
    concatenation. A partition may report twice (a stage Spark runs again): the driver
    keeps one report per level and partition."""

    def zero(self, value: list) -> list:
        return []

    def addInPlace(self, value1: list, value2: list) -> list:
        value1.extend(value2)
        return value1


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


def _binary(blobs: list[bytes]) -> Any:
    """``blobs`` as an Arrow ``binary`` array, built from one joined buffer and its
    offsets (faster than converting the list item by item)."""
    import pyarrow as pa

    offsets = np.zeros(len(blobs) + 1, dtype=np.int32)
    np.cumsum(np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs)), out=offsets[1:], dtype=np.int32)
    return pa.Array.from_buffers(pa.binary(), len(blobs), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(blobs))])


def expand_batches(
    cfgs: dict[int, TaskConfig], inject: frozenset[str], keys_bc: Any, reports: Any, level: int, batches: Iterator[Any]
) -> Iterator[Any]:
    """Candidates of one partition of the previous level's candidates; then the task's
    report, tagged with ``level``, added to accumulator ``reports`` (see the module
    docstring).

    Rows of models not in ``cfgs`` (their search has stopped) are skipped.
    ``keys_bc`` broadcasts each model's sorted order keys of the level: a row whose key
    is not among them lost its fingerprint to another candidate (or was visited before)
    and is skipped, and a state's key gives its rank. Python's cyclic collector is paused
    meanwhile, as in the local engine."""
    with collector_paused():
        yield from Expansion(cfgs, keys_bc.value).run(inject, batches, reports, level)


class Expansion:
    """One expand task's state across its batches (see :func:`expand_batches`); the
    driver runs one too, on the first levels it expands itself
    (:mod:`ordercheck.checker.spark.first_levels`)."""

    def __init__(self, cfgs: dict[int, TaskConfig], level_keys: dict[int, np.ndarray]) -> None:
        self.cfgs = cfgs
        self.level_keys = level_keys
        self.ranks: dict[int, list[np.ndarray]] = {}
        self.nsucc: dict[int, list[np.ndarray]] = {}
        self.events: dict[int, dict[str, Event]] = {}
        self.evaluators: dict[int, Any] = {}
        self.written: dict[int, dict[int, int]] = {}  # per model: fingerprint -> smallest key written
        self.vocabulary = {m: cfg.vocabulary for m, cfg in cfgs.items()}
        self.checked: dict[int, int] = {}
        self.seconds = 0.0  # expanding, checks included
        self.check_seconds = 0.0  # checking

    def run(self, inject: frozenset[str], batches: Iterator[Any], reports: Any, level: int) -> Iterator[Any]:
        """The candidate batches of ``batches``, then this task's report added to
        ``reports`` (anything with an ``add`` taking a list), tagged with ``level``."""
        import pyarrow as pa

        for batch in batches:
            started = time.perf_counter()
            columns = self.expand(batch)
            self.seconds += time.perf_counter() - started
            if columns is not None:
                yield pa.RecordBatch.from_arrays(columns, names=CANDIDATE_NAMES)
        maybe_fail(inject, "expand")
        if self.ranks or self.events or self.checked:
            meta = {
                m: (np.concatenate(self.ranks.get(m, [np.zeros(0, np.int64)])),
                    np.concatenate(self.nsucc.get(m, [np.zeros(0, np.int64)])),
                    self.events.get(m, {}))
                for m in set(self.ranks) | set(self.events)
            }
            report = (meta, self.checked, self.seconds - self.check_seconds, self.check_seconds)
            reports.add([(level, _partition(), pickle.dumps(report, protocol=pickle.HIGHEST_PROTOCOL))])

    def expand(self, batch: Any) -> list[Any] | None:
        """The candidate columns of one frontier batch (``None`` if it has none)."""
        import pyarrow as pa

        models = batch.column(1).to_numpy(zero_copy_only=False)
        fps_all = batch.column(0).to_numpy(zero_copy_only=False)
        keys_all = batch.column(2).to_numpy(zero_copy_only=False)
        blobs = batch.column(3).to_pylist()
        parts: list[tuple[int, np.ndarray, np.ndarray, list[bytes]]] = []
        for m in np.unique(models).tolist():
            cfg = self.cfgs.get(m)
            if cfg is None:
                continue
            rows = np.flatnonzero(models == m)
            # The rows are the previous level's candidates: its new states are those
            # whose key is one of the level's keys (each key names one candidate).
            level_keys = self.level_keys[m]
            ranks = np.searchsorted(level_keys, keys_all[rows])
            hit = ranks < len(level_keys)
            hit[hit] = level_keys[ranks[hit]] == keys_all[rows[hit]]
            rows, ranks = rows[hit], ranks[hit]
            order = np.argsort(ranks, kind="stable")
            part = self._model_rows(m, cfg, rows[order], ranks[order], fps_all, blobs)
            if part is not None:
                parts.append(part)
        if not parts:
            return None
        return [
            pa.array(np.concatenate([p[1] for p in parts])),
            pa.array(np.concatenate([np.full(len(p[1]), p[0], np.int32) for p in parts])),
            pa.array(np.concatenate([p[2] for p in parts])),
            _binary([b for p in parts for b in p[3]]),
        ]

    def _model_rows(
        self, m: int, cfg: TaskConfig, rows: np.ndarray, ranks: np.ndarray, fps_all: np.ndarray, blobs: list
    ) -> tuple[int, np.ndarray, np.ndarray, list[bytes]] | None:
        """Expand model ``m``'s frontier ``rows`` (in key order, ``ranks`` their positions
        in the level): its candidates' fingerprints (as ``long``), keys and
        encodings, each fingerprint written once with its smallest key; properties checked
        on the candidates.

        A state is expanded, its successors hashed, checked and encoded one after the other
        while they are in the processor's caches (a pass per step over a whole batch is
        slower). Within a task successors are told apart by their Python ``hash``, of which
        the fingerprint is a one-to-one function (:func:`ordercheck.checker.engine.table.mix`)."""
        spec = task_spec(cfg)
        evaluator = self.evaluators.get(m)
        if evaluator is None:
            evaluator = self.evaluators[m] = evaluator_for(spec, cfg.props)
        nsucc = np.zeros(len(rows), dtype=np.int64)
        self.ranks.setdefault(m, []).append(ranks.astype(np.int64))
        self.nsucc.setdefault(m, []).append(nsucc)
        found = self.events.setdefault(m, {})
        terminal = bool(evaluator.terminal_state or evaluator.terminal_history)
        check = cfg.check_new and bool(evaluator.state_checks or evaluator.history_checks)
        history_key = evaluator.history_key if evaluator.uses_history else None
        on_state = evaluator.on_state
        vocabulary = self.vocabulary.get(m, 0) if cfg.check_new else 0
        next_states = spec.next_states
        written = self.written.setdefault(m, {})
        out_hash: list[int] = []
        out_key: list[int] = []
        out_state: list[bytes] = []
        hits: list[tuple[int, Any, list[tuple[str, str]]]] = []
        check_seconds = 0.0
        for j, (row, rank) in enumerate(zip(rows.tolist(), ranks.tolist())):
            state = decode(blobs[row])
            succ = next_states(state)
            n = len(succ)
            nsucc[j] = n
            if not n:
                if terminal:
                    key = rank << POS_BITS
                    for name, sentence in evaluator.on_terminal(state, evaluator.history_key(state)):
                        ev = found.get(name)
                        if ev is None or key < ev.key:
                            found[name] = Event(key, unsigned(fps_all[row]), sentence, True)
                continue
            if n > MAX_ACTIONS:
                raise SpecError(f"{spec.name}: a state has {n} enabled actions; the Spark engine allows {MAX_ACTIONS}")
            base = rank << POS_BITS
            parent_key = history_key(state) if history_key is not None else None
            for pos, (_label, t) in enumerate(succ):
                h = hash(t)
                k = base | pos
                if written.get(h, k + 1) <= k:  # written already with an earlier key
                    continue
                written[h] = k
                out_hash.append(h)
                out_key.append(k)
                out_state.append(encode(t))
                if vocabulary:
                    vocabulary -= 1
                    self.checked[m] = self.checked.get(m, 0) + 1
                    problem = check_vocabulary(t)
                    if problem:
                        raise SpecError(f"{spec.name}: {problem}")
                if check:
                    started = time.perf_counter()
                    decided = on_state(t, history_key(t) if history_key is not None else None, parent_key)
                    if decided:
                        hits.append((k, t, decided))
                    check_seconds += time.perf_counter() - started
        if cfg.check_new:
            self.vocabulary[m] = vocabulary
        for k, t, decided in hits:
            for name, sentence in decided:
                ev = found.get(name)
                if ev is None or k < ev.key:
                    found[name] = Event(k, fingerprint(t), sentence)
        self.check_seconds += check_seconds
        if not out_hash:
            return None
        fps = mix(np.array(out_hash, dtype=np.int64)).view(np.int64)
        return m, fps, np.array(out_key, dtype=np.int64), out_state
