"""What the Spark engine's executor tasks share: the order-key layout, the per-model task
configuration, decided events, and the spec and evaluator built once per Python worker.

The functions Spark runs on record batches are in :mod:`ordercheck.checker.spark.batches`; see
:mod:`ordercheck.checker.spark.bfs` for the algorithm and why its answers are the local engine's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ordercheck.checker.api.spec import Spec
from ordercheck.checker.engine.evaluate import Evaluator

POS_BITS = 16
MAX_ACTIONS = 1 << POS_BITS
POS_MASK = MAX_ACTIONS - 1
FP_BITS = 64
FP_MASK = (1 << FP_BITS) - 1

ALWAYS_SUFFIX = "!"
"""A stage named with this suffix in the failure hook fails on every attempt (a job that
fails for good), not only on the first."""


class InjectedFailure(RuntimeError):
    """Raised by the test-only failure hook; Spark retries the task."""


@dataclass(frozen=True)
class TaskConfig:
    """What executor tasks need about one model: its spec by canonical reference
    (:func:`ordercheck.checker.loading.specref.reference_of`) and constants, the
    properties still open, whether the level's new states are checked (not at the
    depth bound, where they are not kept), and on how many of the states a task writes
    the vocabulary is checked."""

    spec_name: str
    constants_json: str
    props: tuple[str, ...]
    check_new: bool
    vocabulary: int = 0


@dataclass
class Event:
    """A property decided at the state with order key ``key`` and fingerprint ``fp``
    (unsigned); ``terminal`` for an ``eventually`` property outstanding in a terminal
    state, whose key is that state's rank in its level shifted by the action bits."""

    key: int
    fp: int
    sentence: str
    terminal: bool = False


@dataclass
class LevelSummary:
    """What one level's tasks tell the driver about one model."""

    keys: np.ndarray  # order keys of the level's new states (any order)
    events: dict[str, Event]
    ranks: list[np.ndarray]  # from the expand tasks: frontier ranks ...
    nsucc: list[np.ndarray]  # ... and their successor counts
    back_edge: bool = False  # a successor was visited in an earlier level (a cycle may close)


_SPECS: dict[tuple[str, str], Spec] = {}


def task_spec(cfg: TaskConfig) -> Spec:
    """The spec of ``cfg``, built once per Python worker."""
    key = (cfg.spec_name, cfg.constants_json)
    spec = _SPECS.get(key)
    if spec is None:
        from ordercheck.checker.spark.ship import task_spec_class

        spec = task_spec_class(cfg.spec_name)(**json.loads(cfg.constants_json))
        _SPECS[key] = spec
    return spec


def remember_spec(spec_name: str, constants_json: str, spec: Spec) -> None:
    """Have :func:`task_spec` return ``spec`` for this name and these constants in this
    process: the driver, expanding a search's first levels itself, uses the spec it
    was given rather than one rebuilt from its reference."""
    _SPECS[(spec_name, constants_json)] = spec


def evaluator_for(spec: Spec, names: Iterable[str]) -> Evaluator:
    """An evaluator of ``spec``'s properties named ``names``."""
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
