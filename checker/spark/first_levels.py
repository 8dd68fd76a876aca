"""The first levels of a Spark search, expanded on the driver.

A breadth-first search starts narrow: the first levels of a model hold a handful of
states, then hundreds, then thousands. On Spark each level is a job with a fixed cost
(planning, scheduling, a shuffle, a checkpoint: about a quarter of a second on
``local[2]``), which such levels pay for almost nothing. So a search starts on the driver:
while a level's frontier (all models of the batch together) is smaller than the
engine's threshold (:attr:`~ordercheck.checker.spark.bfs.SparkOptions.driver_states`; by default
one task's share, a level Spark would give a single task anyway), the driver expands it
itself, with the very function Spark's tasks run (:func:`ordercheck.checker.spark.batches.expand_batches`'s
:class:`~ordercheck.checker.spark.batches.Expansion`, on one Arrow record batch), and deduplicates
the candidates as the Spark level's join and aggregation do: a candidate whose
fingerprint was visited is dropped (kept and marked ``seen`` while some model's back
edges matter, as there), and of equal candidates the one with the smallest order key
wins (the driver's one expansion writes each fingerprint once, with
that key, as a Spark task does within its partition). The driver's table of the level's ``model, key, seen`` is the
one the Spark level collects, so the driver's side of a level (counts, decisions,
bounds, early stops) is the same code either way.

At the first level whose frontier reaches the threshold the search moves to Spark for
good (:meth:`DriverLevels.hand_over`): the level's frontier becomes the first source
DataFrame and the fingerprints visited so far the first visited set. Order keys and
the tie-break are those Spark would have produced, so counts,
verdicts and counterexamples do not depend on where a level ran. A search that ends
before reaching the threshold never starts a Spark job; its counterexamples are rebuilt
from the levels' keys as any search's are (:mod:`ordercheck.checker.spark.bfs`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ordercheck.checker.spark.batches import CANDIDATE_NAMES, Expansion
from ordercheck.checker.spark.tasks import TaskConfig

VISITED_NAMES = ("fp", "model")


class _Reports:
    """Stands in for the Spark accumulator of task reports: the driver's one "task"."""

    def __init__(self) -> None:
        self.value: list[tuple[int, int, bytes]] = []

    def add(self, items: list[tuple[int, int, bytes]]) -> None:
        self.value.extend(items)


class DriverLevels:
    """The search while it runs on the driver: the next level's frontier rows (``fp,
    model, key, state``) and every visited state's fingerprint and model, as numpy arrays
    and a list of encodings."""

    def __init__(self, frontier: Sequence[tuple[int, int, int, bytes]], visited: Sequence[tuple[int, int]]) -> None:
        self.fp = np.array([r[0] for r in frontier], dtype=np.int64)
        self.model = np.array([r[1] for r in frontier], dtype=np.int32)
        self.key = np.array([r[2] for r in frontier], dtype=np.int64)
        self.state: list[bytes] = [r[3] for r in frontier]
        self.visited = {name: [np.array([r[i] for r in visited], dtype=np.int32 if name == "model" else np.int64)]
                        for i, name in enumerate(VISITED_NAMES)}

    def level(self, cfgs: dict[int, TaskConfig], level_keys: dict[int, np.ndarray], keep_seen: bool,
              level: int) -> tuple[Any, list[bytes], float]:
        """Expand the frontier's states whose key is one of ``level_keys`` (models in
        ``cfgs`` only) and deduplicate their successors. Returns the level's table
        (``model, key, seen``: one row per distinct new fingerprint, with its smallest
        key, and, when ``keep_seen``, one per visited fingerprint met, marked ``seen``),
        the expansion's report (as a Spark task's) and the seconds deduplicating took.
        Every fingerprint is a candidate once (see the module docstring).
        The winners become the next level's frontier and the new ones join the visited
        links."""
        import pyarrow as pa

        reports = _Reports()
        batches = iter(self.frontier_table().to_batches())
        out = list(Expansion(cfgs, level_keys).run(frozenset(), batches, reports, level))
        started = time.perf_counter()
        if out:
            cand = pa.Table.from_batches(out)
            fp, model, key = (cand.column(n).to_numpy() for n in CANDIDATE_NAMES[:3])
            states = cand.column("state").to_pylist()
        else:
            fp = key = np.zeros(0, np.int64)
            model = np.zeros(0, np.int32)
            states = []
        seen = np.zeros(len(fp), dtype=bool)
        visited_fp, visited_model = np.concatenate(self.visited["fp"]), np.concatenate(self.visited["model"])
        for m in np.unique(model).tolist():
            rows = np.flatnonzero(model == m)
            seen[rows] = np.isin(fp[rows], visited_fp[visited_model == m])
        # The expansion wrote each fingerprint once, with its smallest key (it expands the
        # level in key order and skips a successor met before, as a task does within its
        # partition), so the candidates need no aggregation here: the new ones win.
        winners = np.flatnonzero(~seen)
        rows = np.arange(len(fp)) if keep_seen else winners
        table = pa.table({
            "model": pa.array(model[rows]),
            "key": pa.array(key[rows]),
            "seen": pa.array(seen[rows]),
        })
        self.fp, self.model, self.key = fp[winners], model[winners], key[winners]
        self.state = [states[i] for i in winners.tolist()]
        for name, column in zip(VISITED_NAMES, (self.fp, self.model)):
            self.visited[name].append(column)
        return table, [payload for _level, _part, payload in reports.value], time.perf_counter() - started

    def frontier_table(self) -> Any:
        """The next level's frontier rows as an Arrow table (``fp, model, key, state``)."""
        import pyarrow as pa

        return pa.table({"fp": pa.array(self.fp), "model": pa.array(self.model, pa.int32()),
                         "key": pa.array(self.key), "state": pa.array(self.state, pa.binary())})

    def visited_table(self) -> Any:
        """Every visited state's fingerprint and model as an Arrow table (``fp, model``)."""
        import pyarrow as pa

        return pa.table({name: pa.array(np.concatenate(self.visited[name])) for name in VISITED_NAMES})

